// `dgnn plan` as a user runs it, on the generated default graph: the table's structure on one
// rank (no communication), communication and bytes growing with the rank count, the named
// networks ordering the communication time as their latency and bandwidth say, extrapolation past
// --max-partition, and bad options as one line. No wall-clock time of this machine is asserted:
// the rates are measured once into a scratch calibration file and shared by the runs compared.
#include <catch2/catch.hpp>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli_helpers.hpp"

namespace fs = std::filesystem;
using namespace cli_test;
using Catch::Matchers::Contains;
using nlohmann::json;

namespace {

json plan_json(const fs::path& dir, const std::string& args) {
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
  const fs::path d = scratch("plan_one");
  const json j = plan_json(d, "--ranks 1");
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
  CHECK(fs::exists(d / "calibration.json"));
}

TEST_CASE("cli plan: GAT is modelled, its attention scaled by a probe of real epochs", "[cli]") {
  const fs::path d = scratch("plan_gat");
  const json j = plan_json(d, "--ranks 1,2 --model gat");
  // 32 features -> 16 (4 heads) -> 8 classes (1 head): W, two attention vectors and a bias each.
  CHECK(j.at("model").at("parameters") == (32 * 16 + 3 * 16) + (16 * 8 + 3 * 8));
  const json& probe = j.at("attention_probe");
  CHECK(probe.at("epoch_ms").get<double>() > 0);
  CHECK(probe.at("factor").get<double>() >= 0.5);
  CHECK(probe.at("factor").get<double>() <= 8);
  // One rank: the probe's own configuration.
  CHECK(row(j, 1).at("epoch_ms").get<double>() > 0);
  CHECK(row(j, 2).at("bytes_per_epoch").get<int64_t>() > 0);
  CHECK(row(j, 2).at("comm_ms").get<double>() > 0);
}

TEST_CASE("cli plan: communication and bytes grow with the rank count", "[cli]") {
  const fs::path d = scratch("plan_grow");
  const json j = plan_json(d, "--ranks 1,2,4,8 --network ethernet-10g --partitioners metis,random");
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
  const fs::path d = scratch("plan_networks");
  auto at4 = [&](const std::string& net) { return row(plan_json(d, "--ranks 4 " + net), 4); };
  const json e10 = at4("--network ethernet-10g"), e100 = at4("--network ethernet-100g"),
             ib = at4("--network infiniband-hdr"), nv = at4("--network nvlink");
  CHECK(e10.at("comm_ms").get<double>() > e100.at("comm_ms").get<double>());
  CHECK(e100.at("comm_ms").get<double>() > ib.at("comm_ms").get<double>());
  CHECK(e100.at("comm_ms").get<double>() > nv.at("comm_ms").get<double>());
  // The network changes neither the computation (one calibration, cached) nor the bytes.
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
  const fs::path d = scratch("plan_cores");
  const json j = plan_json(d, "--ranks 2,16 --cores 2");
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
    CHECK(c.at("sync_ms").get<double>() >= 0);
    if (c.at("copies") == 1) CHECK(c.at("sync_ms").get<double>() == 0);
  }
  CHECK(copies == std::vector<int>{1, 2});  // one thread alone, and two at once
  // Without --cores every rank has a node of its own: one copy, no synchronisation cost.
  const json own = plan_json(d, "--ranks 2 --threads-per-rank 1");
  CHECK(row(own, 2).at("copies") == 1);
}

TEST_CASE("cli plan: the table names the best rank count, and large P is extrapolated", "[cli]") {
  const fs::path d = scratch("plan_table");
  const Result r = run("plan --ranks 1,2,300 --max-partition 8 --calibration " +
                       (d / "calibration.json").string());
  INFO(r.out);
  REQUIRE(r.code == 0);
  CHECK_THAT(r.out, Contains("epoch ms") && Contains("MB/epoch") && Contains("best "));
  CHECK_THAT(r.out, Contains("  300* metis"));
  CHECK_THAT(r.out, Contains("extrapolated from partitions computed for 4 and 8 ranks"));
  const json j = plan_json(d, "--ranks 300 --max-partition 8");
  CHECK(row(j, 300).at("extrapolated") == true);
  CHECK(row(j, 300).at("max_peers").get<int>() <= 299);
  CHECK(j.at("extrapolated_from") == json::array({4, 8}));
}

TEST_CASE("cli plan: bad options are one line naming the option", "[cli]") {
  const fs::path d = scratch("plan_bad");
  const std::string cal = " --calibration " + (d / "calibration.json").string();
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
  };
  check_one_line_errors(cases, cal);
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
  const json j = plan_json(d, "--graph " + g.string() + " --model gcrn --bptt 3 --ranks 1,2,4 "
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
  CHECK(j.at("step_probe").at(0).at("overhead").get<double>() > 0);
}

TEST_CASE("cli plan: temporal strategies that cannot run are rows that say why", "[cli]") {
  const fs::path d = scratch("plan_temporal_rows");
  const fs::path g = evolving_graph(d);
  // EvolveGCN-H's summary spans all vertices: no vertex strategy on several ranks; 16 ranks are
  // more than the 12 snapshots.
  const json j = plan_json(d, "--graph " + g.string() + " --model evolvegcn-h --ranks 1,2,16");
  CHECK(trow(j, 1, "vertex").at("feasible") == true);
  CHECK(trow(j, 2, "vertex").at("feasible") == false);
  CHECK_THAT(trow(j, 2, "vertex").at("why").get<std::string>(), Contains("top-k"));
  CHECK(trow(j, 2, "snapshot").at("feasible") == true);
  CHECK(trow(j, 16, "snapshot").at("feasible") == false);
  CHECK_THAT(trow(j, 16, "snapshot").at("why").get<std::string>(), Contains("12 snapshots"));
  CHECK(j.at("best").at("strategy") != "");
  // The table prints them as rows too, and names the best.
  const Result r = run("plan --graph " + g.string() + " --model evolvegcn-h --ranks 2 "
                       "--calibration " + (d / "calibration.json").string());
  REQUIRE(r.code == 0);
  CHECK_THAT(r.out, Contains("cannot run: evolvegcn-h's top-k summary spans all vertices"));
  CHECK_THAT(r.out, Contains("best      2 ranks, snapshot strategy"));
}

TEST_CASE("cli plan: --snapshot-groups partitions as train does", "[cli]") {
  const fs::path d = scratch("plan_temporal_groups");
  const fs::path g = evolving_graph(d);
  const std::string args = "--graph " + g.string() + " --model gcrn --ranks 2 --strategies vertex";
  const json by_default = plan_json(d, args);
  const json union_only = plan_json(d, args + " --snapshot-groups 0");
  const json all_groups = plan_json(d, args + " --snapshot-groups 12");  // the default: min(12, 16)
  // The default balances 12 groups (a partition of its own); the union graph alone is another.
  CHECK(trow(all_groups, 2, "vertex").at("bytes_per_epoch") ==
        trow(by_default, 2, "vertex").at("bytes_per_epoch"));
  CHECK(trow(union_only, 2, "vertex").at("bytes_per_epoch") !=
        trow(by_default, 2, "vertex").at("bytes_per_epoch"));
}

TEST_CASE("cli plan: bad temporal options are one line naming the option", "[cli]") {
  const fs::path d = scratch("plan_temporal_bad");
  const fs::path g = evolving_graph(d);
  const std::string cal = " --calibration " + (d / "calibration.json").string();
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
  const fs::path d = scratch("plan_forecast");
  const std::string g = std::string(DGNN_SOURCE_DIR) + "/datasets/chickenpox/chickenpox.json.gz";
  const json j = plan_json(d, "--graph " + g + " --task forecast --model tgcn --lags 4 --bptt 40 "
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
  CHECK(j.at("step_probe").at(0).at("overhead").get<double>() > 0);
}
