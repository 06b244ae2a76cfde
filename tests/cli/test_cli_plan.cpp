// `dgnn plan` as a user runs it, on the generated default graph: the table's structure on one
// rank (no communication), communication and bytes growing with the rank count, the named
// networks ordering the communication time as their latency and bandwidth say, extrapolation past
// --max-partition, and bad options as one line. The plans check the planner's arithmetic, so they
// take fixed rates (--rates tests/data/plan_rates.json), never what this machine measures at the
// time (a loaded machine's rates moved the ratios they compare); one test runs a live
// calibration, and checks only that what it measured is physically sane.
#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli_helpers.hpp"

namespace fs = std::filesystem;
using namespace cli_test;
using Catch::Matchers::Contains;
using nlohmann::json;

namespace {

// The fixed rates every plan of these tests but the live one takes.
const std::string kRates = std::string(DGNN_TEST_DATA) + "/plan_rates.json";

json plan_json(const std::string& args) {
  const Result r = run("plan --json --rates " + kRates + " " + args);
  INFO(args << "\n" << r.out);
  REQUIRE(r.code == 0);
  return json::parse(r.out);
}

// A plan that times this machine's kernels (cached in dir/calibration.json).
json live_plan_json(const fs::path& dir, const std::string& args) {
  const Result r =
      run("plan --json --calibration " + (dir / "calibration.json").string() + " " + args);
  INFO(args << "\n" << r.out);
  REQUIRE(r.code == 0);
  return json::parse(r.out);
}

// The row for `ranks` whose `key` is `value` (a partitioner, a strategy).
const json& find_row(const json& j, int ranks, const std::string& key, const std::string& value) {
  for (const json& r : j.at("rows"))
    if (r.at("ranks") == ranks && r.at(key) == value) return r;
  FAIL("no row for " << ranks << " ranks, " << key << " " << value);
  return j;
}

const json& row(const json& j, int ranks, const std::string& partitioner = "metis") {
  return find_row(j, ranks, "partitioner", partitioner);
}

// Each `plan ARGS` fails with one line naming OPTION.
void check_one_line_errors(const std::vector<std::pair<std::string, std::string>>& cases,
                           const std::string& cal) {
  for (const auto& [args, option] : cases) {
    const Result r = run("plan " + args + cal);
    INFO(args << "\n" << r.out);
    CHECK(r.code != 0);
    CHECK(count_lines(r.out) == 1);
    CHECK_THAT(r.out, Contains(option));
  }
}

}  // namespace

TEST_CASE("cli plan: one rank has no communication, no bytes and no wait", "[cli]") {
  const json j = plan_json("--ranks 1");
  REQUIRE(j.at("rows").size() == 1);
  const json& r = row(j, 1);
  CHECK(r.at("comm_ms").get<double>() == 0);
  CHECK(r.at("wait_ms").get<double>() == 0);
  CHECK(r.at("bytes_per_epoch").get<int64_t>() == 0);
  CHECK(r.at("halo_rows").get<int64_t>() == 0);
  CHECK(r.at("compute_ms").get<double>() > 0);
  CHECK(r.at("epoch_ms").get<double>() == Approx(r.at("compute_ms").get<double>()));
  CHECK(j.at("best").at("ranks") == 1);
  CHECK(j.at("graph").at("vertices") == 10000);
  // 32 features -> 16 -> 8 classes: (32*16 + 16) + (16*8 + 8).
  CHECK(j.at("model").at("parameters") == 664);
  // Given rates: nothing timed, nothing cached.
  CHECK(j.at("calibration_file") == "");
  CHECK(j.at("rates_file") == kRates);
  REQUIRE(j.at("calibration").size() == 1);
  CHECK(j.at("calibration").at(0).at("given") == true);
  CHECK(j.at("calibration").at(0).at("seconds").get<double>() == 0);
}

TEST_CASE("cli plan: GAT is modelled, its attention scaled by a probe of real epochs", "[cli]") {
  const json j = plan_json("--ranks 1,2 --model gat");
  // 32 features -> 16 (4 heads) -> 8 classes (1 head): W, two attention vectors and a bias each.
  CHECK(j.at("model").at("parameters") == (32 * 16 + 3 * 16) + (16 * 8 + 3 * 8));
  // The probe's factor is the rates file's (1.5): no epoch trained.
  const json& probe = j.at("attention_probe");
  CHECK(probe.at("given") == true);
  CHECK(probe.at("factor").get<double>() == 1.5);
  CHECK(probe.at("epoch_ms").get<double>() == 0);
  CHECK(row(j, 1).at("epoch_ms").get<double>() > 0);
  CHECK(row(j, 2).at("bytes_per_epoch").get<int64_t>() > 0);
  CHECK(row(j, 2).at("comm_ms").get<double>() > 0);
  // The factor multiplies the attention's time only: with 1 instead of 1.5, one rank's epoch
  // loses a third of its attention time, and nothing else moves.
  const fs::path d = scratch("plan_gat");
  json rates = json::parse(std::ifstream(kRates));
  rates["attention_factor"] = 1.0;
  write(d / "rates.json", rates.dump());
  const Result r =
      run("plan --json --ranks 1,2 --model gat --rates " + (d / "rates.json").string());
  REQUIRE(r.code == 0);
  const json plain = json::parse(r.out);
  const double with = row(j, 1).at("compute_ms").get<double>(),
               without = row(plain, 1).at("compute_ms").get<double>();
  CHECK(with > without);
  CHECK(row(plain, 2).at("bytes_per_epoch") == row(j, 2).at("bytes_per_epoch"));
  // The attention's own terms, from the 1-rank rates (2 threads) by hand: per entry of the GCN
  // structure (edges + self loops), forward and backward, for both layers.
  const double entries = double(j.at("graph").at("edges").get<int64_t>() + 10000);
  const double attention_ms = entries * (1.5e-8 + 2.5e-8 + 8e-9 + 1.2e-8) * 1e3;
  CHECK(with - without == Approx(0.5 * attention_ms).epsilon(1e-9));
}

TEST_CASE("cli plan: communication and bytes grow with the rank count", "[cli]") {
  const json j = plan_json("--ranks 1,2,4,8 --network ethernet-10g --partitioners metis,random");
  for (const char* part : {"metis", "random"}) {
    INFO(part);
    double comm = 0;
    int64_t bytes = 0, halo = 0;
    for (int p : {2, 4, 8}) {
      const json& r = row(j, p, part);
      // What goes over the network; the packing is copying at this machine's rate, and shrinks
      // with the rows per rank.
      CHECK(r.at("comm_ms").get<double>() - r.at("pack_ms").get<double>() > comm);
      CHECK(r.at("bytes_per_epoch").get<int64_t>() > bytes);
      CHECK(r.at("halo_rows").get<int64_t>() > halo);
      CHECK(r.at("max_peers").get<int>() <= p - 1);
      CHECK(r.at("epoch_ms").get<double>() ==
            Approx(r.at("compute_ms").get<double>() + r.at("comm_ms").get<double>() +
                   r.at("wait_ms").get<double>()));
      comm = r.at("comm_ms").get<double>() - r.at("pack_ms").get<double>();
      bytes = r.at("bytes_per_epoch"), halo = r.at("halo_rows");
    }
  }
  // METIS cuts fewer edges than a random split: fewer rows to exchange.
  CHECK(row(j, 8, "metis").at("halo_rows") < row(j, 8, "random").at("halo_rows"));
  CHECK(row(j, 8, "metis").at("bytes_per_epoch") < row(j, 8, "random").at("bytes_per_epoch"));
}

TEST_CASE("cli plan: the named networks order the communication time", "[cli]") {
  auto at4 = [&](const std::string& net) { return row(plan_json("--ranks 4 " + net), 4); };
  const json e10 = at4("--network ethernet-10g"), e100 = at4("--network ethernet-100g"),
             ib = at4("--network infiniband-hdr"), nv = at4("--network nvlink");
  CHECK(e10.at("comm_ms").get<double>() > e100.at("comm_ms").get<double>());
  CHECK(e100.at("comm_ms").get<double>() > ib.at("comm_ms").get<double>());
  CHECK(e100.at("comm_ms").get<double>() > nv.at("comm_ms").get<double>());
  // The network changes neither the computation (the same rates) nor the bytes.
  for (const json* r : {&e100, &ib, &nv}) {
    CHECK(r->at("compute_ms").get<double>() == e10.at("compute_ms").get<double>());
    CHECK(r->at("bytes_per_epoch") == e10.at("bytes_per_epoch"));
  }
  // Without latency or overlap, communication past the packing is bytes / bandwidth: half the
  // bandwidth, twice the time. The packing does not depend on the network. (Comm is what is
  // left of a phase after the slowest rank's compute, so imbalance moves it a little: slow
  // links make the wire dominate.)
  const json slow = at4("--no-overlap --latency-us 0 --bandwidth-gbs 0.05");
  const json fast = at4("--no-overlap --latency-us 0 --bandwidth-gbs 0.1");
  auto wire = [](const json& r) {
    return r.at("comm_ms").get<double>() - r.at("pack_ms").get<double>();
  };
  CHECK(fast.at("pack_ms").get<double>() > 0);
  // (The slowest rank's packing: the link speed may make another rank the slowest.)
  CHECK(slow.at("pack_ms").get<double>() == Approx(fast.at("pack_ms").get<double>()).epsilon(0.05));
  CHECK(wire(slow) == Approx(2 * wire(fast)).epsilon(0.01));
  CHECK(wire(fast) ==
        Approx(fast.at("bytes_per_epoch").get<double>() / 4 / 0.1e9 * 1e3).epsilon(0.5));
}

TEST_CASE("cli plan: ranks sharing a node's cores are timed running at once", "[cli]") {
  const json j = plan_json("--ranks 2,16 --cores 2");
  // 2 ranks of 1 thread: two copies of each kernel at once. 16: still two, one per core; each
  // rank gets an eighth of the node.
  CHECK(row(j, 2).at("copies") == 2);
  CHECK(row(j, 2).at("compute_scale").get<double>() == 1);
  CHECK(row(j, 16).at("copies") == 2);
  CHECK(row(j, 16).at("compute_scale").get<double>() == 0.125);
  // Ranks without cores of their own wait longer at each exchange.
  CHECK(row(j, 16).at("wait_ms").get<double>() >= row(j, 2).at("wait_ms").get<double>());
  std::vector<int> copies;
  for (const json& c : j.at("calibration")) {
    copies.push_back(c.at("copies"));
    // The rates file's: two copies at once pay 0.2 ms per synchronisation, one alone none.
    CHECK(c.at("sync_ms").get<double>() == Approx(c.at("copies") == 1 ? 0.0 : 0.2));
  }
  CHECK(copies == std::vector<int>{1, 2});  // one thread alone, and two at once
  // Two ranks sharing the cores compute at the rates of two copies at once: slower than one
  // thread alone, by the file's SpMM, GEMM and element-wise ratios.
  const json alone = plan_json("--ranks 2 --threads-per-rank 1");
  CHECK(row(j, 2).at("compute_ms").get<double>() > row(alone, 2).at("compute_ms").get<double>());
  CHECK(row(j, 2).at("bytes_per_epoch") == row(alone, 2).at("bytes_per_epoch"));
  // Sixteen ranks on two cores: each gets an eighth of them, 8 times a rank's share of the work
  // at 2 ranks (per rank: 1/8 of the rows, at 1/8 of the rate).
  CHECK(row(j, 16).at("compute_ms").get<double>() ==
        Approx(row(j, 2).at("compute_ms").get<double>()).epsilon(0.1));
  // Without --cores every rank has a node of its own: one copy, no synchronisation cost.
  CHECK(row(alone, 2).at("copies") == 1);
}

TEST_CASE("cli plan: the table names the best rank count, and large P is extrapolated", "[cli]") {
  const Result r = run("plan --ranks 1,2,300 --max-partition 8 --rates " + kRates);
  INFO(r.out);
  REQUIRE(r.code == 0);
  CHECK_THAT(r.out, Contains("epoch ms") && Contains("MB/epoch") && Contains("best "));
  CHECK_THAT(r.out, Contains("  300* metis"));
  CHECK_THAT(r.out, Contains("extrapolated from partitions computed for 4 and 8 ranks"));
  const json j = plan_json("--ranks 300 --max-partition 8");
  CHECK(row(j, 300).at("extrapolated") == true);
  CHECK(row(j, 300).at("max_peers").get<int>() <= 299);
  CHECK(j.at("extrapolated_from") == json::array({4, 8}));
}

TEST_CASE("cli plan: bad options are one line naming the option", "[cli]") {
  const fs::path d = scratch("plan_bad");
  const std::string cal = " --rates " + kRates;
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"--ranks 0", "--ranks"},
      {"--ranks 1,x", "--ranks"},
      {"--ranks 1,,2", "--ranks"},
      {"--ranks 20000", "--ranks"},  // more ranks than the 10000 vertices
      {"--ranks 2 --network token-ring", "--network"},
      {"--ranks 2 --model gcnn", "--model"},
      {"--ranks 2 --partitioners metis,zoltan", "--partitioners"},
      {"--ranks 2 --layers 0", "--layers"},
      {"--ranks 2 --hidden 0", "--hidden"},
      {"--ranks 2 --latency-us -1", "--latency-us"},
      {"--ranks 2 --bandwidth-gbs 0", "--bandwidth-gbs"},
      {"--ranks 2 --threads-per-rank -1", "--threads-per-rank"},
      {"--ranks 2 --cores -2", "--cores"},
      {"--ranks 2 --threads-per-rank 0", "--threads-per-rank"},  // 0 was taken as "default"
      {"--ranks 2 --cores 0", "--cores"},
      {"--ranks 2 --max-partition 1", "--max-partition"},
      {"--ranks 2 --graph " + (d / "nope").string(), "--graph"},
      // Given rates are neither timed nor cached.
      {"--ranks 2 --calibration " + (d / "cal.json").string(), "--calibration"},
      {"--ranks 2 --recalibrate", "--recalibrate"},
  };
  check_one_line_errors(cases, cal);
  // A rates file that cannot be planned with: named, with what is wrong.
  write(d / "bad.json",
        R"({"rates": [{"threads": 2, "spmm": {"16": -1e9}, "gemm_fwd": {"16x8": 1e9},
                            "gemm_bwd": {"16x8": 1e9}, "elementwise": 1e9}]})");
  write(d / "typo.json",
        R"({"rates": [{"threads": 2, "spmm": {"16": 1e9}, "gemm_fwd": {"16x8": 1e9},
                             "gemm_bwd": {"16x8": 1e9}, "elementwise": 1e9, "sync": 0}]})");
  write(d / "one.json", R"({"rates": [{"threads": 1, "spmm": {"16": 1e9}, "gemm_fwd": {"16x8": 1e9},
                            "gemm_bwd": {"16x8": 1e9}, "elementwise": 1e9}], "cores": 2})");
  write(d / "text.json", "spmm 1e9\n");
  check_one_line_errors(
      {{"--ranks 2 --rates " + (d / "nope.json").string(), "--rates"},
       {"--ranks 2 --rates " + (d / "text.json").string(), "is not JSON"},
       {"--ranks 2 --rates " + (d / "bad.json").string(), "rates[0].spmm.16"},
       {"--ranks 2 --rates " + (d / "typo.json").string(), "unknown field \"sync\""},
       // 2 cores: a rank of 2 threads, which the file has no rates for
       {"--ranks 1 --rates " + (d / "one.json").string(), "no rates for 2 threads"}},
      "");
}

// ---- temporal graphs: both strategies of `dgnn train --strategy` ----------------------------

namespace {

fs::path evolving_graph(const fs::path& dir) {
  const fs::path g = dir / "evo";
  if (!fs::exists(g / "snapshots.txt")) {
    const Result r = run("generate evolving-sbm --vertices 2000 --snapshots 12 --classes 4 "
                         "--avg-degree 6 --seed 1 --out " + g.string());
    REQUIRE(r.code == 0);
  }
  return g;
}

const json& trow(const json& j, int ranks, const std::string& strategy) {
  return find_row(j, ranks, "strategy", strategy);
}

}  // namespace

TEST_CASE("cli plan: a temporal graph gets a row per rank count and strategy", "[cli]") {
  const fs::path d = scratch("plan_temporal");
  const fs::path g = evolving_graph(d);
  const json j = plan_json("--graph " + g.string() +
                           " --model gcrn --bptt 3 --ranks 1,2,4 "
                           "--network ethernet-10g");
  CHECK(j.at("graph").at("snapshots") == 12);
  CHECK(j.at("graph").at("train_steps") == 7);  // 11 steps predict a next snapshot: 70% train
  CHECK(j.at("graph").at("windows") == 3);       // 3 + 3 + 1
  CHECK(j.at("model").at("name") == "gcrn");
  REQUIRE(j.at("rows").size() == 6);
  for (const char* s : {"vertex", "snapshot"}) {
    INFO(s);
    const json& one = trow(j, 1, s);
    CHECK(one.at("bytes_per_epoch") == 0);
    CHECK(one.at("comm_ms").get<double>() == 0);
    CHECK(one.at("epoch_ms").get<double>() == Approx(one.at("compute_ms").get<double>()));
    const json& two = trow(j, 2, s);
    const json& four = trow(j, 4, s);
    CHECK(two.at("bytes_per_epoch").get<int64_t>() > 0);
    CHECK(four.at("bytes_per_epoch").get<int64_t>() > two.at("bytes_per_epoch").get<int64_t>());
    CHECK(two.at("comm_ms").get<double>() > 0);
  }
  // One rank runs the same kernels under both strategies.
  CHECK(trow(j, 1, "vertex").at("epoch_ms").get<double>() ==
        Approx(trow(j, 1, "snapshot").at("epoch_ms").get<double>()));
  // GCRN's snapshot strategy moves N x width per step and window; the vertex strategy the halo
  // of every snapshot and the pairs' second ends: more here.
  CHECK(trow(j, 2, "vertex").at("bytes_per_epoch").get<int64_t>() >
        trow(j, 2, "snapshot").at("bytes_per_epoch").get<int64_t>());
  const json& best = j.at("best");
  CHECK(best.at("epoch_ms").get<double>() ==
        Approx(trow(j, best.at("ranks"), best.at("strategy")).at("epoch_ms").get<double>()));
  // The real step's factor is the rates file's for a rank's 2 threads.
  CHECK(j.at("step_probe").at(0).at("given") == true);
  CHECK(j.at("step_probe").at(0).at("overhead").get<double>() == 1.3);
  // One rank draws every step's pairs at the file's rate (5e7 per second), on top of the kernels:
  // without a rate, drawing is not costed, and the epoch is that much shorter.
  CHECK(j.at("pairs_ms_per_epoch").get<double>() > 0);
  json rates = json::parse(std::ifstream(kRates));
  rates.erase("pairs_per_s");
  write(d / "rates.json", rates.dump());
  const Result r = run("plan --json --graph " + g.string() +
                       " --model gcrn --bptt 3 --ranks 1 --rates " + (d / "rates.json").string());
  REQUIRE(r.code == 0);
  const json free = json::parse(r.out);
  CHECK(free.at("pairs_ms_per_epoch").get<double>() == 0);
  CHECK(trow(j, 1, "vertex").at("epoch_ms").get<double>() -
            trow(free, 1, "vertex").at("epoch_ms").get<double>() ==
        Approx(j.at("pairs_ms_per_epoch").get<double>()).epsilon(1e-9));
}

TEST_CASE("cli plan: temporal strategies that cannot run are rows that say why", "[cli]") {
  const fs::path d = scratch("plan_temporal_rows");
  const fs::path g = evolving_graph(d);
  // EvolveGCN-H's summary spans all vertices: no vertex strategy on several ranks; 16 ranks are
  // more than the 12 snapshots.
  const json j = plan_json("--graph " + g.string() + " --model evolvegcn-h --ranks 1,2,16");
  CHECK(trow(j, 1, "vertex").at("feasible") == true);
  CHECK(trow(j, 2, "vertex").at("feasible") == false);
  CHECK_THAT(trow(j, 2, "vertex").at("why").get<std::string>(), Contains("top-k"));
  CHECK(trow(j, 2, "snapshot").at("feasible") == true);
  CHECK(trow(j, 16, "snapshot").at("feasible") == false);
  CHECK_THAT(trow(j, 16, "snapshot").at("why").get<std::string>(), Contains("12 snapshots"));
  CHECK(j.at("best").at("strategy") != "");
  // The table prints them as rows too, and names the best.
  const Result r =
      run("plan --graph " + g.string() + " --model evolvegcn-h --ranks 2 --rates " + kRates);
  REQUIRE(r.code == 0);
  CHECK_THAT(r.out, Contains("cannot run: evolvegcn-h's top-k summary spans all vertices"));
  CHECK_THAT(r.out, Contains("best      2 ranks, snapshot strategy"));
}

TEST_CASE("cli plan: --snapshot-groups partitions as train does", "[cli]") {
  const fs::path d = scratch("plan_temporal_groups");
  const fs::path g = evolving_graph(d);
  const std::string args = "--graph " + g.string() + " --model gcrn --ranks 2 --strategies vertex";
  const json by_default = plan_json(args);
  const json union_only = plan_json(args + " --snapshot-groups 0");
  const json all_groups = plan_json(args + " --snapshot-groups 12");  // the default: min(12, 16)
  // The default balances 12 groups (a partition of its own); the union graph alone is another.
  CHECK(trow(all_groups, 2, "vertex").at("bytes_per_epoch") ==
        trow(by_default, 2, "vertex").at("bytes_per_epoch"));
  CHECK(trow(union_only, 2, "vertex").at("bytes_per_epoch") !=
        trow(by_default, 2, "vertex").at("bytes_per_epoch"));
}

TEST_CASE("cli plan: bad temporal options are one line naming the option", "[cli]") {
  const fs::path d = scratch("plan_temporal_bad");
  const fs::path g = evolving_graph(d);
  const std::string cal = " --rates " + kRates;
  const std::string graph = " --graph " + g.string();
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"--ranks 2 --strategies vertex,edge" + graph, "--strategies"},
      {"--ranks 2 --model gcn" + graph, "--model"},
      {"--ranks 2 --task node" + graph, "--task"},
      {"--ranks 2 --bptt -1" + graph, "--bptt"},
      {"--ranks 2 --neg-train -1" + graph, "--neg-train"},
      {"--ranks 5000" + graph, "--ranks"},                  // more ranks than vertices
      {"--ranks 2 --strategies snapshot", "--strategies"},  // a static graph
      {"--ranks 2 --snapshot-groups -2" + graph, "--snapshot-groups"},
      {"--ranks 2 --snapshot-groups 2 --partitioners random" + graph, "--snapshot-groups"},
      {"--ranks 2 --snapshot-groups 2 --strategies snapshot" + graph, "--snapshot-groups"},
      {"--ranks 2 --snapshot-groups 2", "--snapshot-groups"},  // a static graph
  };
  check_one_line_errors(cases, cal);
}

TEST_CASE("cli plan: forecasting a vertex signal gets rows for both strategies", "[cli]") {
  const std::string g = std::string(DGNN_SOURCE_DIR) + "/datasets/chickenpox/chickenpox.json.gz";
  const json j = plan_json("--graph " + g +
                           " --task forecast --model tgcn --lags 4 --bptt 40 "
                           "--ranks 1,2,4 --network ethernet-10g");
  // 517 samples of 4 lags: 361 train, in windows of 40 (9 of 40 and one of 1).
  CHECK(j.at("graph").at("train_steps") == 361);
  CHECK(j.at("graph").at("windows") == 10);
  CHECK(j.at("graph").at("features") == 4);
  CHECK(j.at("model").at("task") == "forecast");
  // T-GCN (4 -> 3 x 16, 16 -> 3 x 16, biases) and the head (16 -> 1).
  CHECK(j.at("model").at("parameters") == 4 * 48 + 48 + 16 * 48 + 48 + 16 + 1);
  REQUIRE(j.at("rows").size() == 6);
  for (const char* s : {"vertex", "snapshot"}) {
    INFO(s);
    CHECK(trow(j, 1, s).at("bytes_per_epoch") == 0);
    CHECK(trow(j, 2, s).at("bytes_per_epoch").get<int64_t>() > 0);
    CHECK(trow(j, 2, s).at("epoch_ms").get<double>() > 0);
  }
  CHECK(trow(j, 1, "vertex").at("epoch_ms").get<double>() ==
        Approx(trow(j, 1, "snapshot").at("epoch_ms").get<double>()));
  CHECK(j.at("step_probe").at(0).at("overhead").get<double>() == 1.3);
}

// ---- a live calibration ----------------------------------------------------------------------

namespace {

// Every rate of a plan's "rates" (the --rates format) is a number a machine can produce: positive
// and finite, below broad physical bounds. Never a ratio, nor a time of this machine.
void check_sane(const json& rates) {
  INFO(rates.dump(1));
  auto in = [](const json& v, double lo, double hi) {
    CHECK(v.is_number());
    const double x = v.get<double>();
    CHECK(std::isfinite(x));
    CHECK(x >= lo);
    CHECK(x <= hi);
  };
  CHECK(rates.at("cores").get<int>() >= 1);
  REQUIRE(!rates.at("rates").empty());
  for (const json& e : rates.at("rates")) {
    CHECK(e.at("threads").get<int>() >= 1);
    CHECK(e.at("copies").get<int>() >= 1);
    for (auto& [w, v] : e.at("spmm").items()) in(v, 1e3, 1e12);  // entries x width per second
    for (const char* g : {"gemm_fwd", "gemm_bwd"})
      for (auto& [s, v] : e.at(g).items()) in(v, 1e3, 1e15);  // flop/s
    in(e.at("elementwise"), 1e3, 1e12);                       // floats per second
    in(e.at("sync_s"), 0, 1);                                 // seconds per synchronisation
    if (e.at("copies") == 1) CHECK(e.at("sync_s").get<double>() == 0);
    for (const char* a : {"attention_fwd", "attention_bwd"})
      if (e.contains(a))
        for (auto& [s, v] : e.at(a).items()) in(v, 1e-13, 1e-3);  // seconds per entry
    for (const char* f :
         {"lstm_fwd", "lstm_bwd", "gru_fwd", "gru_bwd", "pair_fwd", "pair_bwd", "gather"})
      if (e.contains(f)) in(e.at(f), 1e2, 1e12);
  }
  in(rates.at("attention_factor"), 0.5, 8);  // the probe's clamp
  if (rates.contains("step_overhead"))
    for (auto& [t, v] : rates.at("step_overhead").items()) in(v, 0.25, 8);
  if (rates.contains("process_sync_s"))
    for (auto& [p, v] : rates.at("process_sync_s").items()) in(v, 0, 1);
  if (rates.contains("pairs_per_s")) {
    in(rates.at("pairs_per_s"), 1, 1e12);
    in(rates.at("pair_draw_fixed"), 0, 1);
  }
}

}  // namespace

TEST_CASE("cli plan: a live calibration measures sane rates, cached for the next plan", "[cli]") {
  const fs::path d = scratch("plan_live");
  // Static: GAT on 2 cores (two threads; one, and two copies at once with a synchronisation),
  // with the attention probe's real epochs.
  const json gat = live_plan_json(d, "--ranks 1,2 --cores 2 --model gat");
  CHECK(fs::exists(d / "calibration.json"));
  CHECK(gat.at("calibration_file") == (d / "calibration.json").string());
  for (const json& c : gat.at("calibration")) {
    CHECK(c.at("cached") == false);
    CHECK(c.at("given") == false);
  }
  check_sane(gat.at("rates"));
  const json& probe = gat.at("attention_probe");
  CHECK(probe.at("given") == false);
  CHECK(probe.at("epoch_ms").get<double>() > 0);
  CHECK(std::isfinite(probe.at("epoch_ms").get<double>()));
  // The next plan on this graph reads the same rates from the cache.
  const json again = live_plan_json(d, "--ranks 1,2 --cores 2 --model gat");
  for (const json& c : again.at("calibration")) CHECK(c.at("cached") == true);
  CHECK(again.at("rates").at("rates") == gat.at("rates").at("rates"));
  // What a plan measured, given back with --rates, plans the same: its "rates" are complete.
  write(d / "measured.json", gat.at("rates").dump());
  const Result replay = run("plan --json --ranks 1,2 --cores 2 --model gat --rates " +
                            (d / "measured.json").string());
  REQUIRE(replay.code == 0);
  CHECK(json::parse(replay.out).at("rows") == gat.at("rows"));

  // Temporal, 4 single-threaded ranks on 2 cores: the fused ops, one real step, processes
  // synchronising on oversubscribed cores, pairs drawn.
  const fs::path g = evolving_graph(d);
  const json t = live_plan_json(d, "--graph " + g.string() +
                                       " --model gcrn --bptt 3 --ranks 1,4 --cores 2 "
                                       "--threads-per-rank 1");
  check_sane(t.at("rates"));
  for (const char* f : {"lstm_fwd", "lstm_bwd", "pair_fwd", "pair_bwd", "gather"})
    CHECK(t.at("rates").at("rates").at(0).contains(f));
  CHECK(t.at("rates").contains("step_overhead"));
  CHECK(t.at("rates").contains("process_sync_s"));
  CHECK(t.at("rates").contains("pairs_per_s"));
  for (const json& r : t.at("rows")) {
    CHECK(std::isfinite(r.at("epoch_ms").get<double>()));
    CHECK(r.at("epoch_ms").get<double>() > 0);
  }
}

TEST_CASE("cli plan: memory per rank falls with the rank count and says what fits", "[cli]") {
  // The generated default graph, partitioned by METIS: every rank's share from the partition.
  const json j = plan_json("--ranks 1,2,4 --device-memory 6MB");
  REQUIRE(j.at("memory").size() == 3);
  CHECK(j.at("device_memory_bytes") == 6'000'000);
  const json& one = j.at("memory")[0];
  const json& four = j.at("memory")[2];
  CHECK(one.at("ranks") == 1);
  CHECK(one.at("halo_bytes") == 0);
  CHECK(four.at("halo_bytes") > 0);
  // Features and the tape are shares of the rows; the model is replicated.
  CHECK(four.at("feature_bytes").get<double>() < 0.3 * one.at("feature_bytes").get<double>());
  CHECK(four.at("model_bytes") == one.at("model_bytes"));
  CHECK(four.at("rank_bytes").get<double>() < 0.5 * one.at("rank_bytes").get<double>());
  CHECK(four.at("total_bytes").get<double>() >= one.at("rank_bytes").get<double>());
  for (const json& m : j.at("memory"))
    CHECK(m.at("fits") == (m.at("rank_bytes").get<int64_t>() <= 6'000'000));
  CHECK(one.at("fits") == false);

  // By size alone: a billion-edge dynamic graph on 32 to 128 ranks, no graph read, no times.
  const Result r = run("plan --vertices 100000000 --edges 1000000000 --snapshots 100 "
                       "--feature-dim 64 --model gcrn --hidden 64 --bptt 5 --ranks 32,64,128 "
                       "--device-memory 80GB");
  INFO(r.out);
  REQUIRE(r.code == 0);
  CHECK_THAT(r.out, Contains("memory per rank"));
  CHECK_THAT(r.out, Contains("memory only"));
  const json s = plan_json("--vertices 100000000 --edges 1000000000 --snapshots 100 "
                           "--feature-dim 64 --model gcrn --hidden 64 --bptt 5 --ranks 32,64,128 "
                           "--device-memory 80GB");
  REQUIRE(s.at("memory").size() == 3);
  const double r32 = s.at("memory")[0].at("rank_bytes").get<double>();
  const double r128 = s.at("memory")[2].at("rank_bytes").get<double>();
  CHECK(r128 < 0.3 * r32);
  // Evaluation fetches the rows its candidates name (10M positives a step, 1 / 128 of them here,
  // 101 candidates each), not every vertex's (100M x (64 + 2 x 64) floats, 77 GB).
  CHECK(s.at("memory")[2].at("halo_bytes").get<double>() < 100'000'000.0 * (64 + 2 * 64) * 4 / 4);
  CHECK(s.at("memory")[2].at("fits") == true);
  CHECK(s.at("memory")[2].at("fits") == (r128 <= 80e9));
  CHECK(s.at("memory")[2].at("halo_upper_bound") == true);
}

TEST_CASE("cli plan: bad memory options are one line naming the option", "[cli]") {
  check_one_line_errors(
      {
          {"--ranks 2 --device-memory 80XB", "--device-memory"},
          {"--ranks 2 --device-memory 0", "--device-memory"},
          {"--ranks 2 --device-memory -5GB", "--device-memory"},
          {"--ranks 2 --device-memory GB", "--device-memory"},
          {"--ranks 2 --vertices 1000", "--edges"},
          {"--ranks 2 --edges 1000", "--vertices"},
          {"--ranks 2 --vertices 1 --edges 10", "--vertices"},
          {"--ranks 2 --vertices 100 --edges 0", "--edges"},
          {"--ranks 200 --vertices 100 --edges 1000", "--ranks"},
          {"--ranks 2 --vertices 100 --edges 1000 --graph " + std::string(DGNN_TEST_DATA) +
               "/graph_weighted.txt",
           "--graph"},
          {"--ranks 2 --vertices 100 --edges 1000 --train-ids x.txt", "--train-ids"},
      },
      " --rates " + kRates);
}
