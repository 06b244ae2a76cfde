// `dgnn plan`: predicts the epoch time of distributed full-graph training on P ranks, beyond
// this machine, from the partition's per-rank counts (METIS computed for P, or extrapolated for
// very large P), kernel rates measured here on the graph's shapes, and a network's latency and
// bandwidth. The arithmetic is plan/perf_model.hpp; this file gathers its inputs and prints.
#include <omp.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "dgnn/cli/commands.hpp"
#include "dgnn/cli/options.hpp"
#include "dgnn/cli/plan_args.hpp"
#include "dgnn/cli/train_args.hpp"
#include "dgnn/comm/communicator.hpp"
#include "dgnn/common/error.hpp"
#include "dgnn/common/timer.hpp"
#include "dgnn/datasets/sbm.hpp"
#include "dgnn/gnn/models/layers.hpp"
#include "dgnn/gnn/train/trainer.hpp"
#include "dgnn/graph/dataset.hpp"
#include "dgnn/partition/partition.hpp"
#include "dgnn/plan/perf_model.hpp"

namespace dgnn::cli {

namespace {

Dataset load_or_generate(const PlanArgs& a) {
  if (!a.data.graph.empty()) return load_dataset(a.data);
  return generate_sbm(default_sbm(a.data)).to_dataset();  // as `dgnn train` without --graph
}

struct Row {
  std::string partitioner;
  perf::Prediction p;
  int threads = 1;
  int copies = 1;  // threads timed at once for its rates (the node's, with --cores)
  double compute_scale = 1;
};

// Counts for every P asked, per partitioner: computed up to --max-partition; beyond, extrapolated
// from the two largest powers of two computed at or below it.
std::vector<perf::PartitionCounts> counts_for(const Dataset& d, Partitioner method,
                                              const std::vector<int>& ranks, const PlanArgs& a,
                                              std::vector<int>* fitted) {
  std::map<int, perf::PartitionCounts> done;
  auto compute = [&](int p) -> const perf::PartitionCounts& {
    auto it = done.find(p);
    if (it != done.end()) return it->second;
    PartitionOptions opt;
    opt.method = method;
    opt.parts = p;
    opt.seed = a.seed;
    const std::vector<int32_t> part = p == 1 ? std::vector<int32_t>(size_t(d.num_vertices()), 0)
                                             : partition_vertices(d.graph.in, opt, d.train);
    return done[p] = perf::partition_counts(d.graph.in, part, p);
  };
  std::vector<perf::PartitionCounts> out;
  for (int p : ranks) {
    if (p <= a.max_partition) {
      out.push_back(compute(p));
      continue;
    }
    int hi = 1;
    while (hi * 2 <= a.max_partition) hi *= 2;
    const int lo = std::max(1, hi / 2);
    *fitted = {lo, hi};
    out.push_back(perf::extrapolate_counts({compute(lo), compute(hi)}, p, d.num_vertices(),
                                           d.graph.in.nnz()));
  }
  return out;
}

// GAT's attention: its kernels timed alone (the calibration) miss much of what a real layer
// does around them (the coefficients' dropout hashes each entry's ends, the tape's entries x
// heads tensors, the gathers into the transpose's order). So one process trains the model for
// four epochs here at the 1-rank row's threads, and the attention terms of every row are
// scaled by what the measured epoch leaves them beyond the model's other terms (on the first 4 M
// entries' vertices of a larger graph: a ratio, which the graph's size hardly moves). Returns
// the factor (1 for other models) and the epoch measured (ms, 0 for other models); with --rates,
// the file's factor, nothing trained.
struct AttentionProbe {
  double factor = 1, epoch_ms = 0;
  int64_t vertices = 0;  // the graph it trained on
  bool given = false;
};

AttentionProbe attention_probe(const Dataset& whole, ModelKind kind, const PlanArgs& a,
                               const std::vector<perf::LayerShape>& layers, const perf::Rates& one,
                               double scale, const perf::Network& net, int threads) {
  if (kind != ModelKind::gat) return {};
  constexpr int64_t kProbeEntries = 4'000'000;
  Dataset head;
  if (whole.graph.in.nnz() > kProbeEntries) head = head_subgraph(whole, kProbeEntries);
  const Dataset& d = whole.graph.in.nnz() > kProbeEntries ? head : whole;
  const int before = omp_get_max_threads();
  omp_set_num_threads(threads);
  NodeTask task = make_node_task(d);
  GraphView graph(d.graph.in);
  std::vector<int64_t> dims{d.feature_dim};
  for (int i = 0; i + 1 < a.layers; ++i) dims.push_back(a.hidden);
  dims.push_back(d.num_classes);
  const float dropout = 0.5f;  // dgnn train's default, on features and coefficients
  StackModel model(builtin_layer(kind, dropout), dims, dropout);
  model.reset_parameters(a.seed);
  TrainOptions to;
  to.epochs = 4;
  to.seed = a.seed;
  SelfCommunicator self;
  Trainer trainer(model, graph, task, self, to);
  std::vector<double> ms;
  trainer.run([&](const EpochRecord& s) { ms.push_back(s.time_ms); });
  omp_set_num_threads(before);
  // The first epoch warms up; the median of the others.
  std::vector<double> steady(ms.begin() + 1, ms.end());
  std::sort(steady.begin(), steady.end());
  const double measured = steady[steady.size() / 2];
  perf::PartitionCounts c1;
  c1.per_part.push_back(
      perf::partition_counts(d.graph.in, std::vector<int32_t>(size_t(d.num_vertices()), 0), 1)
          .per_part[0]);
  perf::PlanOptions opt;
  opt.compute_scale = scale;
  perf::Rates none = one;
  for (auto* m : {&none.attention_fwd, &none.attention_bwd})
    for (auto& [shape, v] : *m) v = 0;
  const double all = perf::predict(c1, layers, one, net, opt).epoch_ms;
  const double rest = perf::predict(c1, layers, none, net, opt).epoch_ms;
  AttentionProbe probe{1.0, measured, d.num_vertices(), false};
  if (all - rest > 0) probe.factor = std::clamp((measured - rest) / (all - rest), 0.5, 8.0);
  return probe;
}

void run(PlanArgs& a) {
  const std::vector<int> ranks = parse_ranks(a.ranks, 1 << 20);
  read_given_rates(a);
  perf::check_calibration_file(a.calibration);
  check_not_inputs(dataset_inputs(a.data, a.signals), {{"--calibration", a.calibration}});
  if (!a.data.graph.empty() && !std::filesystem::exists(a.data.graph))
    throw OptionError("--graph " + a.data.graph + ": no such file or directory");
  if (a.task == "forecast" || is_temporal_input(a.data.graph, a.data.edges, a.snapshots))
    return run_plan_temporal(a, ranks);
  if (a.temporal_options_given)
    throw OptionError(
        "--strategies, --task, --bptt, --neg-train and --snapshot-groups are for "
        "temporal graphs (a "
        "--time-col, or a dataset directory with snapshots.txt)");
  if (a.model.empty()) a.model = "gcn";
  std::vector<Partitioner> methods;
  std::vector<std::string> names = split_list(a.partitioners, "--partitioners");
  for (const std::string& n : names) {
    try {
      methods.push_back(parse_partitioner(n));
    } catch (const OptionError& e) {
      throw OptionError(std::string("--partitioners: ") + e.what());
    }
  }
  if (find_registered_layer(a.model))
    throw OptionError("--model " + a.model +
                      ": plan models the built-in layers (gcn, sage, gin, gat); measure a "
                      "registered layer with `scale`");
  const ModelKind kind = parse_model_kind(a.model);  // its error names --model
  if (a.threads_per_rank < 0)
    throw OptionError("--threads-per-rank must be >= 1, got " + std::to_string(a.threads_per_rank));
  if (a.cores < 0) throw OptionError("--cores must be >= 1, got " + std::to_string(a.cores));
  if (a.layers < 1) throw OptionError("--layers must be >= 1, got " + std::to_string(a.layers));
  if (a.hidden < 1) throw OptionError("--hidden must be >= 1, got " + std::to_string(a.hidden));
  if (a.max_partition < 2)
    throw OptionError("--max-partition must be >= 2, got " + std::to_string(a.max_partition));
  const perf::Network net = plan_network(a);
  a.data.seed = a.seed;

  Timer load;
  const Dataset d = load_or_generate(a);
  const int64_t n = d.num_vertices();
  if (ranks.back() > n)
    throw OptionError("--ranks " + std::to_string(ranks.back()) + " exceeds the " +
                      std::to_string(n) + " vertices of the graph");
  if (d.num_classes < 1) throw OptionError("the dataset has no labels (give --labels FILE)");
  const std::vector<perf::LayerShape> layers =
      perf::model_layers(kind, d.feature_dim, a.hidden, d.num_classes, a.layers);

  perf::RankRates rr(rate_options(a), d.graph.in, layers);
  std::map<int, perf::Rates> rates;
  for (int p : ranks) rates[p] = rr.rates_for(p);
  AttentionProbe probe;
  if (kind == ModelKind::gat && a.given)
    probe = {a.given->attention_factor, 0, 0, true};
  else if (kind == ModelKind::gat)  // (the 1-rank rates: calibrated for it if 1 is not in --ranks)
    probe = attention_probe(d, kind, a, layers, rr.rates_for(1), rr.scale_for(1), net,
                            rr.threads_for(1));
  for (auto& [p, r] : rates)
    for (auto* m : {&r.attention_fwd, &r.attention_bwd})
      for (auto& [shape, v] : *m) v *= probe.factor;

  perf::PlanOptions opt;
  opt.overlap = !a.no_overlap;
  std::vector<Row> rows;
  std::vector<int> fitted;
  for (size_t m = 0; m < methods.size(); ++m) {
    const auto counts = counts_for(d, methods[m], ranks, a, &fitted);
    for (size_t i = 0; i < ranks.size(); ++i) {
      opt.compute_scale = rr.scale_for(ranks[i]);
      rows.push_back({names[m], perf::predict(counts[i], layers, rates[ranks[i]], net, opt),
                      rr.threads_for(ranks[i]), rr.copies_for(ranks[i]), opt.compute_scale});
    }
  }
  const Row* best = &rows.front();
  for (const Row& r : rows)
    if (r.p.epoch_ms < best->p.epoch_ms) best = &r;

  const std::string graph = a.data.graph.empty() ? "generated SBM (as dgnn train)" : a.data.graph;
  if (a.json) {
    nlohmann::json j;
    j["graph"] = {{"name", graph},
                  {"vertices", n},
                  {"edges", d.graph.in.nnz()},
                  {"features", d.feature_dim},
                  {"classes", d.num_classes}};
    j["model"] = {{"name", a.model},
                  {"layers", a.layers},
                  {"hidden", a.hidden},
                  {"parameters", perf::parameter_count(layers)}};
    j["network"] = {{"name", net.name},
                    {"latency_us", net.latency_s * 1e6},
                    {"bandwidth_gbs", net.bandwidth_Bps / 1e9}};
    j["overlap"] = opt.overlap;
    j["cores"] = a.cores;
    for (auto& [tc, c] : rr.calibrations()) {
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
    j["calibration_file"] = rr.cache();
    if (!a.rates.empty()) j["rates_file"] = a.rates;
    if (kind == ModelKind::gat)
      j["attention_probe"] = {{"epoch_ms", probe.epoch_ms},
                              {"factor", probe.factor},
                              {"vertices", probe.vertices},
                              {"threads", rr.threads_for(1)},
                              {"given", probe.given}};
    perf::GivenRates used;
    used.attention_factor = probe.factor;
    j["rates"] = used_rates_json(rr, used);
    if (!fitted.empty()) j["extrapolated_from"] = fitted;
    for (const Row& r : rows) {
      nlohmann::json o = prediction_json(r.p, r.threads, r.copies, r.compute_scale);
      o.update({{"partitioner", r.partitioner},
                {"halo_rows", r.p.halo_rows_total},
                {"max_peers", r.p.max_peers},
                {"extrapolated", r.p.extrapolated}});
      j["rows"].push_back(o);
    }
    j["best"] = {{"ranks", best->p.ranks},
                 {"partitioner", best->partitioner},
                 {"epoch_ms", best->p.epoch_ms}};
    std::printf("%s\n", j.dump(1).c_str());
    return;
  }

  std::printf("graph     %s: %lld vertices, %lld stored edges, %lld features, %d classes\n",
              graph.c_str(), (long long)n, (long long)d.graph.in.nnz(), (long long)d.feature_dim,
              int(d.num_classes));
  std::printf("model     %s, %d layers, hidden %lld (%lld parameters)\n", a.model.c_str(), a.layers,
              (long long)a.hidden, (long long)perf::parameter_count(layers));
  std::printf("network   %s: latency %.2f us, bandwidth %.2f GB/s per direction; overlap %s\n",
              net.name.c_str(), net.latency_s * 1e6, net.bandwidth_Bps / 1e9,
              opt.overlap ? "on" : "off");
  for (auto& [tc, c] : rr.calibrations()) {
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
                           : c.cached ? ("cached in " + rr.cache()).c_str()
                                      : "measured now");
  }
  if (kind == ModelKind::gat && probe.given)
    std::printf("probe     the attention kernels' times x %.2f (given in %s)\n", probe.factor,
                a.rates.c_str());
  else if (kind == ModelKind::gat)
    std::printf(
        "probe     one process trained the model on %lld vertices, %d thread%s: %.2f ms "
        "per epoch; the attention kernels' times x %.2f (dropout on the coefficients, "
        "the tape, gathers)\n",
        (long long)probe.vertices, rr.threads_for(1), rr.threads_for(1) == 1 ? "" : "s",
        probe.epoch_ms, probe.factor);
  if (a.cores > 0)
    std::printf(
        "cores     %d shared by all ranks: rates timed with the ranks' threads running at "
        "once (at most one per core; beyond, compute shrinks by the share that runs)\n",
        a.cores);
  if (!fitted.empty())
    std::printf(
        "note      rows marked * are extrapolated from partitions computed for %d and %d "
        "ranks (--max-partition %d)\n",
        fitted[0], fitted[1], a.max_partition);
  std::printf("\n%6s %-11s %10s %9s %9s %9s %10s %11s %10s %6s\n", "ranks", "partitioner",
              "epoch ms", "compute", "comm", "wait", "MB/epoch", "max MB/rank", "halo rows",
              "peers");
  for (const Row& r : rows)
    std::printf("%5d%s %-11s %10.2f %9.2f %9.2f %9.2f %10.2f %11.2f %10lld %6d\n", r.p.ranks,
                r.p.extrapolated ? "*" : " ", r.partitioner.c_str(), r.p.epoch_ms, r.p.compute_ms,
                r.p.comm_ms, r.p.wait_ms, r.p.bytes_per_epoch / 1e6, r.p.max_rank_bytes / 1e6,
                (long long)r.p.halo_rows_total, r.p.max_peers);
  std::printf("\nbest      %d ranks with %s: %.2f ms per epoch\n", best->p.ranks,
              best->partitioner.c_str(), best->p.epoch_ms);
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
                  "gcn, sage, gin or gat (default gcn); on a temporal graph evolvegcn-o "
                  "(default), evolvegcn-h, gcrn or tgcn");
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
  add_dataset_options(cmd, a.data);
  add_snapshot_options(cmd, a.snapshots);
  cmd->get_option("--train-frac")->each([args](const std::string&) {
    args->train_frac_given = true;
  });
  cmd->get_option("--val-frac")->each([args](const std::string&) { args->val_frac_given = true; });
  for (const char* t : {"--strategies", "--task", "--bptt", "--neg-train", "--snapshot-groups"})
    cmd->get_option(t)->each([args](const std::string&) { args->temporal_options_given = true; });
  cmd->callback([args, cmd] {
    refuse_input_options(cmd, args->data.graph);
    run(*args);
  });
}

}  // namespace dgnn::cli
