// `dgnn train`: node classification on a dataset (file, directory, or the generated default).
#include <omp.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "cli/options.hpp"
#include "comm/communicator.hpp"
#include "common/error.hpp"
#include "common/timer.hpp"
#include "datasets/sbm.hpp"
#include "gnn/layers.hpp"
#include "gnn/trainer.hpp"
#include "graph/dataset.hpp"
#include "kernels/kernels.hpp"

namespace dgnn::cli {

namespace {

struct TrainArgs {
  DatasetOptions data;
  std::string model = "gcn";
  int layers = 2;
  int64_t hidden = 16;
  float dropout = 0.5f;
  TrainOptions train;
  std::string log_json;
  std::string predictions;
  std::string device = "cpu";
  int threads = 0;
  bool quiet = false;
};

// Writes a text file atomically: the content appears whole under `path` or not at all.
class AtomicFile {
 public:
  explicit AtomicFile(std::string path) : path_(std::move(path)), tmp_(path_ + ".tmp") {
    f_ = std::fopen(tmp_.c_str(), "w");
    if (!f_) throw IoError(path_ + ": cannot write (" + std::strerror(errno) + ")");
  }
  ~AtomicFile() {
    if (f_) {
      std::fclose(f_);
      std::remove(tmp_.c_str());
    }
  }
  FILE* get() { return f_; }
  void commit() {
    const bool ok = std::fflush(f_) == 0 && !std::ferror(f_);
    std::fclose(f_);
    f_ = nullptr;
    if (!ok || std::rename(tmp_.c_str(), path_.c_str()) != 0) {
      std::remove(tmp_.c_str());
      throw IoError(path_ + ": writing failed");
    }
  }

 private:
  std::string path_, tmp_;
  FILE* f_ = nullptr;
};

Dataset load_or_generate(const TrainArgs& a, bool quiet) {
  if (!a.data.graph.empty()) return load_dataset(a.data);
  // The embedded default: a planted-partition graph, learnable and the same on every machine.
  SbmConfig cfg;
  cfg.seed = a.data.seed;
  if (!quiet)
    std::printf("no --graph given: training on a generated SBM graph (%lld vertices, %d classes)\n",
                (long long)cfg.vertices, int(cfg.classes));
  return generate_sbm(cfg).to_dataset();
}

void run_train(TrainArgs& a) {
  if (a.layers < 1) throw OptionError("--layers must be >= 1");
  if (a.hidden < 1) throw OptionError("--hidden must be >= 1");
  if (!(a.dropout >= 0 && a.dropout < 1)) throw OptionError("--dropout must be in [0, 1)");
  if (a.threads > 0) omp_set_num_threads(a.threads);
  const ModelKind kind = parse_model_kind(a.model);
  if (a.device == "cuda") {
    std::string why;
    if (!kernels::cuda_available(&why)) throw DeviceError("--device cuda: " + why);
    throw DeviceError("--device cuda: the CUDA training path is not built yet (use --device cpu)");
  }
  if (a.device != "cpu") throw OptionError("--device: expected cpu or cuda, got '" + a.device + "'");

  Timer load_timer;
  Dataset data = load_or_generate(a, a.quiet);
  if (!a.quiet)
    std::printf("graph: %lld vertices, %lld stored edges, %lld features, %d classes, "
                "train/val/test %zu/%zu/%zu (loaded in %.0f ms)\n",
                (long long)data.num_vertices(), (long long)data.graph.num_edges(),
                (long long)data.feature_dim, int(data.num_classes), data.train.size(),
                data.val.size(), data.test.size(), load_timer.ms());
  NodeTask task = make_node_task(data);
  GraphView graph(data.graph.in);

  std::vector<int64_t> dims{data.feature_dim};
  for (int i = 0; i + 1 < a.layers; ++i) dims.push_back(a.hidden);
  dims.push_back(data.num_classes);
  StackModel model(builtin_layer(kind), dims, a.dropout);
  model.reset_parameters(a.train.seed);

  nlohmann::json settings = {{"graph", a.data.graph.empty() ? "generated:sbm" : a.data.graph},
                             {"model", model_kind_name(kind)},
                             {"layers", a.layers},
                             {"hidden", a.hidden},
                             {"dropout", a.dropout},
                             {"lr", a.train.lr},
                             {"weight_decay", a.train.weight_decay},
                             {"optimizer", a.train.optimizer},
                             {"epochs", a.train.epochs},
                             {"seed", a.train.seed},
                             {"ranks", 1},
                             {"threads", omp_get_max_threads()},
                             {"device", a.device}};
  a.train.meta_json = settings.dump();

  std::unique_ptr<AtomicFile> log;
  if (!a.log_json.empty()) log = std::make_unique<AtomicFile>(a.log_json);
  SelfCommunicator comm;
  Trainer trainer(model, graph, task, comm, a.train);
  TrainResult res = trainer.run([&](const EpochStats& s) {
    if (!a.quiet)
      std::printf("epoch %4d  loss %.4f  train %.4f  val %.4f  %7.1f ms\n", s.epoch, s.loss,
                  s.train_acc, s.val_acc, s.time_ms);
    if (log) {
      nlohmann::json j = {{"epoch", s.epoch},       {"loss", s.loss},       {"train_acc", s.train_acc},
                          {"val_acc", s.val_acc},   {"test_acc", s.test_acc}, {"time_ms", s.time_ms},
                          {"eval_ms", s.eval_ms}};
      std::fprintf(log->get(), "%s\n", j.dump().c_str());
    }
  });
  std::printf("test accuracy %.4f (best val %.4f at epoch %d), median epoch %.2f ms\n",
              res.test_acc, res.best_val_acc, res.best_epoch, res.median_epoch_ms);

  if (!a.predictions.empty()) {
    Tensor logits = trainer.predict();
    AtomicFile out(a.predictions);
    for (int64_t v = 0; v < logits.rows(); ++v) {
      int64_t best = 0;
      for (int64_t c = 1; c < logits.cols(); ++c)
        if (logits.at(v, c) > logits.at(v, best)) best = c;
      std::fprintf(out.get(), "%lld %lld\n", (long long)data.graph.original_ids[size_t(v)],
                   (long long)best);
    }
    out.commit();
  }
  if (log) {
    nlohmann::json j = {{"final", true},
                        {"test_acc", res.test_acc},
                        {"best_val_acc", res.best_val_acc},
                        {"best_epoch", res.best_epoch},
                        {"epochs", res.last_epoch},
                        {"final_loss", res.final_loss},
                        {"median_epoch_ms", res.median_epoch_ms},
                        {"settings", settings}};
    std::fprintf(log->get(), "%s\n", j.dump().c_str());
    log->commit();
  }
}

}  // namespace

void register_train(CLI::App& app) {
  auto a = std::make_shared<TrainArgs>();
  a->train.weight_decay = 5e-4f;
  CLI::App* cmd = app.add_subcommand("train", "Train a GNN for node classification");
  cmd->add_option("--graph", a->data.graph,
                  "Edge-list file or dataset directory (default: a generated SBM graph)");
  add_dataset_options(cmd, a->data);
  cmd->add_option("--model", a->model, "Layer type")
      ->check(CLI::IsMember({"gcn", "sage", "graphsage", "gin"}))
      ->capture_default_str();
  cmd->add_option("--layers", a->layers, "Number of GNN layers")->capture_default_str();
  cmd->add_option("--hidden", a->hidden, "Hidden width")->capture_default_str();
  cmd->add_option("--dropout", a->dropout, "Dropout probability before each layer")
      ->capture_default_str();
  cmd->add_option("--lr", a->train.lr, "Learning rate")->capture_default_str();
  cmd->add_option("--weight-decay", a->train.weight_decay, "L2 weight decay (weights, not biases)")
      ->capture_default_str();
  cmd->add_option("--optimizer", a->train.optimizer, "adam or sgd")
      ->check(CLI::IsMember({"adam", "sgd"}))
      ->capture_default_str();
  cmd->add_option("--momentum", a->train.momentum, "SGD momentum")->capture_default_str();
  cmd->add_option("--epochs", a->train.epochs, "Training epochs")->capture_default_str();
  cmd->add_option("--seed", a->train.seed, "Seed for initialisation and dropout")
      ->capture_default_str();
  cmd->add_option("--save", a->train.save, "Write a checkpoint after the last epoch");
  cmd->add_option("--load", a->train.load, "Resume from a checkpoint (continues to --epochs)");
  cmd->add_option("--log-json", a->log_json, "Write one JSON object per epoch and a final line");
  cmd->add_option("--predictions", a->predictions,
                  "Write 'vertex predicted_class' per vertex, in the input's vertex ids");
  cmd->add_option("--device", a->device, "cpu or cuda")->capture_default_str();
  cmd->add_option("--threads", a->threads, "OpenMP threads (default: all cores)");
  cmd->add_flag("--quiet", a->quiet, "Only print the final line");
  cmd->callback([a] {
    a->data.seed = a->train.seed;
    run_train(*a);
  });
}

}  // namespace dgnn::cli
