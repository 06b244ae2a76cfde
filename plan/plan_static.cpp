// The static plan (plan_static.hpp): per partitioner and rank count, the partition's counts, the
// ranks' rates (GAT's attention scaled by a probe of real epochs) and the predicted epoch.
#include "dgnn/plan/plan_static.hpp"

#include <omp.h>

#include <algorithm>
#include <map>
#include <optional>

#include "dgnn/comm/communicator.hpp"
#include "dgnn/common/error.hpp"
#include "dgnn/gnn/models/layers.hpp"
#include "dgnn/gnn/train/pipeline.hpp"
#include "dgnn/gnn/train/trainer.hpp"

namespace dgnn::perf {

namespace {

// Counts for every P asked, per partitioner: computed up to max_partition; beyond, extrapolated
// from the two largest powers of two computed at or below it (`fitted`).
std::vector<PartitionCounts> counts_for(const Dataset& d, Partitioner method,
                                        const StaticPlanOptions& o, std::vector<int>* fitted) {
  std::map<int, PartitionCounts> done;
  auto compute = [&](int p) -> const PartitionCounts& {
    auto it = done.find(p);
    if (it != done.end()) return it->second;
    PartitionOptions opt;
    opt.method = method;
    opt.parts = p;
    opt.seed = o.seed;
    const std::vector<int32_t> part = p == 1 ? std::vector<int32_t>(size_t(d.num_vertices()), 0)
                                             : partition_vertices(d.graph.in, opt, d.train);
    return done[p] = partition_counts(d.graph.in, part, p);
  };
  std::vector<PartitionCounts> out;
  for (int p : o.ranks) {
    if (p <= o.max_partition) {
      out.push_back(compute(p));
      continue;
    }
    int hi = 1;
    while (hi * 2 <= o.max_partition) hi *= 2;
    const int lo = std::max(1, hi / 2);
    *fitted = {lo, hi};
    out.push_back(
        extrapolate_counts({compute(lo), compute(hi)}, p, d.num_vertices(), d.graph.in.nnz()));
  }
  return out;
}

// The median epoch (ms) of four of `d` trained by one process at `threads` threads, the first
// (warming up) left out.
double time_epochs(const Dataset& d, const StaticPlanOptions& o, int threads) {
  const int before = omp_get_max_threads();
  omp_set_num_threads(threads);
  NodeTask task = make_node_task(d);
  GraphView graph(d.graph.in);
  std::vector<int64_t> dims{d.feature_dim};
  for (int i = 0; i + 1 < o.layers; ++i) dims.push_back(o.hidden);
  dims.push_back(d.num_classes);
  const float dropout = 0.5f;  // dgnn train's default, on features and coefficients
  StackModel model(builtin_layer(o.kind, dropout), dims, dropout);
  model.reset_parameters(o.seed);
  TrainOptions to;
  to.epochs = 4;
  to.seed = o.seed;
  SelfCommunicator self;
  Trainer trainer(model, graph, task, self, to);
  std::vector<double> ms;
  trainer.run([&](const EpochRecord& s) { ms.push_back(s.time_ms); });
  omp_set_num_threads(before);
  std::vector<double> steady(ms.begin() + 1, ms.end());
  std::sort(steady.begin(), steady.end());
  return steady[steady.size() / 2];
}

// The probe of real epochs (plan_static.hpp) against the 1-rank rates `one`.
AttentionProbe attention_probe(const Dataset& whole, const StaticPlanOptions& o,
                               const std::vector<LayerShape>& layers, const Rates& one,
                               double scale, int threads) {
  constexpr int64_t kProbeEntries = 4'000'000;
  Dataset head;
  if (whole.graph.in.nnz() > kProbeEntries) head = head_subgraph(whole, kProbeEntries);
  const Dataset& d = whole.graph.in.nnz() > kProbeEntries ? head : whole;
  const double measured = time_epochs(d, o, threads);
  PartitionCounts c1;
  c1.per_part.push_back(
      partition_counts(d.graph.in, std::vector<int32_t>(size_t(d.num_vertices()), 0), 1)
          .per_part[0]);
  PlanOptions opt;
  opt.compute_scale = scale;
  Rates none = one;
  for (auto* m : {&none.attention_fwd, &none.attention_bwd})
    for (auto& [shape, v] : *m) v = 0;
  const double all = predict(c1, layers, one, o.net, opt).epoch_ms;
  const double rest = predict(c1, layers, none, o.net, opt).epoch_ms;
  AttentionProbe probe{1.0, measured, d.num_vertices(), false};
  if (all - rest > 0) probe.factor = std::clamp((measured - rest) / (all - rest), 0.5, 8.0);
  return probe;
}

// The rates of every rank count asked, GAT's attention scaled by its probe (recorded in `plan`).
std::map<int, Rates> rank_rates(const Dataset& d, const StaticPlanOptions& o, RankRates& rr,
                                StaticPlan& plan) {
  std::map<int, Rates> rates;
  for (int p : o.ranks) rates[p] = rr.rates_for(p);
  if (o.deep) {
    // (no attention: nothing to probe)
  } else if (o.kind == ModelKind::gat && o.rates.given)
    plan.probe = {o.rates.given->attention_factor, 0, 0, true};
  else if (o.kind == ModelKind::gat)  // (the 1-rank rates: calibrated for it if 1 is not asked)
    plan.probe =
        attention_probe(d, o, plan.layers, rr.rates_for(1), rr.scale_for(1), rr.threads_for(1));
  for (auto& [p, r] : rates)
    for (auto* m : {&r.attention_fwd, &r.attention_bwd})
      for (auto& [shape, v] : *m) v *= plan.probe.factor;
  return rates;
}

}  // namespace

StaticPlan plan_static(const Dataset& d, const StaticPlanOptions& o) {
  const int64_t n = d.num_vertices();
  if (o.ranks.back() > n)
    throw OptionError("--ranks " + std::to_string(o.ranks.back()) + " exceeds the " +
                      std::to_string(n) + " vertices of the graph");
  if (d.num_classes < 1) throw OptionError("the dataset has no labels (give --labels FILE)");
  StaticPlan plan;
  plan.layers = o.deep ? deep_model_layers(*o.deep, d.feature_dim, d.num_classes)
                      : model_layers(o.kind, d.feature_dim, o.hidden, d.num_classes, o.layers);
  RankRates rr(o.rates, d.graph.in, plan.layers);
  std::map<int, Rates> rates = rank_rates(d, o, rr, plan);
  PlanOptions opt;
  opt.overlap = o.overlap;
  for (size_t m = 0; m < o.partitioners.size(); ++m) {
    const auto counts = counts_for(d, o.partitioners[m], o, &plan.fitted);
    for (size_t i = 0; i < o.ranks.size(); ++i) {
      const int p = o.ranks[i];
      opt.compute_scale = rr.scale_for(p);
      plan.rows.push_back({o.partitioner_names[m],
                           predict(counts[i], plan.layers, rates[p], o.net, opt), rr.threads_for(p),
                           rr.copies_for(p), opt.compute_scale, counts[i]});
    }
  }
  if (o.deep && o.pipeline) {
    // The pipeline: every stage runs its layers on the whole graph (gnn/train/pipeline.hpp), one
    // part's counts. The hybrid: P / 2 stages x 2 parts (the first partitioner's).
    PartitionCounts whole = partition_counts(d.graph.in, std::vector<int32_t>(size_t(n), 0), 1);
    const PartCounts& all = whole.per_part[0];
    const bool stem_everywhere = o.deep->kind == DeepKind::gcnii && o.deep->alpha != 0.f;
    std::optional<PartitionCounts> halves;
    for (int p : o.ranks) {
      opt.compute_scale = rr.scale_for(p);
      auto row = [&](const std::string& name, const PartitionCounts& parts, int stages, int chunks) {
        const std::vector<int> first =
            pipeline_stages(n, all.edges + all.rows, d.feature_dim, o.deep->hidden, d.num_classes,
                            o.deep->layers, stem_everywhere, stages);
        plan.rows.push_back({name,
                             predict_pipeline(parts, plan.layers, first, chunks, stem_everywhere,
                                              rates[p], o.net, opt),
                             rr.threads_for(p), rr.copies_for(p), opt.compute_scale, {}});
      };
      // One stage is one process; a stage needs a layer.
      if (p >= 2 && p <= o.deep->layers)
        row("pipeline", whole, p, o.pipeline_chunks > 0 ? o.pipeline_chunks : 4 * p);
      if (p >= 4 && p % 2 == 0 && p / 2 <= o.deep->layers && n >= 2) {
        if (!halves) {
          PartitionOptions popt;
          popt.method = o.partitioners.front();
          popt.parts = 2;
          popt.seed = o.seed;
          halves = partition_counts(d.graph.in, partition_vertices(d.graph.in, popt, d.train), 2);
        }
        row("hybrid " + std::to_string(p / 2) + "x2", *halves, p / 2, 1);
      }
    }
  }
  for (size_t i = 0; i < plan.rows.size(); ++i)
    if (plan.rows[i].p.epoch_ms < plan.rows[plan.best].p.epoch_ms) plan.best = i;
  plan.probe_threads = rr.threads_for(1);
  plan.calibration = rr.record();
  return plan;
}

}  // namespace dgnn::perf
