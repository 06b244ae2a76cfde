// The temporal plan (plan_temporal.hpp): epoch 1's training steps, then per rank count the rates,
// the overhead of a real step and each strategy's predicted epoch.
#include "dgnn/plan/plan_temporal.hpp"

#include <algorithm>

#include "dgnn/common/error.hpp"
#include "dgnn/common/timer.hpp"

namespace dgnn::perf {

namespace {

// The overhead factor's bounds: a probe outside them measured noise, not the step.
constexpr double kMinOverhead = 0.25, kMaxOverhead = 8.0;

double sum_ms(const std::vector<double>& seconds) {
  double ms = 0;
  for (double x : seconds) ms += x * 1e3;
  return ms;
}

// The split and the BPTT windows of the training steps.
void cut_steps(const TemporalGraph& g, const TemporalPlanOptions& o, int64_t signal_steps,
               TemporalTraining& t) {
  std::vector<int> bounds;
  if (o.forecast) {
    t.forecast_split = forecast_split(signal_steps, o.forecast_opt);
    const ForecastSplit& f = t.forecast_split;
    t.split.steps = int(f.samples), t.split.train = int(f.train), t.split.val = int(f.val);
    bounds = forecast_windows(f, o.forecast_opt);
  } else {
    t.split = temporal_split(g, o.train);
    bounds = temporal_windows(g, o.train);
  }
  const int64_t n = g.num_vertices;
  if (o.ranks.back() > n)
    throw OptionError("--ranks " + std::to_string(o.ranks.back()) + " exceeds the " +
                      std::to_string(n) + " vertices of the graph");
  t.steps.vertices = n;
  for (int b : bounds)
    if (b <= t.split.train) t.steps.windows.push_back(b);
}

// Every snapshot's entries, and the graphs of the training steps, each kept once.
void collect_graphs(const TemporalGraph& g, const TemporalPlanOptions& o, TemporalTraining& t) {
  const int T = g.num_snapshots();
  auto graph_of = [&](int s) {
    return o.forecast ? (T == 1 ? 0 : int(t.forecast_split.first) + s) : s;
  };
  std::vector<int> wanted(size_t(T), -1);
  for (int s = 0; s < t.split.train; ++s) wanted[size_t(graph_of(s))] = 0;
  SnapshotCursor cur(g);
  do {
    t.nnz.push_back(cur.current().nnz());
    if (wanted[size_t(cur.index())] == 0) {
      wanted[size_t(cur.index())] = int(t.snaps.size());
      t.snaps.push_back(cur.current());
    }
  } while (cur.next());
  for (int s = 0; s < t.split.train; ++s) t.snap_of.push_back(size_t(wanted[size_t(graph_of(s))]));
}

// Step s's pairs drawn again by a rank of several that knows its positives (after epoch 1): all
// of them, then none (it still reads every event of the step to find the edges its draws must
// avoid). Records the seconds of both.
void time_known_draws(const TemporalGraph& g, const TemporalPlanOptions& o, int s,
                      TemporalSteps& steps) {
  const TemporalTask task = o.train.task;
  const int neg = o.train.neg_train;
  auto all = [](int32_t) { return true; };
  auto none = [](int32_t) { return false; };
  const bool link = task == TemporalTask::link;
  const StepPositives known_all = link ? step_positives(g, s, all) : StepPositives{};
  const StepPositives known_none = link ? step_positives(g, s, none) : StepPositives{};
  Timer t_all;
  step_pairs(g, task, s, neg, o.seed, train_salt(1), all, link ? &known_all : nullptr);
  steps.batch_known_s.push_back(t_all.ms() / 1e3);
  Timer t_none;
  step_pairs(g, task, s, neg, o.seed, train_salt(1), none, link ? &known_none : nullptr);
  steps.batch_fixed_s.push_back(std::min(t_none.ms() / 1e3, steps.batch_known_s.back()));
}

// Each training step's entries, pairs and loss; epoch 1's pairs drawn (and timed, without given
// rates) by the trainer's own code.
void draw_pairs(const TemporalGraph& g, const TemporalPlanOptions& o, TemporalTraining& t) {
  TemporalSteps& steps = t.steps;
  for (int s = 0; s < t.split.train && o.forecast; ++s) {
    steps.entries.push_back(t.snap(s).nnz());
    steps.pairs.push_back(0);
    steps.loss.push_back(1);
    if (t.snap(s).nnz() > t.snap(int(t.largest)).nnz()) t.largest = size_t(s);
  }
  for (int s = 0; s < t.split.train && !o.forecast; ++s) {
    Timer timer;
    t.batches.push_back(step_pairs(g, o.train.task, s, o.train.neg_train, o.seed, train_salt(1)));
    const double drawn_s = timer.ms() / 1e3;
    steps.entries.push_back(t.snap(s).nnz());
    steps.pairs.push_back(int64_t(t.batches.back().src.size()));
    t.most_pairs = std::max(t.most_pairs, steps.pairs.back());
    if (t.snap(s).nnz() > t.snap(int(t.largest)).nnz()) t.largest = size_t(s);
    if (o.rates.given) continue;  // its drawing rate instead (given_drawing)
    steps.batch_s.push_back(drawn_s);
    time_known_draws(g, o, s, steps);
  }
}

// Given rates: pairs drawn at the file's rate, each rank of several paying its fixed share of a
// step's drawing and its share of the rest; without a rate, drawing is not costed.
void given_drawing(const TemporalPlanOptions& o, TemporalSteps& steps) {
  const GivenRates* given = o.rates.given.get();
  if (!given || given->pairs_per_s <= 0 || o.forecast) return;
  for (int64_t pairs : steps.pairs) {
    steps.batch_s.push_back(double(pairs) / given->pairs_per_s);
    steps.batch_known_s.push_back(steps.batch_s.back());
    steps.batch_fixed_s.push_back(steps.batch_s.back() * given->pair_draw_fixed);
  }
}

// The step probed for the overhead: the largest that scores pairs (forecasting: the largest).
int choose_probe_step(const TemporalPlanOptions& o, const TemporalTraining& t) {
  int probe = o.forecast ? int(t.largest) : -1;
  for (int s = 0; s < t.split.train && !o.forecast; ++s)
    if (t.steps.pairs[size_t(s)] > 0 && (probe < 0 || t.snap(s).nnz() > t.snap(probe).nnz()))
      probe = s;
  return probe;
}

}  // namespace

double TemporalTraining::drawing_ms() const { return sum_ms(steps.batch_s); }
double TemporalTraining::drawing_known_ms() const { return sum_ms(steps.batch_known_s); }
double TemporalTraining::drawing_fixed_ms() const { return sum_ms(steps.batch_fixed_s); }

double StepProbe::factor() const {
  return std::clamp(measured_s / kernels_s, kMinOverhead, kMaxOverhead);
}

TemporalTraining temporal_training(const TemporalGraph& g, const TemporalPlanOptions& o,
                                   int64_t signal_steps) {
  TemporalTraining t;
  cut_steps(g, o, signal_steps, t);
  collect_graphs(g, o, t);
  draw_pairs(g, o, t);
  given_drawing(o, t.steps);
  t.probe_step = choose_probe_step(o, t);
  return t;
}

GivenRates used_temporal_rates(const TemporalTraining& t, const TemporalPlan& p) {
  GivenRates used;
  for (auto& [threads, probe] : p.probes) used.step_overhead[threads] = probe.factor();
  for (auto& [threads, f] : p.given_overhead) used.step_overhead[threads] = f;
  used.process_sync_s = p.oversubscribed;
  const TemporalSteps& steps = t.steps;
  double drawn = 0, drawn_s = 0, known_s = 0, fixed_s = 0;
  for (size_t s = 0; s < steps.batch_s.size(); ++s) {
    drawn += double(steps.pairs[s]);
    drawn_s += steps.batch_s[s];
    known_s += steps.batch_known_s.empty() ? steps.batch_s[s] : steps.batch_known_s[s];
    fixed_s += steps.batch_fixed_s.empty() ? steps.batch_s[s] : steps.batch_fixed_s[s];
  }
  if (drawn > 0 && drawn_s > 0) {
    used.pairs_per_s = drawn / drawn_s;
    used.pair_draw_fixed = known_s > 0 ? std::clamp(fixed_s / known_s, 0.0, 1.0) : 1.0;
  }
  return used;
}

}  // namespace dgnn::perf
