#pragma once
// The two strategies for snapshot sequences on several ranks.
// Vertex strategy: one vertex partition for all snapshots, a halo plan per snapshot, and
// per-vertex recurrent state that stays with its owner. Each rank keeps its owned vertices in
// one fixed order (ascending id) across snapshots, so row r of a state matrix is the same vertex
// at every step.
// Snapshot strategy: each rank owns whole snapshots, a contiguous block of every window of steps
// (gnn/temporal/temporal_snapshot.hpp).
#include <functional>
#include <memory>
#include <vector>

#include "dgnn/comm/halo.hpp"
#include "dgnn/gnn/core/fetch.hpp"
#include "dgnn/gnn/core/graph_view.hpp"
#include "dgnn/gnn/temporal/temporal_snapshot.hpp"
#include "dgnn/gnn/temporal/temporal_trainer.hpp"
#include "dgnn/graph/temporal.hpp"
#include "dgnn/partition/partition.hpp"

namespace dgnn {

struct TemporalRank {
  RowDirectory dir;             // every vertex's owner; rows by ascending id (dir.owned)
  std::vector<int64_t> owned;   // this rank's vertices (global ids, ascending); graphs' owned ids
  // Per snapshot, only with make_temporal_rank's keep_plans (tests): each exchange holds its own
  // copy of its plan, so the rank does not keep a second one for the run.
  std::vector<HaloPlan> plans;
  std::vector<std::unique_ptr<HaloExchange>> halos;
  std::vector<std::unique_ptr<GraphView>> graphs;
  std::vector<Var> features;  // this rank's rows: one matrix, or one per snapshot
  int64_t halo_rows = 0;      // sum over snapshots of halo vertices (rows exchanged per layer)
};

// This rank's share: per-snapshot local graphs and halo plans for `part`, features sliced from
// `features` (global rows). `g` may hold whole snapshots or only this rank's vertex_share of
// each (move_vertex_shares): halo vertices' in-degrees come from their owners. Collective.
// `comm` must outlive the result. Features and halo exchanges are on
// `dev` (a GPU with several ranks needs a device communicator attached to `comm`).
std::unique_ptr<TemporalRank> make_temporal_rank(const TemporalGraph& g,
                                                 const std::vector<Var>& features,
                                                 const std::vector<int32_t>& part,
                                                 Communicator& comm, Device dev = Device::cpu,
                                                 bool keep_plans = false);

// ---- moving snapshots from the rank that read them ---------------------------------------

// What moving snapshots to the other ranks cost (counted on rank 0, which sends; zeros
// elsewhere). A snapshot goes as the difference from the last one its receiver got when that is
// smaller than the snapshot itself (the graph-difference technique, Chakaravarthy et al., SC'21).
struct SnapshotMoves {
  int64_t snapshots = 0;      // snapshots sent (summed over receivers)
  int64_t as_difference = 0;  // of which as a difference
  int64_t bytes = 0;          // topology bytes sent
  int64_t whole_bytes = 0;    // the same snapshots sent whole (whole_wire_bytes)
  int64_t meta_bytes = 0;     // events, ids and sizes, broadcast to every rank either way
};

// Every rank's copy of the graph rank 0 read, without topology: vertex count, ids, direction,
// weights and every step's events (the targets). Fills `nnz` with each snapshot's CSR entries.
// Elsewhere than rank 0, `g` is replaced; its base and diffs stay empty (base.rows = 0), so a
// snapshot asked of it fails loudly instead of coming back empty.
void broadcast_temporal_meta(TemporalGraph& g, std::vector<int64_t>& nnz, Communicator& comm,
                             SnapshotMoves& moves);

// Rank 0 sends every other rank r the snapshots s with need(r, s), in step order, each whole or
// as the difference from the previous one sent to r, whichever is smaller. A rank that needs
// every step gets them back as `g`'s base and differences (its `g` from broadcast_temporal_meta
// becomes whole); otherwise `held[s]` is snapshot s where need(rank, s) and an empty Csr
// elsewhere. Rank 0 keeps its own `g` and returns no `held`. Collective.
void move_snapshots(TemporalGraph& g, std::vector<Csr>& held, Communicator& comm,
                    const std::function<bool(int rank, int step)>& need, SnapshotMoves& moves);

// The vertex strategy's share of snapshot `a` for `rank` under `part`: the entries (v <- u) whose
// destination v the rank owns (the in-edges it aggregates) and, `directed`, those whose source u
// it owns (its vertices' out-edges: which of its rows each peer needs as halo, and its vertices'
// out-degrees). An undirected snapshot is symmetric: its owned rows say both, so its shares
// hold each entry once over all ranks. The same shape as `a`; make_temporal_rank cuts from
// shares as from whole snapshots.
Csr vertex_share(const Csr& a, const std::vector<int32_t>& part, int rank, bool directed);

// Vertex strategy, after broadcast_temporal_meta, with `part` on every rank: rank 0 sends every
// other rank its vertex_share of every snapshot, in step order, each whole or as the difference
// from that rank's previous share, whichever is smaller. Every rank's `g` then holds its own
// shares as base + differences: rank 0 too, which drops the whole snapshots once it has sent
// them (events and ids stay whole everywhere). Collective.
void move_vertex_shares(TemporalGraph& g, const std::vector<int32_t>& part, Communicator& comm,
                        SnapshotMoves& moves);
// The difference move_vertex_shares leaves in rank `rank`'s g between its shares `prev` and
// `now`: rank 0 keeps snapshot_step's; a receiver keeps the difference rank 0 sent when it was
// sent as one, else snapshot_step of what it received whole. A loader that cuts the shares on
// their own ranks stores the same with it.
SnapshotDiff vertex_share_step(const Csr& prev, const Csr& now, int rank);

// The vertex strategy's share of the events: each step keeps the events whose source this rank
// owns under `part` (its sources' positives and the links their draws avoid) and, on an
// undirected graph, also those into its vertices (each is a link of both ends), each numbered by its ordinal among the whole step's
// distinct pairs (SnapshotEvents::ordinal, on its source's owner), and `whole` gets the whole
// step's counts. This rank must hold at least the events with an end it owns (all of them, or
// what a loader routed to it), each step sorted by (src, dst). Link prediction's positives,
// draws and weights and edge classification's weights are then those of one process. The ids
// are numbered by ranges: no rank gathers a step. Collective.
void shard_events(TemporalGraph& g, const std::vector<int32_t>& part, Communicator& comm);

// Event i of a step's list (sorted by (src, dst)) added to the counts of SnapshotEvents::Whole,
// c[kEventCounts] in its order: every event, the targets (not self loops), the negative ones of
// each. Returns whether it is a distinct pair (c[4]: directed, every target; undirected, (u, v)
// unless (v, u) is in the list and comes first), which needs (v, u) in the list when held.
constexpr int kEventCounts = 5;
bool count_event(const SnapshotEvents& ev, size_t i, bool directed, int64_t* c);

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

// The plan make_snapshot_rank uses, from the graph's events and each snapshot's entry count
// (`nnz`) alone: what every rank computes before it has any snapshot. OptionError as above.
SnapshotPlan snapshot_strategy_plan(const TemporalGraph& g, const std::vector<int64_t>& nnz,
                                    const TemporalOptions& opt, int ranks);

// Snapshot s of g for each step `rank` owns under `plan`, an empty Csr elsewhere (the form
// move_snapshots leaves on the other ranks).
std::vector<Csr> owned_snapshots(const TemporalGraph& g, const SnapshotPlan& plan, int rank);

// This rank's share when its snapshots came from move_snapshots: `held[s]` for each step it owns
// under `plan`; `features` one matrix, or one per snapshot (owned ones only need be defined).
std::unique_ptr<SnapshotRank> make_snapshot_rank(SnapshotPlan plan, const std::vector<Csr>& held,
                                                 const std::vector<Var>& features, int rank);

}  // namespace dgnn
