// The temporal plan's rows (plan_temporal.hpp): per rank count, the rates of its ranks, the
// overhead of a real step over its kernels, and each strategy's predicted epoch.
#include <algorithm>

#include "dgnn/common/error.hpp"
#include "dgnn/gnn/temporal/temporal_dist.hpp"
#include "dgnn/plan/plan_temporal.hpp"

namespace dgnn::perf {

namespace {

TModel tmodel(TemporalKind k) {
  switch (k) {
    case TemporalKind::evolvegcn_o:
      return TModel::evolvegcn_o;
    case TemporalKind::evolvegcn_h:
      return TModel::evolvegcn_h;
    case TemporalKind::gcrn:
      return TModel::gcrn;
    case TemporalKind::tgcn:
      return TModel::tgcn;
  }
  return TModel::gcrn;
}

// The rates of P ranks for a temporal model, each timed once (or given) and recorded in the plan:
// the kernels' (RankRates, timed on the largest training snapshot at every width and shape the
// model uses), the fused ops' and the overhead of a real step.
class TemporalRates {
 public:
  TemporalRates(const TemporalTraining& t, const TemporalPlanOptions& o,
                const std::vector<int64_t>& dims, TemporalPlan& plan)
      : t_(t),
        o_(o),
        dims_(dims),
        plan_(plan),
        shapes_(calibration_shapes(plan.shape)),
        rr_(o.rates, t.snap(int(t.largest)), shapes_) {}

  RankRates& rank_rates() { return rr_; }

  // One rank's threads alone on the node, with the fused ops' rates at that thread count.
  Rates alone(int P) {
    Rates r = rr_.alone(P);
    if (o_.rates.given) return r;  // the file's fused ops (0: estimated from the element-wise rate)
    const int t = rr_.threads_for(P);
    auto it = plan_.fused.find(t);
    if (it == plan_.fused.end()) {
      const int64_t n = t_.steps.vertices;
      it = plan_.fused
               .emplace(t, time_fused_ops(t, n, std::min<int64_t>(n, 200'000), o_.hidden,
                                          plan_.shape.embedding, plan_.shape.scorer_hidden,
                                          std::min<int64_t>(t_.most_pairs, 400'000)))
               .first;
    }
    const Rates& f = it->second;
    r.lstm_fwd = f.lstm_fwd, r.lstm_bwd = f.lstm_bwd, r.gru_fwd = f.gru_fwd, r.gru_bwd = f.gru_bwd;
    r.pair_fwd = f.pair_fwd, r.pair_bwd = f.pair_bwd, r.gather = f.gather;
    return r;
  }

  // P ranks sharing the node slow the fused ops down as they do the element-wise kernels.
  // On a node running more ranks than cores (--cores), each synchronisation waits for ranks the
  // node has descheduled: timed with that many processes (at most 4 per core) polling between
  // 2 ms phases, as MPI ranks do.
  Rates rates_for(int P) {
    Rates r = rr_.rates_for(P);
    const int procs = P * rr_.threads_for(P), cores = o_.rates.cores;
    if (cores > 0 && procs > cores) {
      const int n_procs = std::min(procs, 4 * cores);
      auto it = plan_.oversubscribed.find(n_procs);
      if (it == plan_.oversubscribed.end())
        it = plan_.oversubscribed
                 .emplace(n_procs, o_.rates.given ? o_.rates.given->process_sync(n_procs)
                                                  : process_sync_seconds(n_procs, 2e-3))
                 .first;
      r.sync_s = std::max(r.sync_s, it->second);
    }
    const Rates f = alone(P);
    const double shared = r.elementwise / f.elementwise;
    r.lstm_fwd = f.lstm_fwd * shared, r.lstm_bwd = f.lstm_bwd * shared;
    r.gru_fwd = f.gru_fwd * shared, r.gru_bwd = f.gru_bwd * shared;
    r.pair_fwd = f.pair_fwd * shared, r.pair_bwd = f.pair_bwd * shared;
    r.gather = f.gather * shared;
    return r;
  }

  // The kernels leave out what a step spends around them (allocating and zeroing tensors,
  // copies, the tape): one real step on the probe step, timed, against the kernels' sum for that
  // step at the same threads, gives the factor every kernel time is multiplied by (1 when no
  // step scores pairs).
  double overhead_for(int P) {
    const int t = rr_.threads_for(P);
    auto it = plan_.probes.find(t);
    if (t_.probe_step < 0) return 1.0;
    if (o_.rates.given) return plan_.given_overhead[t] = o_.rates.given->overhead(t);
    if (it == plan_.probes.end()) it = plan_.probes.emplace(t, probe(P, t)).first;
    return it->second.kernels_s > 0 ? it->second.factor() : 1.0;
  }

 private:
  StepProbe probe(int P, int threads) {
    const Rates r = alone(P);
    const int ps = t_.probe_step;
    const Csr& snap = t_.snap(ps);
    const double real =
        o_.forecast ? time_real_forecast_step(o_.kind, dims_, o_.channels, snap, o_.seed, threads)
                    : time_real_step(o_.kind, dims_, o_.hidden, snap, t_.batches[size_t(ps)],
                                     o_.seed, threads);
    const int64_t n = t_.steps.vertices;
    TemporalSteps one;
    one.vertices = n;
    one.windows = {0, 1};
    one.entries = {snap.nnz()};
    one.pairs = {t_.steps.pairs[size_t(ps)]};
    if (o_.forecast) one.loss = {1};
    TemporalShape bare = plan_.shape;
    bare.parameters = 0;  // the probe runs no optimizer step
    const TemporalPrediction k = predict_snapshot(bare, one, {{0}, {n}}, r, o_.net);
    return {real, k.epoch_ms / 1e3};
  }

  const TemporalTraining& t_;
  const TemporalPlanOptions& o_;
  const std::vector<int64_t>& dims_;
  TemporalPlan& plan_;
  const std::vector<LayerShape> shapes_;  // what rr_ is timed on: outlives it
  RankRates rr_;
};

// The vertex strategy's counts of each training step under `part`: its snapshot's halo (each
// graph counted once) and the pairs each rank scores. Each pair is scored by its first vertex's
// owner, which fetches each distinct second end once, from its owner (epoch 1's pairs; later
// epochs draw other negatives). Forecasting has no pairs: each rank's head reads its own rows.
std::vector<VertexStep> vertex_steps(const TemporalTraining& t, const std::vector<int32_t>& part,
                                     int P, bool forecast) {
  std::vector<VertexStep> counts;
  std::map<size_t, PartitionCounts> halo;
  for (int s = 0; s < t.split.train; ++s) {
    VertexStep vs;
    auto it = halo.find(t.snap_of[size_t(s)]);
    if (it == halo.end())
      it = halo.emplace(t.snap_of[size_t(s)], partition_counts(t.snap(s), part, P)).first;
    vs.graph = it->second;
    vs.pairs.assign(size_t(P), 0.0);
    vs.fetched.assign(size_t(P), 0.0);
    vs.served.assign(size_t(P), 0.0);
    vs.ends.assign(size_t(P), 0.0);
    if (forecast) {
      counts.push_back(std::move(vs));
      continue;
    }
    const PairBatch& pb = t.batches[size_t(s)];
    std::vector<uint64_t> keys;  // (rank, second end), distinct
    keys.reserve(pb.src.size());
    for (size_t i = 0; i < pb.src.size(); ++i) {
      const int r = part[size_t(pb.src[i])];
      vs.pairs[size_t(r)] += 1;
      keys.push_back(uint64_t(r) << 32 | uint32_t(pb.dst[i]));
    }
    std::sort(keys.begin(), keys.end());
    keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
    for (uint64_t k : keys) {
      const int r = int(k >> 32), q = part[size_t(uint32_t(k))];
      vs.ends[size_t(r)] += 1;
      if (q != r) vs.fetched[size_t(r)] += 1, vs.served[size_t(q)] += 1;
    }
    counts.push_back(std::move(vs));
  }
  return counts;
}

// Everything one rank count's rows share.
struct RankCount {
  int P = 1;
  Rates rates;
  PlanOptions popt;
  TemporalPlanRow base;
};

TemporalPlanRow infeasible(const TemporalPlanRow& base, const char* strategy, int P,
                           std::string why) {
  TemporalPlanRow row = base;
  row.p.strategy = strategy;
  row.p.ranks = P;
  row.p.feasible = false;
  row.p.why = std::move(why);
  return row;
}

TemporalPlanRow vertex_row(const TemporalGraph& g, const TemporalTraining& t,
                           const TemporalPlanOptions& o, const TemporalShape& shape,
                           const RankCount& rc, size_t m) {
  TemporalPlanRow row = rc.base;
  row.partitioner = o.partitioner_names[m];
  const int P = rc.P;
  if (P > 1 && o.kind == TemporalKind::evolvegcn_h)
    return infeasible(row, "vertex", P, "evolvegcn-h's top-k summary spans all vertices");
  std::vector<int32_t> part(static_cast<size_t>(g.num_vertices), 0);
  if (P > 1) {
    PartitionOptions po;
    po.method = o.partitioners[m];
    po.parts = P;
    po.seed = o.seed;
    po.snapshot_groups = o.snapshot_groups;
    part = partition_temporal(g, po);
  }
  const std::vector<VertexStep> steps = vertex_steps(t, part, P, o.forecast);
  row.p = predict_vertex(shape, t.steps, steps, rc.rates, o.net, rc.popt);
  // The largest training snapshot's counts per rank: what the memory plan shares out.
  if (t.largest < steps.size()) row.counts = steps[t.largest].graph;
  return row;
}

TemporalPlanRow snapshot_row(const TemporalGraph& g, const TemporalTraining& t,
                             const TemporalPlanOptions& o, const TemporalShape& shape,
                             const RankCount& rc) {
  TemporalPlanRow row = rc.base;
  row.partitioner = std::string("-");  // (assigning "-" itself: a false -Wrestrict in GCC 12)
  const int P = rc.P;
  const int units = o.forecast ? t.split.steps : g.num_snapshots();
  if (P > units)
    return infeasible(
        row, "snapshot", P,
        "more ranks than the " + std::to_string(units) + (o.forecast ? " samples" : " snapshots"));
  const int64_t n = g.num_vertices;
  const ForecastSplit& fsplit = t.forecast_split;
  std::vector<int64_t> cost;  // forecasting: per sample, its graph's entries and vertices
  for (int64_t i = 0; o.forecast && i < fsplit.samples; ++i)
    cost.push_back(t.nnz[g.num_snapshots() == 1 ? 0 : size_t(fsplit.first + i)] + n);
  const SnapshotPlan plan = o.forecast ? forecast_snapshot_plan(fsplit, o.forecast_opt, cost, P, n)
                                       : snapshot_strategy_plan(g, t.nnz, o.train, P);
  SnapshotAssignment as;
  as.owner.assign(plan.owner.begin(), plan.owner.begin() + t.split.train);
  for (int q = 0; q < P; ++q)
    as.block.push_back(plan.vertex_begin[size_t(q) + 1] - plan.vertex_begin[size_t(q)]);
  row.p = predict_snapshot(shape, t.steps, as, rc.rates, o.net, rc.popt);
  return row;
}

void choose_best(TemporalPlan& plan) {
  const TemporalPlanRow* best = nullptr;
  for (const TemporalPlanRow& r : plan.rows)
    if (r.p.feasible && (!best || r.p.epoch_ms < best->p.epoch_ms)) best = &r;
  if (!best) throw OptionError("no strategy can run these rank counts (see --strategies, --ranks)");
  plan.best = size_t(best - plan.rows.data());
}

}  // namespace

TemporalPlan plan_temporal(const TemporalGraph& g, const TemporalTraining& t, int64_t features,
                           const TemporalPlanOptions& o) {
  TemporalPlan plan;
  plan.in_dim = o.forecast ? int64_t(o.forecast_opt.lags) * o.channels + features : features;
  std::vector<int64_t> dims{plan.in_dim};
  for (int i = 0; i < o.layers; ++i) dims.push_back(o.hidden);
  plan.shape = o.forecast ? forecast_shape(tmodel(o.kind), dims, o.channels)
                          : temporal_shape(tmodel(o.kind), dims, o.hidden);
  TemporalRates rates(t, o, dims, plan);
  RankRates& rr = rates.rank_rates();
  for (int P : o.ranks) {
    RankCount rc;
    rc.P = P;
    rc.rates = rates.rates_for(P);
    rc.popt.overlap = o.overlap;
    rc.popt.compute_scale = rr.scale_for(P);
    rc.popt.overhead = rates.overhead_for(P);
    rc.base.threads = rr.threads_for(P);
    rc.base.copies = rr.copies_for(P);
    rc.base.compute_scale = rc.popt.compute_scale;
    for (size_t m = 0; o.vertex && m < o.partitioners.size(); ++m)
      plan.rows.push_back(vertex_row(g, t, o, plan.shape, rc, m));
    if (o.snapshot) plan.rows.push_back(snapshot_row(g, t, o, plan.shape, rc));
  }
  choose_best(plan);
  plan.calibration = rr.record();
  return plan;
}

}  // namespace dgnn::perf
