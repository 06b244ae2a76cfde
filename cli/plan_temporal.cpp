// `dgnn plan` on a temporal graph: the predicted training epoch of a temporal model on P ranks
// under each strategy of `dgnn train --strategy` (and partitioner, for the vertex strategy). This
// file checks the options, reads the graph (and signal) as train does, and prints what
// plan/plan_temporal.hpp plans from them.
#include "dgnn/plan/plan_temporal.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "dgnn/cli/options.hpp"
#include "dgnn/cli/plan_args.hpp"
#include "dgnn/cli/train_args.hpp"
#include "dgnn/common/error.hpp"
#include "dgnn/graph/npy.hpp"

namespace dgnn::cli {

namespace {

namespace fs = std::filesystem;

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

void check_numbers(const PlanArgs& a) {
  if (a.layers < 1) throw OptionError("--layers must be >= 1, got " + std::to_string(a.layers));
  if (a.hidden < 1) throw OptionError("--hidden must be >= 1, got " + std::to_string(a.hidden));
  if (a.threads_per_rank < 0)
    throw OptionError("--threads-per-rank must be >= 1, got " + std::to_string(a.threads_per_rank));
  if (a.cores < 0) throw OptionError("--cores must be >= 1, got " + std::to_string(a.cores));
  if (a.neg_train < 0)
    throw OptionError("--neg-train must be >= 0, got " + std::to_string(a.neg_train));
}

// --strategies, --partitioners and --snapshot-groups.
void parse_strategies(const PlanArgs& a, perf::TemporalPlanOptions& o) {
  o.vertex = o.snapshot = false;
  for (const std::string& s : split_list(a.strategies, "--strategies")) {
    if (s == "vertex")
      o.vertex = true;
    else if (s == "snapshot")
      o.snapshot = true;
    else
      throw OptionError("--strategies: unknown strategy '" + s + "' (expected vertex or snapshot)");
  }
  o.partitioners = parse_partitioners(a.partitioners, &o.partitioner_names);
  const auto& m = o.partitioners;
  if (a.snapshot_groups >= 0 &&
      (!o.vertex || std::find(m.begin(), m.end(), Partitioner::metis) == m.end()))
    throw OptionError(
        "--snapshot-groups: balances groups of snapshots with METIS under the vertex strategy "
        "(this plan has --strategies " +
        a.strategies + " --partitioners " + a.partitioners + ")");
  o.snapshot_groups = a.snapshot_groups;
}

// The plan's options from the command line's (OptionError naming the option).
perf::TemporalPlanOptions plan_options(PlanArgs& a, const std::vector<int>& ranks) {
  perf::TemporalPlanOptions o;
  o.kind = parse_temporal_kind(a.model.empty() ? "evolvegcn-o" : a.model);
  if (a.model.empty()) a.model = temporal_kind_name(o.kind);
  o.forecast = a.task == "forecast";
  o.train.task = o.forecast ? TemporalTask::link : parse_temporal_task(a.task);
  check_numbers(a);
  parse_strategies(a, o);
  o.net = plan_network(a);
  o.train.bptt = a.bptt;
  o.train.neg_train = a.neg_train;
  if (a.train_frac_given) o.train.train_frac = a.data.train_frac;
  if (a.val_frac_given) o.train.val_frac = a.data.val_frac;
  o.forecast_opt.lags = a.lags;
  o.forecast_opt.horizon = a.horizon;
  o.forecast_opt.bptt = a.bptt;
  if (a.train_frac_given) o.forecast_opt.train_frac = a.data.train_frac;
  if (a.val_frac_given) o.forecast_opt.val_frac = a.data.val_frac;
  o.layers = a.layers;
  o.hidden = a.hidden;
  o.seed = a.seed;
  o.ranks = ranks;
  o.overlap = !a.no_overlap;
  o.rates = rate_options(a);
  return o;
}

// What `--json` prints: the plan's inputs, what it measured (as --rates reads it) and its rows.
void print_json(const PlanArgs& a, const TemporalGraph& g, const perf::TemporalTraining& t,
                const perf::TemporalPlan& plan, const perf::TemporalPlanOptions& o) {
  nlohmann::json j;
  j["graph"] = {{"name", a.data.graph},           {"vertices", g.num_vertices},
                {"snapshots", g.num_snapshots()}, {"train_steps", t.split.train},
                {"windows", t.windows()},         {"features", plan.in_dim}};
  j["pairs_ms_per_epoch"] = t.drawing_ms();
  j["model"] = {{"name", a.model},
                {"layers", a.layers},
                {"hidden", a.hidden},
                {"parameters", plan.shape.parameters},
                {"task", a.task}};
  j["network"] = {{"name", o.net.name},
                  {"latency_us", o.net.latency_s * 1e6},
                  {"bandwidth_gbs", o.net.bandwidth_Bps / 1e9}};
  j["overlap"] = o.overlap;
  j["cores"] = a.cores;
  j["calibration_file"] = plan.calibration.cache;
  if (!a.rates.empty()) j["rates_file"] = a.rates;
  for (auto& [threads, pr] : plan.probes)
    j["step_probe"].push_back({{"threads", threads},
                               {"measured_ms", pr.measured_s * 1e3},
                               {"kernels_ms", pr.kernels_s * 1e3},
                               {"overhead", pr.factor()},
                               {"given", false}});
  for (auto& [threads, f] : plan.given_overhead)
    j["step_probe"].push_back({{"threads", threads}, {"overhead", f}, {"given", true}});
  for (auto& [tc, c] : plan.calibration.calibrations)
    j["calibration"].push_back({{"threads", tc.first},
                                {"copies", tc.second},
                                {"cached", c.cached},
                                {"given", c.given},
                                {"seconds", c.seconds},
                                {"sync_ms", c.rates.sync_s * 1e3}});
  for (auto& [procs, s] : plan.oversubscribed)
    j["oversubscribed_sync"].push_back(
        {{"processes", procs}, {"sync_ms", s * 1e3}, {"given", a.given != nullptr}});
  // What this plan used, as --rates reads it: the same plan anywhere.
  j["rates"] = used_rates_json(plan.calibration, perf::used_temporal_rates(t, plan), plan.fused);
  for (const perf::TemporalPlanRow& r : plan.rows) {
    nlohmann::json row = {{"ranks", r.p.ranks}};
    if (r.p.feasible)
      row = prediction_json(r.p, r.threads, r.copies, r.compute_scale);
    else
      row["why"] = r.p.why;
    row.update(
        {{"strategy", r.p.strategy}, {"partitioner", r.partitioner}, {"feasible", r.p.feasible}});
    j["rows"].push_back(row);
  }
  const perf::TemporalPlanRow& best = plan.rows[plan.best];
  j["best"] = {{"ranks", best.p.ranks},
               {"strategy", best.p.strategy},
               {"partitioner", best.partitioner},
               {"epoch_ms", best.p.epoch_ms}};
  j["memory"] = memory_json(a, temporal_memory_rows(g, t, plan, a.hidden, a.neg_eval));
  if (a.device_memory_bytes > 0) j["device_memory_bytes"] = a.device_memory_bytes;
  std::printf("%s\n", j.dump(1).c_str());
}

// The text's lines above the table: the graph, model, network, rates, probes and pairs.
void print_inputs(const PlanArgs& a, const TemporalGraph& g, const perf::TemporalTraining& t,
                  const perf::TemporalPlan& plan, const perf::TemporalPlanOptions& o) {
  const int windows = t.windows();
  std::printf(
      "graph     %s: %lld vertices, %d snapshots (%d training steps in %d window%s), "
      "%lld features\n",
      a.data.graph.c_str(), (long long)g.num_vertices, g.num_snapshots(), t.split.train, windows,
      windows == 1 ? "" : "s", (long long)plan.in_dim);
  std::printf(
      "model     %s, %d layers, hidden %lld (%lld parameters with the %s), task "
      "%s\n",
      a.model.c_str(), a.layers, (long long)a.hidden, (long long)plan.shape.parameters,
      o.forecast ? "head" : "pair scorer", a.task.c_str());
  std::printf("network   %s: latency %.2f us, bandwidth %.2f GB/s per direction; overlap %s\n",
              o.net.name.c_str(), o.net.latency_s * 1e6, o.net.bandwidth_Bps / 1e9,
              o.overlap ? "on" : "off");
  for (auto& [tc, c] : plan.calibration.calibrations) {
    std::printf("rates     %d thread%s", tc.first, tc.first == 1 ? "" : "s");
    if (tc.second > 1) std::printf(" x %d at once", tc.second);
    if (!c.given)
      std::printf(": timed on the largest training snapshot (%lld entries)",
                  (long long)t.snap(int(t.largest)).nnz());
    if (tc.second > 1) std::printf(", a synchronisation %.2f ms", c.rates.sync_s * 1e3);
    std::printf(" (%s)\n", c.given    ? ("given in " + a.rates).c_str()
                           : c.cached ? ("cached in " + plan.calibration.cache).c_str()
                                      : "measured now");
  }
  for (auto& [threads, f] : plan.given_overhead)
    std::printf("step      %d thread%s: kernel times x %.2f (given in %s)\n", threads,
                threads == 1 ? "" : "s", f, a.rates.c_str());
  for (auto& [threads, pr] : plan.probes)
    std::printf(
        "step      one real step (snapshot %d), %d thread%s: %.2f ms, its kernels %.2f ms: kernel "
        "times x %.2f (tensors, copies, the tape)\n",
        t.probe_step, threads, threads == 1 ? "" : "s", pr.measured_s * 1e3, pr.kernels_s * 1e3,
        pr.factor());
  if (!o.forecast && a.given && t.steps.batch_s.empty())
    std::printf("pairs     drawing each step's pairs: not costed (%s gives no \"pairs_per_s\")\n",
                a.rates.c_str());
  else if (!o.forecast)
    std::printf(
        "pairs     drawing each step's pairs: %.1f ms per epoch (one rank, and the step's owner "
        "under the snapshot strategy); under the vertex strategy on several ranks %.1f ms, of "
        "which %.1f ms on every rank, the rest by share\n",
        t.drawing_ms(), t.drawing_known_ms(), t.drawing_fixed_ms());
}

void print_table(const perf::TemporalPlan& plan) {
  std::printf("\n%6s %-9s %-11s %10s %9s %9s %9s %10s %11s\n", "ranks", "strategy", "partitioner",
              "epoch ms", "compute", "comm", "wait", "MB/epoch", "max MB/rank");
  for (const perf::TemporalPlanRow& r : plan.rows) {
    if (!r.p.feasible) {
      std::printf("%6d %-9s %-11s %s\n", r.p.ranks, r.p.strategy.c_str(), r.partitioner.c_str(),
                  ("cannot run: " + r.p.why).c_str());
      continue;
    }
    std::printf("%6d %-9s %-11s %10.2f %9.2f %9.2f %9.2f %10.2f %11.2f\n", r.p.ranks,
                r.p.strategy.c_str(), r.partitioner.c_str(), r.p.epoch_ms, r.p.compute_ms,
                r.p.comm_ms, r.p.wait_ms, r.p.bytes_per_epoch / 1e6, r.p.max_rank_bytes / 1e6);
  }
  const perf::TemporalPlanRow& best = plan.rows[plan.best];
  std::printf("\nbest      %d ranks, %s strategy%s: %.2f ms per epoch\n", best.p.ranks,
              best.p.strategy.c_str(),
              best.p.strategy == "vertex" ? (" with " + best.partitioner).c_str() : "",
              best.p.epoch_ms);
}

}  // namespace

void run_plan_temporal(PlanArgs& a, const std::vector<int>& ranks) {
  perf::TemporalPlanOptions o = plan_options(a, ranks);
  // Forecasting (--task forecast): the steps are the samples of a vertex signal.
  TemporalGraph g;
  int64_t signal_steps = 0;
  if (o.forecast) {
    SignalSeries series = read_signal_input(a.data, a.snapshots, a.signals);
    signal_steps = series.steps;
    o.channels = series.channels;
    g = std::move(series.graph);
  } else {
    g = load_temporal(a.data.graph, a.data.edges, a.snapshots);
  }
  const perf::TemporalTraining t = perf::temporal_training(g, o, signal_steps);
  const perf::TemporalPlan plan = perf::plan_temporal(g, t, feature_dim(a, g, o.forecast), o);
  if (a.json) return print_json(a, g, t, plan, o);
  print_inputs(a, g, t, plan, o);
  print_table(plan);
  print_memory(a, temporal_memory_rows(g, t, plan, a.hidden, a.neg_eval));
}

}  // namespace dgnn::cli
