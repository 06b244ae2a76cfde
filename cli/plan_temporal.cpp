// `dgnn plan` on a temporal graph: the predicted training epoch of a temporal model on P ranks
// under each strategy of `dgnn train --strategy` (and partitioner, for the vertex strategy), from
// the snapshots as train cuts them, the partition's per-snapshot halo counts, the snapshot plan,
// kernel rates measured here and a network. The arithmetic is plan/perf_temporal.hpp.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "dgnn/cli/options.hpp"
#include "dgnn/cli/plan_args.hpp"
#include "dgnn/cli/train_args.hpp"
#include "dgnn/common/error.hpp"
#include "dgnn/common/timer.hpp"
#include "dgnn/gnn/core/graph_view.hpp"
#include "dgnn/gnn/core/loss.hpp"
#include "dgnn/gnn/temporal/forecast.hpp"
#include "dgnn/gnn/temporal/temporal_dist.hpp"
#include "dgnn/gnn/temporal/temporal_trainer.hpp"
#include "dgnn/graph/npy.hpp"
#include "dgnn/kernels/kernels.hpp"
#include "dgnn/partition/partition.hpp"
#include "dgnn/plan/perf_temporal.hpp"

namespace dgnn::cli {

namespace {

namespace fs = std::filesystem;

perf::TModel tmodel(TemporalKind k) {
  switch (k) {
    case TemporalKind::evolvegcn_o:
      return perf::TModel::evolvegcn_o;
    case TemporalKind::evolvegcn_h:
      return perf::TModel::evolvegcn_h;
    case TemporalKind::gcrn:
      return perf::TModel::gcrn;
    case TemporalKind::tgcn:
      return perf::TModel::tgcn;
  }
  return perf::TModel::gcrn;
}

// The features train would read: features.npy of the dataset directory or --features (their
// width), else the degree buckets of each snapshot.
// Forecasting reads no degree buckets: its static features' width, or 0.
int64_t feature_dim(const PlanArgs& a, const TemporalGraph& g, bool forecast = false) {
  std::string file = a.data.features;
  if (file.empty() && fs::is_directory(a.data.graph) &&
      fs::exists(fs::path(a.data.graph) / "features.npy"))
    file = (fs::path(a.data.graph) / "features.npy").string();
  if (file.empty()) return forecast ? 0 : degree_feature_dim(g);
  return read_npy(file).cols;
}

struct Row {
  std::string partitioner;  // vertex strategy; "-" for snapshot
  perf::TemporalPrediction p;
  int threads = 1, copies = 1;
  double compute_scale = 1;
};

}  // namespace

void run_plan_temporal(PlanArgs& a, const std::vector<int>& ranks) {
  const TemporalKind kind = parse_temporal_kind(a.model.empty() ? "evolvegcn-o" : a.model);
  if (a.model.empty()) a.model = temporal_kind_name(kind);
  // Forecasting (--task forecast): the steps are the samples of a vertex signal, each on its
  // step's graph (one graph for all when it is static), with a per-vertex head and no pairs.
  const bool forecast = a.task == "forecast";
  const TemporalTask task = forecast ? TemporalTask::link : parse_temporal_task(a.task);
  if (a.layers < 1) throw OptionError("--layers must be >= 1, got " + std::to_string(a.layers));
  if (a.hidden < 1) throw OptionError("--hidden must be >= 1, got " + std::to_string(a.hidden));
  if (a.threads_per_rank < 0)
    throw OptionError("--threads-per-rank must be >= 1, got " + std::to_string(a.threads_per_rank));
  if (a.cores < 0) throw OptionError("--cores must be >= 1, got " + std::to_string(a.cores));
  if (a.neg_train < 0)
    throw OptionError("--neg-train must be >= 0, got " + std::to_string(a.neg_train));
  bool want_vertex = false, want_snapshot = false;
  for (const std::string& s : split_list(a.strategies, "--strategies")) {
    if (s == "vertex")
      want_vertex = true;
    else if (s == "snapshot")
      want_snapshot = true;
    else
      throw OptionError("--strategies: unknown strategy '" + s + "' (expected vertex or snapshot)");
  }
  std::vector<std::string> names = split_list(a.partitioners, "--partitioners");
  std::vector<Partitioner> methods;
  for (const std::string& n : names) {
    try {
      methods.push_back(parse_partitioner(n));
    } catch (const OptionError& e) {
      throw OptionError(std::string("--partitioners: ") + e.what());
    }
  }
  if (a.snapshot_groups >= 0 && (!want_vertex || std::find(methods.begin(), methods.end(),
                                                           Partitioner::metis) == methods.end()))
    throw OptionError(
        "--snapshot-groups: balances groups of snapshots with METIS under the vertex strategy "
        "(this plan has --strategies " +
        a.strategies + " --partitioners " + a.partitioners + ")");
  const perf::Network net = plan_network(a);

  TemporalGraph signal_graph;
  int64_t channels = 1;
  ForecastOptions fopt;
  ForecastSplit fsplit;
  if (forecast) {
    SignalSeries series = read_signal_input(a.data, a.snapshots, a.signals);
    fopt.lags = a.lags;
    fopt.horizon = a.horizon;
    fopt.bptt = a.bptt;
    if (a.train_frac_given) fopt.train_frac = a.data.train_frac;
    if (a.val_frac_given) fopt.val_frac = a.data.val_frac;
    fsplit = forecast_split(series.steps, fopt);
    channels = series.channels;
    signal_graph = std::move(series.graph);
  }
  const TemporalGraph& g =
      forecast ? signal_graph
               : (signal_graph = load_temporal(a.data.graph, a.data.edges, a.snapshots));
  TemporalOptions opt;
  opt.task = task;
  opt.bptt = a.bptt;
  opt.neg_train = a.neg_train;
  if (a.train_frac_given) opt.train_frac = a.data.train_frac;
  if (a.val_frac_given) opt.val_frac = a.data.val_frac;
  // OptionError when the options do not fit.
  TemporalSplit split;
  std::vector<int> bounds;
  if (forecast) {
    split.steps = int(fsplit.samples), split.train = int(fsplit.train), split.val = int(fsplit.val);
    bounds = forecast_windows(fsplit, fopt);
  } else {
    split = temporal_split(g, opt);
    bounds = temporal_windows(g, opt);
  }
  const int64_t n = g.num_vertices;
  if (ranks.back() > n)
    throw OptionError("--ranks " + std::to_string(ranks.back()) + " exceeds the " +
                      std::to_string(n) + " vertices of the graph");

  // The training steps: their snapshots, windows and pairs.
  perf::TemporalSteps steps;
  steps.vertices = n;
  for (int b : bounds)
    if (b <= split.train) steps.windows.push_back(b);
  // The training steps' graphs: snaps[snap_of[s]] is step s's (forecasting on a static graph:
  // one for all).
  std::vector<Csr> snaps;
  std::vector<size_t> snap_of;
  std::vector<int64_t> nnz;
  {
    const int T = g.num_snapshots();
    auto graph_of = [&](int s) { return forecast ? (T == 1 ? 0 : int(fsplit.first) + s) : s; };
    std::vector<int> wanted(size_t(T), -1);
    for (int s = 0; s < split.train; ++s) wanted[size_t(graph_of(s))] = 0;
    SnapshotCursor cur(g);
    do {
      nnz.push_back(cur.current().nnz());
      if (wanted[size_t(cur.index())] == 0) {
        wanted[size_t(cur.index())] = int(snaps.size());
        snaps.push_back(cur.current());
      }
    } while (cur.next());
    for (int s = 0; s < split.train; ++s) snap_of.push_back(size_t(wanted[size_t(graph_of(s))]));
  }
  auto snap = [&](int s) -> const Csr& { return snaps[snap_of[size_t(s)]]; };
  // Epoch 1's pairs, drawn (and timed) by the trainer's own code.
  std::vector<PairBatch> batches;
  size_t largest = 0;
  int64_t most_pairs = 1;
  for (int s = 0; s < split.train && forecast; ++s) {
    steps.entries.push_back(snap(s).nnz());
    steps.pairs.push_back(0);
    steps.loss.push_back(1);
    if (snap(s).nnz() > snap(int(largest)).nnz()) largest = size_t(s);
  }
  for (int s = 0; s < split.train && !forecast; ++s) {
    Timer t;
    batches.push_back(step_pairs(g, task, s, opt.neg_train, a.seed, train_salt(1)));
    const double drawn_s = t.ms() / 1e3;
    steps.entries.push_back(snap(s).nnz());
    steps.pairs.push_back(int64_t(batches.back().src.size()));
    most_pairs = std::max(most_pairs, steps.pairs.back());
    if (snap(s).nnz() > snap(int(largest)).nnz()) largest = size_t(s);
    if (a.given) continue;  // its drawing rate instead (below)
    steps.batch_s.push_back(drawn_s);
    // A rank of several, with its positives known (after epoch 1): all of them, then none (it
    // still reads every event of the step to find the edges its draws must avoid).
    auto all = [](int32_t) { return true; };
    auto none = [](int32_t) { return false; };
    const bool link = task == TemporalTask::link;
    const StepPositives known_all = link ? step_positives(g, s, all) : StepPositives{};
    const StepPositives known_none = link ? step_positives(g, s, none) : StepPositives{};
    Timer t_all;
    step_pairs(g, task, s, opt.neg_train, a.seed, train_salt(1), all, link ? &known_all : nullptr);
    steps.batch_known_s.push_back(t_all.ms() / 1e3);
    Timer t_none;
    step_pairs(g, task, s, opt.neg_train, a.seed, train_salt(1), none,
               link ? &known_none : nullptr);
    steps.batch_fixed_s.push_back(std::min(t_none.ms() / 1e3, steps.batch_known_s.back()));
  }
  // Given rates: pairs drawn at the file's rate, each rank of several paying its fixed share of a
  // step's drawing and its share of the rest; without a rate, drawing is not costed.
  if (a.given && a.given->pairs_per_s > 0 && !forecast)
    for (int64_t pairs : steps.pairs) {
      steps.batch_s.push_back(double(pairs) / a.given->pairs_per_s);
      steps.batch_known_s.push_back(steps.batch_s.back());
      steps.batch_fixed_s.push_back(steps.batch_s.back() * a.given->pair_draw_fixed);
    }
  // The step probed for the overhead: the largest that scores pairs.
  int probe_step = forecast ? int(largest) : -1;
  for (int s = 0; s < split.train && !forecast; ++s)
    if (steps.pairs[size_t(s)] > 0 &&
        (probe_step < 0 || snap(s).nnz() > snap(probe_step).nnz()))
      probe_step = s;

  const int64_t in_dim = forecast ? int64_t(fopt.lags) * channels + feature_dim(a, g, true)
                                  : feature_dim(a, g);
  std::vector<int64_t> dims{in_dim};
  for (int i = 0; i < a.layers; ++i) dims.push_back(a.hidden);
  const perf::TemporalShape shape = forecast ? perf::forecast_shape(tmodel(kind), dims, channels)
                                             : perf::temporal_shape(tmodel(kind), dims, a.hidden);
  // Rates timed on the largest training snapshot, at every width and shape the model uses.
  const std::vector<perf::LayerShape> cal_shapes = perf::calibration_shapes(shape);
  perf::RankRates rr(rate_options(a), snap(int(largest)), cal_shapes);
  std::map<int, perf::Rates> fused;  // by threads per rank
  // One rank's threads alone on the node, with the fused ops' rates at that thread count.
  auto alone = [&](int P) {
    perf::Rates r = rr.alone(P);
    if (a.given) return r;  // the file's fused ops (0: estimated from the element-wise rate)
    const int t = rr.threads_for(P);
    auto it = fused.find(t);
    if (it == fused.end())
      it = fused
               .emplace(t, perf::time_fused_ops(t, n, std::min<int64_t>(n, 200'000), a.hidden,
                                                shape.embedding, shape.scorer_hidden,
                                                std::min<int64_t>(most_pairs, 400'000)))
               .first;
    const perf::Rates& f = it->second;
    r.lstm_fwd = f.lstm_fwd, r.lstm_bwd = f.lstm_bwd, r.gru_fwd = f.gru_fwd, r.gru_bwd = f.gru_bwd;
    r.pair_fwd = f.pair_fwd, r.pair_bwd = f.pair_bwd, r.gather = f.gather;
    return r;
  };
  // P ranks sharing the node slow the fused ops down as they do the element-wise kernels.
  // On a node running more ranks than cores (--cores), each synchronisation waits for ranks the
  // node has descheduled: timed with that many processes (at most 4 per core) polling between
  // 2 ms phases, as MPI ranks do.
  std::map<int, double> oversubscribed;  // by processes
  auto rates_for = [&](int P) {
    perf::Rates r = rr.rates_for(P);
    const int procs = P * rr.threads_for(P);
    if (a.cores > 0 && procs > a.cores) {
      const int n_procs = std::min(procs, 4 * a.cores);
      auto it = oversubscribed.find(n_procs);
      if (it == oversubscribed.end())
        it = oversubscribed
                 .emplace(n_procs, a.given ? a.given->process_sync(n_procs)
                                           : perf::process_sync_seconds(n_procs, 2e-3))
                 .first;
      r.sync_s = std::max(r.sync_s, it->second);
    }
    const perf::Rates f = alone(P);
    const double shared = r.elementwise / f.elementwise;
    r.lstm_fwd = f.lstm_fwd * shared, r.lstm_bwd = f.lstm_bwd * shared;
    r.gru_fwd = f.gru_fwd * shared, r.gru_bwd = f.gru_bwd * shared;
    r.pair_fwd = f.pair_fwd * shared, r.pair_bwd = f.pair_bwd * shared;
    r.gather = f.gather * shared;
    return r;
  };
  // The kernels leave out what a step spends around them (allocating and zeroing tensors,
  // copies, the tape): one real step on the largest training snapshot that scores pairs, timed,
  // against the kernels' sum for that step at the same threads, gives the factor every kernel
  // time is multiplied by (1 when no step scores pairs).
  std::map<int, std::pair<double, double>> probes;  // threads -> (measured, kernels) seconds
  std::map<int, double> given_overhead;             // threads -> the factor --rates gives
  auto overhead_for = [&](int P) {
    const int t = rr.threads_for(P);
    auto it = probes.find(t);
    if (probe_step < 0) return 1.0;
    if (a.given) return given_overhead[t] = a.given->overhead(t);
    if (it == probes.end()) {
      const perf::Rates r = alone(P);
      const size_t ps = size_t(probe_step);
      const double real =
          forecast ? perf::time_real_forecast_step(kind, dims, channels, snap(int(ps)), a.seed, t)
                   : perf::time_real_step(kind, dims, a.hidden, snap(int(ps)), batches[ps], a.seed,
                                          t);
      perf::TemporalSteps one;
      one.vertices = n;
      one.windows = {0, 1};
      one.entries = {snap(int(ps)).nnz()};
      one.pairs = {steps.pairs[ps]};
      if (forecast) one.loss = {1};
      perf::TemporalShape bare = shape;
      bare.parameters = 0;  // the probe runs no optimizer step
      const perf::TemporalPrediction k = perf::predict_snapshot(bare, one, {{0}, {n}}, r, net);
      it = probes.emplace(t, std::pair{real, k.epoch_ms / 1e3}).first;
    }
    return it->second.second > 0 ? std::clamp(it->second.first / it->second.second, 0.25, 8.0)
                                  : 1.0;
  };
  perf::PlanOptions popt;
  popt.overlap = !a.no_overlap;
  std::vector<Row> rows;
  for (int P : ranks) {
    const perf::Rates rates = rates_for(P);
    popt.compute_scale = rr.scale_for(P);
    popt.overhead = overhead_for(P);
    const Row base{"", {}, rr.threads_for(P), rr.copies_for(P), popt.compute_scale};
    if (want_vertex) {
      for (size_t m = 0; m < methods.size(); ++m) {
        Row row = base;
        row.partitioner = names[m];
        if (P > 1 && kind == TemporalKind::evolvegcn_h) {
          row.p.strategy = "vertex";
          row.p.ranks = P;
          row.p.feasible = false;
          row.p.why = "evolvegcn-h's top-k summary spans all vertices";
          rows.push_back(row);
          continue;
        }
        std::vector<int32_t> part(static_cast<size_t>(n), 0);
        if (P > 1) {
          PartitionOptions po;
          po.method = methods[m];
          po.parts = P;
          po.seed = a.seed;
          po.snapshot_groups = a.snapshot_groups;
          part = partition_temporal(g, po);
        }
        std::vector<perf::VertexStep> counts;
        std::map<size_t, perf::PartitionCounts> halo;  // per graph: a static one is counted once
        for (int s = 0; s < split.train; ++s) {
          perf::VertexStep vs;
          auto it = halo.find(snap_of[size_t(s)]);
          if (it == halo.end())
            it = halo.emplace(snap_of[size_t(s)], perf::partition_counts(snap(s), part, P)).first;
          vs.graph = it->second;
          vs.pairs.assign(size_t(P), 0.0);
          vs.fetched.assign(size_t(P), 0.0);
          vs.served.assign(size_t(P), 0.0);
          // Each pair is scored by its first vertex's owner, which fetches each distinct second
          // end once, from its owner (epoch 1's pairs; later epochs draw other negatives).
          vs.ends.assign(size_t(P), 0.0);
          if (forecast) {  // no pairs: each rank's head reads its own rows
            counts.push_back(std::move(vs));
            continue;
          }
          const PairBatch& pb = batches[size_t(s)];
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
        row.p = perf::predict_vertex(shape, steps, counts, rates, net, popt);
        rows.push_back(row);
      }
    }
    if (want_snapshot) {
      Row row = base;
      row.partitioner = "-";
      const int units = forecast ? split.steps : g.num_snapshots();
      if (P > units) {
        row.p.strategy = "snapshot";
        row.p.ranks = P;
        row.p.feasible = false;
        row.p.why = "more ranks than the " + std::to_string(units) +
                    (forecast ? " samples" : " snapshots");
        rows.push_back(row);
      } else {
        std::vector<int64_t> cost;  // forecasting: per sample, its graph's entries and vertices
        for (int64_t i = 0; forecast && i < fsplit.samples; ++i)
          cost.push_back(nnz[g.num_snapshots() == 1 ? 0 : size_t(fsplit.first + i)] + n);
        const SnapshotPlan plan = forecast ? forecast_snapshot_plan(fsplit, fopt, cost, P, n)
                                           : snapshot_strategy_plan(g, nnz, opt, P);
        perf::SnapshotAssignment as;
        as.owner.assign(plan.owner.begin(), plan.owner.begin() + split.train);
        for (int q = 0; q < P; ++q)
          as.block.push_back(plan.vertex_begin[size_t(q) + 1] - plan.vertex_begin[size_t(q)]);
        row.p = perf::predict_snapshot(shape, steps, as, rates, net, popt);
        rows.push_back(row);
      }
    }
  }
  const Row* best = nullptr;
  for (const Row& r : rows)
    if (r.p.feasible && (!best || r.p.epoch_ms < best->p.epoch_ms)) best = &r;
  if (!best) throw OptionError("no strategy can run these rank counts (see --strategies, --ranks)");

  const int windows = int(steps.windows.size()) - 1;
  if (a.json) {
    nlohmann::json j;
    j["graph"] = {
        {"name", a.data.graph},       {"vertices", n},      {"snapshots", g.num_snapshots()},
        {"train_steps", split.train}, {"windows", windows}, {"features", in_dim}};
    double batch_ms = 0;
    for (double x : steps.batch_s) batch_ms += x * 1e3;
    j["pairs_ms_per_epoch"] = batch_ms;
    j["model"] = {{"name", a.model},
                  {"layers", a.layers},
                  {"hidden", a.hidden},
                  {"parameters", shape.parameters},
                  {"task", a.task}};
    j["network"] = {{"name", net.name},
                    {"latency_us", net.latency_s * 1e6},
                    {"bandwidth_gbs", net.bandwidth_Bps / 1e9}};
    j["overlap"] = popt.overlap;
    j["cores"] = a.cores;
    j["calibration_file"] = rr.cache();
    if (!a.rates.empty()) j["rates_file"] = a.rates;
    for (auto& [t, pr] : probes)
      j["step_probe"].push_back({{"threads", t},
                                 {"measured_ms", pr.first * 1e3},
                                 {"kernels_ms", pr.second * 1e3},
                                 {"overhead", std::clamp(pr.first / pr.second, 0.25, 8.0)},
                                 {"given", false}});
    for (auto& [t, f] : given_overhead)
      j["step_probe"].push_back({{"threads", t}, {"overhead", f}, {"given", true}});
    for (auto& [tc, c] : rr.calibrations())
      j["calibration"].push_back({{"threads", tc.first},
                                  {"copies", tc.second},
                                  {"cached", c.cached},
                                  {"given", c.given},
                                  {"seconds", c.seconds},
                                  {"sync_ms", c.rates.sync_s * 1e3}});
    for (auto& [procs, s] : oversubscribed)
      j["oversubscribed_sync"].push_back(
          {{"processes", procs}, {"sync_ms", s * 1e3}, {"given", a.given != nullptr}});
    // What this plan used, as --rates reads it: the same plan anywhere.
    perf::GivenRates used;
    for (auto& [t, pr] : probes)
      used.step_overhead[t] = std::clamp(pr.first / pr.second, 0.25, 8.0);
    for (auto& [t, f] : given_overhead) used.step_overhead[t] = f;
    used.process_sync_s = oversubscribed;
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
    j["rates"] = used_rates_json(rr, used, fused);
    for (const Row& r : rows) {
      nlohmann::json o = {{"ranks", r.p.ranks}};
      if (r.p.feasible)
        o = prediction_json(r.p, r.threads, r.copies, r.compute_scale);
      else
        o["why"] = r.p.why;
      o.update(
          {{"strategy", r.p.strategy}, {"partitioner", r.partitioner}, {"feasible", r.p.feasible}});
      j["rows"].push_back(o);
    }
    j["best"] = {{"ranks", best->p.ranks},
                 {"strategy", best->p.strategy},
                 {"partitioner", best->partitioner},
                 {"epoch_ms", best->p.epoch_ms}};
    std::printf("%s\n", j.dump(1).c_str());
    return;
  }
  std::printf(
      "graph     %s: %lld vertices, %d snapshots (%d training steps in %d window%s), "
      "%lld features\n",
      a.data.graph.c_str(), (long long)n, g.num_snapshots(), split.train, windows,
      windows == 1 ? "" : "s", (long long)in_dim);
  std::printf(
      "model     %s, %d layers, hidden %lld (%lld parameters with the %s), task "
      "%s\n",
      a.model.c_str(), a.layers, (long long)a.hidden, (long long)shape.parameters,
      forecast ? "head" : "pair scorer", a.task.c_str());
  std::printf("network   %s: latency %.2f us, bandwidth %.2f GB/s per direction; overlap %s\n",
              net.name.c_str(), net.latency_s * 1e6, net.bandwidth_Bps / 1e9,
              popt.overlap ? "on" : "off");
  for (auto& [tc, c] : rr.calibrations()) {
    std::printf("rates     %d thread%s", tc.first, tc.first == 1 ? "" : "s");
    if (tc.second > 1) std::printf(" x %d at once", tc.second);
    if (!c.given)
      std::printf(": timed on the largest training snapshot (%lld entries)",
                  (long long)snap(int(largest)).nnz());
    if (tc.second > 1) std::printf(", a synchronisation %.2f ms", c.rates.sync_s * 1e3);
    std::printf(" (%s)\n", c.given    ? ("given in " + a.rates).c_str()
                           : c.cached ? ("cached in " + rr.cache()).c_str()
                                      : "measured now");
  }
  for (auto& [t, f] : given_overhead)
    std::printf("step      %d thread%s: kernel times x %.2f (given in %s)\n", t, t == 1 ? "" : "s",
                f, a.rates.c_str());
  for (auto& [t, pr] : probes)
    std::printf(
        "step      one real step (snapshot %d), %d thread%s: %.2f ms, its kernels %.2f ms: kernel "
        "times x %.2f (tensors, copies, the tape)\n",
        probe_step, t, t == 1 ? "" : "s", pr.first * 1e3, pr.second * 1e3,
        std::clamp(pr.first / pr.second, 0.25, 8.0));
  double batch_ms = 0;
  for (double x : steps.batch_s) batch_ms += x * 1e3;
  double fixed_ms = 0, known_ms = 0;
  for (double x : steps.batch_fixed_s) fixed_ms += x * 1e3;
  for (double x : steps.batch_known_s) known_ms += x * 1e3;
  if (!forecast && a.given && steps.batch_s.empty())
    std::printf("pairs     drawing each step's pairs: not costed (%s gives no \"pairs_per_s\")\n",
                a.rates.c_str());
  else if (!forecast)
    std::printf(
        "pairs     drawing each step's pairs: %.1f ms per epoch (one rank, and the step's owner "
        "under the snapshot strategy); under the vertex strategy on several ranks %.1f ms, of "
        "which %.1f ms on every rank, the rest by share\n",
        batch_ms, known_ms, fixed_ms);
  std::printf("\n%6s %-9s %-11s %10s %9s %9s %9s %10s %11s\n", "ranks", "strategy", "partitioner",
              "epoch ms", "compute", "comm", "wait", "MB/epoch", "max MB/rank");
  for (const Row& r : rows) {
    if (!r.p.feasible) {
      std::printf("%6d %-9s %-11s %s\n", r.p.ranks, r.p.strategy.c_str(), r.partitioner.c_str(),
                  ("cannot run: " + r.p.why).c_str());
      continue;
    }
    std::printf("%6d %-9s %-11s %10.2f %9.2f %9.2f %9.2f %10.2f %11.2f\n", r.p.ranks,
                r.p.strategy.c_str(), r.partitioner.c_str(), r.p.epoch_ms, r.p.compute_ms,
                r.p.comm_ms, r.p.wait_ms, r.p.bytes_per_epoch / 1e6, r.p.max_rank_bytes / 1e6);
  }
  std::printf("\nbest      %d ranks, %s strategy%s: %.2f ms per epoch\n", best->p.ranks,
              best->p.strategy.c_str(),
              best->p.strategy == "vertex" ? (" with " + best->partitioner).c_str() : "",
              best->p.epoch_ms);
}

}  // namespace dgnn::cli
