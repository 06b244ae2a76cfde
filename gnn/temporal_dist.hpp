#pragma once
// The two strategies for snapshot sequences on several ranks.
// Vertex strategy: one vertex partition for all snapshots, a halo plan per snapshot, and
// per-vertex recurrent state that stays with its owner. Each rank keeps its owned vertices in
// one fixed order (ascending id) across snapshots, so row r of a state matrix is the same vertex
// at every step.
// Snapshot strategy: each rank owns whole snapshots, a contiguous block of every window of steps
// (gnn/temporal_snapshot.hpp).
#include <memory>
#include <vector>

#include "comm/halo.hpp"
#include "gnn/fetch.hpp"
#include "gnn/graph_view.hpp"
#include "gnn/temporal_snapshot.hpp"
#include "gnn/temporal_trainer.hpp"
#include "graph/temporal.hpp"
#include "partition/partition.hpp"

namespace dgnn {

struct TemporalRank {
  RowDirectory dir;              // every vertex's owner and row there
  std::vector<int64_t> owned;    // this rank's vertices (global ids, ascending)
  std::vector<HaloPlan> plans;   // per snapshot
  std::vector<std::unique_ptr<HaloExchange>> halos;
  std::vector<std::unique_ptr<GraphView>> graphs;
  std::vector<Var> features;     // this rank's rows: one matrix, or one per snapshot
  int64_t halo_rows = 0;         // sum over snapshots of halo vertices (rows exchanged per layer)
};

// Partitions the union of all snapshots' edges (METIS or a baseline); deterministic by seed.
std::vector<int32_t> partition_temporal(const TemporalGraph& g, const PartitionOptions& opt);

// This rank's share: per-snapshot local graphs and halo plans for `part`, features sliced from
// `features` (global rows). `comm` must outlive the result. Features and halo exchanges are on
// `dev` (a GPU with several ranks needs a device communicator attached to `comm`).
std::unique_ptr<TemporalRank> make_temporal_rank(const TemporalGraph& g,
                                                 const std::vector<Var>& features,
                                                 const std::vector<int32_t>& part,
                                                 Communicator& comm, Device dev = Device::cpu);

struct SnapshotRank {
  SnapshotPlan plan;
  std::vector<std::unique_ptr<GraphView>> graphs;  // per snapshot; null where another rank owns it
  std::vector<Var> features;  // one matrix for all steps, or one per snapshot (owned ones only)
};

// This rank's share under the snapshot strategy: the plan for the trainer's windows
// (temporal_windows(g, opt)), blocks balanced by each step's edges plus vertices, and the whole
// snapshots of the steps this rank owns. OptionError when there are more ranks than snapshots.
std::unique_ptr<SnapshotRank> make_snapshot_rank(const TemporalGraph& g,
                                                 const std::vector<Var>& features,
                                                 const TemporalOptions& opt, int ranks, int rank);

}  // namespace dgnn
