// Moving snapshots from the rank that read them: every rank ends up with the events, ids and
// sizes of rank 0's graph, and exactly the snapshots it asked for, equal entry by entry to
// rank 0's; differences are sent where smaller, and rank 0 accounts what they saved.
#include <catch2/catch.hpp>

#include "../small_evolving.hpp"
#include "dgnn/comm/communicator.hpp"
#include "dgnn/datasets/evolving_sbm.hpp"
#include "dgnn/gnn/temporal/temporal_dist.hpp"
#include "dgnn/graph/temporal.hpp"

using namespace dgnn;

namespace {

// Cumulative snapshots (each the previous plus new edges) and window snapshots (each a different
// edge set) of one generated graph, unweighted (EvolvingSbm::to_temporal) or with weights 1..3.
TemporalGraph graph(SnapshotMode mode, bool weighted) {
  EvolvingSbmConfig cfg;
  cfg.vertices = 200;
  cfg.snapshots = 9;
  cfg.classes = 3;
  cfg.avg_degree = 4;
  cfg.seed = 11;
  const EvolvingSbm sbm = generate_evolving_sbm(cfg);
  if (!weighted) return sbm.to_temporal(mode);
  const EdgeList e =
      test::sbm_edge_list(sbm, [](int t, int64_t i) { return float(1 + (i + t) % 3); });
  EdgeListOptions opt;
  opt.time_col = 2;
  opt.weight_col = 3;
  SnapshotOptions snap;
  snap.seconds = 1;
  snap.mode = mode;
  return build_temporal(e, opt, snap, "generated", sbm.num_vertices());
}

void require_equal(const Csr& a, const Csr& b) {
  REQUIRE(a.rows == b.rows);
  REQUIRE(a.cols == b.cols);
  REQUIRE(a.offsets == b.offsets);
  REQUIRE(a.indices == b.indices);
  REQUIRE(a.values == b.values);
}

// Runs the move with `need` and checks this rank's result against the reference graph.
SnapshotMoves check_move(const TemporalGraph& ref, const std::function<bool(int, int)>& need) {
  Communicator& comm = world();
  TemporalGraph g;
  if (comm.rank() == 0) g = ref;
  std::vector<int64_t> nnz;
  std::vector<Csr> held;
  SnapshotMoves moves;
  broadcast_temporal_meta(g, nnz, comm, moves);
  REQUIRE(g.num_vertices == ref.num_vertices);
  REQUIRE(g.original_ids == ref.original_ids);
  REQUIRE(g.weighted == ref.weighted);
  REQUIRE(g.num_snapshots() == ref.num_snapshots());
  for (int t = 0; t < ref.num_snapshots(); ++t) {
    REQUIRE(g.events[size_t(t)].src == ref.events[size_t(t)].src);
    REQUIRE(g.events[size_t(t)].weight == ref.events[size_t(t)].weight);
    REQUIRE(nnz[size_t(t)] == ref.snapshot(t).nnz());
  }
  move_snapshots(g, held, comm, need, moves);
  bool all = true;
  for (int t = 0; t < ref.num_snapshots(); ++t) all = all && need(comm.rank(), t);
  if (comm.rank() == 0 || all) {
    REQUIRE(held.empty());
    REQUIRE(g.num_snapshots() == ref.num_snapshots());
    for (int t = 0; t < ref.num_snapshots(); ++t) require_equal(g.snapshot(t), ref.snapshot(t));
  } else {
    REQUIRE(int(held.size()) == ref.num_snapshots());
    for (int t = 0; t < ref.num_snapshots(); ++t) {
      if (need(comm.rank(), t))
        require_equal(held[size_t(t)], ref.snapshot(t));
      else
        REQUIRE(held[size_t(t)].rows == 0);
    }
  }
  return moves;
}

}  // namespace

// What rank 0 should report: per receiver, its first snapshot whole, each later one as the
// difference from the receiver's previous one exactly when that is smaller than the whole
// snapshot (recomputed here from snapshots built from scratch, not from the graph's diffs).
SnapshotMoves expected(const TemporalGraph& ref, const std::function<bool(int, int)>& need,
                       int ranks) {
  SnapshotMoves m;
  for (int r = 1; r < ranks; ++r) {
    int prev = -1;
    for (int t = 0; t < ref.num_snapshots(); ++t) {
      if (!need(r, t)) continue;
      const Csr now = ref.snapshot(t);
      const int64_t whole = whole_wire_bytes(now);
      int64_t bytes = whole;
      if (prev >= 0) {
        const int64_t diff = csr_difference(ref.snapshot(prev), now).bytes();
        if (diff < whole) bytes = diff, ++m.as_difference;
      }
      m.bytes += bytes;
      m.whole_bytes += whole;
      ++m.snapshots;
      prev = t;
    }
  }
  return m;
}

void check_accounting(const SnapshotMoves& got, const SnapshotMoves& want) {
  // CHECK, not REQUIRE: a failure on rank 0 alone must not leave the others in a collective.
  CHECK(got.snapshots == want.snapshots);
  CHECK(got.as_difference == want.as_difference);
  CHECK(got.bytes == want.bytes);
  CHECK(got.whole_bytes == want.whole_bytes);
  CHECK(got.meta_bytes > 0);
}

TEST_CASE("every rank receives every snapshot as base + differences", "[tmove]") {
  Communicator& comm = world();
  auto all = [](int, int) { return true; };
  for (bool weighted : {false, true}) {
    const TemporalGraph ref = graph(SnapshotMode::cumulative, weighted);
    const SnapshotMoves m = check_move(ref, all);
    if (comm.rank() == 0) {
      check_accounting(m, expected(ref, all, comm.size()));
      // Cumulative snapshots only grow: every step after the first goes as its difference.
      CHECK(m.as_difference == (comm.size() - 1) * (ref.num_snapshots() - 1));
      CHECK(m.bytes * 2 < m.whole_bytes);
    }
  }
}

TEST_CASE("each rank receives only its own steps, across gaps, whole where that is smaller",
          "[tmove]") {
  Communicator& comm = world();
  // Rank r > 0 needs steps t with t % size == r, and every third step besides: runs and gaps.
  auto need = [&](int r, int t) { return t % comm.size() == r || t % 3 == 0; };
  for (SnapshotMode mode : {SnapshotMode::cumulative, SnapshotMode::window}) {
    const TemporalGraph ref = graph(mode, true);
    const SnapshotMoves m = check_move(ref, need);
    if (comm.rank() == 0) {
      check_accounting(m, expected(ref, need, comm.size()));
      // Window snapshots share few edges: they go whole. Cumulative ones mostly as differences.
      if (mode == SnapshotMode::window) CHECK(m.as_difference == 0);
      if (mode == SnapshotMode::cumulative) CHECK(m.as_difference > m.snapshots / 2);
    }
  }
}

TEST_CASE("csr_difference turns one snapshot into any other", "[tmove]") {
  const TemporalGraph ref = graph(SnapshotMode::window, true);
  for (int a = 0; a < ref.num_snapshots(); a += 2)
    for (int b = 0; b < ref.num_snapshots(); b += 3) {
      const Csr from = ref.snapshot(a), to = ref.snapshot(b);
      const SnapshotDiff d = csr_difference(from, to);
      require_equal(apply_diff(from, d), to);
      if (a == b) REQUIRE(d.bytes() == 0);
    }
}
