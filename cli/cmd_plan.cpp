// `dgnn plan`: predicts the epoch time of distributed full-graph training on P ranks, beyond
// this machine, from the partition's per-rank counts (METIS computed for P, or extrapolated for
// very large P), kernel rates measured here on the graph's shapes, and a network's latency and
// bandwidth. The plan is plan/plan_static.hpp (temporal graphs: plan_temporal.cpp); this file
// checks the options, reads the graph and prints.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "dgnn/cli/commands.hpp"
#include "dgnn/cli/options.hpp"
#include "dgnn/cli/plan_args.hpp"
#include "dgnn/cli/train_args.hpp"
#include "dgnn/common/error.hpp"
#include "dgnn/datasets/sbm.hpp"
#include "dgnn/gnn/models/deep.hpp"
#include "dgnn/gnn/models/layers.hpp"
#include "dgnn/graph/dataset.hpp"
#include "dgnn/partition/partition.hpp"
#include "dgnn/plan/memory_model.hpp"
#include "dgnn/plan/plan_static.hpp"

namespace dgnn::cli {

namespace {

Dataset load_or_generate(const PlanArgs& a) {
  if (!a.data.graph.empty()) return load_dataset(a.data);
  return generate_sbm(default_sbm(a.data)).to_dataset();  // as `dgnn train` without --graph
}

// The static plan's options from the command line's (OptionError naming the option).
perf::StaticPlanOptions plan_options(PlanArgs& a, const std::vector<int>& ranks) {
  if (a.temporal_options_given)
    throw OptionError(
        "--strategies, --task, --bptt, --neg-train and --snapshot-groups are for "
        "temporal graphs (a "
        "--time-col, or a dataset directory with snapshots.txt)");
  if (a.model.empty()) a.model = "gcn";
  perf::StaticPlanOptions o;
  o.partitioners = parse_partitioners(a.partitioners, &o.partitioner_names);
  if (find_registered_layer(a.model))
    throw OptionError("--model " + a.model +
                      ": plan models the built-in layers (gcn, sage, gin, gat); measure a "
                      "registered layer with `scale`");
  if (is_deep_model(a.model)) {
    DeepModelOptions deep;
    deep.kind = parse_deep_kind(a.model);
    deep.layers = a.layers;
    deep.hidden = a.hidden;
    if (a.layers < 1) throw OptionError("--layers must be >= 1, got " + std::to_string(a.layers));
    if (a.hidden < 1) throw OptionError("--hidden must be >= 1, got " + std::to_string(a.hidden));
    o.deep = deep;
  } else {
    o.kind = parse_model_kind(a.model);  // its error names --model
  }
  if (a.threads_per_rank < 0)
    throw OptionError("--threads-per-rank must be >= 1, got " + std::to_string(a.threads_per_rank));
  if (a.cores < 0) throw OptionError("--cores must be >= 1, got " + std::to_string(a.cores));
  if (a.layers < 1) throw OptionError("--layers must be >= 1, got " + std::to_string(a.layers));
  if (a.hidden < 1) throw OptionError("--hidden must be >= 1, got " + std::to_string(a.hidden));
  if (a.max_partition < 2)
    throw OptionError("--max-partition must be >= 2, got " + std::to_string(a.max_partition));
  o.net = plan_network(a);
  o.layers = a.layers;
  o.hidden = a.hidden;
  o.seed = a.seed;
  o.ranks = ranks;
  o.max_partition = a.max_partition;
  o.overlap = !a.no_overlap;
  o.rates = rate_options(a);
  return o;
}

std::string graph_name(const PlanArgs& a) {
  return a.data.graph.empty() ? "generated SBM (as dgnn train)" : a.data.graph;
}

void print_json(const PlanArgs& a, const Dataset& d, const perf::StaticPlan& plan,
                const perf::StaticPlanOptions& o) {
  nlohmann::json j;
  j["graph"] = {{"name", graph_name(a)},
                {"vertices", d.num_vertices()},
                {"edges", d.graph.in.nnz()},
                {"features", d.feature_dim},
                {"classes", d.num_classes}};
  j["model"] = {{"name", a.model},
                {"layers", a.layers},
                {"hidden", a.hidden},
                {"parameters", perf::parameter_count(plan.layers)}};
  j["network"] = {{"name", o.net.name},
                  {"latency_us", o.net.latency_s * 1e6},
                  {"bandwidth_gbs", o.net.bandwidth_Bps / 1e9}};
  j["overlap"] = o.overlap;
  j["cores"] = a.cores;
  for (auto& [tc, c] : plan.calibration.calibrations) {
    nlohmann::json cj = {{"threads", tc.first},
                         {"copies", tc.second},
                         {"cached", c.cached},
                         {"given", c.given},
                         {"seconds", c.seconds},
                         {"elementwise_per_s", c.rates.elementwise},
                         {"sync_ms", c.rates.sync_s * 1e3}};
    for (auto& [w, v] : c.rates.spmm) cj["spmm_entries_x_width_per_s"][std::to_string(w)] = v;
    j["calibration"].push_back(cj);
  }
  j["calibration_file"] = plan.calibration.cache;
  if (!a.rates.empty()) j["rates_file"] = a.rates;
  const perf::AttentionProbe& probe = plan.probe;
  if (o.kind == ModelKind::gat && !o.deep)
    j["attention_probe"] = {{"epoch_ms", probe.epoch_ms},
                            {"factor", probe.factor},
                            {"vertices", probe.vertices},
                            {"threads", plan.probe_threads},
                            {"given", probe.given}};
  perf::GivenRates used;
  used.attention_factor = probe.factor;
  j["rates"] = used_rates_json(plan.calibration, used);
  if (!plan.fitted.empty()) j["extrapolated_from"] = plan.fitted;
  for (const perf::PlanRow& r : plan.rows) {
    nlohmann::json row = prediction_json(r.p, r.threads, r.copies, r.compute_scale);
    row.update({{"partitioner", r.partitioner},
                {"halo_rows", r.p.halo_rows_total},
                {"max_peers", r.p.max_peers},
                {"extrapolated", r.p.extrapolated}});
    j["rows"].push_back(row);
  }
  const perf::PlanRow& best = plan.rows[plan.best];
  j["best"] = {
      {"ranks", best.p.ranks}, {"partitioner", best.partitioner}, {"epoch_ms", best.p.epoch_ms}};
  j["memory"] = memory_json(a, static_memory_rows(d, plan, a.halo_memory_bytes));
  if (a.device_memory_bytes > 0) j["device_memory_bytes"] = a.device_memory_bytes;
  std::printf("%s\n", j.dump(1).c_str());
}

// The text's lines above the table: the graph, model, network, rates, probe and notes.
void print_inputs(const PlanArgs& a, const Dataset& d, const perf::StaticPlan& plan,
                  const perf::StaticPlanOptions& o) {
  std::printf("graph     %s: %lld vertices, %lld stored edges, %lld features, %d classes\n",
              graph_name(a).c_str(), (long long)d.num_vertices(), (long long)d.graph.in.nnz(),
              (long long)d.feature_dim, int(d.num_classes));
  std::printf("model     %s, %d layers, hidden %lld (%lld parameters)\n", a.model.c_str(), a.layers,
              (long long)a.hidden, (long long)perf::parameter_count(plan.layers));
  std::printf("network   %s: latency %.2f us, bandwidth %.2f GB/s per direction; overlap %s\n",
              o.net.name.c_str(), o.net.latency_s * 1e6, o.net.bandwidth_Bps / 1e9,
              o.overlap ? "on" : "off");
  for (auto& [tc, c] : plan.calibration.calibrations) {
    const int t = tc.first;
    std::printf("rates     %d thread%s", t, t == 1 ? "" : "s");
    if (tc.second > 1) std::printf(" x %d at once", tc.second);
    std::printf(": SpMM");
    for (auto& [w, v] : c.rates.spmm)
      std::printf(" %.0f M entries/s at width %lld,", v / w / 1e6, (long long)w);
    double gf = 0;
    for (auto& [s, v] : c.rates.gemm_fwd) gf = std::max(gf, v);
    std::printf(" GEMM up to %.1f GFLOP/s", gf / 1e9);
    if (tc.second > 1) std::printf(", a synchronisation %.2f ms", c.rates.sync_s * 1e3);
    std::printf(" (%s)\n", c.given    ? ("given in " + a.rates).c_str()
                           : c.cached ? ("cached in " + plan.calibration.cache).c_str()
                                      : "measured now");
  }
  const perf::AttentionProbe& probe = plan.probe;
  if (o.kind == ModelKind::gat && probe.given)
    std::printf("probe     the attention kernels' times x %.2f (given in %s)\n", probe.factor,
                a.rates.c_str());
  else if (o.kind == ModelKind::gat)
    std::printf(
        "probe     one process trained the model on %lld vertices, %d thread%s: %.2f ms "
        "per epoch; the attention kernels' times x %.2f (dropout on the coefficients, "
        "the tape, gathers)\n",
        (long long)probe.vertices, plan.probe_threads, plan.probe_threads == 1 ? "" : "s",
        probe.epoch_ms, probe.factor);
  if (a.cores > 0)
    std::printf(
        "cores     %d shared by all ranks: rates timed with the ranks' threads running at "
        "once (at most one per core; beyond, compute shrinks by the share that runs)\n",
        a.cores);
  if (!plan.fitted.empty())
    std::printf(
        "note      rows marked * are extrapolated from partitions computed for %d and %d "
        "ranks (--max-partition %d)\n",
        plan.fitted[0], plan.fitted[1], a.max_partition);
}

void print_table(const perf::StaticPlan& plan) {
  std::printf("\n%6s %-11s %10s %9s %9s %9s %10s %11s %10s %6s\n", "ranks", "partitioner",
              "epoch ms", "compute", "comm", "wait", "MB/epoch", "max MB/rank", "halo rows",
              "peers");
  for (const perf::PlanRow& r : plan.rows)
    std::printf("%5d%s %-11s %10.2f %9.2f %9.2f %9.2f %10.2f %11.2f %10lld %6d\n", r.p.ranks,
                r.p.extrapolated ? "*" : " ", r.partitioner.c_str(), r.p.epoch_ms, r.p.compute_ms,
                r.p.comm_ms, r.p.wait_ms, r.p.bytes_per_epoch / 1e6, r.p.max_rank_bytes / 1e6,
                (long long)r.p.halo_rows_total, r.p.max_peers);
  const perf::PlanRow& best = plan.rows[plan.best];
  std::printf("\nbest      %d ranks with %s: %.2f ms per epoch\n", best.p.ranks,
              best.partitioner.c_str(), best.p.epoch_ms);
}

// With --vertices and --edges, the graph's options that describe its size are taken; those that
// name or shape an input file are refused.
void refuse_size_options(const CLI::App* cmd) {
  for (const CLI::Option* o : cmd->get_options([](const CLI::Option* o) {
         const std::string& g = o->get_group();
         return g == "Edge list" || g == "Dataset" || g == "Snapshots (temporal graphs)";
       })) {
    const std::string n = o->get_name();
    if (o->count() > 0 && n != "--feature-dim" && n != "--num-classes" && n != "--directed" &&
        n != "--snapshots")
      throw OptionError(n + ": describes an input file; a graph given by --vertices and --edges "
                            "takes --feature-dim, --num-classes, --directed and --snapshots");
  }
}

// --vertices and --edges: the memory rows of a graph known by its size alone; no times (they
// need the partition's counts and rates timed on the graph's shapes).
void run_size_only(PlanArgs& a, const std::vector<int>& ranks) {
  if (!a.data.graph.empty())
    throw OptionError("--vertices and --edges plan a graph by its size alone: give them or "
                      "--graph, not both");
  if (a.size_vertices == 0 || a.size_edges == 0)
    throw OptionError(std::string(a.size_vertices == 0 ? "--edges needs --vertices"
                                                       : "--vertices needs --edges") +
                      " (a graph's size alone: memory per rank, no times)");
  std::string what;
  const std::vector<MemoryRow> rows = size_memory_rows(a, ranks, &what);
  if (a.json) {
    nlohmann::json j;
    j["graph"] = {{"vertices", a.size_vertices},
                  {"edges", a.size_edges},
                  {"snapshots", a.snapshots.count},
                  {"features", a.data.generated_dim}};
    j["model"] = {{"name", a.model}, {"layers", a.layers}, {"hidden", a.hidden}};
    j["memory"] = memory_json(a, rows);
    if (a.device_memory_bytes > 0) j["device_memory_bytes"] = a.device_memory_bytes;
    std::printf("%s\n", j.dump(1).c_str());
    return;
  }
  std::printf("graph     by size (--vertices, --edges): %s\n", what.c_str());
  std::printf("note      memory only: times need the graph itself (--graph)\n");
  print_memory(a, rows);
}

void run(PlanArgs& a) {
  const std::vector<int> ranks = parse_ranks(a.ranks, 1 << 20);
  if (!a.device_memory.empty())
    a.device_memory_bytes = perf::parse_memory_size(a.device_memory, "--device-memory");
  a.halo_memory_bytes = a.halo_memory == "auto"    ? -1
                        : a.halo_memory == "whole" ? 0
                                                   : perf::parse_memory_size(a.halo_memory, "--halo-memory");
  if (a.size_vertices > 0 || a.size_edges > 0) return run_size_only(a, ranks);
  read_given_rates(a);
  perf::check_calibration_file(a.calibration);
  check_not_inputs(dataset_inputs(a.data, a.signals), {{"--calibration", a.calibration}});
  if (!a.data.graph.empty() && !std::filesystem::exists(a.data.graph))
    throw OptionError("--graph " + a.data.graph + ": no such file or directory");
  if (a.task == "forecast" || is_temporal_input(a.data.graph, a.data.edges, a.snapshots))
    return run_plan_temporal(a, ranks);
  const perf::StaticPlanOptions o = plan_options(a, ranks);
  a.data.seed = a.seed;
  const Dataset d = load_or_generate(a);
  const perf::StaticPlan plan = perf::plan_static(d, o);
  if (a.json) return print_json(a, d, plan, o);
  print_inputs(a, d, plan, o);
  print_table(plan);
  print_memory(a, static_memory_rows(d, plan, a.halo_memory_bytes));
}

}  // namespace

void register_plan(CLI::App& app) {
  auto args = std::make_shared<PlanArgs>();
  PlanArgs& a = *args;
  std::string nets;
  for (const perf::Network& n : perf::named_networks()) {
    char buf[96];
    std::snprintf(buf, sizeof buf, "%s%s (%.1f us, %.2f GB/s)", nets.empty() ? "" : ", ",
                  n.name.c_str(), n.latency_s * 1e6, n.bandwidth_Bps / 1e9);
    nets += buf;
  }
  CLI::App* cmd = app.add_subcommand(
      "plan",
      "Predict the epoch time of distributed full-graph training on P ranks from the partition's "
      "counts, kernel rates measured here, and a network model (temporal graphs: per strategy)");
  cmd->add_option("--graph", a.data.graph,
                  "Edge-list file or dataset directory (default: the generated SBM of train)");
  cmd->add_option("--model", a.model,
                  "gcn, sage, gin, gat (default gcn) or the deep gcnii, resgcn (graph "
                  "parallelism); on a temporal graph evolvegcn-o (default), evolvegcn-h, gcrn or "
                  "tgcn");
  cmd->add_option("--layers", a.layers, "Number of GNN layers")->capture_default_str();
  cmd->add_option("--hidden", a.hidden, "Hidden width")->capture_default_str();
  cmd->add_option("--ranks", a.ranks, "Rank counts, e.g. 128 or 1,2,4,8")->required();
  cmd->add_option("--partitioners", a.partitioners,
                  "Comma-separated: metis, random, hash, range (the best is named)")
      ->capture_default_str();
  cmd->add_option("--strategies", a.strategies,
                  "Temporal graphs: comma-separated vertex, snapshot (the best is named)")
      ->capture_default_str();
  cmd->add_option("--task", a.task,
                  "Temporal graphs: link (prediction) or edge (classification); forecast: a "
                  "vertex signal (a PyG-Temporal .json, or signals.npy), as train")
      ->capture_default_str();
  cmd->add_option("--lags", a.lags, "--task forecast: past steps a vertex sees, as train")
      ->capture_default_str();
  cmd->add_option("--horizon", a.horizon, "--task forecast: steps ahead predicted, as train")
      ->capture_default_str();
  cmd->add_option("--signals", a.signals, "--task forecast: the signal .npy, as train");
  cmd->add_option("--bptt", a.bptt,
                  "Temporal graphs: steps per BPTT window, as train (0 = the whole training span)")
      ->capture_default_str();
  cmd->add_option("--neg-train", a.neg_train,
                  "Temporal graphs: sampled non-edges per edge in training, as train")
      ->capture_default_str();
  cmd->add_option("--neg-eval", a.neg_eval,
                  "Temporal graphs: sampled non-edges per edge in evaluation, as train (its "
                  "memory: the negatives' keys)")
      ->check(CLI::Range(1, 1 << 30))
      ->capture_default_str();
  cmd->add_option("--snapshot-groups", a.snapshot_groups,
                  "Temporal graphs, vertex strategy with METIS: groups of consecutive snapshots "
                  "balanced besides the union graph, as train (0: the union graph only; default "
                  "min(snapshots, 16))")
      ->check(CLI::Range(0, 1 << 20));
  cmd->add_option("--network", a.network,
                  "Interconnect (latency, bandwidth per direction): " + nets)
      ->capture_default_str()
      ->each([&a](const std::string&) { a.network_given = true; });
  cmd->add_option("--latency-us", a.latency_us,
                  "Per-message latency in microseconds (overrides --network's)")
      ->check(non_negative());
  cmd->add_option("--bandwidth-gbs", a.bandwidth_gbs,
                  "Link bandwidth per direction in GB/s (overrides --network's)")
      ->check(positive());
  cmd->add_option("--threads-per-rank", a.threads_per_rank,
                  "OpenMP threads of each rank, calibrated here (default: this machine's cores, or "
                  "--cores / ranks)")
      ->check(CLI::Range(1, 1 << 16));  // 0 is "not given" inside: refused, not taken so
  cmd->add_option("--cores", a.cores,
                  "Cores shared by all ranks (one node, as here: ranks beyond it slow each other "
                  "down); default: every rank has its own")
      ->check(CLI::Range(1, 1 << 24));
  cmd->add_option("--max-partition", a.max_partition,
                  "Largest P to partition for; beyond it, counts are extrapolated")
      ->capture_default_str();
  cmd->add_flag("--no-overlap", a.no_overlap, "Model `dgnn train --no-overlap`");
  cmd->add_option("--seed,-s", a.seed,
                  "Seed of the partitioner (and of a generated graph), as train")
      ->check(non_negative())
      ->capture_default_str();
  cmd->add_option("--calibration", a.calibration,
                  "Calibration cache file (default: " + perf::default_calibration_file() + ")");
  cmd->add_flag("--recalibrate", a.recalibrate, "Time the kernels again even if cached");
  cmd->add_option("--rates", a.rates,
                  "JSON file of the rates to plan with instead of timing them here (as --json's "
                  "\"rates\" prints them): the same plan on any machine (docs/scaling.md)");
  cmd->add_flag("--json", a.json, "Print the table as JSON");
  cmd->add_option("--halo-memory", a.halo_memory,
                  "Model `dgnn train --halo-memory` (auto, whole or a size) in the memory per rank")
      ->capture_default_str();
  cmd->add_option("--device-memory", a.device_memory,
                  "Memory of one rank's device (e.g. 80GB, 512MiB): whether the largest rank "
                  "fits, per rank count");
  cmd->add_option("--vertices", a.size_vertices,
                  "Plan a graph by its size alone, without --graph: its vertices (with --edges; "
                  "--snapshots T for a temporal graph; --feature-dim F): memory per rank, no times")
      ->check(CLI::Range(int64_t(2), int64_t(1) << 62));
  cmd->add_option("--edges", a.size_edges,
                  "With --vertices: the graph's edges (stored both ways unless --directed; a "
                  "temporal graph's events over all snapshots)")
      ->check(CLI::Range(int64_t(1), int64_t(1) << 62));
  add_dataset_options(cmd, a.data);
  add_snapshot_options(cmd, a.snapshots);
  cmd->get_option("--train-frac")->each([args](const std::string&) {
    args->train_frac_given = true;
  });
  cmd->get_option("--val-frac")->each([args](const std::string&) { args->val_frac_given = true; });
  for (const char* t : {"--strategies", "--task", "--bptt", "--neg-train", "--snapshot-groups"})
    cmd->get_option(t)->each([args](const std::string&) { args->temporal_options_given = true; });
  cmd->callback([args, cmd] {
    if (args->size_vertices > 0 || args->size_edges > 0)
      refuse_size_options(cmd);
    else
      refuse_input_options(cmd, args->data.graph);
    run(*args);
  });
}

}  // namespace dgnn::cli
