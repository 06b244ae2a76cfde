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
  // load_temporal_sharded: every rank read its share of the file (no moves); the bytes of text
  // this rank parsed, and the most any rank parsed.
  bool sharded = false;
  int64_t text_bytes = 0, max_text_bytes = 0;
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
// differences (move_vertex_shares; rank 0 too, once it has sent the others theirs) and its
// share of the events (shard_events). On one
// process, the whole graph and every vertex on rank 0. make_temporal_rank(g, features, part, ...)
// then cuts the rank's views.
LoadedTemporal load_temporal_vertex_shares(const std::function<TemporalGraph()>& read,
                                           Communicator& comm, PartitionOptions popt);

// What load_temporal_vertex_shares(load_temporal(path, opt, snap), comm, popt) gives each rank
// (the same part, ids, events, shares as base + differences, nnz; no moves), with no rank reading
// or holding the whole graph: each parses its share of the edge list (a byte range, or chunks of
// a .gz dealt by rank 0), ids are numbered by a sample sort, the union graph is partitioned on
// the blocks of dense ids (partition_blocks: METIS gathers the structure alone to rank 0,
// PT-Scotch cuts it in place), and every edge moves to the ranks of its ends, whose events are
// then the rank's share (shard_events), as load_temporal_vertex_shares leaves them. Collective;
// errors as load_temporal's (a bad line: file:LINE, one error for the job).
// PT-Scotch: the parts are PT-Scotch's on the blocks, not sequential Scotch's on rank 0.
LoadedTemporal load_temporal_sharded(const std::string& path, const EdgeListOptions& opt,
                                     const SnapshotOptions& snap, Communicator& comm,
                                     const PartitionOptions& popt);
// What load_temporal_on_ranks(load_temporal(path, opt, snap), comm, make_need) gives each rank
// (the ids, nnz, and `held`: snapshot s whole where need(rank, s), an empty Csr elsewhere; g's
// own base and differences empty on every rank, rank 0 included; no moves), with no rank
// reading or holding the whole graph: each parses its share of the edge list (as
// load_temporal_sharded), the entry counts and events come from the edges gathered by pair, and
// each edge then moves to the ranks that need a snapshot holding its bucket (--cumulative: every
// later step's rank). The events of step s are whole on the ranks keep_events(rank, s) names
// (unset: every rank, every step); elsewhere the step is a share holding none, with the whole
// step's counts (SnapshotEvents::Whole). make_need sees every step as such a share. The
// snapshot strategy's read. Collective; errors as load_temporal's.
LoadedTemporal load_temporal_steps_sharded(
    const std::string& path, const EdgeListOptions& opt, const SnapshotOptions& snap,
    Communicator& comm,
    const std::function<std::function<bool(int, int)>(const LoadedTemporal&)>& make_need,
    const std::function<bool(int, int)>& keep_events = {});
// load_temporal_sharded's partition alone, for `dgnn partition` on the ranks of a job: the
// same reading and partitioner, every vertex's part on every rank, and in `info` (when given)
// the graph's counts and the union graph's cut and halo rows. popt.from_dir is not read.
std::vector<int32_t> partition_temporal_sharded(const std::string& path, const EdgeListOptions& opt,
                                                const SnapshotOptions& snap, Communicator& comm,
                                                const PartitionOptions& popt,
                                                TemporalPartitionInfo* info = nullptr);
// Whether load_temporal_sharded may read `path`; otherwise *why says what sends it to rank 0's
// whole read (DGNN_TEMPORAL_READ=rank0 in the environment, to compare the two).
bool can_load_temporal_sharded(const std::string& path, const EdgeListOptions& opt,
                               std::string* why = nullptr);

// This rank's share of every snapshot under the vertex strategy from a graph every rank holds
// whole (load_temporal_everywhere): rank 0 partitions (`popt`, its parts set to the rank count;
// partition_temporal) and tells the others; every rank cuts its local snapshots and halo plans.
// Features and halo exchanges are on `dev`.
std::unique_ptr<TemporalRank> vertex_partition_rank(const TemporalGraph& g,
                                                    const std::vector<Var>& features,
                                                    PartitionOptions popt, Communicator& comm,
                                                    Device dev);

// A program's static vertex features for the vertices `rows` only (dense ids, ascending;
// rows.size() x *dim, row i = vertex rows[i]), empty for none.
using FeatureRowsFn = std::function<std::vector<float>(
    const TemporalGraph& g, const std::vector<int64_t>& rows, int64_t* dim)>;

// The vertex strategy's feature matrices of `rank`'s own vertices on several ranks, appended to
// rank.features on `dev`: its rows read by `rows` when that is set (an error any rank throws is
// the job's; *static_dim becomes the width, the same on every rank), else cut from `statics`
// (every vertex's, *static_dim wide; emptied), else degree buckets from its shares.
// *feature_dim: the matrices' width. Collective when `rows` is set.
void add_rank_features(const TemporalGraph& g, TemporalRank& rank, const FeatureRowsFn& rows,
                       std::vector<float>& statics, int64_t* static_dim, Communicator& comm,
                       Device dev, int64_t* feature_dim);

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
  // The same features for the vertices `rows` only (dense ids, ascending; rows.size() x *dim,
  // row i = vertex rows[i]), empty for none: when set, each rank of the vertex strategy on
  // several ranks reads its own vertices' rows with it instead of calling `features` (which
  // makes every vertex's). Called on every such rank; an error any rank throws is one error of
  // the job.
  FeatureRowsFn feature_rows;
  // The file `read` loads with load_temporal, when it is one: the vertex strategy on several
  // ranks then reads it in shards (load_temporal_sharded) instead of calling `read` on rank 0.
  struct Source {
    std::string path;
    EdgeListOptions edges;
    SnapshotOptions snapshots;
  };
  std::optional<Source> source;
  // Keep the graph's snapshots (base + differences, or this rank's shares) once the model's
  // views of them are made: run.graph() then still walks them. Off, they are dropped (the views
  // hold their own copies; every rank saved its share's size: 35 MB a rank of the 100k x 30
  // evolving SBM at 4 ranks), and run.topology() says what they were.
  bool keep_snapshots = false;
};

// What the graph's snapshots took as this rank held them (TemporalRun::topology).
struct TopologyStats {
  int64_t diff_bytes = 0, full_bytes = 0;  // TemporalGraph::diff_bytes() and full_bytes()
  int steps = 0, whole_steps = 0;          // differences, and those stored whole
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
  // (vertex strategy on several ranks: its vertex_share of each, rank 0's too, and its share
  // of the events, shard_events) when TemporalRunConfig::keep_snapshots asked to keep them.
  const TemporalGraph& graph() const { return in_.g; }
  // Every vertex's rank (vertex strategy on several ranks; empty otherwise).
  const std::vector<int32_t>& part() const;
  const TopologyStats& topology() const { return topology_; }
  int64_t feature_dim() const { return feature_dim_; }
  bool static_features() const { return static_dim_ > 0; }
  const SnapshotMoves& moves() const { return in_.moves; }  // rank 0's count
  double load_ms() const { return in_.ms; }
  // Whether the graph was read in shards (load_temporal_sharded), and the text bytes parsed.
  bool sharded() const { return in_.sharded; }
  int64_t text_bytes() const { return in_.text_bytes; }
  int64_t max_text_bytes() const { return in_.max_text_bytes; }
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
  TopologyStats topology_;
  std::unique_ptr<LinkPredictionTrainer> trainer_;
};

}  // namespace dgnn
