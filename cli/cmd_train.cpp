// `dgnn train`: node classification on a dataset (file, directory, or the generated default).
#include <omp.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
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
#include "dgnn/gnn/models/layers.hpp"
#include "dgnn/gnn/train/distributed.hpp"
#include "dgnn/gnn/train/minibatch_setup.hpp"
#include "dgnn/gnn/train/trainer.hpp"
#include "dgnn/graph/dataset.hpp"
#include "dgnn/graph/signals.hpp"
#include "dgnn/kernels/kernels.hpp"

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

std::string checkpoint_data_id(const TrainArgs& a, Communicator& comm, bool temporal) {
  if (a.train.save.empty() && a.train.load.empty()) return "";
  std::string id;
  if (comm.rank() == 0) {
    if (a.data.graph.empty()) {
      // The generated default: its graph and split follow from these alone.
      char buf[128];
      std::snprintf(buf, sizeof buf, "generated-sbm:seed=%llu:train=%.9g:val=%.9g",
                    (unsigned long long)a.train.seed, a.data.train_frac, a.data.val_frac);
      id = buf;
    } else {
      id = dataset_source_hash(a.data);
      if (temporal) {
        const SnapshotOptions& s = a.snapshots;
        char buf[256];
        std::snprintf(buf, sizeof buf, ":snap=%.17g/%d/%d/%d:steps=%d/%.9g/%.9g", s.seconds,
                      s.count, int(s.mode), s.window, int(a.step_fracs_given()), a.data.train_frac,
                      a.data.val_frac);
        id += buf;
        if (const auto layout = read_temporal_layout(a.data.graph))
          id += ":layout=" + std::to_string(std::hash<std::string>{}(layout->to_text()));
      }
    }
  }
  int64_t len = int64_t(id.size());
  comm.broadcast(&len, 8, 0);
  id.resize(size_t(len));
  comm.broadcast(id.data(), len, 0);
  return id;
}

void check_parts(const TrainArgs& a, const Communicator& comm) {
  if (a.parts > 0 && a.parts != comm.size())
    throw OptionError("--parts " + std::to_string(a.parts) + " but the job has " +
                      std::to_string(comm.size()) + " ranks (launch with mpirun -np " +
                      std::to_string(a.parts) + ")");
}

namespace {

// This rank's part: read from a partition directory, or cut from the dataset (one part when
// single-process).
LocalPart load_part(const TrainArgs& a, Communicator& comm) {
  const bool print = !a.quiet && comm.rank() == 0;
  if (!a.partition_dir.empty()) {
    // Rank 0 hashes the sources (reading them whole) and tells the others: 64 ranks must not
    // read the whole dataset 64 times to check it.
    std::string hash = comm.rank() == 0 && !a.data.graph.empty() ? dataset_source_hash(a.data) : "";
    int64_t len = int64_t(hash.size());
    comm.broadcast(&len, 8, 0);
    hash.resize(size_t(len));
    comm.broadcast(hash.data(), len, 0);
    return read_partition_part(a.partition_dir, comm.rank(), comm.size(), hash);
  }
  check_parts(a, comm);
  // Only rank 0 reads the graph; it partitions and sends every other rank its part.
  std::unique_ptr<Dataset> data;
  if (comm.rank() == 0) {
    Timer load_timer;
    data = std::make_unique<Dataset>(load_or_generate(a, !print));
    if (print)
      std::printf(
          "graph: %lld vertices, %lld stored edges, %lld features, %d classes, "
          "train/val/test %zu/%zu/%zu (loaded in %.0f ms)\n",
          (long long)data->num_vertices(), (long long)data->graph.num_edges(),
          (long long)data->feature_dim, int(data->num_classes), data->train.size(),
          data->val.size(), data->test.size(), load_timer.ms());
    if (data->labels.empty()) throw OptionError("the dataset has no labels (give --labels FILE)");
    const DatasetFiles files = a.data.graph.empty() ? DatasetFiles{} : dataset_files(a.data);
    if (files.train.empty() && files.val.empty() && files.test.empty())  // a random split
      require_split(int64_t(data->train.size()), int64_t(data->val.size()),
                    int64_t(data->test.size()), a.data.train_frac, a.data.val_frac);
  }
  PartitionOptions popt;
  popt.method = parse_partitioner(a.partitioner);
  popt.seed = a.train.seed;
  if (comm.size() == 1)
    return extract_part(*data, std::vector<int32_t>(size_t(data->num_vertices()), 0), 1, 0);
  if (print) std::printf("partitioning for %d ranks (%s)\n", comm.size(), a.partitioner.c_str());
  return partition_and_scatter(data.get(), popt, comm);
}

}  // namespace

nlohmann::json split_json(const StepSplit& s) {
  return {{"time_ms", s.time_ms},
          {"compute_ms", s.compute_ms},
          {"comm_ms", s.comm_ms},
          {"wait_ms", s.wait_ms},
          {"bytes_sent", s.bytes_sent},
          {"max_compute_ms", s.max_compute_ms},
          {"max_comm_ms", s.max_comm_ms},
          {"max_wait_ms", s.max_wait_ms},
          {"max_bytes_sent", s.max_bytes_sent}};
}

void print_split(const StepSplit& s) {
  std::printf("  (compute %.1f comm %.1f wait %.1f, sent %.2f MB)", s.compute_ms, s.comm_ms,
              s.wait_ms, double(s.bytes_sent) / 1e6);
}

void set_threads(int threads) {
  if (threads < 0) throw OptionError("--threads must be >= 0 (0 = all cores)");
  // Far more threads than cores only slows a run down, and beyond some thousands the OpenMP
  // runtime cannot start them (it crashes instead of failing).
  const int cores = omp_get_num_procs(), most = std::max(64, 16 * cores);
  if (threads > most)
    throw OptionError("--threads " + std::to_string(threads) + ": at most " + std::to_string(most) +
                      " (16 per core; this machine has " + std::to_string(cores) + ")");
  if (threads > 0) {
    omp_set_num_threads(threads);
    return;
  }
  if (std::getenv("OMP_NUM_THREADS")) {
    if (omp_get_max_threads() > most)
      throw OptionError("OMP_NUM_THREADS asks for " + std::to_string(omp_get_max_threads()) +
                        " threads: at most " + std::to_string(most) + " (16 per core; this " +
                        "machine has " + std::to_string(cores) + ")");
    return;
  }
  for (const char* var : {"OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS", "SLURM_NTASKS_PER_NODE"})
    if (const char* v = std::getenv(var)) {
      const int local = std::atoi(v);
      if (local > 1) omp_set_num_threads(std::max(1, omp_get_num_procs() / local));
      return;
    }
}

nlohmann::json temporal_settings(const TrainArgs& a, const std::string& model,
                                 const std::string& task, int ranks) {
  return {{"graph", a.data.graph},
          {"model", model},
          {"task", task},
          {"layers", a.layers},
          {"hidden", a.hidden},
          {"optimizer", a.train.optimizer},
          {"lr", a.train.lr},
          {"weight_decay", a.train.weight_decay},
          {"epochs", a.train.epochs},
          {"bptt", a.bptt},
          {"seed", a.train.seed},
          {"ranks", ranks},
          {"strategy", a.strategy},
          {"device", a.device},
          {"partitioner", a.strategy == "snapshot" ? "none" : a.partitioner},
          {"threads", omp_get_max_threads()}};
}

Device train_device(const TrainArgs& a, Communicator& comm, std::unique_ptr<DeviceComm>* link) {
  const std::string& name = a.device;
  if (name != "cpu" && name != "cuda")
    throw OptionError("--device: expected cpu or cuda, got '" + name + "'");
  if (name == "cpu") {
    attach_device_comm(comm, Device::cpu, a.comm);  // only checks --comm: nothing to attach
    return Device::cpu;
  }
  std::string why;
  if (!kernels::cuda_available(&why)) throw DeviceError("--device cuda: " + why);
  kernels::bind_cuda_device(comm.local_rank());
  *link = attach_device_comm(comm, Device::cuda, a.comm, &why);
  if (comm.size() > 1 && comm.rank() == 0 && !a.quiet)
    std::printf("gpu communication: %s\n", why.c_str());
  return Device::cuda;
}

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

// The static model --model names: a built-in layer or one registered by the program
// (register_layer), stacked the same way; *name is what logs and checkpoints record.
LayerSpec static_model(const std::string& model, float dropout, std::string* name) {
  if (const LayerSpec* spec = find_registered_layer(model)) {
    *name = model;
    return *spec;
  }
  const ModelKind kind = parse_model_kind(model);
  *name = model_kind_name(kind);
  // GAT drops attention coefficients with the same probability as features (as its paper); it
  // runs over the GCN structure (self loops).
  const Norm norm = kind == ModelKind::sage  ? Norm::mean
                    : kind == ModelKind::gin ? Norm::sum
                                             : Norm::gcn;
  return {builtin_layer(kind, dropout), {norm}, kind == ModelKind::gat};
}

void run_train(TrainArgs& a) {
  if (a.layers < 1) throw OptionError("--layers must be >= 1");
  if (a.hidden < 1) throw OptionError("--hidden must be >= 1");
  if (!(a.dropout >= 0 && a.dropout < 1)) throw OptionError("--dropout must be in [0, 1)");
  set_threads(a.threads);
  if (!(a.data.train_frac >= 0 && a.data.train_frac <= 1 && a.data.val_frac >= 0 &&
        a.data.val_frac <= 1 && a.data.train_frac + a.data.val_frac <= 1))
    throw OptionError("--train-frac and --val-frac must be in [0, 1] with a sum <= 1");
  check_outputs(a,
                {{"--log-json", a.log_json},
                 {"--predictions", a.predictions},
                 {"--save", a.train.save},
                 {"--embeddings", a.embeddings},
                 {"--embeddings", a.embeddings.empty() ? "" : embeddings_ids_path(a.embeddings)}});
  std::string model_name;
  const LayerSpec spec = static_model(a.model.empty() ? "gcn" : a.model, a.dropout, &model_name);
  parse_partitioner(a.partitioner);
  std::optional<MiniBatchOptions> mb = minibatch_options(a);
  Communicator& comm = world();
  std::unique_ptr<DeviceComm> device_link;  // declared before everything that uses it
  const Device dev = train_device(a, comm, &device_link);
  const bool root = comm.rank() == 0;
  auto setup = make_rank_setup(load_part(a, comm), comm, dev);
  setup->graph->set_overlap(!a.no_overlap);
  const LocalPart& part = setup->part;

  std::vector<int64_t> dims{part.feature_dim};
  for (int i = 0; i + 1 < a.layers; ++i) dims.push_back(a.hidden);
  dims.push_back(part.num_classes);
  refuse_model_past_memory(dims, part.n_owned, a.hidden, a.layers);
  StackModel model(spec.factory, dims, a.dropout);
  model.reset_parameters(a.train.seed);
  if (dev != Device::cpu) {
    model.to(dev);  // the features are there already (make_rank_setup)
    if (root && !a.quiet) std::printf("device: %s\n", kernels::cuda_device_description().c_str());
  }

  nlohmann::json settings = {
      {"graph", a.data.graph.empty() ? "generated:sbm" : a.data.graph},
      {"model", model_name},
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
      {"threads", omp_get_max_threads()},
      {"device", a.device},
      {"comm", device_link ? transport_name(device_link->transport()) : "none"}};
  if (mb) {
    settings["batch_size"] = mb->batch_size;
    settings["fanouts"] = mb->sampler.fanouts;
    settings["replace"] = mb->sampler.replace;
  }
  if (const std::string id = checkpoint_data_id(a, comm, false); !id.empty()) settings["data"] = id;
  a.train.meta_json = settings.dump();

  std::unique_ptr<LineLog> log;  // a line per epoch, as it ends
  if (root && !a.log_json.empty()) log = std::make_unique<LineLog>(a.log_json);
  Trainer trainer(model, *setup->graph, setup->task, comm, a.train);
  const bool multi = comm.size() > 1;

  // Mini-batch training (gnn/train/minibatch_setup.hpp says where blocks are sampled).
  std::unique_ptr<RankMiniBatches> batches;
  if (mb) {
    batches = make_rank_minibatches(*setup, *mb, spec, dev, comm);
    if (batches->prefetch_dropped && root && !a.quiet)
      std::printf("note: MPI gives no MPI_THREAD_MULTIPLE: sampling without prefetch\n");
    if (dev != Device::cpu && root && !a.quiet)
      std::printf("mini-batches: sampled on %s\n", placement_description(batches->placement));
    settings["sampling"] = batches->placement == BatchPlacement::device ? "cuda" : "cpu";
    settings["prefetch"] = batches->loader->options().prefetch;
    settings["steps_per_epoch"] = batches->loader->steps_per_epoch();
    trainer.set_minibatch(batches->loader.get());
  }
  TrainResult res = trainer.run([&](const EpochStats& s) {
    if (!root) return;
    if (!a.quiet) {
      std::printf("epoch %4d  loss %.4f  train %.4f  val %.4f  %7.1f ms", s.epoch, s.loss,
                  s.train_acc, s.val_acc, s.time_ms);
      if (multi) print_split(s);
      if (mb)
        std::printf("  [%lld steps, sampling %.1f ms, %.1f hidden]", (long long)s.steps,
                    s.sample_ms, std::max(0.0, s.sample_ms - s.sample_wait_ms));
      std::printf("\n");
    }
    if (log) {
      nlohmann::json j = {{"epoch", s.epoch},         {"loss", s.loss},
                          {"train_acc", s.train_acc}, {"val_acc", s.val_acc},
                          {"test_acc", s.test_acc},   {"eval_ms", s.eval_ms}};
      j.update(split_json(s));
      if (mb) {
        j["steps"] = s.steps;
        j["sample_ms"] = s.sample_ms;
        j["sample_wait_ms"] = s.sample_wait_ms;
        j["sample_hidden_ms"] = std::max(0.0, s.sample_ms - s.sample_wait_ms);
        j["sampled_edges"] = s.sampled_edges;
        j["sample_bytes_sent"] = s.sample_bytes;
      }
      log->line(j.dump());
    }
  });
  if (root && res.stopped_early)
    std::printf("stopped at epoch %d: no better validation accuracy for %d epochs (--patience)\n",
                res.last_epoch, a.train.patience);
  if (root) {
    // An empty set (--train-frac 1, --val-frac 0, or split files without it) has no accuracy:
    // printing 0 would read as a result.
    const NodeTask& task = setup->task;
    if (task.global_test > 0)
      std::printf("test accuracy %.4f ", res.test_acc);
    else
      std::printf("no test vertices, no test accuracy ");
    if (task.global_val > 0)
      std::printf("(best val %.4f at epoch %d)", res.best_val_acc, res.best_epoch);
    else
      std::printf("(no validation vertices: the last epoch's parameters)");
    std::printf(", median epoch %.2f ms\n", res.median_epoch_ms);
  }

  // The model holds the best-validation parameters, those the test used.
  const std::vector<int64_t> ids(part.original_ids.begin(),
                                 part.original_ids.begin() + int64_t(part.n_owned));
  if (!a.predictions.empty())
    write_class_predictions(a.predictions, trainer.predict().to(Device::cpu), ids, comm);
  if (!a.embeddings.empty()) {
    NoGradGuard no_grad;
    ForwardContext ctx{*setup->graph, false, a.train.seed, 0};
    write_embeddings(a.embeddings, model.embed(ctx, setup->task.features).value().to(Device::cpu),
                     ids, comm);
  }
  if (log) {
    const NodeTask& task = setup->task;
    nlohmann::json j = {
        {"final", true},
        {"test_acc", task.global_test > 0 ? nlohmann::json(res.test_acc) : nullptr},
        {"best_val_acc", task.global_val > 0 ? nlohmann::json(res.best_val_acc) : nullptr},
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
    if (mb) {
      j["median_sample_ms"] = res.median_sample_ms;
      j["median_sample_wait_ms"] = res.median_sample_wait_ms;
    }
    log->line(j.dump());
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
  // Layers the program registered (dgnn::register_layer before dgnn::cli_main) join the
  // static models.
  std::vector<std::string> models = builtin_model_names();
  std::string registered;
  for (const std::string& name : registered_layer_names()) {
    models.push_back(name);
    registered += ", " + name;
  }
  cmd->add_option("--model", a->model,
                  "Layer type (static: gcn, sage, gin, gat" + registered +
                      "; temporal: evolvegcn-o, evolvegcn-h, gcrn, tgcn)")
      ->check(CLI::IsMember(models));
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
  cmd->add_option("--epochs", a->train.epochs, "Training epochs")
      ->check(positive())
      ->capture_default_str();
  cmd->add_option("--seed", a->train.seed, "Seed for initialisation and dropout")
      ->check(non_negative())
      ->capture_default_str();
  cmd->add_option("--save", a->train.save, "Write a checkpoint after the last epoch");
  cmd->add_option("--save-every", a->train.save_every,
                  "Also write the --save checkpoint after every N-th epoch (a crash loses at "
                  "most N epochs)");
  cmd->add_option("--load", a->train.load, "Resume from a checkpoint (continues to --epochs)");
  cmd->add_option("--patience", a->train.patience,
                  "Stop after N epochs without a better validation score (0: train all "
                  "--epochs)");
  cmd->add_option("--embeddings", a->embeddings,
                  "Write the final vertex embeddings as .npy, rows in ascending input id "
                  "(the ids beside it, FILE.ids.txt)");
  cmd->add_option("--log-json", a->log_json, "Write one JSON object per epoch and a final line");
  cmd->add_option("--predictions", a->predictions,
                  "Write 'vertex predicted_class' per vertex, in the input's vertex ids");
  cmd->add_option("--device", a->device, "cpu or cuda")->capture_default_str();
  cmd->add_option("--comm", a->comm,
                  "GPU ranks (--device cuda under mpirun): nccl, mpi (buffers staged through "
                  "host memory; ranks may share a GPU), or auto (nccl when built and every rank "
                  "has its own GPU)")
      ->check(CLI::IsMember({"auto", "mpi", "nccl"}))
      ->capture_default_str();
  cmd->add_option("--parts", a->parts,
                  "Partition the vertices on the fly into this many parts, one per rank (must "
                  "equal the MPI rank count; the default under mpirun; temporal graphs: the "
                  "vertex strategy)");
  cmd->add_option("--partitioner", a->partitioner,
                  "metis, random, hash or range: how the vertices are partitioned")
      ->check(CLI::IsMember({"metis", "random", "hash", "range"}))
      ->capture_default_str();
  cmd->add_option("--snapshot-groups", a->snapshot_groups,
                  "Temporal graphs, vertex strategy with METIS: also balance each of this many "
                  "groups of consecutive snapshots (0: the union graph's vertices only; default "
                  "min(snapshots, 16))")
      ->check(CLI::Range(0, 1 << 20));
  cmd->add_option("--partition", a->partition_dir,
                  "A directory written by `dgnn partition`: each rank reads only its part");
  cmd->add_flag("--no-overlap", a->no_overlap,
                "Wait for halo rows before aggregating (to measure what the overlap saves)");
  cmd->add_option("--batch-size", a->batch_size,
                  "Mini-batch training: seeds per step (per rank under MPI), neighbours sampled "
                  "per layer (--fanouts); evaluation stays full-graph")
      ->each([a](const std::string&) { a->batch_size_given = true; });
  cmd->add_option("--fanouts", a->fanouts,
                  "Neighbours sampled per vertex, one per layer, input layer first, -1 = all "
                  "(e.g. 10,25; default: all)")
      ->each([a](const std::string&) { a->fanouts_given = true; });
  cmd->add_flag("--replace", a->replace, "Sample neighbours with replacement");
  cmd->add_flag("--no-prefetch", a->no_prefetch,
                "Sample each batch when it is needed instead of on a background thread one "
                "step ahead (to measure what the prefetch hides)");
  cmd->add_option("--threads", a->threads, "OpenMP threads (default: all cores)");
  cmd->add_flag("--quiet", a->quiet, "Only print the final line");
  add_snapshot_options(cmd, a->snapshots);
  cmd->add_option("--task", a->task,
                  "Temporal task: link (prediction of the next snapshot's edges), edge "
                  "(classification by weight sign), node (vertex labels, from the embeddings "
                  "after the last snapshot) or forecast (each vertex's signal --horizon steps "
                  "ahead from its last --lags: a PyG-Temporal .json, or signals.npy)")
      ->check(CLI::IsMember({"link", "edge", "node", "forecast"}))
      ->capture_default_str();
  cmd->add_option("--lags", a->lags, "--task forecast: past steps of the signal a vertex sees")
      ->capture_default_str();
  cmd->add_option("--horizon", a->horizon,
                  "--task forecast: steps ahead of the last lag that are predicted")
      ->capture_default_str();
  cmd->add_option("--signals", a->signals,
                  "--task forecast: the signal, .npy [steps, vertices] or [steps, vertices, "
                  "channels] (default: signals.npy of the dataset folder)");
  cmd->add_option("--strategy", a->strategy,
                  "Temporal, several ranks: vertex (one partition, halo per snapshot, state stays "
                  "with its owner) or snapshot")
      ->check(CLI::IsMember({"vertex", "snapshot"}))
      ->capture_default_str();
  cmd->add_option("--bptt", a->bptt,
                  "Temporal: snapshots per back-propagation window (0 = the whole training span)")
      ->capture_default_str();
  cmd->add_option("--neg-train", a->neg_train, "Temporal: sampled non-edges per edge in training")
      ->capture_default_str();
  cmd->add_option("--neg-eval", a->neg_eval,
                  "Temporal: sampled non-edges per edge in validation and test, or 'all': score "
                  "every vertex pair of each step (EvolveGCN's protocol; --task link)")
      ->capture_default_str();
  cmd->add_option("--eval-protocol", a->eval_protocol,
                  "Temporal link prediction: evolvegcn (MRR per source over the step's samples) "
                  "or tgb (each edge against its own --neg-eval negatives, half historical: the "
                  "Temporal Graph Benchmark's MRR, which then selects the model)")
      ->capture_default_str();
  cmd->get_option("--train-frac")->each([a](const std::string&) { a->train_frac_given = true; });
  cmd->get_option("--val-frac")->each([a](const std::string&) { a->val_frac_given = true; });
  cmd->callback([a, cmd] {
    a->data.seed = a->train.seed;
    if (!a->data.graph.empty() && !std::filesystem::exists(a->data.graph))
      throw OptionError("--graph " + a->data.graph + ": no such file or directory");
    if (!a->quiet) a->data.edges.progress = terminal_progress("loading " + a->data.graph);
    // An option the chosen path does not read is refused, not silently ignored.
    auto refuse = [cmd](const std::vector<const char*>& names, const std::string& why) {
      for (const char* n : names)
        if (cmd->get_option(n)->count() > 0) throw OptionError(std::string(n) + ": " + why);
    };
    refuse_input_options(cmd, a->data.graph);
    if (a->train.optimizer != "sgd") refuse({"--momentum"}, "is for --optimizer sgd");
    if (a->parts < 0 || (a->parts == 0 && cmd->get_option("--parts")->count() > 0))
      throw OptionError("--parts must be the MPI rank count (at least 1), got " +
                        std::to_string(a->parts));
    if (a->task != "forecast")
      refuse({"--lags", "--horizon", "--signals"}, "for --task forecast only");
    if (a->task == "forecast") {
      if (a->batch_size_given || a->fanouts_given)
        throw OptionError(std::string(a->batch_size_given ? "--batch-size" : "--fanouts") +
                          ": mini-batch training is for static node classification");
      refuse({"--dropout", "--partition", "--no-overlap", "--replace", "--no-prefetch",
              "--train-ids", "--val-ids", "--test-ids", "--generate-features", "--feature-dim",
              "--labels", "--num-classes", "--neg-train", "--neg-eval", "--eval-protocol"},
             "not used by --task forecast");
      if (a->strategy == "snapshot")
        refuse({"--parts", "--partitioner", "--snapshot-groups"},
               "the snapshot strategy gives each rank whole steps and partitions no vertices "
               "(--strategy vertex does)");
      if (is_signal_json(a->data.graph))
        refuse({"--signals", "--time-col", "--weight-col", "--src-col", "--dst-col",
                "--snapshot-seconds", "--snapshots", "--window", "--cumulative", "--directed",
                "--self-loops"},
               "a PyG-Temporal .json names its edges and signal itself");
      run_train_forecast(*a);
      return;
    }
    if (is_signal_json(a->data.graph))
      throw OptionError("--graph " + a->data.graph +
                        ": a PyG-Temporal signal file; train on it with --task forecast");
    if (is_temporal_input(a->data.graph, a->data.edges, a->snapshots)) {
      if (a->batch_size_given || a->fanouts_given)
        throw OptionError(std::string(a->batch_size_given ? "--batch-size" : "--fanouts") +
                          ": mini-batch training is for static graphs (this input has a time "
                          "column)");
      refuse({"--dropout", "--partition", "--no-overlap", "--replace", "--no-prefetch",
              "--train-ids", "--val-ids", "--test-ids", "--generate-features", "--feature-dim"},
             "not used by temporal training (this input has a time column)");
      // --parts and --partitioner mean what they mean for static graphs: the vertex partition
      // (one part per rank), which the snapshot strategy does not make.
      if (a->strategy == "snapshot")
        refuse({"--parts", "--partitioner", "--snapshot-groups"},
               "the snapshot strategy gives each rank whole snapshots and partitions no "
               "vertices (--strategy vertex does)");
      if (a->partitioner != "metis")
        refuse({"--snapshot-groups"},
               "balances groups of snapshots with METIS (this run uses --partitioner " +
                   a->partitioner + ")");
      if (a->task != "node")
        refuse({"--labels", "--num-classes"},
               "not used by --task " + a->task + " (it is for --task node)");
      else
        refuse({"--neg-train", "--neg-eval", "--eval-protocol"},
               "not used by --task node (it scores vertices, not sampled non-edges)");
      run_train_temporal(*a);
    } else {
      refuse({"--task", "--strategy", "--bptt", "--neg-train", "--neg-eval", "--eval-protocol",
              "--snapshot-groups"},
             "for temporal graphs only (give the time column with --time-col)");
      run_train(*a);
    }
  });
}

}  // namespace dgnn::cli
