// The snapshot strategy for snapshot sequences equals one process: every temporal model's
// gradients over two windows of steps, and its loss at every epoch with and without BPTT windows.
// The 1-rank reference is the ordinary single-process path, computed in the same binary on
// every rank.
#include <catch2/catch.hpp>
#include <cmath>

#include "../small_evolving.hpp"
#include "dgnn/comm/communicator.hpp"
#include "dgnn/comm/device_comm.hpp"
#include "dgnn/datasets/evolving_sbm.hpp"
#include "dgnn/gnn/temporal/temporal_dist.hpp"
#include "dgnn/gnn/temporal/temporal_trainer.hpp"
#include "dgnn/gnn/train/trainer.hpp"

using namespace dgnn;

namespace {

const EvolvingSbm& sbm() { return test::small_evolving(); }

const std::vector<TemporalKind> kAll = {TemporalKind::evolvegcn_o, TemporalKind::evolvegcn_h,
                                        TemporalKind::gcrn, TemporalKind::tgcn};

struct Run {
  std::vector<double> losses;
  TemporalResult result;
};

Run train(Communicator& comm, TemporalKind kind, int bptt, bool by_snapshot,
          bool all_pairs = false) {
  const TemporalGraph g = sbm().to_temporal();
  int64_t dim = 0;
  std::vector<Var> features = snapshot_features(g, sbm().features, sbm().config.feature_dim, &dim);
  TemporalOptions opt;
  opt.epochs = 5;
  opt.bptt = bptt;
  opt.neg_eval = 10;
  opt.eval_all_pairs = all_pairs;
  std::vector<std::unique_ptr<GraphView>> views;
  std::unique_ptr<SnapshotRank> sr;
  if (by_snapshot) {
    sr = make_snapshot_rank(g, features, opt, comm.size(), comm.rank());
  } else {
    for (int t = 0; t < g.num_snapshots(); ++t)
      views.push_back(std::make_unique<GraphView>(g.snapshot(t)));
  }
  auto model = make_temporal_model(kind, {dim, 8, 8});
  PairClassifier head(model->out_dim(), 8, 1);
  model->reset_parameters(3);
  head.reset_parameters(4);
  LinkPredictionTrainer trainer(*model, head, g, sr ? sr->graphs : views,
                                sr ? sr->features : features, comm, opt, nullptr,
                                sr ? &sr->plan : nullptr);
  Run r;
  r.result = trainer.run([&](const EpochRecord& e) { r.losses.push_back(e.loss); });
  return r;
}

// sum_s sum(h_s * proj_s) over the steps of windows `bounds` (the tape cut between them, as
// the trainer does): the parameters' gradients, summed over ranks.
std::vector<std::vector<float>> window_grads(Communicator& comm, TemporalKind kind,
                                             const std::vector<int>& bounds, bool by_snapshot) {
  const TemporalGraph g = sbm().to_temporal();
  int64_t dim = 0;
  std::vector<Var> features = snapshot_features(g, sbm().features, sbm().config.feature_dim, &dim);
  auto model = make_temporal_model(kind, {dim, 8, 8});
  model->reset_parameters(5);
  auto proj = [&](int s) {
    Tensor t(g.num_vertices, model->out_dim());
    for (int64_t i = 0; i < t.numel(); ++i) t.data()[i] = float(std::sin(0.37 * double(i) + s));
    return Var(std::move(t));
  };
  std::vector<std::unique_ptr<GraphView>> views;
  for (int t = 0; t < g.num_snapshots(); ++t)
    views.push_back(std::make_unique<GraphView>(g.snapshot(t)));
  const SnapshotPlan plan = plan_snapshots(std::vector<int64_t>(size_t(bounds.back()), 1), bounds,
                                           comm.size(), g.num_vertices);
  std::vector<std::pair<std::string, Parameter*>> params;
  for (auto& p : model->named_parameters()) params.emplace_back(p.first, p.second);
  for (auto& p : params) p.second->var.zero_grad();
  model->reset_state();
  for (size_t wi = 0; wi + 1 < bounds.size(); ++wi) {
    Var loss;
    auto add_step = [&](int s, const Var& h) {
      Var l = sum(mul(h, proj(s)));
      loss = loss.defined() ? add(loss, l) : l;
    };
    if (by_snapshot) {
      SnapshotWindow w(comm, plan, bounds[wi], bounds[wi + 1], views, features, true, 0, 0);
      const std::vector<Var> h = model->window(w);
      REQUIRE(int(h.size()) == w.own_end() - w.own_begin());
      for (int s = w.own_begin(); s < w.own_end(); ++s) add_step(s, h[size_t(s - w.own_begin())]);
      loss = loss.defined() ? add(loss, w.anchor()) : w.anchor();
    } else {
      for (int s = bounds[wi]; s < bounds[wi + 1]; ++s) {
        ForwardContext ctx{*views[size_t(s)], true, 0, 0};
        add_step(s, model->step(ctx, features[0]));
      }
    }
    loss.backward();
    model->detach_state();
  }
  std::vector<float> flat;
  allreduce_gradients(comm, params, flat);
  std::vector<std::vector<float>> out;
  for (auto& p : params) {
    const Tensor& gr = p.second->var.node()->grad_buffer();
    out.emplace_back(gr.data(), gr.data() + gr.numel());
  }
  return out;
}

}  // namespace

TEST_CASE("snapshot strategy: every model's gradients over windows of steps equal one process",
          "[tsnap]") {
  Communicator& comm = world();
  SelfCommunicator self;
  // Windows longer than the rank count, and windows where some ranks own no step.
  for (const std::vector<int>& bounds : {std::vector<int>{0, 4, 9}, std::vector<int>{0, 3, 4, 6}})
    for (TemporalKind kind : kAll) {
      INFO(temporal_kind_name(kind) << " on " << comm.size() << " ranks, windows ending at "
                                    << bounds[1] << " .. " << bounds.back());
      const auto ref = window_grads(self, kind, bounds, false);
      const auto got = window_grads(comm, kind, bounds, true);
      REQUIRE(got.size() == ref.size());
      for (size_t p = 0; p < ref.size(); ++p) {
        INFO("parameter " << p);
        REQUIRE(got[p].size() == ref[p].size());
        double scale = 1e-6;
        for (float v : ref[p]) scale = std::max(scale, double(std::abs(v)));
        for (size_t i = 0; i < ref[p].size(); ++i)
          CHECK(std::abs(got[p][i] - ref[p][i]) <= 1e-4 * scale);
      }
    }
}

TEST_CASE("snapshot-partitioned temporal link prediction equals one process", "[tsnap]") {
  Communicator& comm = world();
  SelfCommunicator self;
  for (TemporalKind kind : kAll) {
    for (int bptt : {3, 0}) {
      INFO(temporal_kind_name(kind) << ", --bptt " << bptt << ", on " << comm.size() << " ranks");
      const Run ref = train(self, kind, bptt, false);
      const Run got = train(comm, kind, bptt, true);
      REQUIRE(got.losses.size() == ref.losses.size());
      for (size_t e = 0; e < ref.losses.size(); ++e) {
        INFO("epoch " << e + 1);
        CHECK(std::abs(got.losses[e] - ref.losses[e]) <= 1e-4 * std::abs(ref.losses[e]));
      }
      // As in the vertex strategy's test: tolerant ties, and what is left is Adam's drift.
      CHECK(got.result.best_epoch == ref.result.best_epoch);
      CHECK(got.result.test.auc == Approx(ref.result.test.auc).margin(5e-4));
      CHECK(got.result.test.map == Approx(ref.result.test.map).margin(5e-4));
      CHECK(got.result.test.mrr == Approx(ref.result.test.mrr).margin(5e-4));
    }
  }
}

TEST_CASE("snapshot strategy through the staged device communicator equals one process",
          "[tsnap]") {
  // The all-to-alls (GCRN) and the state hand-over (T-GCN) on the device path (staged, CPU
  // memory).
  Communicator& comm = world();
  SelfCommunicator self;
  for (TemporalKind kind : {TemporalKind::gcrn, TemporalKind::tgcn}) {
    INFO(temporal_kind_name(kind) << " on " << comm.size() << " ranks");
    const Run ref = train(self, kind, 3, false);
    auto dc = make_staged_comm(comm, Device::cpu);
    comm.set_device_comm(dc.get());
    const Run got = train(comm, kind, 3, true);
    dc.reset();
    REQUIRE(got.losses.size() == ref.losses.size());
    for (size_t e = 0; e < ref.losses.size(); ++e) {
      INFO("epoch " << e + 1);
      CHECK(std::abs(got.losses[e] - ref.losses[e]) <= 1e-4 * std::abs(ref.losses[e]));
    }
  }
}

TEST_CASE("snapshot strategy: all-pairs evaluation (--neg-eval all) equals one process",
          "[tsnap]") {
  Communicator& comm = world();
  SelfCommunicator self;
  // Each step's owner scores all n^2 pairs of its step; the sums over steps are combined.
  for (TemporalKind kind : {TemporalKind::evolvegcn_h, TemporalKind::gcrn}) {
    INFO(temporal_kind_name(kind) << " on " << comm.size() << " ranks");
    const Run ref = train(self, kind, 3, false, true);
    const Run got = train(comm, kind, 3, true, true);
    CHECK(got.result.best_epoch == ref.result.best_epoch);
    // The embeddings agree to float rounding, and with them all 57,600 scores of a step.
    CHECK(got.result.best_val.map == Approx(ref.result.best_val.map).margin(1e-4));
    CHECK(got.result.test.auc == Approx(ref.result.test.auc).margin(1e-4));
    CHECK(got.result.test.map == Approx(ref.result.test.map).margin(1e-4));
    CHECK(got.result.test.mrr == Approx(ref.result.test.mrr).margin(1e-4));
    CHECK(ref.result.test.map > 0);
  }
}

TEST_CASE("snapshot strategy: edge classification with per-snapshot features equals one process",
          "[tsnap]") {
  // Signed edges (inside a community +1, across -1), degree-bucket features per snapshot.
  EvolvingSbmConfig cfg;
  cfg.vertices = 200;
  cfg.snapshots = 11;
  cfg.classes = 3;
  cfg.avg_degree = 5;
  cfg.homophily = 0.7;
  cfg.seed = 6;
  const EvolvingSbm sbm = generate_evolving_sbm(cfg);
  const TemporalGraph g = test::signed_temporal(sbm, "signed");
  int64_t dim = 0;
  const std::vector<Var> features = snapshot_features(g, {}, 0, &dim);
  REQUIRE(int(features.size()) == g.num_snapshots());
  TemporalOptions opt;
  opt.task = TemporalTask::edge;
  opt.epochs = 4;
  opt.bptt = 4;
  Communicator& comm = world();
  SelfCommunicator self;
  for (TemporalKind kind : {TemporalKind::gcrn, TemporalKind::tgcn}) {
    INFO(temporal_kind_name(kind) << " on " << comm.size() << " ranks");
    auto run = [&](Communicator& c, bool by_snapshot) {
      std::vector<std::unique_ptr<GraphView>> views;
      std::unique_ptr<SnapshotRank> sr;
      if (by_snapshot)
        sr = make_snapshot_rank(g, features, opt, c.size(), c.rank());
      else
        for (int t = 0; t < g.num_snapshots(); ++t)
          views.push_back(std::make_unique<GraphView>(g.snapshot(t)));
      auto model = make_temporal_model(kind, {dim, 8, 8});
      PairClassifier head(model->out_dim(), 8, 1);
      model->reset_parameters(1);
      head.reset_parameters(2);
      LinkPredictionTrainer trainer(*model, head, g, sr ? sr->graphs : views,
                                    sr ? sr->features : features, c, opt, nullptr,
                                    sr ? &sr->plan : nullptr);
      Run r;
      r.result = trainer.run([&](const EpochRecord& ep) { r.losses.push_back(ep.loss); });
      return r;
    };
    const Run ref = run(self, false);
    const Run got = run(comm, true);
    REQUIRE(got.losses.size() == ref.losses.size());
    for (size_t ep = 0; ep < ref.losses.size(); ++ep)
      CHECK(std::abs(got.losses[ep] - ref.losses[ep]) <= 1e-4 * std::abs(ref.losses[ep]));
    CHECK(got.result.test.f1 == Approx(ref.result.test.f1).margin(5e-4));
    CHECK(got.result.test.auc == Approx(ref.result.test.auc).margin(5e-4));
  }
}
