// The input-byte counter (common/io_stats.hpp): every reader counts what it takes from a file —
// a plain edge list its size, a .gz its compressed size, a .npy its size, the binary cache its
// size — and nothing for a file it does not read.
#include <catch2/catch.hpp>
#include <filesystem>
#include <thread>
#include <vector>

#include "dgnn/common/io_stats.hpp"
#include "dgnn/common/memory.hpp"
#include "dgnn/graph/cache.hpp"
#include "dgnn/graph/graph.hpp"
#include "dgnn/graph/npy.hpp"
#include "temp_files.hpp"

using namespace dgnn;
using dgnn::test::TempDir;
namespace fs = std::filesystem;

namespace {

// Bytes counted while `f` runs.
template <class F>
int64_t counted(F&& f) {
  const int64_t before = input_bytes_read();
  f();
  return input_bytes_read() - before;
}

}  // namespace

TEST_CASE("io_stats: an edge list counts its size, a .gz its compressed size", "[io_stats]") {
  TempDir tmp;
  std::string text = "# edges\n";
  for (int i = 0; i < 5000; ++i) text += std::to_string(i) + " " + std::to_string(i + 1) + "\n";
  const std::string plain = tmp.write("e.txt", text), gz = tmp.write_gz("e.txt.gz", text);
  REQUIRE(fs::file_size(gz) < fs::file_size(plain));
  EdgeListOptions o;
  o.use_cache = false;
  CHECK(counted([&] { read_edge_list(plain, o); }) == int64_t(fs::file_size(plain)));
  CHECK(counted([&] { read_edge_list(gz, o); }) == int64_t(fs::file_size(gz)));
}

TEST_CASE("io_stats: a .npy counts its size; the binary cache its size", "[io_stats]") {
  TempDir tmp;
  std::vector<float> m(300 * 7);
  for (size_t i = 0; i < m.size(); ++i) m[i] = float(i);
  const std::string f = tmp.path("m.npy");
  write_npy(f, m.data(), 300, 7);
  CHECK(counted([&] { read_npy(f); }) == int64_t(fs::file_size(f)));

  const std::string src = tmp.write("g.txt", "1 2\n2 3\n3 1\n4 1\n");
  EdgeListOptions o;
  o.cache_dir = tmp.path("cache");
  CHECK(counted([&] { load_graph(src, o); }) == int64_t(fs::file_size(src)));  // parsed, stored
  const std::string cache = cache_path_for(src, o, 0);
  REQUIRE(fs::exists(cache));
  CHECK(counted([&] { load_graph(src, o); }) == int64_t(fs::file_size(cache)));  // the cache alone
}

TEST_CASE("io_stats: counting is thread-safe", "[io_stats]") {
  const int64_t before = input_bytes_read();
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([] {
      for (int i = 0; i < 10000; ++i) count_input_bytes(3);
    });
  for (auto& t : threads) t.join();
  CHECK(input_bytes_read() - before == 4 * 10000 * 3);
  count_input_bytes(-5);  // a failed read's -1 never lowers the count
  CHECK(input_bytes_read() - before == 4 * 10000 * 3);
}

TEST_CASE("memory: the peak resident size grows with memory touched, never falls", "[io_stats]") {
  const int64_t before = peak_resident_bytes();
  REQUIRE(before > 0);
  {
    std::vector<char> touched(size_t(64) << 20, 1);  // 64 MiB written, so resident
    REQUIRE(touched[12345] == 1);
    CHECK(peak_resident_bytes() >= int64_t(64) << 20);
  }
  CHECK(peak_resident_bytes() >= before);
}
