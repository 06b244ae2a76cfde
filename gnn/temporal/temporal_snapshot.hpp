#pragma once
// The snapshot strategy for snapshot sequences (Chakaravarthy et al., SC'21). The trainer runs
// the steps in windows (its BPTT windows; validation and test cut the same way); each rank owns
// a contiguous block of whole snapshots of every window, balanced by edges. Graph layers run on
// the owner's whole snapshot with no halo; recurrences that are per vertex (GCRN's LSTM) re-shard
// from by-snapshot to by-vertex with one all-to-all, run over the window's steps on this rank's
// block of vertices, and re-shard back with one all-to-all; weight sequences (EvolveGCN) are
// evolved redundantly on every rank; a state that is aggregated over each snapshot's graph
// (T-GCN's GRU) is handed from one block's owner to the next.
//
// Every communication op here is differentiable, with a collective backward (like fetch_rows),
// and chained on the tape in call order, so that every rank runs their backwards in the same
// order; anchor() keeps them on the tape of a rank whose loss would not otherwise reach them.
// Matrices live on the features' device; on a GPU with several ranks the communicator needs a
// device communicator attached (comm/device_comm.hpp).
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "dgnn/comm/communicator.hpp"
#include "dgnn/gnn/core/module.hpp"

namespace dgnn {

struct SnapshotPlan {
  int ranks = 1;
  int64_t num_vertices = 0;
  std::vector<int> windows;           // window w is steps [windows[w], windows[w + 1])
  std::vector<int32_t> owner;         // per step
  std::vector<int64_t> vertex_begin;  // ranks + 1 entries: rank q's vertex block for recurrences

  int num_steps() const { return int(owner.size()); }
  // The steps of [begin, end) (inside one window) that `rank` owns: [first, second), maybe empty.
  std::pair<int, int> owned(int begin, int end, int rank) const;
  // The window holding step s.
  int window_of(int s) const;
};

// Cuts every window [bounds[w], bounds[w + 1]) into `ranks` contiguous blocks of about equal
// cost (cost[s]: the work of step s, e.g. its edges plus vertices), in rank order; when a window
// has at least `ranks` steps every rank gets one. Vertex blocks are equal ranges of ids.
SnapshotPlan plan_snapshots(const std::vector<int64_t>& cost, const std::vector<int>& bounds,
                            int ranks, int64_t num_vertices);

// One window of steps [begin, end) as this rank sees it: the graphs and features of the steps it
// owns, and the communication the models need.
class SnapshotWindow {
 public:
  // `graphs[s]` and `features` (one matrix for all steps, or one per step) must hold the steps
  // this rank owns; `training`, `seed` and `step` go into each step's ForwardContext. `dev`:
  // where the features and the model live (every rank the same).
  SnapshotWindow(Communicator& comm, const SnapshotPlan& plan, int begin, int end,
                 const std::vector<std::unique_ptr<GraphView>>& graphs,
                 const std::vector<Var>& features, bool training, uint64_t seed, uint64_t step,
                 Device dev = Device::cpu);
  // The same with the graphs as plain pointers (null where not owned): several steps may share
  // one view (forecasting on a static graph).
  SnapshotWindow(Communicator& comm, const SnapshotPlan& plan, int begin, int end,
                 const std::vector<const GraphView*>& graphs, const std::vector<Var>& features,
                 bool training, uint64_t seed, uint64_t step, Device dev = Device::cpu);

  int begin() const { return begin_; }
  int end() const { return end_; }
  // This rank's steps of the window: [own_begin, own_end), in order; possibly empty.
  int own_begin() const { return own_.first; }
  int own_end() const { return own_.second; }
  bool owns(int s) const { return s >= own_.first && s < own_.second; }
  ForwardContext& ctx(int s);
  const Var& x(int s) const;  // the features of an owned step (all vertices)
  int64_t num_vertices() const { return plan_.num_vertices; }
  // This rank's block of vertices for per-vertex recurrences: [vertex_begin, vertex_end).
  int64_t vertex_begin() const { return plan_.vertex_begin[size_t(comm_.rank())]; }
  int64_t vertex_end() const { return plan_.vertex_begin[size_t(comm_.rank()) + 1]; }

  // By snapshot -> by vertex: `owned` has one N x cols matrix per owned step; the result one
  // matrix per step of the window, the rows of this rank's vertex block. One all-to-all.
  std::vector<Var> to_vertex(const std::vector<Var>& owned, int64_t cols);
  // By vertex -> by snapshot: `steps` has one (vertex block) x cols matrix per step of the
  // window; the result one N x cols matrix per owned step. One all-to-all.
  std::vector<Var> to_snapshot(const std::vector<Var>& steps, int64_t cols);
  // Every step's rows x cols matrix on every rank, from the owners' (`owned`, one per owned
  // step). Backward sums each rank's gradient into the owner's.
  std::vector<Var> allgather(const std::vector<Var>& owned, int64_t rows, int64_t cols);

  // A state (rows x cols) that goes through the steps in order. state_in: the state entering
  // this rank's first step of the window: on the rank owning the window's first step, the one
  // `held` by the rank that ran step begin - 1 (moved here, detached: windows are cut there;
  // undefined, i.e. zeros, when begin is 0); on the others, the previous block's owner's
  // (differentiable). Undefined on ranks that own no step. state_out: hands `h`, the state after
  // this rank's last step, to the next block's owner (differentiable); true when this rank ran
  // the window's last step and so holds the state for the next window.
  Var state_in(const Var& held, int64_t rows, int64_t cols);
  bool state_out(const Var& h);

  // A 1 x 1 zero that depends on every communication op of the window: added to a rank's loss,
  // it makes backward reach them all, even where the rank's own loss does not.
  Var anchor() const;

 private:
  // A communication op's node: marked collective (its backward runs on every rank, reached or
  // not) and made the chain's new end; the next op takes it as an extra input, which fixes the
  // order of their backwards on every rank.
  void chain(Var& v);
  // An op's inputs: `data`, then the chain's end (when recording).
  std::vector<Var> inputs_with_token(const std::vector<Var>& data) const;
  int64_t block(int q) const {
    return plan_.vertex_begin[size_t(q) + 1] - plan_.vertex_begin[size_t(q)];
  }
  int steps_of(int q) const;

  Communicator& comm_;
  const SnapshotPlan& plan_;
  int begin_, end_;
  std::pair<int, int> own_;
  std::vector<ForwardContext> ctx_;
  const std::vector<Var>& features_;
  Device dev_;  // where every matrix moved here lives
  Var token_;   // the last communication op's output (a leaf before the first)
};

}  // namespace dgnn
