// `dgnn train`: node classification on a dataset (file, directory, or the generated default).
#include <omp.h>

#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <optional>

#include "dgnn/cli/commands.hpp"
#include "dgnn/cli/options.hpp"
#include "dgnn/cli/train_args.hpp"
#include "dgnn/comm/communicator.hpp"
#include "dgnn/common/error.hpp"
#include "dgnn/common/memory.hpp"
#include "dgnn/common/timer.hpp"
#include "dgnn/datasets/sbm.hpp"
#include "dgnn/gnn/train/pipeline.hpp"
#include "dgnn/gnn/train/static_run.hpp"
#include "dgnn/graph/dataset.hpp"
#include "dgnn/kernels/kernels.hpp"
#include "dgnn/partition/partition.hpp"
#include "dgnn/plan/memory_model.hpp"

namespace dgnn::cli {

namespace {

Dataset load_or_generate(const TrainArgs& a, bool quiet) {
  if (!a.data.graph.empty()) return load_dataset(a.data);
  // The embedded default: a planted-partition graph, learnable and the same on every machine.
  SbmConfig cfg = default_sbm(a.data);
  if (!quiet)
    std::printf("no --graph given: training on a generated SBM graph (%lld vertices, %d classes)\n",
                (long long)cfg.vertices, int(cfg.classes));
  Dataset d = generate_sbm(cfg).to_dataset();
  require_split(int64_t(d.train.size()), int64_t(d.val.size()), int64_t(d.test.size()),
                cfg.train_frac, cfg.val_frac);
  return d;
}

}  // namespace

namespace {

// The sampler's options from the mini-batch flags; none of them without --batch-size.
std::optional<MiniBatchOptions> minibatch_options(const TrainArgs& a) {
  if (!a.batch_size_given) {
    if (a.fanouts_given) throw OptionError("--fanouts needs --batch-size (mini-batch training)");
    if (a.replace) throw OptionError("--replace needs --batch-size (mini-batch training)");
    if (a.no_prefetch) throw OptionError("--no-prefetch needs --batch-size (mini-batch training)");
    return std::nullopt;
  }
  if (a.batch_size < 1)
    throw OptionError("--batch-size must be >= 1, got " + std::to_string(a.batch_size));
  MiniBatchOptions o;
  o.batch_size = a.batch_size;
  o.sampler.fanouts = a.fanouts_given ? parse_fanouts(a.fanouts)
                                      : std::vector<int>(size_t(std::max(a.layers, 1)), -1);
  if (int(o.sampler.fanouts.size()) != a.layers)
    throw OptionError("--fanouts: " + std::to_string(o.sampler.fanouts.size()) +
                      (o.sampler.fanouts.size() == 1 ? " fanout" : " fanouts") + " for " +
                      std::to_string(a.layers) + (a.layers == 1 ? " layer" : " layers") +
                      " (give one per layer, the input layer first)");
  o.sampler.replace = a.replace;
  o.sampler.seed = a.train.seed;
  o.prefetch = !a.no_prefetch;
  return o;
}

}  // namespace

// The run's totals over all ranks (what the result lines read).
struct SplitTotals {
  int64_t global_val = 0, global_test = 0;
};

// Trains `run` (a StaticRun's trainer or a PipelineRun), then prints and writes what every
// static run ends with: the result line, predictions, embeddings and the final JSON record.
template <class Run>
void train_and_report(TrainArgs& a, Run& run, const SplitTotals& totals, nlohmann::json& settings,
                      bool minibatch, Communicator& comm) {
  const bool root = comm.rank() == 0;
  EpochPrinter printer(a, comm, run.epoch_format());
  const TrainResult res = run.train(printer.callback());
  if (root && res.stopped_early)
    std::printf("stopped at epoch %d: no %s for %d epochs (--patience)\n", res.last_epoch,
                a.train.select == "loss" ? "lower validation loss" : "better validation accuracy",
                a.train.patience);
  if (root) {
    // An empty set (--train-frac 1, --val-frac 0, or split files without it) has no accuracy:
    // printing 0 would read as a result.
    if (totals.global_test > 0)
      std::printf("test accuracy %.4f ", res.test_acc);
    else
      std::printf("no test vertices, no test accuracy ");
    if (totals.global_val > 0 && a.train.select == "loss")
      std::printf("(lowest val loss %.4f, val %.4f, at epoch %d)", res.best_val_loss,
                  res.best_val_acc, res.best_epoch);
    else if (totals.global_val > 0)
      std::printf("(best val %.4f at epoch %d)", res.best_val_acc, res.best_epoch);
    else
      std::printf("(no validation vertices: the last epoch's parameters)");
    std::printf(", median epoch %.2f ms\n", res.median_epoch_ms);
  }
  // The model holds the best-validation parameters, those the test used.
  if (!a.predictions.empty())
    write_class_predictions(a.predictions, run.predict().to(Device::cpu), run.row_ids(),
                            comm);
  if (!a.embeddings.empty()) write_embeddings(a.embeddings, run.embeddings(), run.row_ids(), comm);
  nlohmann::json j = {
      {"final", true},
      {"test_acc", totals.global_test > 0 ? nlohmann::json(res.test_acc) : nullptr},
      {"best_val_acc", totals.global_val > 0 ? nlohmann::json(res.best_val_acc) : nullptr},
      {"best_val_loss", totals.global_val > 0 && !std::isnan(res.best_val_loss)
                            ? nlohmann::json(res.best_val_loss)
                            : nullptr},
      {"best_epoch", res.best_epoch},
      {"epochs", res.last_epoch},
      {"stopped_early", res.stopped_early},
      {"final_loss", res.final_loss},
      {"median_epoch_ms", res.median_epoch_ms},
      {"test_ms", res.test_ms},
      {"median_compute_ms", res.median_compute_ms},
      {"median_comm_ms", res.median_comm_ms},
      {"median_wait_ms", res.median_wait_ms},
      {"bytes_sent_per_epoch", res.bytes_per_epoch},
      {"settings", settings}};
  if (minibatch) {
    j["median_sample_ms"] = res.median_sample_ms;
    j["median_sample_wait_ms"] = res.median_sample_wait_ms;
  }
  printer.final_line(j, res);
}

// The static run's adapter: predictions through its trainer.
struct StaticRunReport {
  StaticRun& run;
  EpochFormat epoch_format() const { return run.epoch_format(); }
  TrainResult train(const std::function<void(const EpochRecord&)>& f) { return run.train(f); }
  Tensor predict() { return run.trainer().predict(); }
  Tensor embeddings() { return run.embeddings(); }
  std::vector<int64_t> row_ids() const { return run.row_ids(); }
};

void run_train(TrainArgs& a) {
  if (a.layers < 1) throw OptionError("--layers must be >= 1");
  if (a.hidden < 1) throw OptionError("--hidden must be >= 1");
  if (!(a.dropout >= 0 && a.dropout < 1)) throw OptionError("--dropout must be in [0, 1)");
  set_threads(a.threads);
  if (!(a.data.train_frac >= 0 && a.data.train_frac <= 1 && a.data.val_frac >= 0 &&
        a.data.val_frac <= 1 && a.data.train_frac + a.data.val_frac <= 1))
    throw OptionError("--train-frac and --val-frac must be in [0, 1] with a sum <= 1");
  check_outputs(a, train_outputs(a));
  StaticRunConfig cfg;
  if (is_deep_model(a.model)) {
    DeepModelOptions deep;
    deep.kind = parse_deep_kind(a.model);
    deep.layers = a.layers;
    deep.hidden = a.hidden;
    deep.dropout = a.dropout;
    deep.alpha = a.alpha;
    deep.lambda = a.lambda;
    if (a.conv_weight_decay_given && !(a.conv_weight_decay >= 0))
      throw OptionError("--conv-weight-decay must be a number >= 0");
    deep.conv_weight_decay = a.conv_weight_decay_given ? a.conv_weight_decay : -1.f;
    check_deep_options(deep);
    cfg.deep = deep;
    cfg.model = a.model;
  } else {
    cfg.layer = static_layer(a.model.empty() ? "gcn" : a.model, a.dropout, &cfg.model);
  }
  cfg.normalize_features = a.normalize_features;
  cfg.layers = a.layers;
  cfg.hidden = a.hidden;
  cfg.dropout = a.dropout;
  cfg.partition.method = parse_partitioner(a.partitioner);
  cfg.partition.seed = a.train.seed;
  cfg.partition_dir = a.partition_dir;
  if (!a.data.graph.empty())
    cfg.source_hash = [&a] { return dataset_source_hash(a.data, &world()); };
  if (!a.data.graph.empty()) cfg.shards = a.data;
  cfg.overlap = !a.no_overlap;
  cfg.halo_memory = a.halo_memory == "auto"    ? -1
                    : a.halo_memory == "whole" ? 0
                                               : perf::parse_memory_size(a.halo_memory, "--halo-memory");
  cfg.minibatch = minibatch_options(a);
  const std::optional<MiniBatchOptions>& mb = cfg.minibatch;
  Communicator& comm = world();
  std::unique_ptr<DeviceComm> device_link;  // declared before everything that uses it
  cfg.device = train_device(a, comm, &device_link);
  const bool root = comm.rank() == 0;
  const bool print = !a.quiet && root;
  if (a.partition_dir.empty()) check_parts(a, comm);

  nlohmann::json settings = {
      {"graph", a.data.graph.empty() ? "generated:sbm" : a.data.graph},
      {"model", cfg.model},
      {"layers", a.layers},
      {"hidden", a.hidden},
      {"dropout", a.dropout},
      {"lr", a.train.lr},
      {"weight_decay", a.train.weight_decay},
      {"optimizer", a.train.optimizer},
      {"epochs", a.train.epochs},
      {"seed", a.train.seed},
      {"ranks", comm.size()},
      {"partitioner", a.partition_dir.empty() ? a.partitioner : "dir"},
      {"partition", a.partition_dir},
      {"overlap", !a.no_overlap},
      {"halo_memory", a.halo_memory},
      {"threads", omp_get_max_threads()},
      {"device", a.device},
      {"comm", device_link ? transport_name(device_link->transport()) : "none"}};
  if (a.train.clip_norm > 0) settings["clip_norm"] = a.train.clip_norm;
  if (a.normalize_features) settings["normalize_features"] = true;
  settings["select"] = a.train.select;
  if (cfg.deep) {
    if (cfg.deep->kind == DeepKind::gcnii) {
      settings["alpha"] = a.alpha;
      settings["lambda"] = a.lambda;
    }
    settings["conv_weight_decay"] =
        a.conv_weight_decay_given ? a.conv_weight_decay : a.train.weight_decay;
  }
  if (mb) {
    settings["batch_size"] = mb->batch_size;
    settings["fanouts"] = mb->sampler.fanouts;
    settings["replace"] = mb->sampler.replace;
  }
  cfg.train = a.train;
  // Rank 0 reads the graph (unless a partition folder is given), before the partition.
  auto read = [&] {
    Timer load_timer;
    Dataset data = load_or_generate(a, !print);
    if (print)
      std::printf(
          "graph: %lld vertices, %lld stored edges, %lld features, %d classes, "
          "train/val/test %zu/%zu/%zu (loaded in %.0f ms)\n",
          (long long)data.num_vertices(), (long long)data.graph.num_edges(),
          (long long)data.feature_dim, int(data.num_classes), data.train.size(), data.val.size(),
          data.test.size(), load_timer.ms());
    if (data.labels.empty()) throw OptionError("the dataset has no labels (give --labels FILE)");
    const DatasetFiles files = a.data.graph.empty() ? DatasetFiles{} : dataset_files(a.data);
    if (files.train.empty() && files.val.empty() && files.test.empty())  // a random split
      require_split(int64_t(data.train.size()), int64_t(data.val.size()),
                    int64_t(data.test.size()), a.data.train_frac, a.data.val_frac);
    if (print && comm.size() > 1)
      std::printf("partitioning for %d ranks (%s)\n", comm.size(), a.partitioner.c_str());
    return data;
  };
  // The data id is collective: every rank computes it before the run's collectives.
  if (const std::string id = checkpoint_data_id(a, comm, false); !id.empty()) settings["data"] = id;
  cfg.train.meta_json = settings.dump();
  if (a.strategy == "pipeline") {
    // Every stage holds the whole graph, read by rank 0 and cut into chunks there.
    cfg.shards.reset();
    PipelineOptions po;
    po.chunks = a.chunks;
    po.stages = a.stages;
    PipelineRun run(read, cfg, po, comm);
    settings["strategy"] = "pipeline";
    settings["stages"] = run.stages();
    settings["parts"] = run.parts();
    settings["chunks"] = run.chunks();
    if (print) {
      std::string groups;
      const std::vector<int>& first = run.stage_bounds();
      for (size_t s = 0; s + 1 < first.size(); ++s)
        groups += (s ? ", " : "") + std::to_string(first[s]) + "-" + std::to_string(first[s + 1] - 1);
      if (run.parts() > 1)
        std::printf("pipeline: %d stages x %d graph parts (the hybrid; graph layers %s), one chunk "
                    "per part (exact)\n",
                    run.stages(), run.parts(), groups.c_str());
      else
        std::printf("pipeline: %d stages (graph layers %s), %d chunks%s\n", run.stages(),
                    groups.c_str(), run.chunks(),
                    run.chunks() == 1 ? " (exact: nothing stale)"
                                      : " (out-of-chunk neighbours read the last exact pass's rows)");
    }
    train_and_report(a, run, {run.global_val(), run.global_test()}, settings, false, comm);
    return;
  }
  Timer shard_timer;
  StaticRun run(read, cfg, comm);
  if (const std::optional<ShardedLoad>& sh = run.sharded_load()) {
    const NodeTask& t = run.task();
    if (print)
      std::printf(
          "graph: %lld vertices, %lld stored edges, %lld features, %d classes, "
          "train/val/test %lld/%lld/%lld (read in shards by %d ranks, at most %s of text each; "
          "partitioned with %s; %.0f ms)\n",
          (long long)sh->vertices, (long long)sh->stored_edges,
          (long long)run.setup().part.feature_dim, int(t.num_classes), (long long)t.global_train,
          (long long)t.global_val, (long long)t.global_test, comm.size(),
          (sh->max_text_bytes < 1000000
               ? std::to_string((sh->max_text_bytes + 999) / 1000) + " kB"
               : memory_str(double(sh->max_text_bytes)))
              .c_str(),
          a.partitioner.c_str(),
          shard_timer.ms());
    const DatasetFiles files = dataset_files(a.data);
    if (files.train.empty() && files.val.empty() && files.test.empty())  // a random split
      require_split(t.global_train, t.global_val, t.global_test, a.data.train_frac,
                    a.data.val_frac);
  }
  if (print && run.halo_piece_rows() > 0)  // the same on every rank (agree_piece_rows)
    std::printf("halo: streamed peer after peer in pieces of %lld rows (--halo-memory %s)\n",
                (long long)run.halo_piece_rows(), a.halo_memory.c_str());
  if (cfg.device != Device::cpu && print)
    std::printf("device: %s\n", kernels::cuda_device_description().c_str());
  if (const RankMiniBatches* batches = run.minibatches()) {
    if (batches->prefetch_dropped && print)
      std::printf("note: MPI gives no MPI_THREAD_MULTIPLE: sampling without prefetch\n");
    if (cfg.device != Device::cpu && print)
      std::printf("mini-batches: sampled on %s\n", placement_description(batches->placement));
    settings["sampling"] = batches->placement == BatchPlacement::device ? "cuda" : "cpu";
    settings["prefetch"] = batches->loader->options().prefetch;
    settings["steps_per_epoch"] = batches->loader->steps_per_epoch();
  }
  StaticRunReport report{run};
  train_and_report(a, report, {run.task().global_val, run.task().global_test}, settings,
                   mb.has_value(), comm);
}


}  // namespace dgnn::cli
