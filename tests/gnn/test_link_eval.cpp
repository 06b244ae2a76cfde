// All-pairs link evaluation (EvolveGCN's protocol): the streaming metrics against the plain
// metrics over the materialised n^2 scores, the factored pair scores against PairClassifier,
// and the trainer's --neg-eval all against a brute-force evaluation of the same model.
#include <catch2/catch.hpp>
#include <cmath>
#include <numeric>

#include "../random_tensor.hpp"
#include "dgnn/comm/communicator.hpp"
#include "dgnn/common/error.hpp"
#include "dgnn/common/hash_rng.hpp"
#include "dgnn/datasets/evolving_sbm.hpp"
#include "dgnn/gnn/core/loss.hpp"
#include "dgnn/gnn/temporal/link_eval.hpp"
#include "dgnn/gnn/temporal/temporal_trainer.hpp"
#include "dgnn/gnn/train/metrics.hpp"

using namespace dgnn;
using dgnn::test::random_tensor;

namespace {

// The plain metrics of gnn/train/metrics.hpp over every (u, v) of an n x n score matrix.
AllPairsMetrics brute_force(const PairTargets& t, const std::vector<float>& scores,
                            double tie = 0) {
  const int64_t n = t.n;
  std::vector<uint8_t> labels(size_t(n * n), 0);
  std::vector<int32_t> group(size_t(n * n));
  for (int64_t u = 0; u < n; ++u) {
    for (int64_t v = 0; v < n; ++v) group[size_t(u * n + v)] = int32_t(u);
    for (int64_t i = t.offsets[size_t(u)]; i < t.offsets[size_t(u) + 1]; ++i)
      labels[size_t(u * n + t.dst[size_t(i)])] = 1;
  }
  AllPairsMetrics m;
  m.auc = roc_auc(scores, labels, tie);
  m.map = average_precision(scores, labels, tie);
  m.mrr = mean_reciprocal_rank(scores, labels, group, tie);
  return m;
}

RowScoreFn from_matrix(const std::vector<float>& scores, int64_t n) {
  return [&scores, n](int32_t u, float* out, std::vector<float>&) {
    std::copy(scores.begin() + u * n, scores.begin() + (u + 1) * n, out);
  };
}

std::vector<int32_t> all_rows(int64_t n) {
  std::vector<int32_t> r(static_cast<size_t>(n));
  std::iota(r.begin(), r.end(), 0);
  return r;
}

}  // namespace

TEST_CASE("all-pairs metrics by hand on three vertices") {
  // One positive, (0, 1), scored 0.9 and tied with (1, 2) and (2, 0).
  const std::vector<float> s = {0.5f, 0.9f, 0.1f,  //
                                0.2f, 0.3f, 0.9f,  //
                                0.9f, 0.0f, 0.4f};
  const PairTargets t = PairTargets::from_pairs(3, {{0, 1}});
  SelfCommunicator self;
  const AllPairsMetrics m = all_pairs_metrics(t, all_rows(3), from_matrix(s, 3), self);
  CHECK(m.positives == 1);
  CHECK(m.candidates == 9);
  CHECK(m.map == Approx(1.0 / 3));            // the tied block of three holds the one positive
  CHECK(m.auc == Approx((6 + 0.5 * 2) / 8));  // 6 negatives below, 2 tied
  CHECK(m.mrr == Approx(1.0));                // top of its own row
}

TEST_CASE("all-pairs metrics equal the plain metrics over all n^2 scores") {
  const int64_t n = 37;
  // Positives: some rows with many, many rows with none, a self-pair, repeats.
  std::vector<std::pair<int32_t, int32_t>> pairs;
  Rng rng(7);
  for (int i = 0; i < 90; ++i)
    pairs.emplace_back(int32_t(rng.uniform() * 12) * 3 % n, int32_t(rng.uniform() * n) % n);
  pairs.emplace_back(5, 5);
  pairs.emplace_back(4, 9);
  pairs.emplace_back(4, 9);
  const PairTargets t = PairTargets::from_pairs(n, pairs);
  REQUIRE(t.size() < int64_t(pairs.size()));  // repeats merged
  for (bool ties : {false, true}) {
    INFO((ties ? "coarse scores (many ties)" : "continuous scores"));
    std::vector<float> s(size_t(n * n));
    for (int64_t i = 0; i < n * n; ++i) {
      const double x = double(mix64(uint64_t(i) + 11) % 100000) / 100000.0;
      // Positives score a little higher on average, so the metrics are far from trivial.
      const bool pos =
          std::binary_search(t.dst.begin() + t.offsets[size_t(i / n)],
                             t.dst.begin() + t.offsets[size_t(i / n) + 1], int32_t(i % n));
      const double y = x + (pos ? 0.3 : 0.0);
      s[size_t(i)] = ties ? float(std::floor(y * 8) / 8) : float(y);
    }
    // Exact ties, the trainer's tolerance, and one wide enough that intervals overlap.
    for (double tie : {0.0, kLogitTie, 0.01}) {
      INFO("tie " << tie);
      const AllPairsMetrics ref = brute_force(t, s, tie);
      REQUIRE(ref.auc > 0.5);
      REQUIRE(ref.auc < 0.99);
      SelfCommunicator self;
      // Rows in any order; the first pass's rows kept for the second, or scored again.
      std::vector<int32_t> rows = all_rows(n);
      std::reverse(rows.begin(), rows.end());
      for (int64_t keep : {int64_t(1) << 30, int64_t(0)}) {
        INFO("keep " << keep);
        const AllPairsMetrics m = all_pairs_metrics(t, rows, from_matrix(s, n), self, tie, keep);
        CHECK(m.positives == t.size());
        CHECK(m.candidates == n * n);
        CHECK(m.auc == Approx(ref.auc).epsilon(1e-12));
        CHECK(m.map == Approx(ref.map).epsilon(1e-12));
        CHECK(m.mrr == Approx(ref.mrr).epsilon(1e-12));
      }
    }
  }
}

TEST_CASE("all-pairs metrics: missing rows, NaN scores and an unsteady scorer are errors") {
  const int64_t n = 5;
  std::vector<float> s(size_t(n * n));
  for (size_t i = 0; i < s.size(); ++i) s[i] = 0.5f * float(i);  // distinct
  const PairTargets t = PairTargets::from_pairs(n, {{1, 2}, {3, 0}});
  SelfCommunicator self;
  std::vector<int32_t> some = {0, 1, 2};
  CHECK_THROWS_AS(all_pairs_metrics(t, some, from_matrix(s, n), self), Error);
  std::vector<float> nan = s;
  nan[size_t(4 * n + 2)] = std::nanf("");
  CHECK_THROWS_WITH(all_pairs_metrics(t, all_rows(n), from_matrix(nan, n), self),
                    Catch::Matchers::Contains("NaN"));
  // A row that changes between the passes (kept rows off, so row 1 is scored twice).
  int calls = 0;
  RowScoreFn drifting = [&](int32_t u, float* out, std::vector<float>&) {
    for (int64_t v = 0; v < n; ++v) out[v] = s[size_t(u * n + v)];
    if (u == 1 && calls++ > 0) out[2] += 0.5f;
  };
  CHECK_THROWS_WITH(all_pairs_metrics(t, all_rows(n), drifting, self, 0, 0),
                    Catch::Matchers::Contains("deterministic"));
  CHECK_THROWS_AS(PairTargets::from_pairs(n, {{0, 5}}), ShapeError);
}

TEST_CASE("factored pair scores equal PairClassifier's scores") {
  // 300 vertices: more than one block of targets per row; hidden 11 and 16: with and without a
  // remainder after the groups of eight.
  const int64_t n = 300, e = 6;
  Csr empty;
  empty.rows = empty.cols = n;
  empty.offsets.assign(size_t(n) + 1, 0);
  GraphView view(empty);
  for (int64_t hidden : {11, 16}) {
    INFO("hidden " << hidden);
    PairClassifier head(e, hidden, 1);
    head.reset_parameters(3);
    // Non-zero biases, so that the factored form must place b1 once.
    for (auto& [name, p] : head.named_parameters())
      if (name.find("bias") != std::string::npos)
        p->var.value() = random_tensor(1, p->var.cols(), 9);
    const Tensor h = random_tensor(n, e, 5);
    std::vector<int32_t> src, dst;
    for (int32_t u = 0; u < n; u += 7)
      for (int32_t v = 0; v < n; ++v) {
        src.push_back(u);
        dst.push_back(v);
      }
    ForwardContext ctx{view, false, 0, 0};
    const Tensor plain = head.score(ctx, Var(h.clone()), src, dst).value().to(Device::cpu);
    const FactoredPairs f = head.factor(h);
    std::vector<float> row(static_cast<size_t>(n)), scratch;
    size_t i = 0;
    double worst = 0;
    for (int32_t u = 0; u < n; u += 7) {
      f.score_row(u, row.data(), scratch);
      for (int32_t v = 0; v < n; ++v, ++i)
        worst = std::max(worst, std::abs(double(row[size_t(v)]) - plain.data()[i]));
    }
    REQUIRE(i == src.size());
    CHECK(worst < 1e-5);
    // A list of candidates (repeats, any order, more than one gathered block) scores as the row.
    std::vector<int32_t> list;
    for (int32_t j = 0; j < 300; ++j) list.push_back(int32_t((j * 37 + 11) % n));
    std::vector<float> got(list.size());
    for (int32_t u = 0; u < n; u += 13) {
      f.score_row(u, row.data(), scratch);
      f.score_list(u, list.data(), int64_t(list.size()), got.data(), scratch);
      for (size_t j = 0; j < list.size(); ++j)
        CHECK(got[j] == Approx(row[size_t(list[j])]).margin(1e-6));
    }
  }
  PairClassifier two(e, 8, 2);
  CHECK_THROWS_AS(two.factor(random_tensor(n, e, 1)), Error);
}

TEST_CASE("trainer with --neg-eval all: the metrics are the mean over steps of a brute force") {
  EvolvingSbmConfig cfg;
  cfg.vertices = 80;
  cfg.snapshots = 11;  // 10 steps: 7 train, 1 validation, 2 test
  cfg.classes = 3;
  cfg.avg_degree = 4;
  cfg.homophily = 0.9;
  cfg.feature_dim = 6;
  cfg.seed = 3;
  const EvolvingSbm sbm = generate_evolving_sbm(cfg);
  const TemporalGraph g = sbm.to_temporal();
  REQUIRE(!g.directed);
  int64_t dim = 0;
  std::vector<Var> features = snapshot_features(g, sbm.features, cfg.feature_dim, &dim);
  std::vector<std::unique_ptr<GraphView>> views;
  for (int t = 0; t < g.num_snapshots(); ++t)
    views.push_back(std::make_unique<GraphView>(g.snapshot(t)));
  auto model = make_temporal_model(TemporalKind::gcrn, {dim, 8, 8});
  PairClassifier head(model->out_dim(), 8, 1);
  model->reset_parameters(1);
  head.reset_parameters(2);
  TemporalOptions opt;
  opt.epochs = 3;
  opt.bptt = 3;
  opt.eval_all_pairs = true;
  SelfCommunicator comm;
  LinkPredictionTrainer trainer(*model, head, g, views, features, comm, opt);
  const TemporalResult r = trainer.run();
  REQUIRE(r.test_steps == 2);
  CHECK(std::isnan(r.test.loss));
  const int begin = r.train_steps + r.val_steps, end = begin + r.test_steps;
  const LinkMetrics got = trainer.evaluate(begin, end);

  // The reference: run the trained model, score all n^2 pairs with PairClassifier itself, and
  // average the plain metrics over the steps (positives: the next snapshot's edges, both ways).
  NoGradGuard no_grad;
  const int64_t n = g.num_vertices;
  std::vector<int32_t> src, dst;
  for (int32_t u = 0; u < n; ++u)
    for (int32_t v = 0; v < n; ++v) {
      src.push_back(u);
      dst.push_back(v);
    }
  AllPairsMetrics sum;
  int steps = 0;
  model->reset_state();
  for (int s = 0; s < end; ++s) {
    ForwardContext ctx{*views[size_t(s)], false, 0, 0};
    Var h = model->step(ctx, features[0]);
    if (s < begin) continue;
    std::vector<std::pair<int32_t, int32_t>> pairs;
    const SnapshotEvents& ev = g.events[size_t(s + 1)];
    for (size_t i = 0; i < ev.src.size(); ++i)
      if (ev.src[i] != ev.dst[i]) {
        pairs.emplace_back(ev.src[i], ev.dst[i]);
        pairs.emplace_back(ev.dst[i], ev.src[i]);
      }
    REQUIRE(!pairs.empty());
    const Tensor scores = head.score(ctx, h, src, dst).value().to(Device::cpu);
    // The trainer ranks with the logit tolerance (gnn/train/metrics.hpp).
    const AllPairsMetrics m =
        brute_force(PairTargets::from_pairs(n, pairs),
                    std::vector<float>(scores.data(), scores.data() + n * n), kLogitTie);
    sum.auc += m.auc;
    sum.map += m.map;
    sum.mrr += m.mrr;
    ++steps;
  }
  REQUIRE(steps == 2);
  CHECK(got.auc == Approx(sum.auc / steps).margin(1e-6));
  CHECK(got.map == Approx(sum.map / steps).margin(1e-6));
  CHECK(got.mrr == Approx(sum.mrr / steps).margin(1e-6));
  CHECK(got.auc == Approx(r.test.auc));  // the best-validation parameters are the live ones
  CHECK(got.map > 0);

  // Edge classification has no pairs to rank: an option error.
  TemporalOptions edge = opt;
  edge.task = TemporalTask::edge;
  CHECK_THROWS_WITH(temporal_split(g, edge), Catch::Matchers::Contains("--neg-eval all"));
}

TEST_CASE(
    "sampled evaluation without a batch equals scoring the batch; the test continues from "
    "validation's state as a rerun would") {
  EvolvingSbmConfig cfg;
  cfg.vertices = 90;
  cfg.snapshots = 12;  // 11 steps: 7 train, 1 validation, 3 test
  cfg.classes = 3;
  cfg.avg_degree = 4;
  cfg.homophily = 0.9;
  cfg.feature_dim = 6;
  cfg.seed = 4;
  const EvolvingSbm sbm = generate_evolving_sbm(cfg);
  const TemporalGraph g = sbm.to_temporal();
  int64_t dim = 0;
  std::vector<Var> features = snapshot_features(g, sbm.features, cfg.feature_dim, &dim);
  std::vector<std::unique_ptr<GraphView>> views;
  for (int t = 0; t < g.num_snapshots(); ++t)
    views.push_back(std::make_unique<GraphView>(g.snapshot(t)));
  for (TemporalKind kind : {TemporalKind::evolvegcn_o, TemporalKind::evolvegcn_h,
                            TemporalKind::gcrn, TemporalKind::tgcn})
    for (EvalProtocol protocol : {EvalProtocol::evolvegcn, EvalProtocol::tgb}) {
      INFO(temporal_kind_name(kind) << (protocol == EvalProtocol::tgb ? " tgb" : " evolvegcn"));
      auto model = make_temporal_model(kind, {dim, 8, 8});
      PairClassifier head(model->out_dim(), 8, 1);
      model->reset_parameters(1);
      head.reset_parameters(2);
      TemporalOptions opt;
      opt.epochs = 5;
      opt.bptt = 3;
      opt.neg_eval = 7;
      opt.lr = 0.05f;  // large steps: the best validation is seldom the last epoch's
      opt.eval_protocol = protocol;
      SelfCommunicator comm;
      LinkPredictionTrainer trainer(*model, head, g, views, features, comm, opt);
      const TemporalResult r = trainer.run();
      const int begin = r.train_steps + r.val_steps, end = begin + r.test_steps;
      // A rerun of the whole sequence with the parameters the test used: the same bits.
      const LinkMetrics again = trainer.evaluate(begin, end);
      CHECK(again.auc == r.test.auc);
      CHECK(again.map == r.test.map);
      CHECK(again.mrr == r.test.mrr);
      CHECK(again.loss == r.test.loss);

      // The reference: the batch the trainer draws, scored by PairClassifier, the loss by
      // bce_with_logits and the metrics by rank_metrics, averaged over the test steps.
      NoGradGuard no_grad;
      std::unique_ptr<EdgeHistory> history;
      if (protocol == EvalProtocol::tgb)
        history = std::make_unique<EdgeHistory>(edge_history(g, r.train_steps));
      model->reset_state();
      double auc = 0, map = 0, mrr = 0, loss = 0, rr = 0, positives = 0;
      int steps = 0;
      for (int s = 0; s < end; ++s) {
        ForwardContext ctx{*views[size_t(s)], false, 0, 0};
        Var h = model->step(ctx, features.size() == 1 ? features[0] : features[size_t(s)]);
        if (s < begin) continue;
        const uint64_t salt = LinkPredictionTrainer::kEvalSalt;
        const PairBatch b =
            history ? tgb_step_pairs(g, s, opt.neg_eval, opt.seed, salt, *history)
                    : step_pairs(g, TemporalTask::link, s, opt.neg_eval, opt.seed, salt);
        REQUIRE(!b.src.empty());
        Var logits = head.score(ctx, h, b.src, b.dst);
        loss += bce_with_logits(logits, b.target, 1.0, b.weight).value().item();
        const Tensor z = logits.value().to(Device::cpu);
        const RankMetrics m =
            rank_metrics(z.data(), b.target.data(), b.src.data(), b.src.size(), kLogitTie);
        auc += m.auc, map += m.map, mrr += m.mrr, ++steps;
        const size_t per = size_t(opt.neg_eval) + 1, kept = b.src.size() / per;
        for (size_t j = 0; j < kept; ++j)
          rr += one_vs_many_reciprocal_rank(z.data()[j], z.data() + kept + j * (per - 1),
                                            int64_t(per - 1), kLogitTie);
        positives += double(kept);
      }
      REQUIRE(steps == r.test_steps);
      // The factored scorer sums in another order than the pair MLP: equal to float rounding.
      CHECK(r.test.auc == Approx(auc / steps).margin(1e-6));
      CHECK(r.test.map == Approx(map / steps).margin(1e-6));
      CHECK(r.test.mrr ==
            Approx(protocol == EvalProtocol::tgb ? rr / positives : mrr / steps).margin(1e-6));
      CHECK(r.test.loss == Approx(loss / steps).margin(1e-6));
    }
}
