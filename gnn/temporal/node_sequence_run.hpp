#pragma once
// A whole run of node classification over snapshots from a program (gnn/temporal/temporal_node.hpp
// says what is learnt): the graph read in shards (a file, `source`) or on rank 0 and sent to the
// others, the vertex strategy's share of it on each rank, the labels' split, the model and the trainer, in one object.
// `dgnn train --task node` on a temporal graph is this plus parsing and printing:
//
//   dgnn::NodeSequenceRunConfig cfg;
//   cfg.model = "gcrn";
//   cfg.labels = [](const dgnn::TemporalGraph& g, int32_t* classes) { ...one per vertex... };
//   cfg.source = dgnn::TemporalRunConfig::Source{path, edge_options, snapshot_options};  // optional
//   dgnn::NodeSequenceRun run([] { return dgnn::load_temporal(...); }, cfg, comm);
//   dgnn::NodeSequenceResult r = run.train();      // on 1 or P ranks: the same numbers
//
// Every call is collective.
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "dgnn/comm/communicator.hpp"
#include "dgnn/gnn/temporal/temporal_node.hpp"
#include "dgnn/gnn/temporal/temporal_run.hpp"
#include "dgnn/gnn/train/epoch_report.hpp"

namespace dgnn {

struct NodeSequenceRunConfig {
  std::string model = "gcrn";  // evolvegcn-o, evolvegcn-h (one rank), gcrn or tgcn
  int layers = 2;
  int64_t hidden = 16;
  std::string strategy = "vertex";  // the only one node classification runs with
  PartitionOptions partition;       // parts: the rank count
  Device device = Device::cpu;
  NodeSequenceOptions train;  // epochs, optimiser, checkpoints, patience, --bptt
  // The labelled vertices' split (seeded by train.seed, by global id: the same on every rank).
  double train_frac = 0.6, val_frac = 0.2;
  // Per vertex (dense id) its class, -1 = unlabelled, and the class count; made on every rank
  // once the graph's ids are known. Required.
  std::function<std::vector<int32_t>(const TemporalGraph& g, int32_t* classes)> labels;
  // On several ranks, when set, instead of `labels` (which then need not be): collective, every
  // vertex's label on rank 0 alone (empty elsewhere; e.g. dist_read::vertex_labels_on_root),
  // *classes on every rank. Rank 0 draws the split and sends each rank its own vertices' labels
  // and sets, so that no other rank holds a label per vertex.
  std::function<std::vector<int32_t>(const TemporalGraph& g, int32_t* classes, Communicator& comm)>
      root_labels;
  // Static vertex features (row i = vertex of dense id i, *dim columns); unset or empty: one-hot
  // degree buckets per snapshot.
  std::function<std::vector<float>(const TemporalGraph& g, int64_t* dim)> features;
  // The same for the vertices `rows` only: when set, each of several ranks reads its own
  // vertices' rows with it instead of calling `features` (TemporalRunConfig::feature_rows).
  FeatureRowsFn feature_rows;
  // The file `read` loads with load_temporal, when it is one: on several ranks it is then read
  // in shards (load_temporal_sharded) instead of by `read` on rank 0.
  std::optional<TemporalRunConfig::Source> source;
};

class NodeSequenceRun {
 public:
  NodeSequenceRun(const std::function<TemporalGraph()>& read, NodeSequenceRunConfig cfg,
                  Communicator& comm);
  ~NodeSequenceRun();
  NodeSequenceRun(const NodeSequenceRun&) = delete;  // the trainer holds references into it
  NodeSequenceRun& operator=(const NodeSequenceRun&) = delete;
  // The checks of the options alone (the constructor's first): OptionError naming the flag.
  static void check(const NodeSequenceRunConfig& cfg, int ranks);

  // Trains and tests; the model and head then hold the best-validation parameters.
  NodeSequenceResult train(const std::function<void(const EpochRecord&)>& on_epoch = {});
  EpochFormat epoch_format() const;  // how an epoch is printed and logged

  NodeSequenceTrainer& trainer() { return *trainer_; }  // predict, embeddings, ...
  TemporalModel& model() { return *model_; }
  const TemporalGraph& graph() const { return in_.g; }
  int64_t feature_dim() const { return feature_dim_; }
  int32_t classes() const { return task_.num_classes; }
  // The labelled vertices in each split, over all ranks.
  int64_t train_count() const { return task_.global_train; }
  int64_t val_count() const { return task_.global_val; }
  int64_t test_count() const { return task_.global_test; }
  // The input ids of this rank's rows (what predict() and embeddings() return).
  const std::vector<int64_t>& row_ids() const { return row_ids_; }
  const SnapshotMoves& moves() const { return in_.moves; }  // rank 0's count
  double load_ms() const { return in_.ms; }
  // Whether the graph was read in shards, and the text bytes parsed (TemporalRun's).
  bool sharded() const { return in_.sharded; }
  int64_t text_bytes() const { return in_.text_bytes; }
  int64_t max_text_bytes() const { return in_.max_text_bytes; }

 private:
  NodeSequenceRunConfig cfg_;
  LoadedTemporal in_;
  int64_t feature_dim_ = 0;
  std::vector<Var> features_;
  std::vector<std::unique_ptr<GraphView>> graphs_;  // one process
  std::unique_ptr<TemporalRank> rank_data_;
  NodeSequenceTask task_;
  std::vector<int64_t> row_ids_;
  std::unique_ptr<TemporalModel> model_;
  std::unique_ptr<NodeSequenceTrainer> trainer_;
};

}  // namespace dgnn
