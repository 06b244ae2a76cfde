// Every fuzzing seed and every past finding (tests/fuzz/{seeds,regressions}/<harness>/) run
// through the harnesses' own code (tests/fuzz/fuzz_cases.hpp) in the ordinary build: a reader
// that regresses on an input the fuzzer once broke it with fails here, without clang.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "../fuzz/fuzz_cases.hpp"

namespace fs = std::filesystem;

TEST_CASE("fuzz: seeds and past findings are read without a crash or a foreign exception",
          "[fuzz]") {
  int inputs = 0;
  for (const char* harness : {"edge_list", "npy", "checkpoint", "part"}) {
    for (const char* kind : {"seeds", "regressions"}) {
      const fs::path dir = fs::path(DGNN_SOURCE_DIR) / "tests" / "fuzz" / kind / harness;
      if (!fs::is_directory(dir)) continue;
      for (const auto& f : fs::directory_iterator(dir)) {
        std::ifstream in(f.path(), std::ios::binary);
        const std::string bytes(std::istreambuf_iterator<char>(in), {});
        INFO(harness << ": " << f.path().string());
        CHECK_NOTHROW(
            dgnn::fuzz::run(harness, reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()));
        ++inputs;
      }
    }
  }
  CHECK(inputs >= 12);
}
