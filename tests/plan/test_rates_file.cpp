// Rates given to the planner instead of timed (`dgnn plan --rates`, plan/rates_file.hpp): the
// file the tests plan with, the lookups the planner makes, a written file read back, every
// malformed field named, and RankRates taking the given rates (nothing timed, the file's cores).
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <string>

#include "dgnn/common/error.hpp"
#include "dgnn/plan/calibration.hpp"
#include "dgnn/plan/rates_file.hpp"

using namespace dgnn;
using namespace dgnn::perf;
using Catch::Matchers::Contains;
namespace fs = std::filesystem;

namespace {

const std::string kRates = std::string(DGNN_TEST_DATA) + "/plan_rates.json";

fs::path write_file(const std::string& name, const std::string& text) {
  const fs::path p = fs::temp_directory_path() / ("dgnn_test_rates-" + name);
  std::ofstream(p) << text;
  return p;
}

// One entry's required fields, and `extra` (",\"x\": 1") after them.
std::string entry(const std::string& extra = "") {
  return R"({"threads": 1, "spmm": {"16": 1e9}, "gemm_fwd": {"16x8": 2e9},
             "gemm_bwd": {"16x8": 3e9}, "elementwise": 4e9)" +
         extra + "}";
}

}  // namespace

TEST_CASE("plan rates: the tests' file reads as written", "[perf]") {
  const GivenRates g = read_rates_file(kRates);
  CHECK(g.cores == 2);
  REQUIRE(g.entries.size() == 3);
  CHECK_FALSE(g.fallback);
  const Rates two = g.at(2, 1);
  CHECK(two.threads == 2);
  CHECK(two.spmm_rate(16) == 4e9);
  CHECK(two.spmm_rate(8) == 3e9);
  CHECK(two.gemm_fwd_rate(32, 16) == 5e10);
  CHECK(two.gemm_bwd_rate(16, 8) == 2e10);
  CHECK(two.elementwise == 8e9);
  CHECK(two.sync_s == 0);
  CHECK(two.attention_fwd_s(4, 16) == 1.5e-8);
  CHECK(two.lstm_fwd == 8e8);
  CHECK(two.gather == 5e9);
  const Rates shared = g.at(1, 2);
  CHECK(shared.sync_s == 2e-4);
  CHECK(shared.lstm_fwd == 0);  // not given: estimated from the element-wise rate
  CHECK(g.attention_factor == 1.5);
  CHECK(g.pairs_per_s == 5e7);
  CHECK(g.pair_draw_fixed == 0.05);
  // Counts not listed take the nearest one at or above, else the largest.
  CHECK(g.overhead(1) == 1.4);
  CHECK(g.overhead(2) == 1.3);
  CHECK(g.overhead(16) == 1.3);
  CHECK(g.process_sync(2) == 1e-3);
  CHECK(g.process_sync(8) == 1e-3);
  // No entry for 4 threads: an error naming the file, the pair and what it has.
  try {
    g.at(4, 1);
    FAIL("no error");
  } catch (const OptionError& e) {
    CHECK_THAT(e.what(), Contains("--rates " + kRates) && Contains("4 threads with 1 copy") &&
                             Contains("1 x 1, 1 x 2, 2 x 1"));
  }
}

TEST_CASE("plan rates: optional fields default, and a fallback entry stands for any count",
          "[perf]") {
  const fs::path p =
      write_file("fallback.json",
                 R"({"rates": [)" + entry() +
                     R"(, {"spmm": {"1": 5e8}, "gemm_fwd": {"1x1": 1e9}, "gemm_bwd": {"1x1": 1e9},
              "elementwise": 1e9}], "step_overhead": 2, "process_sync_s": 0.5})");
  const GivenRates g = read_rates_file(p.string());
  CHECK(g.cores == 0);  // this machine's
  CHECK(g.at(1, 1).spmm_rate(16) == 1e9);
  CHECK(g.at(1, 1).sync_s == 0);
  // Any other pair: the fallback, at any width or shape.
  const Rates any = g.at(8, 3);
  CHECK(any.threads == 8);
  CHECK(any.spmm_rate(64) == 5e8);
  CHECK(any.gemm_fwd_rate(128, 40) == 1e9);
  CHECK(g.attention_factor == 1);
  CHECK(g.pairs_per_s == 0);  // drawing pairs not costed
  // A number for every count.
  CHECK(g.overhead(1) == 2);
  CHECK(g.overhead(64) == 2);
  CHECK(g.process_sync(7) == 0.5);
  fs::remove(p);
  // With neither: 1 (the kernels alone) and 0.
  const fs::path q = write_file("plain.json", R"({"rates": [)" + entry() + "]}");
  const GivenRates plain = read_rates_file(q.string());
  CHECK(plain.overhead(3) == 1);
  CHECK(plain.process_sync(3) == 0);
  fs::remove(q);
}

TEST_CASE("plan rates: what is written reads back the same", "[perf]") {
  const GivenRates g = read_rates_file(kRates);
  const fs::path p = write_file("roundtrip.json", rates_file_text(g));
  const GivenRates back = read_rates_file(p.string());
  fs::remove(p);
  CHECK(back.cores == g.cores);
  CHECK(back.attention_factor == g.attention_factor);
  CHECK(back.step_overhead == g.step_overhead);
  CHECK(back.process_sync_s == g.process_sync_s);
  CHECK(back.pairs_per_s == g.pairs_per_s);
  CHECK(back.pair_draw_fixed == g.pair_draw_fixed);
  REQUIRE(back.entries.size() == g.entries.size());
  for (auto& [tc, r] : g.entries) {
    INFO(tc.first << " threads x " << tc.second);
    const Rates& b = back.entries.at(tc);
    CHECK(b.spmm == r.spmm);
    CHECK(b.gemm_fwd == r.gemm_fwd);
    CHECK(b.gemm_bwd == r.gemm_bwd);
    CHECK(b.attention_fwd == r.attention_fwd);
    CHECK(b.attention_bwd == r.attention_bwd);
    CHECK(b.elementwise == r.elementwise);
    CHECK(b.sync_s == r.sync_s);
    CHECK(b.lstm_fwd == r.lstm_fwd);
    CHECK(b.lstm_bwd == r.lstm_bwd);
    CHECK(b.gru_fwd == r.gru_fwd);
    CHECK(b.gru_bwd == r.gru_bwd);
    CHECK(b.pair_fwd == r.pair_fwd);
    CHECK(b.pair_bwd == r.pair_bwd);
    CHECK(b.gather == r.gather);
  }
}

TEST_CASE("plan rates: a malformed file is an error naming the field", "[perf]") {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"[1, 2]", "expected a JSON object"},
      {"{}", "rates: expected an array"},
      {R"({"rates": []})", "rates: expected an array"},
      {R"({"rates": [)" + entry() + R"(], "cores": 0})", "cores: expected a whole number"},
      {R"({"rates": [)" + entry() + R"(], "speed": 1})", "unknown field \"speed\""},
      {R"({"rates": [)" + entry(R"(, "sync": 0)") + "]}", "rates[0]: unknown field \"sync\""},
      {R"({"rates": [{"threads": 1, "gemm_fwd": {"1x1": 1}, "gemm_bwd": {"1x1": 1},
                      "elementwise": 1}]})",
       "rates[0]: missing \"spmm\""},
      {R"({"rates": [{"threads": 1, "spmm": {"16": -1e9}, "gemm_fwd": {"1x1": 1},
                      "gemm_bwd": {"1x1": 1}, "elementwise": 1}]})",
       "rates[0].spmm.16: expected a finite number > 0"},
      {R"({"rates": [{"threads": 1, "spmm": {"16": "fast"}, "gemm_fwd": {"1x1": 1},
                      "gemm_bwd": {"1x1": 1}, "elementwise": 1}]})",
       "rates[0].spmm.16: expected a number"},
      {R"({"rates": [{"threads": 1, "spmm": {"wide": 1}, "gemm_fwd": {"1x1": 1},
                      "gemm_bwd": {"1x1": 1}, "elementwise": 1}]})",
       "rates[0].spmm: expected a key of whole numbers"},
      {R"({"rates": [{"threads": 1, "spmm": {"16": 1}, "gemm_fwd": {"16": 1},
                      "gemm_bwd": {"1x1": 1}, "elementwise": 1}]})",
       "rates[0].gemm_fwd: expected a key \"AxB\""},
      {R"({"rates": [{"threads": 1, "spmm": {}, "gemm_fwd": {"1x1": 1},
                      "gemm_bwd": {"1x1": 1}, "elementwise": 1}]})",
       "rates[0].spmm: no shape given"},
      {R"({"rates": [)" + entry(R"(, "sync_s": -1)") + "]}", "rates[0].sync_s"},
      {R"({"rates": [)" + entry(R"(, "lstm_fwd": 1e400)") + "]}", "is not JSON"},
      {R"({"rates": [)" + entry() + "," + entry() + "]}",
       "rates[1]: a second entry for 1 threads x 1 copies"},
      {R"({"rates": [{"copies": 2, "spmm": {"16": 1}, "gemm_fwd": {"1x1": 1},
                      "gemm_bwd": {"1x1": 1}, "elementwise": 1}]})",
       "\"copies\" without \"threads\""},
      {R"({"rates": [)" + entry() + R"(], "attention_factor": 0})", "attention_factor"},
      {R"({"rates": [)" + entry() + R"(], "step_overhead": {"x": 1}})", "step_overhead"},
      {R"({"rates": [)" + entry() + R"(], "step_overhead": {}})", "step_overhead"},
      {R"({"rates": [)" + entry() + R"(], "process_sync_s": -1})", "process_sync_s"},
      {R"({"rates": [)" + entry() + R"(], "pair_draw_fixed": 1.5})", "pair_draw_fixed"},
  };
  for (const auto& [text, message] : cases) {
    INFO(text);
    const fs::path p = write_file("bad.json", text);
    try {
      read_rates_file(p.string());
      FAIL("no error");
    } catch (const OptionError& e) {
      CHECK_THAT(e.what(), Contains("--rates " + p.string() + ": ") && Contains(message));
    }
    fs::remove(p);
  }
  CHECK_THROWS_WITH(read_rates_file("/nonexistent/rates.json"), Contains("cannot be read"));
  CHECK_THROWS_WITH(read_rates_file(fs::temp_directory_path().string()),
                    Contains("is a directory"));
}

TEST_CASE("plan rates: RankRates takes the given rates, on the file's cores", "[perf]") {
  RateOptions opt;
  opt.given = std::make_shared<const GivenRates>(read_rates_file(kRates));
  const Csr none;  // nothing is timed on it
  const std::vector<LayerShape> layers;
  {
    RankRates rr(opt, none, layers);
    CHECK(rr.cache().empty());  // nothing cached
    CHECK(rr.node_cores() == 2);
    CHECK(rr.threads_for(4) == 2);  // a rank of the file's node, not this machine's
    const Rates r = rr.rates_for(4);
    CHECK(r.spmm_rate(16) == 4e9);
    REQUIRE(rr.calibrations().size() == 1);
    CHECK(rr.calibrations().begin()->second.given);
    CHECK(rr.calibrations().begin()->second.seconds == 0);
  }
  // Two ranks of one thread on 2 cores: a thread alone's rates, slowed as two copies at once
  // are (here: the copies' rates), and the copies' synchronisation.
  opt.cores = 2;
  RankRates rr(opt, none, layers);
  CHECK(rr.threads_for(2) == 1);
  CHECK(rr.copies_for(2) == 2);
  const Rates r = rr.rates_for(2);
  CHECK(r.spmm_rate(16) == Approx(1.5e9));
  CHECK(r.gemm_fwd_rate(32, 16) == Approx(3e10));
  CHECK(r.elementwise == Approx(3e9));
  CHECK(r.sync_s == 2e-4);
  CHECK(rr.calibrations().size() == 2);  // (1, 1) and (1, 2)
}
