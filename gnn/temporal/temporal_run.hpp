#pragma once
// A whole temporal run from a program: the graph read on rank 0 and sent to the others, the
// strategy's share of it on each rank, the model, the link / edge head and the trainer, in one
// object. `dgnn train` on a temporal graph is this plus parsing and printing:
//
//   dgnn::Communicator& comm = dgnn::world();
//   dgnn::TemporalRunConfig cfg;
//   cfg.model = "gcrn";
//   cfg.strategy = "vertex";                      // or "snapshot"
//   cfg.train.epochs = 20;
//   dgnn::TemporalRun run([] { return dgnn::load_temporal("events.csv", edge_opts, snap_opts); },
//                         cfg, comm);
//   dgnn::TemporalResult r = run.train();         // on 1 or P ranks: the same numbers
//
// Every call is collective.
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "dgnn/comm/communicator.hpp"
#include "dgnn/gnn/temporal/temporal_dist.hpp"
#include "dgnn/gnn/temporal/temporal_trainer.hpp"
#include "dgnn/gnn/train/epoch_report.hpp"
#include "dgnn/partition/partition.hpp"

namespace dgnn {

// ---- the graph on every rank --------------------------------------------------------------

// The temporal graph `read` makes, on every rank: one process reads it; on several, rank 0 alone
// reads it and sends the others its events and ids, then, per rank, the snapshots need(rank,
// step) asks for, each whole or as a difference (move_snapshots; counted in `moves` on rank 0).
// `make_need` runs once the metadata arrived (it may use g's events and `nnz`, every snapshot's
// entry count). Ranks that need some steps only get `held` (see move_snapshots).
struct LoadedTemporal {
  TemporalGraph g;
  std::vector<int64_t> nnz;  // every whole snapshot's entry count (several ranks)
  std::vector<Csr> held;
  std::vector<int32_t> part;  // load_temporal_vertex_shares: every vertex's rank
  SnapshotMoves moves;
  double ms = 0;
};
LoadedTemporal load_temporal_on_ranks(
    const std::function<TemporalGraph()>& read, Communicator& comm,
    const std::function<std::function<bool(int, int)>(const LoadedTemporal&)>& make_need);

// load_temporal_on_ranks with every snapshot sent to every rank (every rank then holds the whole
// graph; the runs' vertex strategy uses load_temporal_vertex_shares instead).
LoadedTemporal load_temporal_everywhere(const std::function<TemporalGraph()>& read,
                                        Communicator& comm);

// The vertex strategy's graph on several ranks: rank 0 reads it and partitions it (`popt`, its
// parts set to the rank count; partition_temporal), every rank gets the events, ids and the
// partition (`part`), and each keeps only its vertex_share of every snapshot as base +
// differences (move_vertex_shares; rank 0 too, once it has sent the others theirs). On one
// process, the whole graph and every vertex on rank 0. make_temporal_rank(g, features, part, ...)
// then cuts the rank's views.
LoadedTemporal load_temporal_vertex_shares(const std::function<TemporalGraph()>& read,
                                           Communicator& comm, PartitionOptions popt);

// This rank's share of every snapshot under the vertex strategy from a graph every rank holds
// whole (load_temporal_everywhere): rank 0 partitions (`popt`, its parts set to the rank count;
// partition_temporal) and tells the others; every rank cuts its local snapshots and halo plans.
// Features and halo exchanges are on `dev`.
std::unique_ptr<TemporalRank> vertex_partition_rank(const TemporalGraph& g,
                                                    const std::vector<Var>& features,
                                                    PartitionOptions popt, Communicator& comm,
                                                    Device dev);

// ---- a run --------------------------------------------------------------------------------

struct TemporalRunConfig {
  std::string model = "gcrn";  // evolvegcn-o, evolvegcn-h, gcrn or tgcn
  // A model of the program's own instead (dims = {features, hidden...}); it must implement
  // TemporalModel::window to run under the snapshot strategy. `model` then names it in logs
  // and checkpoints.
  std::function<std::unique_ptr<TemporalModel>(const std::vector<int64_t>& dims)> make_model;
  int layers = 2;
  int64_t hidden = 16;              // every layer's width, and the head's hidden layer
  std::string strategy = "vertex";  // vertex | snapshot (on one process: both run)
  PartitionOptions partition;       // vertex strategy (parts: the rank count)
  Device device = Device::cpu;      // CUDA with several ranks needs a device communicator attached
  TemporalOptions train;            // task, epochs, optimiser, checkpoints, negatives, split
  // Static vertex features (row i = vertex of dense id i, *dim columns), made once the graph's
  // ids are known, on every rank; unset or empty: one-hot degree buckets per snapshot.
  std::function<std::vector<float>(const TemporalGraph& g, int64_t* dim)> features;
};

class TemporalRun {
 public:
  // Reads (rank 0), sends and sets up everything; OptionError for options that do not fit the
  // graph (too many ranks, an empty split, EvolveGCN-H under the vertex strategy on P ranks).
  TemporalRun(const std::function<TemporalGraph()>& read, TemporalRunConfig cfg,
              Communicator& comm);
  ~TemporalRun();
  TemporalRun(const TemporalRun&) = delete;  // the trainer holds references into it
  TemporalRun& operator=(const TemporalRun&) = delete;

  // Trains (the loop: resume, checkpoints, patience) and tests; the model then holds the
  // best-validation parameters.
  TemporalResult train(const std::function<void(const EpochRecord&)>& on_epoch = {});
  // How an epoch is printed and logged (gnn/train/epoch_report.hpp).
  EpochFormat epoch_format() const;

  LinkPredictionTrainer& trainer() { return *trainer_; }  // test_pairs, final_embeddings, ...
  TemporalModel& model() { return *model_; }
  // Every rank: the vertex count, ids and events; the snapshots where this rank holds them
  // (vertex strategy on several ranks: its vertex_share of each, rank 0's too).
  const TemporalGraph& graph() const { return in_.g; }
  int64_t feature_dim() const { return feature_dim_; }
  bool static_features() const { return static_dim_ > 0; }
  const SnapshotMoves& moves() const { return in_.moves; }  // rank 0's count
  double load_ms() const { return in_.ms; }
  // GPU: the snapshots uploaded as differences (summed over ranks); none on the CPU.
  const std::optional<SnapshotUploads>& uploads() const { return uploads_; }

 private:
  TemporalRunConfig cfg_;
  Communicator& comm_;
  LoadedTemporal in_;
  int64_t static_dim_ = 0, feature_dim_ = 0;
  std::vector<std::unique_ptr<GraphView>> graphs_;  // one process, vertex "strategy"
  std::unique_ptr<TemporalRank> rank_data_;
  std::unique_ptr<SnapshotRank> snap_data_;
  std::vector<Var> features_;
  std::unique_ptr<TemporalModel> model_;
  std::unique_ptr<PairClassifier> head_;
  std::optional<SnapshotUploads> uploads_;
  std::unique_ptr<LinkPredictionTrainer> trainer_;
};

}  // namespace dgnn
