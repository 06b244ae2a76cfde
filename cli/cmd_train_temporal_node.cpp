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
#include "dgnn/gnn/temporal/temporal_dist.hpp"
#include "dgnn/gnn/temporal/temporal_node.hpp"
#include "dgnn/gnn/temporal/temporal_trainer.hpp"

namespace dgnn::cli {

void run_train_temporal_node(TrainArgs& a) {
  const TemporalKind kind = parse_temporal_kind(a.model.empty() ? "gcrn" : a.model);
  Communicator& comm = world();
  check_parts(a, comm);
  std::unique_ptr<DeviceComm> device_link;
  const Device dev = train_device(a, comm, &device_link);
  if (comm.size() > 1 && kind == TemporalKind::evolvegcn_h)
    throw OptionError("--model evolvegcn-h runs on one rank for now: its top-k summary over all "
                      "vertices is not distributed yet (evolvegcn-o, gcrn and tgcn are)");
  if (a.strategy != "vertex")
    throw OptionError("--task node --strategy " + a.strategy +
                      ": node classification over snapshots runs with the vertex strategy");
  if (!(a.data.train_frac > 0 && a.data.val_frac >= 0 && a.data.train_frac + a.data.val_frac < 1))
    throw OptionError("--train-frac and --val-frac must leave vertices for training and testing");

  // Several ranks: rank 0 reads the graph and sends every rank all snapshots, as base +
  // differences (the vertex strategy cuts each one locally).
  LoadedTemporal in =
      load_temporal_on_ranks([&a] { return read_temporal(a); }, comm,
                             [](const LoadedTemporal&) {
                               return std::function<bool(int, int)>([](int, int) { return true; });
                             });
  TemporalGraph& g = in.g;
  std::string label_file = a.data.labels;
  if (label_file.empty() && std::filesystem::is_directory(a.data.graph) &&
      std::filesystem::exists(std::filesystem::path(a.data.graph) / "labels.txt"))
    label_file = (std::filesystem::path(a.data.graph) / "labels.txt").string();
  if (label_file.empty())
    throw OptionError("--task node needs vertex labels: labels.txt in the dataset folder, or "
                      "--labels FILE");
  int32_t classes = 0;
  const std::vector<int32_t> labels =
      read_vertex_labels(label_file, g.original_ids, a.data.num_classes, &classes);
  {
    std::vector<int32_t> seen;
    for (int32_t l : labels)
      if (l >= 0 && std::find(seen.begin(), seen.end(), l) == seen.end() && seen.size() < 2)
        seen.push_back(l);
    if (seen.size() < 2)
      throw InputError(label_file, 0,
                       seen.empty() ? "no vertex is labelled"
                                    : "every labelled vertex has class " + std::to_string(seen[0]) +
                                          ": nothing to classify");
  }
  std::string feature_file;
  int64_t static_dim = 0;
  const std::vector<float> feats = read_static_features(a, g, &static_dim, &feature_file);
  int64_t feature_dim = 0;
  std::vector<Var> features = snapshot_features(g, feats, static_dim, &feature_dim);

  // A seeded split of the labelled vertices by global id, the same on every rank.
  const LabelSplit sets = split_labelled(labels, a.data.train_frac, a.data.val_frac, a.train.seed);
  std::vector<int8_t> split(size_t(g.num_vertices), -1);  // 0 train, 1 val, 2 test
  for (int8_t k = 0; k < 3; ++k)
    for (int32_t v : sets[size_t(k)]) split[size_t(v)] = k;
  const size_t n_train = sets[0].size(), n_val = sets[1].size(), n_test = sets[2].size();
  require_split(int64_t(n_train), int64_t(n_val), int64_t(n_test), a.data.train_frac,
                a.data.val_frac);

  std::vector<std::unique_ptr<GraphView>> graphs;
  std::unique_ptr<TemporalRank> rank_data;
  std::vector<int64_t> owned;
  if (comm.size() == 1) {
    SnapshotCursor cur(g);
    do graphs.push_back(std::make_unique<GraphView>(cur.current()));
    while (cur.next());
    for (int64_t v = 0; v < g.num_vertices; ++v) owned.push_back(v);
  } else {
    rank_data = vertex_partition_rank(g, features, temporal_partition_options(a), comm, dev);
    owned = rank_data->owned;
  }
  NodeSequenceTask task;
  task.num_classes = classes;
  for (size_t i = 0; i < owned.size(); ++i) {
    const int64_t v = owned[i];
    task.labels.push_back(labels[size_t(v)]);
    if (split[size_t(v)] == 0) task.train.push_back(int32_t(i));
    if (split[size_t(v)] == 1) task.val.push_back(int32_t(i));
    if (split[size_t(v)] == 2) task.test.push_back(int32_t(i));
  }
  task.global_train = int64_t(n_train);
  task.global_val = int64_t(n_val);
  task.global_test = int64_t(n_test);

  std::vector<int64_t> dims{feature_dim};
  for (int i = 0; i < a.layers; ++i) dims.push_back(a.hidden);
  auto model = make_temporal_model(kind, dims);
  model->reset_parameters(a.train.seed);
  std::vector<Var>& x = rank_data ? rank_data->features : features;
  if (dev != Device::cpu) {
    model->to(dev);
    if (!rank_data)  // vertex_partition_rank put its features on the device already
      for (Var& f : x) f = Var(f.value().to(dev));
  }
  nlohmann::json settings = temporal_settings(a, temporal_kind_name(kind), "node", comm.size());
  settings["snapshots"] = g.num_snapshots();
  NodeSequenceOptions opt;
  static_cast<TrainOptions&>(opt) = a.train;  // epochs, optimiser, checkpoints, patience
  opt.bptt = a.bptt;
  nlohmann::json meta = settings;
  if (const std::string id = checkpoint_data_id(a, comm, true); !id.empty()) meta["data"] = id;
  opt.meta_json = meta.dump();
  NodeSequenceTrainer trainer(*model, rank_data ? rank_data->graphs : graphs, x, task, comm, opt);
  const bool root = comm.rank() == 0;
  if (!a.quiet && root)
    std::printf(
        "temporal graph: %lld vertices, %d snapshots, %lld features; labels %s: %d "
        "classes, train/val/test %zu/%zu/%zu (loaded in %.0f ms)\n",
        (long long)g.num_vertices, g.num_snapshots(), (long long)feature_dim, label_file.c_str(),
        classes, n_train, n_val, n_test, in.ms);
  if (!a.quiet && root && comm.size() > 1)
    std::printf("%s\n", describe_moves(in.moves, comm.size()).c_str());

  std::unique_ptr<LineLog> log;  // a line per epoch, as it ends
  if (root && !a.log_json.empty()) log = std::make_unique<LineLog>(a.log_json);
  const NodeSequenceResult res = trainer.run([&](const NodeSequenceEpoch& s) {
    if (!a.quiet && root) {
      std::printf("epoch %4d  loss %.4f  train %.4f  val %.4f macro-f1 %.4f  %7.1f ms", s.epoch,
                  s.loss, s.train_acc, s.val_acc, s.val_macro_f1, s.time_ms);
      if (comm.size() > 1) print_split(s);
      std::printf("\n");
    }
    if (log) {
      nlohmann::json j = {{"epoch", s.epoch},       {"loss", s.loss},
                          {"train_acc", s.train_acc}, {"val_acc", s.val_acc},
                          {"val_macro_f1", s.val_macro_f1}, {"eval_ms", s.eval_ms}};
      j.update(split_json(s));
      log->line(j.dump());
    }
  });
  // Outputs, collective; the model holds the best-validation parameters, those the test used.
  std::vector<int64_t> ids;
  for (int64_t v : owned) ids.push_back(g.original_ids[size_t(v)]);
  if (!a.predictions.empty()) write_class_predictions(a.predictions, trainer.predict(), ids, comm);
  if (!a.embeddings.empty()) write_embeddings(a.embeddings, trainer.embeddings(), ids, comm);
  if (!root) return;
  if (res.stopped_early)
    std::printf("stopped at epoch %d: no better validation accuracy for %d epochs (--patience)\n",
                res.last_epoch, a.train.patience);
  std::printf("test accuracy %.4f macro-f1 %.4f (best val %.4f at epoch %d), median epoch %.1f ms\n",
              res.test_acc, res.test_macro_f1, res.best_val_acc, res.best_epoch,
              res.median_epoch_ms);
  if (log) {
    const nlohmann::json j = {{"final", true},
                              {"test_acc", res.test_acc},
                              {"test_macro_f1", res.test_macro_f1},
                              {"best_val_acc", res.best_val_acc},
                              {"best_epoch", res.best_epoch},
                              {"epochs", res.last_epoch},
                              {"stopped_early", res.stopped_early},
                              {"median_epoch_ms", res.median_epoch_ms},
                              {"test_ms", res.test_ms},
                              {"settings", settings}};
    log->line(j.dump());
  }
}

}  // namespace dgnn::cli
