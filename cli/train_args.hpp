#pragma once
// What `dgnn train` was asked to do, shared by the static (cmd_train.cpp) and temporal
// (cmd_train_temporal.cpp) paths; both write their outputs with AtomicFile
// (graph/atomic_write.hpp).
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "dgnn/comm/communicator.hpp"
#include "dgnn/comm/device_comm.hpp"
#include "dgnn/common/error.hpp"
#include "dgnn/gnn/temporal/temporal_run.hpp"
#include "dgnn/gnn/train/epoch_report.hpp"
#include "dgnn/gnn/train/trainer.hpp"
#include "dgnn/graph/atomic_write.hpp"
#include "dgnn/graph/dataset.hpp"
#include "dgnn/graph/signals.hpp"
#include "dgnn/graph/temporal.hpp"

namespace dgnn::cli {

struct TrainArgs {
  DatasetOptions data;
  std::string model;  // empty: gcn for static graphs, evolvegcn-o for temporal ones
  int layers = 2;
  int64_t hidden = 16;
  float dropout = 0.5f;
  // --model gcnii / resgcn (gnn/models/deep.hpp).
  float alpha = 0.1f, lambda = 0.5f;
  float conv_weight_decay = -1.f;  // not given: --weight-decay
  bool conv_weight_decay_given = false;
  bool normalize_features = false;  // static node classification: rows divided by their sums
  TrainOptions train;
  std::string log_json;
  std::string predictions;
  std::string embeddings;  // --embeddings FILE.npy
  std::string device = "cpu";
  std::string comm = "auto";  // GPU ranks: auto | mpi (staged through the host) | nccl
  int parts = 0;              // 0 = as many as ranks
  std::string partitioner = "metis";
  int snapshot_groups = -1;  // vertex strategy, METIS: see PartitionOptions
  int overpartition = 1;     // vertex strategy, ptscotch: see PartitionOptions
  std::string partition_dir;
  bool no_overlap = false;
  std::string halo_memory = "auto";
  // Mini-batch training with neighbour sampling (static graphs): on when batch_size is given.
  int64_t batch_size = 0;  // 0 = full-batch
  bool batch_size_given = false;
  std::string fanouts;  // "10,25", one per layer; not given = every neighbour in every layer
  bool fanouts_given = false;
  bool replace = false;
  bool no_prefetch = false;
  // Temporal (snapshot) training: used when the input has a time column.
  SnapshotOptions snapshots;
  std::string task = "link";
  int lags = 4;                     // --task forecast: past steps a vertex sees
  int horizon = 1;                  // ... and how far ahead its target is
  std::string signals;              // --signals FILE.npy (else signals.npy in the dataset folder)
  int chunks = 0;
  int stages = 0;  // --strategy pipeline: stages (0: one per rank; fewer: the hybrid)  // --strategy pipeline: chunks streamed through the stages (0: 4 per stage)
  std::string strategy = "vertex";  // vertex | snapshot (distributed temporal training)  // link
                                    // (prediction) on temporal graphs
  int bptt = 0;
  int neg_train = 5;
  std::string neg_eval = "100";  // sampled non-edges per edge, or "all" (every vertex pair)
  std::string eval_protocol = "evolvegcn";  // or tgb (temporal link prediction)
  // --train-frac / --val-frac given: temporal link prediction and edge classification split
  // their steps by them (else 0.7 / 0.1, EvolveGCN's default; the flags' own defaults are for
  // labelled vertices).
  // Each alone: the other keeps the task's default.
  bool train_frac_given = false, val_frac_given = false;
  bool step_fracs_given() const { return train_frac_given || val_frac_given; }
  int threads = 0;
  bool quiet = false;
};

// OpenMP threads for this rank: --threads if given; else, when several ranks share this node
// and OMP_NUM_THREADS is unset, the node's cores divided among them (ranks that each start
// one thread per core oversubscribe the node, and OpenMP's spinning makes that very slow).
void set_threads(int threads);

// The settings every temporal run records (the --log-json final line, checkpoints): input, model,
// optimiser, epochs, --bptt, seed, ranks, strategy, device, partitioner ("none" under the
// snapshot strategy) and threads; each task adds its own.
nlohmann::json temporal_settings(const TrainArgs& a, const std::string& model,
                                 const std::string& task, int ranks);

// Every task's epochs on rank 0: printed (unless --quiet) and logged to --log-json, one line
// each as they end (gnn/train/epoch_report.hpp), by the task's EpochFormat; the run's final
// record goes to the same log. Made once the data is loaded, by every rank (collective): it
// prints every rank's peak memory and input bytes read so far, the startup line
// "memory after loading: peak ...; read ...".
class EpochPrinter {
 public:
  EpochPrinter(const TrainArgs& a, Communicator& comm, EpochFormat format);
  std::function<void(const EpochRecord&)> callback();
  bool logging() const { return log_ != nullptr; }
  // Rank 0: the final record `j` with, added, every rank's bytes read after loading
  // (rank_read_bytes), its peak memory after loading (rank_loaded_peak_bytes) and at the end of
  // the run (rank_peak_bytes, from `s`), one slot per rank.
  void final_line(nlohmann::json j, const LoopSummary& s);

 private:
  EpochFormat format_;
  bool print_, split_;
  std::unique_ptr<LineLog> log_;
  RankUsage loaded_;  // after loading
};

// Fails now, not after hours of training, if `path` could not be written later: its folder must
// exist and be writable.
void check_writable(const std::string& path, const char* option);
// An option and the path it names.
struct NamedPath {
  const char* option;
  std::string path;
};
// Before a run: check_writable for each output given, no two outputs on one file, and no output
// on an input: a file given by an input option, or any file inside an input folder, its
// subfolders included, compared by identity (device, inode), so that symbolic and hard links
// count. `resumed` (--load's checkpoint) may be rewritten by --save. OptionError naming both.
void check_outputs(const std::vector<NamedPath>& inputs, const std::vector<NamedPath>& outputs,
                   const std::string& resumed = "");
// check_outputs without check_writable (an output whose writing may fail harmlessly: a cache).
void check_not_inputs(const std::vector<NamedPath>& inputs, const std::vector<NamedPath>& outputs,
                      const std::string& resumed = "");
// The inputs a dataset's options name: --graph, --features, --labels, the split files, --signals.
std::vector<NamedPath> dataset_inputs(const DatasetOptions& data, const std::string& signals);
// The same with train's inputs (--graph, --features, --labels, the split files, --signals,
// --partition, --load).
void check_outputs(const TrainArgs& a, const std::vector<NamedPath>& out);

// The outputs a node or link task may write: --log-json, --predictions, --save, --embeddings
// (and the ids file beside it).
std::vector<NamedPath> train_outputs(const TrainArgs& a);

// --device: cpu, or cuda bound to this rank's GPU (the node-local rank picks it); fails with one
// line when no GPU is usable (the count and CUDA's error). With several GPU ranks, also the
// device communicator (--comm: NCCL, or staged through MPI), attached to `comm` and owned by
// *link until the run ends. --comm nccl on the CPU is an OptionError. Collective.
Device train_device(const TrainArgs& a, Communicator& comm, std::unique_ptr<DeviceComm>* link);

// What a checkpoint is bound to (its "data" setting): a hash of the input's content and split
// options (dataset_source_hash, plus the snapshot options for a temporal graph), or of the
// generated default's settings; computed on rank 0 and sent to all; "" when the run neither
// saves nor loads. Collective.
std::string checkpoint_data_id(const TrainArgs& a, Communicator& comm, bool temporal);

// OptionError unless --parts, when given, is the job's rank count (static and temporal alike).
void check_parts(const TrainArgs& a, const Communicator& comm);

// Static node classification (full graph or mini-batch): the input has no time column.
void run_train(TrainArgs& a);
// Temporal training (link prediction over snapshots): the input has a time column.
void run_train_temporal(TrainArgs& a);
// Static vertex features for a temporal graph when given (--features, or features.npy in the
// dataset folder; row i = the vertex with id i), else empty with *dim = 0 (degree features).
std::vector<float> read_static_features(const TrainArgs& a, const TemporalGraph& g, int64_t* dim,
                                        std::string* file);
// The same features' rows of the vertices `rows` only (dense ids, ascending): what each rank of
// the vertex strategy reads for its own vertices (dist_read::vertex_feature_rows; collective
// over world()).
std::vector<float> read_static_feature_rows(const TrainArgs& a, const TemporalGraph& g,
                                            const std::vector<int64_t>& rows, int64_t* dim,
                                            std::string* file);
// The graph the options name, read by load_temporal (on rank 0 under MPI).
TemporalGraph read_temporal(const TrainArgs& a);
// The vertex strategy's partition options from --partitioner, --seed, --snapshot-groups.
PartitionOptions temporal_partition_options(const TrainArgs& a);

// A one-line summary of `moves` for the log ("" with one rank).
std::string describe_moves(const SnapshotMoves& moves, int ranks);

// --task node on a temporal graph: node classification over snapshots (vertex labels).
void run_train_temporal_node(TrainArgs& a);

// ---- outputs (cli/outputs.cpp): gathered on rank 0, written there atomically, in input ids ----

// --predictions for node tasks: "id class" per line, ascending ids; `ids` names each row of
// this rank's logits (host). Collective.
void write_class_predictions(const std::string& path, const Tensor& logits,
                             const std::vector<int64_t>& ids, Communicator& comm);
// --embeddings: this rank's rows (host; `ids` names each) as one .npy, rows in ascending id
// order, and the ids one per line beside it (embeddings_ids_path). Collective.
void write_embeddings(const std::string& path, const Tensor& rows, const std::vector<int64_t>& ids,
                      Communicator& comm);
std::string embeddings_ids_path(const std::string& path);  // E.npy -> E.ids.txt
// --predictions for --task forecast: this rank's test forecasts (samples x rows x channels, rows
// named by `ids`, the vertices 0..N-1 over all ranks) as one .npy on rank 0: [samples, N], or
// [samples, N, F] for several channels. Collective.
void write_forecasts(const std::string& path, const std::vector<float>& mine,
                     const std::vector<int64_t>& ids, int64_t samples, int64_t channels,
                     Communicator& comm);
// --task forecast: a signal on every vertex at every step (gnn/temporal/forecast.hpp).
void run_train_forecast(TrainArgs& a);
// The graph and signal a forecasting run reads: a PyG-Temporal .json, or the graph of a folder
// or edge-list file with `signals` (default: the folder's signals.npy). Errors name the file.
SignalSeries read_signal_input(const DatasetOptions& data, const SnapshotOptions& snapshots,
                               const std::string& signals);
// --predictions for link / edge tasks: the test pairs (rank 0's, from
// LinkPredictionTrainer::test_pairs) as "step src dst label score", a header line first.
void write_pair_predictions(const std::string& path,
                            const std::vector<LinkPredictionTrainer::ScoredPair>& pairs,
                            const std::vector<int64_t>& original_ids, bool link);

}  // namespace dgnn::cli
