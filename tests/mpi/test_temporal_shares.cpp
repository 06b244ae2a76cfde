// The vertex strategy's shares: after move_vertex_shares each rank (rank 0 too) holds exactly its
// vertex_share of every snapshot, less than the whole graph and together at most twice it, and
// the views make_temporal_rank cuts from the shares equal those it cuts from whole snapshots.
// TemporalRun keeps only the shares on every rank.
#include <catch2/catch.hpp>
#include <cstdlib>
#include <set>
#include <tuple>

#include "../small_evolving.hpp"
#include "dgnn/comm/communicator.hpp"
#include "dgnn/common/error.hpp"
#include "dgnn/datasets/evolving_sbm.hpp"
#include "dgnn/gnn/temporal/temporal_dist.hpp"
#include "dgnn/gnn/temporal/temporal_run.hpp"
#include "dgnn/graph/temporal.hpp"
#include "dgnn/partition/partition.hpp"

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

// `share` is this rank's share of ref's events under `part` (shard_events): the events from its
// vertices (undirected: with an end here), in order, its sources' distinct pairs at their ordinals in the whole step (numbered
// as collect_positives numbers them), and the whole step's counts; and the positives a rank
// finds in it are those it finds in the whole list.
void check_event_share(const TemporalGraph& ref, const TemporalGraph& share,
                       const std::vector<int32_t>& part, Communicator& comm) {
  const int me = comm.rank();
  REQUIRE(share.num_snapshots() == ref.num_snapshots());
  constexpr uint32_t kRepeat = SnapshotEvents::kRepeat;
  for (int t = 0; t < ref.num_snapshots(); ++t) {
    INFO("snapshot " << t);
    const SnapshotEvents &w = ref.events[size_t(t)], &s = share.events[size_t(t)];
    REQUIRE(s.sharded());
    CHECK(s.start_time == w.start_time);
    CHECK(s.end_time == w.end_time);
    std::vector<int32_t> src, dst;
    std::vector<float> wt;
    std::vector<uint32_t> ord;
    std::set<std::pair<int32_t, int32_t>> seen;
    SnapshotEvents::Whole c;
    for (size_t i = 0; i < w.src.size(); ++i) {
      const int32_t u = w.src[i], v = w.dst[i];
      const bool neg = !w.weight.empty() && w.weight[i] < 0;
      ++c.events;
      c.negative_weights += neg;
      uint32_t o = kRepeat;
      if (u != v) {
        ++c.targets;
        c.negative_targets += neg;
        const std::pair<int32_t, int32_t> key =
            ref.directed || u < v ? std::pair{u, v} : std::pair{v, u};
        if (seen.insert(key).second) o = uint32_t(c.distinct++);
      }
      // Its sources' events; undirected, those into its vertices too.
      if (part[size_t(u)] != me && (ref.directed || part[size_t(v)] != me)) continue;
      src.push_back(u), dst.push_back(v);
      if (!w.weight.empty()) wt.push_back(w.weight[i]);
      ord.push_back(part[size_t(u)] == me ? o : kRepeat);
    }
    CHECK(s.src == src);
    CHECK(s.dst == dst);
    CHECK(s.weight == wt);
    CHECK(s.ordinals() == ord);
    CHECK(s.whole->events == c.events);
    CHECK(s.whole->targets == c.targets);
    CHECK(s.whole->negative_targets == c.negative_targets);
    CHECK(s.whole->negative_weights == c.negative_weights);
    CHECK(s.whole->distinct == c.distinct);
    if (t == 0) continue;
    const auto mine = [&](int32_t u) { return part[size_t(u)] == me; };
    const StepPositives a = step_positives(share, t - 1, mine), b = step_positives(ref, t - 1, mine);
    CHECK(a.index == b.index);
    CHECK(a.total == b.total);
    REQUIRE(a.event.size() == b.event.size());
    for (size_t j = 0; j < a.event.size(); ++j) {
      CHECK(s.src[a.event[j]] == w.src[b.event[j]]);
      CHECK(s.dst[a.event[j]] == w.dst[b.event[j]]);
    }
  }
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
      auto from_whole = make_temporal_rank(ref, feats, part, comm, Device::cpu, true);
      auto from_share = make_temporal_rank(g, feats, part, comm, Device::cpu, true);
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
  cfg.keep_snapshots = true;
  TemporalRun run([&] { return ref; }, cfg, comm);
  const int64_t whole = stored_entries(ref), mine = stored_entries(run.graph());
  if (comm.size() > 1) CHECK(mine < whole);
  int64_t sum = mine;
  comm.allreduce_sum(&sum, 1);
  CHECK(sum == whole);  // undirected: each entry in one share
  // The events are a share too: those with an end here, numbered as the whole step numbers them.
  check_event_share(ref, run.graph(), run.part(), comm);
  // Unless kept, the shares go once the views are made; what they took stays known.
  cfg.keep_snapshots = false;
  TemporalRun lean([&] { return ref; }, cfg, comm);
  CHECK(lean.graph().diffs.empty());
  CHECK(lean.graph().base.rows == 0);
  CHECK(lean.topology().steps == ref.num_snapshots() - 1);
  CHECK(lean.topology().diff_bytes == run.graph().diff_bytes());
  CHECK(lean.topology().full_bytes == run.graph().full_bytes());
  CHECK(lean.train().test.auc == run.train().test.auc);
}

TEST_CASE("shard_events keeps a rank's events, numbered as the whole step", "[tmove][tshare]") {
  Communicator& comm = world();
  for (bool directed : {false, true})
    for (Partitioner method : {Partitioner::metis, Partitioner::random}) {
      INFO("directed " << directed << " partitioner " << int(method));
      TemporalGraph ref = graph(SnapshotMode::window, true, directed);
      // A self loop, a pair in both directions and an empty step, added to the generated one.
      if (ref.num_snapshots() > 2) {
        SnapshotEvents& e = ref.events[1];
        e.src.insert(e.src.begin(), {0, 0, 1});
        e.dst.insert(e.dst.begin(), {0, 1, 0});
        if (!e.weight.empty()) e.weight.insert(e.weight.begin(), {1.f, -1.f, 2.f});
        // (sorted again by (src, dst), repeats of one pair merged as a loader merges them)
        std::vector<std::tuple<int32_t, int32_t, float>> all;
        for (size_t i = 0; i < e.src.size(); ++i)
          all.emplace_back(e.src[i], e.dst[i], e.weight.empty() ? 0.f : e.weight[i]);
        std::sort(all.begin(), all.end());
        all.erase(std::unique(all.begin(), all.end(),
                              [](const auto& a, const auto& b) {
                                return std::get<0>(a) == std::get<0>(b) &&
                                       std::get<1>(a) == std::get<1>(b);
                              }),
                  all.end());
        const bool w = !e.weight.empty();
        e.src.clear(), e.dst.clear(), e.weight.clear();
        for (const auto& [u, v, x] : all) {
          e.src.push_back(u), e.dst.push_back(v);
          if (w) e.weight.push_back(x);
        }
        ref.events[2].src.clear(), ref.events[2].dst.clear(), ref.events[2].weight.clear();
      }
      PartitionOptions popt;
      popt.method = method;
      popt.parts = comm.size();
      const std::vector<int32_t> part = partition_temporal(ref, popt);
      TemporalGraph share = ref;
      shard_events(share, part, comm);
      check_event_share(ref, share, part, comm);
    }
}

TEST_CASE("static features by rows: each rank reads its own vertices' rows", "[tmove][tshare]") {
  Communicator& comm = world();
  const TemporalGraph ref = graph(SnapshotMode::window, false);
  constexpr int64_t kDim = 3;
  auto value = [](int64_t id, int64_t c) { return float((id * 7 + c * 3) % 11) / 11.f - 0.5f; };
  TemporalRunConfig cfg;
  cfg.model = "gcrn";
  cfg.hidden = 4;
  cfg.train.epochs = 2;
  cfg.train.bptt = 2;
  cfg.features = [&](const TemporalGraph& g, int64_t* dim) {
    *dim = kDim;
    std::vector<float> f(size_t(g.num_vertices * kDim));
    for (int64_t v = 0; v < g.num_vertices; ++v)
      for (int64_t c = 0; c < kDim; ++c) f[size_t(v * kDim + c)] = value(g.original_ids[size_t(v)], c);
    return f;
  };
  TemporalRun whole([&] { return ref; }, cfg, comm);
  const TemporalResult a = whole.train();
  std::vector<int64_t> asked;
  bool called = false;
  TemporalRunConfig by_rows = cfg;
  by_rows.feature_rows = [&](const TemporalGraph& g, const std::vector<int64_t>& rows,
                             int64_t* dim) {
    called = true;
    asked = rows;
    *dim = kDim;
    std::vector<float> f;
    for (int64_t v : rows)
      for (int64_t c = 0; c < kDim; ++c) f.push_back(value(g.original_ids[size_t(v)], c));
    return f;
  };
  TemporalRun rows([&] { return ref; }, by_rows, comm);
  const TemporalResult b = rows.train();
  CHECK(b.final_loss == a.final_loss);
  CHECK(b.test.auc == a.test.auc);
  CHECK(b.test.map == a.test.map);
  CHECK(b.test.mrr == a.test.mrr);
  CHECK(rows.feature_dim() == kDim);
  CHECK(called == (comm.size() > 1));  // one process makes every row with `features`
  if (comm.size() > 1) {
    std::vector<int64_t> own;
    for (size_t v = 0; v < rows.part().size(); ++v)
      if (rows.part()[v] == comm.rank()) own.push_back(int64_t(v));
    CHECK(asked == own);
  }
  // An error on one rank is the job's one error.
  if (comm.size() > 1) {
    TemporalRunConfig bad = by_rows;
    bad.feature_rows = [&](const TemporalGraph&, const std::vector<int64_t>&, int64_t* dim) {
      *dim = kDim;
      if (comm.rank() == 1) throw InputError("f.npy", 0, "row 9 holds NaN");
      return std::vector<float>(asked.size() * kDim, 0.f);
    };
    std::string what;
    try {
      TemporalRun r([&] { return ref; }, bad, comm);
    } catch (const Error& e) {  // (the job's one error: AgreedError)
      what = e.what();
    }
    CHECK(what == "f.npy: row 9 holds NaN");
  }
}

TEST_CASE("evaluation fetching only its candidates' rows equals one process", "[tmove][tshare]") {
  Communicator& comm = world();
  const TemporalGraph ref = graph(SnapshotMode::window, false);
  for (const EvalProtocol protocol : {EvalProtocol::evolvegcn, EvalProtocol::tgb}) {
    INFO("protocol " << int(protocol));
    TemporalRunConfig cfg;
    cfg.model = "gcrn";
    cfg.hidden = 4;
    cfg.train.epochs = 1;
    cfg.train.bptt = 2;
    cfg.train.neg_eval = 7;
    cfg.train.eval_protocol = protocol;
    LinkMetrics one;
    {
      SelfCommunicator self;
      if (comm.rank() == 0) {
        TemporalRun r([&] { return ref; }, cfg, self);
        one = r.train().test;
      }
      comm.broadcast(&one, sizeof one, 0);
    }
    std::vector<LinkMetrics> got;
    for (const char* how : {"candidates", "all"}) {
      ::setenv("DGNN_EVAL_FETCH", how, 1);
      TemporalRun r([&] { return ref; }, cfg, comm);
      got.push_back(r.train().test);
      ::unsetenv("DGNN_EVAL_FETCH");
    }
    // The same rows scored: the same bits whichever way they came.
    CHECK(got[0].auc == got[1].auc);
    CHECK(got[0].map == got[1].map);
    CHECK(got[0].mrr == got[1].mrr);
    CHECK(got[0].loss == got[1].loss);
    // And one process's numbers, to the float rounding of distributed sums (test_temporal_dist).
    CHECK(got[0].auc == Approx(one.auc).margin(5e-4));
    CHECK(got[0].map == Approx(one.map).margin(5e-4));
    CHECK(got[0].mrr == Approx(one.mrr).margin(5e-4));
    CHECK(got[0].loss == Approx(one.loss).epsilon(1e-3));
  }
}
