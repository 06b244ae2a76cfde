// A static node-classification run, assembled (gnn/train/static_run.hpp).
#include "dgnn/gnn/train/static_run.hpp"

#include <algorithm>
#include <cstdio>

#include "dgnn/common/error.hpp"
#include "dgnn/common/memory.hpp"

namespace dgnn {

LayerSpec static_layer(const std::string& name, float dropout, std::string* canonical) {
  if (const LayerSpec* spec = find_registered_layer(name)) {
    *canonical = name;
    return *spec;
  }
  const ModelKind kind = parse_model_kind(name);
  *canonical = model_kind_name(kind);
  // GAT drops attention coefficients with the same probability as features (as its paper); it
  // runs over the GCN structure (self loops).
  const Norm norm = kind == ModelKind::sage  ? Norm::mean
                    : kind == ModelKind::gin ? Norm::sum
                                             : Norm::gcn;
  return {builtin_layer(kind, dropout), {norm}, kind == ModelKind::gat};
}

int64_t normalize_feature_rows(std::vector<float>& features, int64_t dim) {
  if (dim <= 0) return -1;
  const int64_t n = int64_t(features.size()) / dim;
  for (int64_t r = 0; r < n; ++r) {
    const float* row = features.data() + r * dim;
    for (int64_t c = 0; c < dim; ++c)
      if (!(row[c] >= 0)) return r;  // negative or NaN: refused before anything is divided
  }
#pragma omp parallel for schedule(static)
  for (int64_t r = 0; r < n; ++r) {
    float* row = features.data() + r * dim;
    double sum = 0;
    for (int64_t c = 0; c < dim; ++c) sum += row[c];
    if (sum == 0) continue;
    const double inv = 1.0 / sum;
    for (int64_t c = 0; c < dim; ++c) row[c] = float(row[c] * inv);
  }
  return -1;
}

namespace {

// This rank's part: read from a partition folder, read in shards by every rank, or cut from the
// dataset rank 0 reads (one part on one process).
LocalPart load_part(const std::function<Dataset()>& read, const StaticRunConfig& cfg,
                    Communicator& comm, std::optional<ShardedLoad>& sharded) {
  if (!cfg.partition_dir.empty()) {
    // Every rank hashes its share of the sources (64 ranks must not read the whole dataset 64
    // times, nor one rank read it whole), and rank 0's answer is everyone's.
    std::string hash = cfg.source_hash ? cfg.source_hash() : "";
    int64_t len = int64_t(hash.size());
    comm.broadcast(&len, 8, 0);
    hash.resize(size_t(len));
    comm.broadcast(hash.data(), len, 0);
    return read_partition_part(cfg.partition_dir, comm.rank(), comm.size(), hash);
  }
  if (comm.size() > 1 && cfg.shards) {
    sharded.emplace();
    return load_sharded_part(*cfg.shards, cfg.partition, comm, &*sharded);
  }
  // Only rank 0 reads the graph; it partitions and sends every other rank its part.
  std::unique_ptr<Dataset> data;
  if (comm.rank() == 0) {
    data = std::make_unique<Dataset>(read());
    if (data->labels.empty()) throw OptionError("the dataset has no labels (give --labels FILE)");
  }
  if (comm.size() == 1)
    return extract_part(*data, std::vector<int32_t>(size_t(data->num_vertices()), 0), 1, 0);
  return partition_and_scatter(data.get(), cfg.partition, comm);
}

}  // namespace

StaticRun::StaticRun(const std::function<Dataset()>& read, StaticRunConfig cfg,
                     Communicator& comm)
    : cfg_(std::move(cfg)) {
  if (cfg_.deep) {
    check_deep_options(*cfg_.deep);
    if (cfg_.minibatch)
      throw OptionError(std::string("--model ") + deep_kind_name(cfg_.deep->kind) +
                        " trains on the whole graph (or a rank's part of it): drop --batch-size");
  } else {
    if (cfg_.layers < 1) throw OptionError("--layers must be >= 1");
    if (cfg_.hidden < 1) throw OptionError("--hidden must be >= 1");
    if (!(cfg_.dropout >= 0 && cfg_.dropout < 1)) throw OptionError("--dropout must be in [0, 1)");
    if (!cfg_.layer.factory) throw Error("StaticRunConfig::layer has no factory (static_layer)");
  }
  const Device dev = cfg_.device;
  LocalPart part_here = load_part(read, cfg_, comm, sharded_);
  if (cfg_.normalize_features) {
    const int64_t bad = normalize_feature_rows(part_here.features, part_here.feature_dim);
    if (bad >= 0)
      throw OptionError("--normalize-features: vertex " +
                        std::to_string(size_t(bad) < part_here.original_ids.size()
                                           ? part_here.original_ids[size_t(bad)]
                                           : bad) +
                        " has a negative feature; row normalisation is for non-negative "
                        "features (bag-of-words counts, as Planetoid's)");
  }
  setup_ = make_rank_setup(std::move(part_here), comm, dev);
  setup_->graph->set_overlap(cfg_.overlap);
  const LocalPart& part = setup_->part;
  const int64_t hidden = cfg_.deep ? cfg_.deep->hidden : cfg_.hidden;
  const int64_t widest = std::max<int64_t>({part.feature_dim, hidden, part.num_classes});
  halo_piece_rows_ = agree_piece_rows(
      *setup_->halo, comm,
      dgnn::halo_piece_rows(part.plan, part.n_owned, widest, cfg_.halo_memory));
  std::vector<int64_t> dims{part.feature_dim};
  if (cfg_.deep) {
    // The input layer, the graph layers (each keeping about two rows per vertex for its
    // backward, as the two per layer counted here), the output layer.
    for (int i = 0; i <= cfg_.deep->layers; ++i) dims.push_back(cfg_.deep->hidden);
    dims.push_back(part.num_classes);
    refuse_model_past_memory(dims, part.n_owned, cfg_.deep->hidden, cfg_.deep->layers);
    model_ = make_deep_model(part.feature_dim, part.num_classes, *cfg_.deep);
  } else {
    for (int i = 0; i + 1 < cfg_.layers; ++i) dims.push_back(cfg_.hidden);
    dims.push_back(part.num_classes);
    refuse_model_past_memory(dims, part.n_owned, cfg_.hidden, cfg_.layers);
    model_ = std::make_unique<StackModel>(cfg_.layer.factory, dims, cfg_.dropout);
  }
  model_->reset_parameters(cfg_.train.seed);
  if (dev != Device::cpu) model_->to(dev);  // the features are there already (make_rank_setup)
  trainer_ = std::make_unique<Trainer>(*model_, *setup_->graph, setup_->task, comm, cfg_.train);
  // Mini-batch training (gnn/train/minibatch_setup.hpp says where blocks are sampled).
  if (cfg_.minibatch) {
    batches_ = make_rank_minibatches(*setup_, *cfg_.minibatch, cfg_.layer, dev, comm);
    trainer_->set_minibatch(batches_->loader.get());
  }
}

StaticRun::~StaticRun() = default;

TrainResult StaticRun::train(const std::function<void(const EpochRecord&)>& on_epoch) {
  return trainer_->run(on_epoch);
}

std::vector<int64_t> StaticRun::row_ids() const {
  const LocalPart& part = setup_->part;
  return {part.original_ids.begin(), part.original_ids.begin() + int64_t(part.n_owned)};
}

Tensor StaticRun::embeddings() {
  NoGradGuard no_grad;
  ForwardContext ctx{*setup_->graph, false, cfg_.train.seed, 0};
  return model_->embed(ctx, setup_->task.features).value().to(Device::cpu);
}

std::vector<ShownMetric> node_epoch_metrics(const std::string& select) {
  return {{"train_acc", "train_acc", "  train"},
          {"val_acc", "val_acc", "  val"},
          {"test_acc", "test_acc", ""},
          {"val_loss", "val_loss", select == "loss" ? "  val loss" : ""}};
}

EpochFormat StaticRun::epoch_format() const {
  EpochFormat f;
  f.metrics = node_epoch_metrics(cfg_.train.select);
  if (!cfg_.minibatch) return f;
  f.counts = {"steps", "sampled_edges", "sample_bytes_sent"};
  f.suffix = [](const EpochRecord& r) {
    char buf[128];
    std::snprintf(buf, sizeof buf, "  [%lld steps, sampling %.1f ms, %.1f hidden]",
                  (long long)r.figure("steps"), r.figure("sample_ms"),
                  r.figure("sample_hidden_ms"));
    return std::string(buf);
  };
  return f;
}

}  // namespace dgnn
