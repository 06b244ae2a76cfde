// `dgnn train --task node` on a temporal graph: node classification over snapshots (labels per
// vertex, e.g. labels.txt of a generated evolving planted partition: the final community).
#include <omp.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>

#include "dgnn/cli/train_args.hpp"
#include "dgnn/comm/communicator.hpp"
#include "dgnn/common/timer.hpp"
#include "dgnn/gnn/temporal/node_sequence_run.hpp"
#include "dgnn/partition/dist_read.hpp"

namespace dgnn::cli {

void run_train_temporal_node(TrainArgs& a) {
  NodeSequenceRunConfig cfg;
  cfg.model = temporal_kind_name(parse_temporal_kind(a.model.empty() ? "gcrn" : a.model));
  cfg.layers = a.layers;
  cfg.hidden = a.hidden;
  cfg.strategy = a.strategy;
  cfg.partition = temporal_partition_options(a);
  cfg.train_frac = a.data.train_frac;
  cfg.val_frac = a.data.val_frac;
  NodeSequenceOptions& opt = cfg.train;
  static_cast<TrainOptions&>(opt) = a.train;  // epochs, optimiser, checkpoints, patience
  opt.bptt = a.bptt;
  Communicator& comm = world();
  check_parts(a, comm);
  std::unique_ptr<DeviceComm> device_link;
  cfg.device = train_device(a, comm, &device_link);
  NodeSequenceRun::check(cfg, comm.size());

  std::string label_file = a.data.labels;
  if (label_file.empty() && std::filesystem::is_directory(a.data.graph) &&
      std::filesystem::exists(std::filesystem::path(a.data.graph) / "labels.txt"))
    label_file = (std::filesystem::path(a.data.graph) / "labels.txt").string();
  if (label_file.empty())
    throw OptionError("--task node needs vertex labels: labels.txt in the dataset folder, or "
                      "--labels FILE");
  // At least two classes among the labelled vertices, or there is nothing to classify.
  const auto check_classes = [&](const std::vector<int32_t>& labels) {
    std::vector<int32_t> seen;
    for (int32_t l : labels)
      if (l >= 0 && std::find(seen.begin(), seen.end(), l) == seen.end() && seen.size() < 2)
        seen.push_back(l);
    if (seen.size() < 2)
      throw InputError(label_file, 0,
                       seen.empty() ? "no vertex is labelled"
                                    : "every labelled vertex has class " + std::to_string(seen[0]) +
                                          ": nothing to classify");
  };
  cfg.labels = [&](const TemporalGraph& g, int32_t* classes) {
    std::vector<int32_t> labels =
        read_vertex_labels(label_file, g.original_ids, a.data.num_classes, classes);
    check_classes(labels);
    return labels;
  };
  // Several ranks: each parses its share of the file, rank 0 alone holds every label.
  cfg.root_labels = [&](const TemporalGraph& g, int32_t* classes, Communicator& c) {
    std::vector<int32_t> labels =
        dist_read::vertex_labels_on_root(label_file, g.original_ids, a.data.num_classes, c, classes);
    dist_read::agreed(c, [&] {
      if (c.rank() == 0) check_classes(labels);
    });
    return labels;
  };
  std::string feature_file;
  cfg.features = [&](const TemporalGraph& g, int64_t* dim) {
    return read_static_features(a, g, dim, &feature_file);
  };
  cfg.feature_rows = [&](const TemporalGraph& g, const std::vector<int64_t>& rows, int64_t* dim) {
    return read_static_feature_rows(a, g, rows, dim, &feature_file);
  };
  cfg.source = TemporalRunConfig::Source{a.data.graph, a.data.edges, a.snapshots};
  nlohmann::json settings = temporal_settings(a, cfg.model, "node", comm.size());
  nlohmann::json meta = settings;
  if (const std::string id = checkpoint_data_id(a, comm, true); !id.empty()) meta["data"] = id;
  opt.meta_json = meta.dump();  // checkpoints check the model, task and data
  NodeSequenceRun run([&a] { return read_temporal(a); }, cfg, comm);
  const TemporalGraph& g = run.graph();
  settings["snapshots"] = g.num_snapshots();
  const bool root = comm.rank() == 0;
  if (!a.quiet && root)
    std::printf(
        "temporal graph: %lld vertices, %d snapshots, %lld features; labels %s: %d "
        "classes, train/val/test %lld/%lld/%lld (loaded in %.0f ms)\n",
        (long long)g.num_vertices, g.num_snapshots(), (long long)run.feature_dim(),
        label_file.c_str(), run.classes(), (long long)run.train_count(),
        (long long)run.val_count(), (long long)run.test_count(), run.load_ms());
  if (!a.quiet && root && comm.size() > 1 && run.sharded())
    std::printf("edge list read in shards by %d ranks: %.2f MB of text on rank 0, at most %.2f MB "
                "on any rank\n",
                comm.size(), double(run.text_bytes()) / 1e6, double(run.max_text_bytes()) / 1e6);
  else if (!a.quiet && root && comm.size() > 1)
    std::printf("%s\n", describe_moves(run.moves(), comm.size()).c_str());

  EpochPrinter printer(a, comm, run.epoch_format());
  const NodeSequenceResult res = run.train(printer.callback());
  // Outputs, collective; the model holds the best-validation parameters, those the test used.
  NodeSequenceTrainer& trainer = run.trainer();
  if (!a.predictions.empty())
    write_class_predictions(a.predictions, trainer.predict(), run.row_ids(), comm);
  if (!a.embeddings.empty()) write_embeddings(a.embeddings, trainer.embeddings(), run.row_ids(), comm);
  if (!root) return;
  if (res.stopped_early)
    std::printf("stopped at epoch %d: no better validation accuracy for %d epochs (--patience)\n",
                res.last_epoch, a.train.patience);
  std::printf("test accuracy %.4f macro-f1 %.4f (best val %.4f at epoch %d), median epoch %.1f ms\n",
              res.test_acc, res.test_macro_f1, res.best_val_acc, res.best_epoch,
              res.median_epoch_ms);
  printer.final_line({{"final", true},
                      {"test_acc", res.test_acc},
                      {"test_macro_f1", res.test_macro_f1},
                      {"best_val_acc", res.best_val_acc},
                      {"best_epoch", res.best_epoch},
                      {"epochs", res.last_epoch},
                      {"stopped_early", res.stopped_early},
                      {"median_epoch_ms", res.median_epoch_ms},
                      {"test_ms", res.test_ms},
                      {"settings", settings}},
                     res);
}

}  // namespace dgnn::cli
