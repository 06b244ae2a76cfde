#pragma once
// A whole static node-classification run from a program, full-graph or mini-batch: the dataset
// read on rank 0, partitioned and scattered (or each rank's part read from a partition folder),
// the rank's graph view and halo exchange, the model, the trainer and the mini-batch pipeline, in
// one object. `dgnn train` on a static graph is this plus parsing and printing:
//
//   dgnn::StaticRunConfig cfg;
//   cfg.layer = dgnn::static_layer("gcn", 0.5f, &cfg.model);
//   cfg.train.epochs = 200;
//   dgnn::StaticRun run([] { return dgnn::load_dataset(opts); }, cfg, comm);
//   dgnn::TrainResult r = run.train();          // on 1 or P ranks: the same numbers
//
// Every call is collective.
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "dgnn/comm/communicator.hpp"
#include "dgnn/gnn/models/deep.hpp"
#include "dgnn/gnn/models/layers.hpp"
#include "dgnn/gnn/train/distributed.hpp"
#include "dgnn/gnn/train/epoch_report.hpp"
#include "dgnn/gnn/train/minibatch_setup.hpp"
#include "dgnn/gnn/train/trainer.hpp"
#include "dgnn/graph/dataset.hpp"
#include "dgnn/partition/dist_load.hpp"
#include "dgnn/partition/partition.hpp"

namespace dgnn {

// The layer `name` names: one registered by the program (register_layer) or a built-in one
// (gcn, sage, gin, gat: OptionError for others), with its aggregation; *canonical gets the name
// logs and checkpoints record.
LayerSpec static_layer(const std::string& name, float dropout, std::string* canonical);

// Divides each row of a rows x dim matrix of non-negative features by its sum (rows of zeros are
// left as they are). Returns -1, or the first row holding a negative (or NaN) entry, and then
// changes nothing.
int64_t normalize_feature_rows(std::vector<float>& features, int64_t dim);

// The metrics a node-classification epoch shows (train, val and test accuracy; the validation
// loss printed under --select loss, logged always): StaticRun's and PipelineRun's.
std::vector<ShownMetric> node_epoch_metrics(const std::string& select);

struct StaticRunConfig {
  LayerSpec layer;            // stacked `layers` times (static_layer)
  std::string model = "gcn";  // its name
  int layers = 2;
  int64_t hidden = 16;
  float dropout = 0.5f;
  // A deep model (GCNII, residual GCN; gnn/models/deep.hpp) instead of `layer` stacked: its
  // layers, hidden width and dropout are these (`layers`, `hidden` and `dropout` above are not
  // read). Full-graph training only.
  std::optional<DeepModelOptions> deep;
  // Each vertex's feature row divided by its sum (rows of zeros kept; a negative feature is an
  // OptionError naming the vertex): the GCN and GCNII papers' preprocessing of Planetoid's
  // bag-of-words features (PyG's NormalizeFeatures on non-negative features).
  bool normalize_features = false;
  PartitionOptions partition;  // several ranks (parts: the rank count)
  // Read each rank's part from this folder (dgnn partition) instead of partitioning; rank 0's
  // source_hash() (the dataset's, "" for none) must match the folder's. Called on every rank,
  // so that it may be collective (dataset_source_hash with the communicator: each rank hashes
  // its 1/P of the large files).
  std::string partition_dir;
  std::function<std::string()> source_hash;
  // With several ranks and no partition folder: the dataset's files, read in shards by every
  // rank and partitioned on the blocks (partition/dist_load.hpp), so that no rank holds the
  // whole graph; `read` is then not called (an OGB folder too). Unset (a generated graph):
  // rank 0 reads with `read` and sends every rank its part.
  std::optional<DatasetOptions> shards;
  bool overlap = true;  // halo exchange overlapped with the interior's aggregation
  // Bound on the halo buffers of an aggregation, in bytes (HaloExchange::set_piece_rows,
  // halo_piece_rows): 0 exchanges whole, < 0 (auto) streams where the whole halo would outgrow
  // the rank's owned rows.
  int64_t halo_memory = -1;
  std::optional<MiniBatchOptions> minibatch;  // mini-batch training with neighbour sampling
  Device device = Device::cpu;  // CUDA with several ranks needs a device communicator attached
  TrainOptions train;
};

class StaticRun {
 public:
  // `read` runs on rank 0 only (unless a partition folder is given), before the partition.
  StaticRun(const std::function<Dataset()>& read, StaticRunConfig cfg, Communicator& comm);
  ~StaticRun();
  StaticRun(const StaticRun&) = delete;  // the trainer holds references into it
  StaticRun& operator=(const StaticRun&) = delete;

  // Trains (the loop: resume, checkpoints, patience) and tests; the model then holds the
  // best-validation parameters.
  TrainResult train(const std::function<void(const EpochRecord&)>& on_epoch = {});
  EpochFormat epoch_format() const;  // how an epoch is printed and logged

  Trainer& trainer() { return *trainer_; }  // predict, evaluate, ...
  NodeModel& model() { return *model_; }
  const RankSetup& setup() const { return *setup_; }
  const NodeTask& task() const { return setup_->task; }
  // The mini-batch pipeline (null for full-graph training).
  const RankMiniBatches* minibatches() const { return batches_.get(); }
  // What the sharded load did (set when the dataset was read in shards).
  const std::optional<ShardedLoad>& sharded_load() const { return sharded_; }
  // The rows of a halo piece on this rank (0: the halo is exchanged whole; --halo-memory).
  int64_t halo_piece_rows() const { return halo_piece_rows_; }
  // The input ids of this rank's owned vertices (the rows of predict() and embeddings()).
  std::vector<int64_t> row_ids() const;
  // The owned vertices' embeddings (the last layer's input) with the current parameters.
  Tensor embeddings();

 private:
  StaticRunConfig cfg_;
  std::optional<ShardedLoad> sharded_;
  int64_t halo_piece_rows_ = 0;
  std::unique_ptr<RankSetup> setup_;
  std::unique_ptr<NodeModel> model_;
  std::unique_ptr<Trainer> trainer_;
  std::unique_ptr<RankMiniBatches> batches_;
};

}  // namespace dgnn
