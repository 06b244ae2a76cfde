// `dgnn train` on a temporal edge list: link prediction over snapshots (EvolveGCN's protocol).
#include <omp.h>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>

#include "dgnn/cli/train_args.hpp"
#include "dgnn/comm/communicator.hpp"
#include "dgnn/common/timer.hpp"
#include "dgnn/gnn/temporal/temporal_run.hpp"
#include "dgnn/graph/npy.hpp"
#include "dgnn/partition/dist_read.hpp"

namespace dgnn::cli {

namespace {

// The static features file: --features, else a folder's features.npy or features.txt; empty
// for none.
std::string static_features_file(const TrainArgs& a) {
  if (!a.data.features.empty()) return a.data.features;
  if (std::filesystem::is_directory(a.data.graph))
    for (const char* name : {"features.npy", "features.txt"})
      if (std::filesystem::exists(std::filesystem::path(a.data.graph) / name))
        return (std::filesystem::path(a.data.graph) / name).string();
  return "";
}

}  // namespace

std::vector<float> read_static_features(const TrainArgs& a, const TemporalGraph& g, int64_t* dim,
                                        std::string* file) {
  *file = static_features_file(a);
  *dim = 0;
  if (file->empty()) return {};
  return read_vertex_features(*file, g.original_ids, dim);
}

std::vector<float> read_static_feature_rows(const TrainArgs& a, const TemporalGraph& g,
                                            const std::vector<int64_t>& rows, int64_t* dim,
                                            std::string* file) {
  *file = static_features_file(a);
  *dim = 0;
  if (file->empty()) return {};
  return dist_read::vertex_feature_rows(*file, g.original_ids, rows, world(), dim);
}

TemporalGraph read_temporal(const TrainArgs& a) {
  return load_temporal(a.data.graph, a.data.edges, a.snapshots);
}

PartitionOptions temporal_partition_options(const TrainArgs& a) {
  PartitionOptions popt;
  popt.method = parse_partitioner(a.partitioner);
  popt.seed = a.train.seed;
  popt.snapshot_groups = a.snapshot_groups;
  popt.overpartition = a.overpartition;
  // Written once by dgnn partition; made for this graph's vertices (checked by their ids).
  popt.from_dir = a.partition_dir;
  return popt;
}

std::string describe_moves(const SnapshotMoves& m, int ranks) {
  if (ranks < 2) return "";
  char buf[320];
  const double saved =
      m.whole_bytes > 0 ? 100.0 * (1.0 - double(m.bytes) / double(m.whole_bytes)) : 0;
  std::snprintf(buf, sizeof buf,
                "snapshots to %d other rank%s: %lld sent, %lld as differences: %.2f MB instead "
                "of %.2f MB whole (%.1f%% less); events and ids %.2f MB",
                ranks - 1, ranks == 2 ? "" : "s", (long long)m.snapshots,
                (long long)m.as_difference, double(m.bytes) / 1e6, double(m.whole_bytes) / 1e6,
                saved, double(m.meta_bytes) / 1e6);
  return buf;
}

void run_train_temporal(TrainArgs& a) {
  if (a.hidden < 1) throw OptionError("--hidden must be >= 1");
  if (a.layers < 1) throw OptionError("--layers must be >= 1");
  set_threads(a.threads);
  check_outputs(a, train_outputs(a));
  if (a.task == "node") return run_train_temporal_node(a);
  const TemporalTask task = parse_temporal_task(a.task);
  const bool link = task == TemporalTask::link;
  const std::string model_name =
      temporal_kind_name(parse_temporal_kind(a.model.empty() ? "evolvegcn-o" : a.model));
  Communicator& comm = world();
  check_parts(a, comm);
  std::unique_ptr<DeviceComm> device_link;
  const Device dev = train_device(a, comm, &device_link);

  TemporalRunConfig cfg;
  cfg.model = model_name;
  cfg.layers = a.layers;
  cfg.hidden = a.hidden;
  cfg.strategy = a.strategy;
  cfg.partition = temporal_partition_options(a);
  cfg.device = dev;
  TemporalOptions& opt = cfg.train;
  static_cast<TrainOptions&>(opt) = a.train;  // epochs, optimiser, checkpoints, patience
  opt.task = task;
  opt.bptt = a.bptt;
  opt.neg_train = a.neg_train;
  if (a.train_frac_given) opt.train_frac = a.data.train_frac;
  if (a.val_frac_given) opt.val_frac = a.data.val_frac;
  if (a.neg_eval == "all") {
    opt.eval_all_pairs = true;
  } else {
    const char* end = a.neg_eval.data() + a.neg_eval.size();
    auto [p, ec] = std::from_chars(a.neg_eval.data(), end, opt.neg_eval);
    if (ec != std::errc() || p != end || a.neg_eval.empty())
      throw OptionError("--neg-eval: expected a count of non-edges per edge, or all; got '" +
                        a.neg_eval + "'");
  }
  opt.eval_protocol = parse_eval_protocol(a.eval_protocol);
  std::string feature_file;
  cfg.feature_rows = [&](const TemporalGraph& g, const std::vector<int64_t>& rows, int64_t* dim) {
    return read_static_feature_rows(a, g, rows, dim, &feature_file);
  };
  cfg.features = [&](const TemporalGraph& g, int64_t* dim) {
    return read_static_features(a, g, dim, &feature_file);
  };
  nlohmann::json settings = temporal_settings(a, model_name, a.task, comm.size());
  settings.update(
      {{"neg_train", a.neg_train},
       {"neg_eval", opt.eval_all_pairs ? nlohmann::json("all") : nlohmann::json(opt.neg_eval)},
       {"eval_protocol", a.eval_protocol},
       {"comm", device_link ? transport_name(device_link->transport()) : "none"}});
  if (const std::string id = checkpoint_data_id(a, comm, true); !id.empty()) settings["data"] = id;
  opt.meta_json = settings.dump();  // checkpoints record them (model, task and data are checked)
  cfg.source = TemporalRunConfig::Source{a.data.graph, a.data.edges, a.snapshots};
  TemporalRun run([&a] { return read_temporal(a); }, cfg, comm);
  LinkPredictionTrainer& trainer = run.trainer();
  const TemporalGraph& g = run.graph();
  const SnapshotMoves& moves = run.moves();
  const std::optional<SnapshotUploads>& uploads = run.uploads();
  settings["snapshots"] = g.num_snapshots();
  settings["features"] = run.feature_dim();
  settings["train_frac"] = opt.train_frac;
  settings["val_frac"] = opt.val_frac;
  // Printed once the options are known to fit the data: a bad option stays a one-line error.
  const bool root = comm.rank() == 0;
  if (!a.quiet && root)
    std::printf(
        "temporal graph: %lld vertices, %d snapshots, %lld features (%s); "
        "snapshots as base + differences (%d of %d steps stored whole): %.1f MB instead of "
        "%.1f MB (loaded in %.0f ms)\n",
        (long long)g.num_vertices, g.num_snapshots(), (long long)run.feature_dim(),
        run.static_features() ? feature_file.c_str() : "degree buckets per snapshot",
        run.topology().whole_steps, run.topology().steps,
        double(run.topology().diff_bytes) / 1e6, double(run.topology().full_bytes) / 1e6,
        run.load_ms());
  if (!a.quiet && root && comm.size() > 1 && run.sharded())
    std::printf("edge list read in shards by %d ranks: %.2f MB of text on rank 0, at most %.2f MB "
                "on any rank\n",
                comm.size(), double(run.text_bytes()) / 1e6, double(run.max_text_bytes()) / 1e6);
  else if (!a.quiet && root && comm.size() > 1)
    std::printf("%s\n", describe_moves(moves, comm.size()).c_str());
  if (!a.quiet && root && uploads)
    std::printf(
        "snapshots to the GPU%s: %d, %d as differences: %.2f MB instead of %.2f MB of "
        "adjacencies\n",
        comm.size() > 1 ? "s (all ranks)" : "", uploads->snapshots, uploads->as_difference,
        double(uploads->bytes) / 1e6, double(uploads->whole_bytes) / 1e6);

  EpochPrinter printer(a, comm, run.epoch_format());
  TemporalResult res = run.train(printer.callback());
  // Outputs, collective; the model holds the best-validation parameters, those the test used.
  if (!a.predictions.empty()) {
    const auto pairs = trainer.test_pairs();
    if (root) write_pair_predictions(a.predictions, pairs, g.original_ids, link);
  }
  if (!a.embeddings.empty()) {
    const Tensor h = trainer.final_embeddings();
    write_embeddings(a.embeddings, h, root ? g.original_ids : std::vector<int64_t>{}, comm);
  }
  if (!root) return;
  const bool tgb = opt.eval_protocol == EvalProtocol::tgb;
  if (res.stopped_early)
    std::printf("stopped at epoch %d: no better validation %s for %d epochs (--patience)\n",
                res.last_epoch,
                !link ? "F1"
                : tgb ? "MRR"
                      : "MAP",
                a.train.patience);
  if (link)
    std::printf(
        "test auc %.4f map %.4f mrr %.4f (best val %s %.4f at epoch %d; steps "
        "train/val/test %d/%d/%d), median epoch %.1f ms\n",
        res.test.auc, res.test.map, res.test.mrr, tgb ? "mrr" : "map",
        tgb ? res.best_val.mrr : res.best_val.map, res.best_epoch, res.train_steps, res.val_steps,
        res.test_steps, res.median_epoch_ms);
  else
    std::printf(
        "test f1 %.4f macro-f1 %.4f auc %.4f (best val f1 %.4f at epoch %d; steps "
        "train/val/test %d/%d/%d), median epoch %.1f ms\n",
        res.test.f1, res.test.macro_f1, res.test.auc, res.best_val.f1, res.best_epoch,
        res.train_steps, res.val_steps, res.test_steps, res.median_epoch_ms);
  if (printer.logging()) {
    nlohmann::json j = {{"final", true},
                        {"test_auc", res.test.auc},
                        {"best_val_auc", res.best_val.auc},
                        {"best_epoch", res.best_epoch},
                        {"epochs", res.last_epoch},
                        {"stopped_early", res.stopped_early},
                        {"median_epoch_ms", res.median_epoch_ms},
                        {"test_ms", res.test_ms},
                        {"settings", settings}};
    if (uploads)
      j["gpu_snapshot_uploads"] = {{"snapshots", uploads->snapshots},
                                   {"as_difference", uploads->as_difference},
                                   {"bytes", uploads->bytes},
                                   {"whole_bytes", uploads->whole_bytes}};
    if (comm.size() > 1)
      j["snapshot_moves"] = {{"snapshots", moves.snapshots},
                             {"as_difference", moves.as_difference},
                             {"bytes", moves.bytes},
                             {"whole_bytes", moves.whole_bytes},
                             {"meta_bytes", moves.meta_bytes}};
    if (comm.size() > 1 && run.sharded())  // no moves then: every rank read its own share
      j["sharded_read"] = {{"text_bytes", run.text_bytes()},
                           {"max_text_bytes", run.max_text_bytes()}};
    if (link) {
      j["test_map"] = res.test.map;
      j["test_mrr"] = res.test.mrr;
      j["best_val_map"] = res.best_val.map;
    } else {
      j["test_f1"] = res.test.f1;
      j["test_macro_f1"] = res.test.macro_f1;
      j["best_val_f1"] = res.best_val.f1;
    }
    printer.final_line(j, res);
  }
}

}  // namespace dgnn::cli
