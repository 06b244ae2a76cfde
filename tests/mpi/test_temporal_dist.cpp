// The vertex strategy for snapshot sequences equals one process: every temporal model's loss at
// every epoch, and the test metrics, with METIS and random partitions.
#include <catch2/catch.hpp>
#include <cmath>
#include <random>

#include "../small_evolving.hpp"
#include "dgnn/comm/communicator.hpp"
#include "dgnn/comm/device_comm.hpp"
#include "dgnn/datasets/evolving_sbm.hpp"
#include "dgnn/gnn/core/fetch.hpp"
#include "dgnn/gnn/temporal/link_eval.hpp"
#include "dgnn/gnn/temporal/temporal_dist.hpp"
#include "dgnn/gnn/temporal/temporal_trainer.hpp"
#include "dgnn/gnn/train/metrics.hpp"

using namespace dgnn;

namespace {

const EvolvingSbm& sbm() { return test::small_evolving(); }

struct Run {
  std::vector<double> losses;
  TemporalResult result;
};

Run train(Communicator& comm, TemporalKind kind, Partitioner method, TemporalTask task,
          bool all_pairs = false) {
  const TemporalGraph g = sbm().to_temporal();
  int64_t dim = 0;
  std::vector<Var> features = snapshot_features(g, sbm().features, sbm().config.feature_dim, &dim);
  std::vector<std::unique_ptr<GraphView>> views;
  std::unique_ptr<TemporalRank> tr;
  if (comm.size() == 1) {
    for (int t = 0; t < g.num_snapshots(); ++t)
      views.push_back(std::make_unique<GraphView>(g.snapshot(t)));
  } else {
    PartitionOptions popt;
    popt.method = method;
    popt.parts = comm.size();
    popt.seed = 1;
    std::vector<int32_t> part = partition_temporal(g, popt);
    comm.broadcast(part.data(), int64_t(part.size()) * 4, 0);
    tr = make_temporal_rank(g, features, part, comm);
  }
  auto model = make_temporal_model(kind, {dim, 8, 8});
  PairClassifier head(model->out_dim(), 8, 1);
  model->reset_parameters(3);
  head.reset_parameters(4);
  TemporalOptions opt;
  opt.task = task;
  opt.epochs = 5;
  opt.bptt = 3;
  opt.neg_eval = 10;
  opt.eval_all_pairs = all_pairs;
  LinkPredictionTrainer trainer(*model, head, g, tr ? tr->graphs : views,
                                tr ? tr->features : features, comm, opt, tr ? &tr->dir : nullptr);
  Run r;
  r.result = trainer.run([&](const EpochRecord& e) { r.losses.push_back(e.loss); });
  return r;
}

}  // namespace

TEST_CASE("vertex-partitioned temporal link prediction equals one process", "[tdist]") {
  Communicator& comm = world();
  SelfCommunicator self;
  // EvolveGCN-H does not run under the vertex strategy (its top-k summary spans all vertices);
  // the snapshot strategy runs it (test_temporal_snapshot.cpp).
  for (TemporalKind kind : {TemporalKind::evolvegcn_o, TemporalKind::gcrn, TemporalKind::tgcn}) {
    const Run ref = train(self, kind, Partitioner::metis, TemporalTask::link);
    for (Partitioner method : {Partitioner::metis, Partitioner::random}) {
      INFO(temporal_kind_name(kind)
           << " / " << partitioner_name(method) << " on " << comm.size() << " ranks");
      const Run got = train(comm, kind, method, TemporalTask::link);
      REQUIRE(got.losses.size() == ref.losses.size());
      for (size_t e = 0; e < ref.losses.size(); ++e) {
        INFO("epoch " << e + 1);
        CHECK(std::abs(got.losses[e] - ref.losses[e]) <= 1e-4 * std::abs(ref.losses[e]));
      }
      // Losses agree to float rounding; the metrics rank logits with the tie tolerance of
      // gnn/train/metrics.hpp, so rounding no longer reorders near-tied scores (exact ties moved
      // them by a few 1e-3 here); what is left is Adam's drift over 5 epochs.
      CHECK(got.result.best_epoch == ref.result.best_epoch);
      CHECK(got.result.test.auc == Approx(ref.result.test.auc).margin(5e-4));
      CHECK(got.result.test.map == Approx(ref.result.test.map).margin(5e-4));
      CHECK(got.result.test.mrr == Approx(ref.result.test.mrr).margin(5e-4));
    }
  }
}

TEST_CASE("vertex strategy through the staged device communicator equals one process", "[tdist]") {
  // Halo exchanges per snapshot, fetch_rows and the gradient all-reduce on the device path
  // (staged, CPU memory).
  Communicator& comm = world();
  SelfCommunicator self;
  const Run ref = train(self, TemporalKind::gcrn, Partitioner::metis, TemporalTask::link);
  auto dc = make_staged_comm(comm, Device::cpu);
  comm.set_device_comm(dc.get());
  const Run got = train(comm, TemporalKind::gcrn, Partitioner::metis, TemporalTask::link);
  dc.reset();
  REQUIRE(got.losses.size() == ref.losses.size());
  for (size_t e = 0; e < ref.losses.size(); ++e) {
    INFO("epoch " << e + 1);
    CHECK(std::abs(got.losses[e] - ref.losses[e]) <= 1e-4 * std::abs(ref.losses[e]));
  }
}

TEST_CASE("RankCounter over ranks, each holding a slice of the ends, equals one process",
          "[rankcounter]") {
  // Every rank makes the same positives and negatives; each adds its own scattered share of the
  // negatives (none on some ranks) over two parts. Coarse levels (ties, across slices too),
  // signed zeros, huge values; fewer positives than ranks; no negative at all; no positive.
  Communicator& comm = world();
  const int ranks = comm.size(), me = comm.rank();
  std::mt19937_64 gen(11);
  auto uniform = [&] { return double(gen() >> 11) * 0x1.0p-53; };
  for (size_t p : {size_t(0), size_t(1), size_t(2), size_t(3), size_t(37), size_t(3000)}) {
    for (size_t n_neg : {size_t(0), size_t(5), size_t(20000)}) {
      for (double tie : {0.0, kLogitTie, 0.1}) {
        INFO(p << " positives, " << n_neg << " negatives, tie " << tie);
        auto score = [&](bool positive) {
          const double r = uniform();
          if (r < 0.02) return r < 0.01 ? 0.f : -0.f;
          if (r < 0.03) return r < 0.025 ? 3e38f : -3e38f;
          if (r < 0.5) return float(int(uniform() * 9) - 4) * 0.25f;  // ties
          return float(uniform() * 8 - 4) + (positive ? 0.5f : 0.f);
        };
        std::vector<float> pos(p), neg(n_neg);
        for (float& x : pos) x = score(true);
        for (float& x : neg) x = score(false);
        const RankCounter whole(pos.data(), p, tie);
        std::vector<RankCounter::Part> all(1);
        CHECK(whole.add(neg.data(), neg.size(), all[0]));
        const auto [auc, map] = whole.finish(whole.tally(all));
        const RankCounter slice(pos.data(), p, tie, ranks, me);
        std::vector<RankCounter::Part> parts(2);
        for (size_t i = 0; i < n_neg; ++i)
          if (int(i * 7 % size_t(ranks)) == me && (n_neg > 5 || me != 1))
            CHECK(slice.add(&neg[i], 1, parts[i % 2]));
        // The share rank 1 skipped (5 negatives), added by rank 0 instead.
        if (n_neg == 5 && me == 0)
          for (size_t i = 0; i < n_neg; ++i)
            if (int(i * 7 % size_t(ranks)) == 1) CHECK(slice.add(&neg[i], 1, parts[0]));
        const auto [auc_r, map_r] = slice.finish(parts, comm);
        CHECK(((std::isnan(auc) && std::isnan(auc_r)) || auc == auc_r));
        CHECK(((std::isnan(map) && std::isnan(map_r)) || map == map_r));
        CHECK(parts[0].counter == nullptr);
      }
    }
  }
  // A counter of another slice is refused (before any collective: on every rank alike).
  const float one = 1.f;
  const RankCounter other(&one, 1, 0.0, ranks + 1, 0);
  std::vector<RankCounter::Part> none(1);
  CHECK_THROWS_AS(other.finish(none, comm), Error);
}

TEST_CASE("all-pairs metrics over rows split between ranks equal one process", "[tdist]") {
  Communicator& comm = world();
  SelfCommunicator self;
  // Coarse scores (ties across ranks' rows), positives on a few rows only, so that some ranks
  // hold no positive at all.
  const int64_t n = 29;
  std::vector<float> s(size_t(n * n));
  for (int64_t i = 0; i < n * n; ++i) s[size_t(i)] = float((i * 7919) % 23) / 4.f;
  std::vector<std::pair<int32_t, int32_t>> pairs;
  for (int32_t u : {2, 3, 17})
    for (int32_t v = 1; v < n; v += u) pairs.emplace_back(u, v);
  const PairTargets t = PairTargets::from_pairs(n, pairs);
  RowScoreFn score = [&](int32_t u, float* out, std::vector<float>&) {
    std::copy(s.begin() + u * n, s.begin() + (u + 1) * n, out);
  };
  std::vector<int32_t> all(static_cast<size_t>(n)), mine;
  for (int32_t u = 0; u < n; ++u) {
    all[size_t(u)] = u;
    if (u * 5 % n % comm.size() == comm.rank()) mine.push_back(u);  // scattered rows
  }
  const AllPairsMetrics ref = all_pairs_metrics(t, all, score, self);
  const AllPairsMetrics got = all_pairs_metrics(t, mine, score, comm);
  CHECK(got.positives == ref.positives);
  CHECK(got.candidates == n * n);
  CHECK(got.auc == ref.auc);  // exact counts on every rank
  CHECK(got.map == ref.map);
  CHECK(got.mrr == Approx(ref.mrr).epsilon(1e-12));  // a sum over rows, in another order
  CHECK(ref.map > 0);
}

TEST_CASE("vertex strategy: all-pairs evaluation (--neg-eval all) equals one process", "[tdist]") {
  Communicator& comm = world();
  SelfCommunicator self;
  // Every rank fetches all embeddings and scores the rows of the vertices it owns.
  for (TemporalKind kind : {TemporalKind::evolvegcn_o, TemporalKind::gcrn}) {
    INFO(temporal_kind_name(kind) << " on " << comm.size() << " ranks");
    const Run ref = train(self, kind, Partitioner::metis, TemporalTask::link, true);
    const Run got = train(comm, kind, Partitioner::random, TemporalTask::link, true);
    CHECK(got.result.best_epoch == ref.result.best_epoch);
    CHECK(got.result.best_val.map == Approx(ref.result.best_val.map).margin(1e-4));
    CHECK(got.result.test.auc == Approx(ref.result.test.auc).margin(1e-4));
    CHECK(got.result.test.map == Approx(ref.result.test.map).margin(1e-4));
    CHECK(got.result.test.mrr == Approx(ref.result.test.mrr).margin(1e-4));
    CHECK(ref.result.test.map > 0);
  }
}

TEST_CASE("fetch_rows peer by peer equals the whole exchange, rows and gradients", "[tdist]") {
  // Every rank asks for rows of every owner (repeats, its own rows, and on rank 1 none at
  // all); both ways give the same output, and back-propagating it adds the same gradient into
  // each owner's rows.
  Communicator& comm = world();
  const int p = comm.size(), me = comm.rank();
  const int64_t n = 37, f = 5;
  RowDirectory dir;
  std::vector<int32_t> next(static_cast<size_t>(p), 0);
  for (int64_t v = 0; v < n; ++v) {
    dir.owner.push_back(int32_t((v * 7) % p));
    dir.local.push_back(next[size_t(dir.owner.back())]++);
  }
  const int64_t mine = next[size_t(me)];
  Tensor own(mine, f);
  for (int64_t r = 0; r < mine; ++r)
    for (int64_t c = 0; c < f; ++c) own.data()[r * f + c] = float(me * 1000 + r * 10 + c);
  std::vector<int32_t> ids;
  if (me != 1) {
    for (int64_t k = 0; k < 3 * n; ++k) ids.push_back(int32_t((k * 11 + me * 5) % n));
    for (int64_t v = 0; v < n; ++v) ids.push_back(int32_t(v));  // ascending, as a whole fetch
  }
  // The same rows from a directory without row numbers (each owner finds its rows by id).
  const RowDirectory by_id = RowDirectory::by_ascending_id(dir.owner, me);
  REQUIRE(by_id.local.empty());
  REQUIRE(int64_t(by_id.owned.size()) == mine);
  for (int32_t v : by_id.owned) CHECK(by_id.owned_row(v) == dir.local[size_t(v)]);
  for (int64_t v = 0; v < n; ++v)
    if (dir.owner[size_t(v)] != me) CHECK_THROWS_AS(by_id.owned_row(int32_t(v)), Error);
  std::vector<std::vector<float>> values, grads;
  for (int way = 0; way < 4; ++way) {
    const bool by_peer = way % 2 == 1;
    Var h(own.clone(), true);
    Var got = fetch_rows(comm, way < 2 ? dir : by_id, h, ids, by_peer);
    REQUIRE(got.rows() == int64_t(ids.size()));
    values.emplace_back(got.value().data(), got.value().data() + got.value().numel());
    // Each fetched row is its owner's row (value me * 1000 + local * 10 + column).
    for (size_t i = 0; i < ids.size(); ++i)
      CHECK(got.value().data()[i * size_t(f)] ==
            float(dir.owner[size_t(ids[i])] * 1000 + dir.local[size_t(ids[i])] * 10));
    sum(scale(got, 1.f)).backward();
    grads.emplace_back(h.grad().data(), h.grad().data() + h.grad().numel());
  }
  for (size_t way = 1; way < values.size(); ++way) {
    CHECK(values[0] == values[way]);
    CHECK(grads[0] == grads[way]);
  }
}
