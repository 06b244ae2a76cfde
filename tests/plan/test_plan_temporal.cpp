// The temporal plan as a library call (plan/plan_temporal.hpp) on a hand-made graph with given
// rates, so nothing is timed: the training steps and their pairs, the drawing times and
// overheads derived from the rates, the rows' threads, scales and predictions (against
// perf_temporal.hpp's, given the same inputs), the rows that cannot run, the best row, and what
// the plan used in the form --rates reads.
#include <catch2/catch.hpp>
#include <map>
#include <memory>
#include <vector>

#include "dgnn/common/error.hpp"
#include "dgnn/gnn/temporal/temporal_dist.hpp"
#include "dgnn/plan/plan_temporal.hpp"

using namespace dgnn;
using namespace dgnn::perf;

namespace {

constexpr int64_t kVertices = 16;
constexpr int kSnapshots = 11;

// Snapshot t holds the path 0 - 1 - ... - (t + 2): t + 2 distinct edges, no self loops, so link
// step s (the edges of snapshot s + 1) has s + 3 positives.
TemporalGraph growing_path() {
  EdgeList e;
  for (int t = 0; t < kSnapshots; ++t)
    for (int v = 0; v < t + 2; ++v) e.src.push_back(v), e.dst.push_back(v + 1), e.time.push_back(t);
  EdgeListOptions eo;
  eo.time_col = 2;
  return build_temporal(e, eo, SnapshotOptions{.seconds = 1}, "growing path", kVertices);
}

Rates fixed_rates() {
  Rates r;
  r.spmm = {{8, 2e9}, {16, 3e9}};
  r.gemm_fwd[{16, 16}] = 2e10;
  r.gemm_bwd[{16, 16}] = 1.5e10;
  r.elementwise = 5e9;
  r.sync_s = 1e-4;
  r.lstm_fwd = 5e8, r.lstm_bwd = 4e8, r.gru_fwd = 6e8, r.gru_bwd = 5e8;
  r.pair_fwd = 4.5e7, r.pair_bwd = 1.5e7, r.gather = 3e9;
  return r;
}

// A node of 2 cores; every (threads, copies) has the same rates.
std::shared_ptr<const GivenRates> given_rates() {
  auto g = std::make_shared<GivenRates>();
  g->cores = 2;
  g->fallback = fixed_rates();
  g->step_overhead = {{1, 1.4}, {2, 1.3}};
  g->process_sync_s = {{4, 1e-3}, {8, 3e-3}};
  g->pairs_per_s = 1000;
  g->pair_draw_fixed = 0.25;
  return g;
}

TemporalPlanOptions link_options(TemporalKind kind, std::vector<int> ranks) {
  TemporalPlanOptions o;
  o.kind = kind;
  o.train.neg_train = 2;
  o.hidden = 16;
  o.seed = 3;
  o.partitioner_names = {"range"};
  o.partitioners = {Partitioner::range};
  o.ranks = std::move(ranks);
  o.net = named_network("ethernet-10g");
  o.rates.cores = 2;
  o.rates.given = given_rates();
  return o;
}

PlanOptions popt(double scale, double overhead) {
  PlanOptions p;
  p.compute_scale = scale;
  p.overhead = overhead;
  return p;
}

}  // namespace

TEST_CASE("temporal planner: the training steps, their pairs and the given drawing rate",
          "[perf]") {
  const TemporalGraph g = growing_path();
  TemporalPlanOptions o = link_options(TemporalKind::gcrn, {1, 2});
  o.train.bptt = 3;
  const TemporalTraining t = temporal_training(g, o);
  // 10 link steps: 7 train (floor 0.7 x 10), in windows of 3.
  CHECK(t.split.steps == 10);
  CHECK(t.split.train == 7);
  CHECK(t.steps.windows == std::vector<int>{0, 3, 6, 7});
  CHECK(t.windows() == 3);
  REQUIRE(t.steps.pairs.size() == 7);
  double ms = 0;
  for (int s = 0; s < 7; ++s) {
    INFO("step " << s);
    CHECK(t.steps.pairs[size_t(s)] == (s + 3) * (1 + 2));  // positives x (1 + --neg-train)
    CHECK(t.steps.entries[size_t(s)] == t.snap(s).nnz());
    CHECK(t.snap(s).nnz() == t.nnz[size_t(s)]);
    CHECK(t.steps.batch_s[size_t(s)] == double((s + 3) * 3) / 1000);
    CHECK(t.steps.batch_known_s[size_t(s)] == t.steps.batch_s[size_t(s)]);
    CHECK(t.steps.batch_fixed_s[size_t(s)] == t.steps.batch_s[size_t(s)] * 0.25);
    ms += double((s + 3) * 3) / 1000 * 1e3;
  }
  CHECK(t.nnz.size() == size_t(kSnapshots));
  CHECK(t.most_pairs == 9 * 3);
  CHECK(t.largest == 6);  // the path grows: the last training step's snapshot is the largest
  CHECK(t.probe_step == 6);
  CHECK(t.drawing_ms() == Approx(ms));
  CHECK(t.drawing_known_ms() == Approx(ms));
  CHECK(t.drawing_fixed_ms() == Approx(ms * 0.25));

  o.ranks = {kVertices + 1};
  CHECK_THROWS_AS(temporal_training(g, o), OptionError);
}

TEST_CASE("temporal planner: the overhead probe is clamped to 0.25 - 8", "[perf]") {
  CHECK(StepProbe{3e-3, 2e-3}.factor() == Approx(1.5));
  CHECK(StepProbe{1.0, 1e-3}.factor() == 8.0);
  CHECK(StepProbe{1e-3, 1.0}.factor() == 0.25);
}

TEST_CASE("temporal planner: rows per rank count and strategy from the given rates", "[perf]") {
  const TemporalGraph g = growing_path();
  const TemporalPlanOptions o = link_options(TemporalKind::gcrn, {1, 2, 12});
  const TemporalTraining t = temporal_training(g, o);
  const TemporalPlan plan = plan_temporal(g, t, 5, o);
  CHECK(plan.in_dim == 5);
  CHECK(plan.shape.parameters == temporal_shape(TModel::gcrn, {5, 16, 16}, 16).parameters);
  REQUIRE(plan.rows.size() == 6);  // per rank count: range, then the snapshot strategy
  // Threads per rank: the 2 cores over the ranks (at least 1); copies: the node's threads busy.
  const int threads[] = {2, 1, 1}, copies[] = {2, 2, 2};
  const double scale[] = {1, 1, 2.0 / 12};
  for (size_t i = 0; i < 6; ++i) {
    const TemporalPlanRow& r = plan.rows[i];
    INFO("row " << i);
    CHECK(r.p.ranks == o.ranks[i / 2]);
    CHECK(r.partitioner == (i % 2 == 0 ? "range" : "-"));
    CHECK(r.p.strategy == (i % 2 == 0 ? "vertex" : "snapshot"));
    CHECK(r.threads == threads[i / 2]);
    CHECK(r.copies == copies[i / 2]);
    CHECK(r.compute_scale == Approx(scale[i / 2]));
  }
  // The given overheads by threads; 12 single-threaded ranks on 2 cores wait as 8 processes do.
  CHECK(plan.probes.empty());
  CHECK(plan.given_overhead == std::map<int, double>{{1, 1.4}, {2, 1.3}});
  CHECK(plan.oversubscribed == std::map<int, double>{{8, 3e-3}});
  CHECK(plan.fused.empty());  // given, not timed
  CHECK(plan.calibration.cache.empty());
  CHECK(plan.calibration.node_cores == 2);

  // One rank: the whole graph on rank 0, at 2 threads' overhead.
  const Rates r = fixed_rates();
  SnapshotAssignment all;
  all.owner.assign(7, 0);
  all.block = {kVertices};
  const TemporalPrediction one = predict_snapshot(plan.shape, t.steps, all, r, o.net, popt(1, 1.3));
  CHECK(plan.rows[1].p.epoch_ms == one.epoch_ms);
  CHECK(plan.rows[0].p.epoch_ms == Approx(one.epoch_ms));
  // Two ranks, snapshot strategy: train's snapshot plan, at 1 thread's overhead.
  const SnapshotPlan sp = snapshot_strategy_plan(g, t.nnz, o.train, 2);
  SnapshotAssignment two;
  two.owner.assign(sp.owner.begin(), sp.owner.begin() + 7);
  two.block = {sp.vertex_begin[1] - sp.vertex_begin[0], sp.vertex_begin[2] - sp.vertex_begin[1]};
  const TemporalPrediction snap2 =
      predict_snapshot(plan.shape, t.steps, two, r, o.net, popt(1, 1.4));
  CHECK(plan.rows[3].p.epoch_ms == snap2.epoch_ms);
  CHECK(plan.rows[3].p.bytes_per_epoch == snap2.bytes_per_epoch);
  // 12 ranks: more than the 11 snapshots.
  CHECK_FALSE(plan.rows[5].p.feasible);
  CHECK(plan.rows[5].p.why == "more ranks than the 11 snapshots");
  CHECK(plan.rows[4].p.feasible);
  // The best row is the feasible one of the shortest epoch.
  for (const TemporalPlanRow& row : plan.rows)
    if (row.p.feasible) CHECK(plan.rows[plan.best].p.epoch_ms <= row.p.epoch_ms);
  CHECK(plan.rows[plan.best].p.feasible);

  // What it used, as --rates reads it: the overheads, synchronisations and drawing rate back.
  const GivenRates used = used_temporal_rates(t, plan);
  CHECK(used.step_overhead == plan.given_overhead);
  CHECK(used.process_sync_s == plan.oversubscribed);
  CHECK(used.pairs_per_s == Approx(1000));
  CHECK(used.pair_draw_fixed == Approx(0.25));
}

TEST_CASE("temporal planner: rows that cannot run say why, and none at all is an error", "[perf]") {
  const TemporalGraph g = growing_path();
  TemporalPlanOptions o = link_options(TemporalKind::evolvegcn_h, {1, 2});
  TemporalTraining t = temporal_training(g, o);
  TemporalPlan plan = plan_temporal(g, t, 5, o);
  REQUIRE(plan.rows.size() == 4);
  CHECK(plan.rows[0].p.feasible);
  CHECK_FALSE(plan.rows[2].p.feasible);
  CHECK(plan.rows[2].p.why == "evolvegcn-h's top-k summary spans all vertices");
  // Only the vertex strategy, on 2 ranks: nothing can run.
  o.snapshot = false;
  o.ranks = {2};
  t = temporal_training(g, o);
  CHECK_THROWS_AS(plan_temporal(g, t, 5, o), OptionError);
}

TEST_CASE("temporal planner: forecasting runs a signal's samples on their steps' graphs",
          "[perf]") {
  const TemporalGraph g = growing_path();
  TemporalPlanOptions o = link_options(TemporalKind::tgcn, {1, 8});
  o.forecast = true;
  o.channels = 2;
  o.forecast_opt.lags = 4;
  // 11 steps, 4 lags, horizon 1: 7 samples from step 3, 4 of them training (int(0.7 x 7)).
  const TemporalTraining t = temporal_training(g, o, kSnapshots);
  CHECK(t.forecast_split.first == 3);
  CHECK(t.split.steps == 7);
  CHECK(t.split.train == 4);
  CHECK(t.steps.windows == std::vector<int>{0, 4});
  CHECK(t.batches.empty());
  CHECK(t.steps.batch_s.empty());  // no pairs to draw
  for (int s = 0; s < 4; ++s) {
    CHECK(t.steps.pairs[size_t(s)] == 0);
    CHECK(t.steps.loss[size_t(s)] == 1);
    CHECK(t.snap(s).nnz() == t.nnz[size_t(3 + s)]);
  }
  CHECK(t.probe_step == 3);
  const TemporalPlan plan = plan_temporal(g, t, 3, o);
  CHECK(plan.in_dim == 4 * 2 + 3);  // lags x channels + the static features
  REQUIRE(plan.rows.size() == 4);
  CHECK(plan.rows[3].p.why == "more ranks than the 7 samples");
  CHECK(plan.rows[1].p.epoch_ms == Approx(plan.rows[0].p.epoch_ms));
  CHECK(used_temporal_rates(t, plan).pairs_per_s == 0);
}
