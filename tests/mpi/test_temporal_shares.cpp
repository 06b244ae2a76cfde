// The vertex strategy's shares: after move_vertex_shares each rank (rank 0 too) holds exactly its
// vertex_share of every snapshot, less than the whole graph and together at most twice it, and
// the views make_temporal_rank cuts from the shares equal those it cuts from whole snapshots.
// TemporalRun keeps only the shares on every rank.
#include <catch2/catch.hpp>

#include "../small_evolving.hpp"
#include "dgnn/comm/communicator.hpp"
#include "dgnn/datasets/evolving_sbm.hpp"
#include "dgnn/gnn/temporal/temporal_dist.hpp"
#include "dgnn/gnn/temporal/temporal_run.hpp"
#include "dgnn/graph/temporal.hpp"

using namespace dgnn;

namespace {

TemporalGraph graph(SnapshotMode mode, bool weighted, bool directed = false) {
  EvolvingSbmConfig cfg;
  cfg.vertices = 300;
  cfg.snapshots = 8;
  cfg.classes = 4;
  cfg.avg_degree = 5;
  cfg.seed = 5;
  const EvolvingSbm sbm = generate_evolving_sbm(cfg);
  if (!weighted && !directed) return sbm.to_temporal(mode);
  const EdgeList e =
      test::sbm_edge_list(sbm, [](int t, int64_t i) { return float(1 + (i + t) % 3); });
  EdgeListOptions opt;
  opt.time_col = 2;
  opt.weight_col = weighted ? 3 : -1;
  opt.directed = directed;
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

int64_t stored_entries(const TemporalGraph& g) {
  int64_t n = 0;
  for (int64_t e : snapshot_nnz(g)) n += e;
  return n;
}

}  // namespace

TEST_CASE("each rank holds only its vertices' share of every snapshot", "[tmove][tshare]") {
  Communicator& comm = world();
  const int p = comm.size(), me = comm.rank();
  for (SnapshotMode mode : {SnapshotMode::window, SnapshotMode::cumulative})
    for (int variant = 0; variant < 3; ++variant) {
      const bool weighted = variant == 1, directed = variant == 2;
      const TemporalGraph ref = graph(mode, weighted, directed);
      REQUIRE(ref.directed == directed);
      // A partition that cuts many edges: the shares overlap as much as they ever do.
      PartitionOptions popt;
      popt.method = Partitioner::random;
      popt.parts = p;
      popt.seed = 2;
      const std::vector<int32_t> part = partition_temporal(ref, popt);
      TemporalGraph g;
      if (me == 0) g = ref;
      std::vector<int64_t> nnz;
      SnapshotMoves moves;
      broadcast_temporal_meta(g, nnz, comm, moves);
      move_vertex_shares(g, part, comm, moves);
      REQUIRE(g.num_snapshots() == ref.num_snapshots());
      for (int t = 0; t < ref.num_snapshots(); ++t)
        require_equal(g.snapshot(t), vertex_share(ref.snapshot(t), part, me, directed));

      // Shares, counted in entries and in bytes held: each rank's below the whole graph's, all
      // ranks' together between once and twice it (a directed entry is in the shares of its two
      // ends), exactly once for an undirected graph (rows of owned vertices alone).
      const int64_t whole = stored_entries(ref), whole_bytes = ref.diff_bytes();
      const int64_t mine = stored_entries(g), mine_bytes = g.diff_bytes();
      CHECK(mine < whole);
      CHECK(mine_bytes < whole_bytes);
      int64_t sums[2] = {mine, mine_bytes};
      comm.allreduce_sum(sums, 2);
      CHECK(sums[0] >= whole);
      CHECK(sums[0] <= 2 * whole);
      if (!directed) CHECK(sums[0] == whole);
      if (p == 4) CHECK(double(sums[0]) < 1.9 * double(whole));
      if (me == 0) {
        CHECK(moves.snapshots == (p - 1) * ref.num_snapshots());
        CHECK(moves.bytes <= moves.whole_bytes);
        if (mode == SnapshotMode::cumulative) CHECK(moves.as_difference > 0);
      }

      // The views cut from shares equal those cut from whole snapshots, GCN weights included
      // (a halo vertex's degree now comes from its owner).
      int64_t dim = 0;
      std::vector<float> x(size_t(ref.num_vertices) * 3);
      for (size_t i = 0; i < x.size(); ++i) x[i] = float(i % 7);
      const std::vector<Var> feats = snapshot_features(ref, x, 3, &dim);
      auto from_whole = make_temporal_rank(ref, feats, part, comm);
      auto from_share = make_temporal_rank(g, feats, part, comm);
      REQUIRE(from_whole->owned == from_share->owned);
      REQUIRE(from_whole->halo_rows == from_share->halo_rows);
      for (int t = 0; t < ref.num_snapshots(); ++t) {
        const GraphView& a = *from_whole->graphs[size_t(t)];
        const GraphView& b = *from_share->graphs[size_t(t)];
        require_equal(a.structure(), b.structure());
        REQUIRE(a.n_halo() == b.n_halo());
        REQUIRE(std::equal(a.global_ids(), a.global_ids() + a.n_owned() + a.n_halo(),
                           b.global_ids()));
        require_equal(a.adjacency(Norm::gcn).forward, b.adjacency(Norm::gcn).forward);
        const HaloPlan &pa = from_whole->plans[size_t(t)], &pb = from_share->plans[size_t(t)];
        REQUIRE(pa.peers == pb.peers);
        REQUIRE(pa.send_rows == pb.send_rows);
        REQUIRE(pa.recv_rows == pb.recv_rows);
      }

      // Degree features of a rank's own vertices from its shares: the rows of the whole graph's.
      int64_t dw = 0, ds = 0;
      const std::vector<Var> whole_deg = snapshot_features(ref, {}, 0, &dw);
      const std::vector<Var> own_deg = snapshot_features(g, from_share->owned, {}, 0, &ds);
      REQUIRE(dw == ds);
      REQUIRE(own_deg.size() == whole_deg.size());
      const std::vector<int64_t>& owned = from_share->owned;
      for (size_t t = 0; t < own_deg.size(); ++t)
        for (size_t i = 0; i < owned.size(); ++i)
          for (int64_t c = 0; c < dw; ++c)
            REQUIRE(own_deg[t].value().at(int64_t(i), c) ==
                    whole_deg[t].value().at(owned[i], c));
    }
}

TEST_CASE("a vertex-strategy run keeps only shares, rank 0 included", "[tmove][tshare]") {
  Communicator& comm = world();
  const TemporalGraph ref = graph(SnapshotMode::window, false);
  TemporalRunConfig cfg;
  cfg.model = "gcrn";
  cfg.hidden = 4;
  cfg.train.epochs = 1;
  cfg.train.bptt = 2;
  TemporalRun run([&] { return ref; }, cfg, comm);
  const int64_t whole = stored_entries(ref), mine = stored_entries(run.graph());
  if (comm.size() > 1) CHECK(mine < whole);
  int64_t sum = mine;
  comm.allreduce_sum(&sum, 1);
  CHECK(sum == whole);  // undirected: each entry in one share
  // The events stay whole on every rank (link targets, negatives and evaluation read them).
  REQUIRE(run.graph().num_snapshots() == ref.num_snapshots());
  for (int t = 0; t < ref.num_snapshots(); ++t)
    REQUIRE(run.graph().events[size_t(t)].src == ref.events[size_t(t)].src);
}
