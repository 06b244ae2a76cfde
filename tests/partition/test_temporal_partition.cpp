// The vertex strategy's partition of a temporal graph: per-snapshot balance by hand, and METIS
// with one constraint per group of snapshots spreading snapshots that the union graph's cut puts
// on one part.
#include <array>
#include <catch2/catch.hpp>
#include <vector>

#include "dgnn/common/error.hpp"
#include "dgnn/common/hash_rng.hpp"
#include "dgnn/partition/partition.hpp"

using namespace dgnn;

namespace {

// Events (src, dst, time) with a time column; one snapshot per distinct time unit bucket.
TemporalGraph temporal(int64_t n, const std::vector<std::array<int64_t, 3>>& events, int buckets) {
  EdgeList e;
  for (auto [u, v, t] : events) {
    e.src.push_back(u);
    e.dst.push_back(v);
    e.time.push_back(t);
  }
  EdgeListOptions eo;
  eo.time_col = 2;
  SnapshotOptions so;
  so.count = buckets;
  return build_temporal(e, eo, so, "events.txt", n);
}

// Two communities of 100 vertices, active in turn: snapshots 0-4 hold edges among 0..99 only,
// 5-9 among 100..199 only, and a few edges join them. The union's best cut separates the
// communities, which puts every snapshot's edges on one part.
TemporalGraph two_eras() {
  std::vector<std::array<int64_t, 3>> ev;
  Rng rng(4);
  for (int t = 0; t < 10; ++t) {
    const int64_t base = t < 5 ? 0 : 100;
    for (int k = 0; k < 300; ++k) {
      const int64_t u = base + int64_t(rng.below(100)), v = base + int64_t(rng.below(100));
      if (u != v) ev.push_back({u, v, t});
    }
  }
  for (int k = 0; k < 5; ++k) ev.push_back({k, 100 + k, 9});
  return temporal(200, ev, 10);
}

}  // namespace

TEST_CASE("temporal_balance counts each snapshot's share per part") {
  // Snapshot 0: edges 0-1, 0-2 (undirected); snapshot 1: 2-3. Parts {0, 1} and {2, 3}.
  const TemporalGraph g = temporal(4, {{0, 1, 0}, {0, 2, 0}, {2, 3, 1}}, 2);
  const TemporalBalance b = temporal_balance(g, {0, 0, 1, 1}, 2);
  REQUIRE(b.snapshots.size() == 2);
  // Snapshot 0 stores 4 in-edges: 3 on part 0 (vertex 0 twice, 1 once), 1 on part 1.
  CHECK(b.snapshots[0].edges == 4);
  CHECK(b.snapshots[0].edge_balance == Approx(3.0 / 2.0));
  CHECK(b.snapshots[0].active == 3);
  CHECK(b.snapshots[0].vertex_balance == Approx(2.0 / 1.5));
  CHECK(b.snapshots[0].events == 2);  // both sourced at vertex 0
  CHECK(b.snapshots[0].event_balance == Approx(2.0));
  // Snapshot 1 lies on part 1 alone.
  CHECK(b.snapshots[1].edge_balance == Approx(2.0));
  // Makespan: (3 + 2) / (2 + 1) over the snapshots' edges.
  CHECK(b.edge_makespan == Approx(5.0 / 3.0));
  CHECK_THROWS_AS(temporal_balance(g, {0, 1}, 2), ShapeError);
}

TEST_CASE("METIS with a constraint per group of snapshots spreads every era over the parts") {
  const TemporalGraph g = two_eras();
  PartitionOptions opt;
  opt.parts = 2;
  opt.seed = 1;
  opt.snapshot_groups = 0;  // the union alone
  const std::vector<int32_t> plain = partition_temporal(g, opt);
  const TemporalBalance before = temporal_balance(g, plain, 2);
  CHECK(before.edge_makespan > 1.8);
  for (int groups : {2, 10, -1}) {
    INFO("groups " << groups);
    opt.snapshot_groups = groups;
    const std::vector<int32_t> part = partition_temporal(g, opt);
    const TemporalBalance after = temporal_balance(g, part, 2);
    CHECK(after.edge_makespan < 1.15);
    CHECK(after.event_makespan < 1.2);
    for (const auto& s : after.snapshots) CHECK(s.edge_balance < 1.3);
    CHECK(partition_temporal(g, opt) == part);  // deterministic
  }
  // The other partitioners ignore the groups; a negative count other than -1 is refused.
  opt.method = Partitioner::range;
  opt.snapshot_groups = 4;
  CHECK(partition_temporal(g, opt) == partition_vertices(temporal_union(g), opt));
  opt.method = Partitioner::metis;
  opt.snapshot_groups = -2;
  CHECK_THROWS_AS(partition_temporal(g, opt), OptionError);
}

TEST_CASE("balance columns must fit the graph") {
  const Csr u = temporal_union(two_eras());
  PartitionOptions opt;
  opt.parts = 2;
  CHECK_THROWS_AS(partition_vertices(u, opt, {}, {std::vector<int64_t>(3, 1)}), ShapeError);
  CHECK_THROWS_AS(partition_vertices(u, opt, {}, {std::vector<int64_t>(size_t(u.rows), -1)}),
                  ShapeError);
  // A column of zeros balances nothing and is dropped (METIS divides by its total).
  CHECK(partition_vertices(u, opt, {}, {std::vector<int64_t>(size_t(u.rows), 0)}) ==
        partition_vertices(u, opt));
}
