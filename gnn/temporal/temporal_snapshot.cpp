#include "dgnn/gnn/temporal/temporal_snapshot.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

#include "dgnn/comm/device_comm.hpp"
#include "dgnn/common/error.hpp"
#include "dgnn/gnn/core/ops.hpp"
#include "dgnn/kernels/kernels.hpp"

namespace dgnn {

std::pair<int, int> SnapshotPlan::owned(int begin, int end, int rank) const {
  int first = -1, last = -1;
  for (int s = begin; s < end; ++s) {
    if (owner[size_t(s)] != rank) continue;
    DGNN_CHECK(first < 0 || last == s, Error,
               "snapshot plan: rank " + std::to_string(rank) + "'s steps of [" +
                   std::to_string(begin) + ", " + std::to_string(end) + ") are not contiguous");
    if (first < 0) first = s;
    last = s + 1;
  }
  return first < 0 ? std::pair<int, int>{end, end} : std::pair<int, int>{first, last};
}

int SnapshotPlan::window_of(int s) const {
  return int(std::upper_bound(windows.begin(), windows.end(), s) - windows.begin()) - 1;
}

SnapshotPlan plan_snapshots(const std::vector<int64_t>& cost, const std::vector<int>& bounds,
                            int ranks, int64_t num_vertices) {
  DGNN_CHECK(ranks >= 1, OptionError, "the snapshot strategy needs at least one rank");
  DGNN_CHECK(bounds.size() >= 2 && bounds.front() == 0 && bounds.back() == int(cost.size()), Error,
             "snapshot plan: windows must cover the steps from 0");
  SnapshotPlan plan;
  plan.ranks = ranks;
  plan.num_vertices = num_vertices;
  plan.windows = bounds;
  plan.owner.assign(cost.size(), 0);
  for (size_t w = 0; w + 1 < bounds.size(); ++w) {
    const int b = bounds[w], len = bounds[w + 1] - b;
    DGNN_CHECK(len > 0, Error, "snapshot plan: empty window");
    std::vector<double> prefix(size_t(len) + 1, 0.0);
    for (int k = 0; k < len; ++k)
      prefix[size_t(k) + 1] = prefix[size_t(k)] + double(cost[size_t(b + k)]);
    // Cut i sits at the prefix nearest to i / ranks of the window's cost, leaving room for one
    // step per later rank when the window has enough.
    const bool every = len >= ranks;
    int prev = 0;
    for (int i = 1; i <= ranks; ++i) {
      int cut = len;
      if (i < ranks) {
        const double target = prefix[size_t(len)] * i / ranks;
        const int lo = prev + (every ? 1 : 0), hi = len - (every ? ranks - i : 0);
        cut = lo;
        for (int k = lo + 1; k <= hi; ++k)
          if (std::abs(prefix[size_t(k)] - target) < std::abs(prefix[size_t(cut)] - target))
            cut = k;
      }
      for (int k = prev; k < cut; ++k) plan.owner[size_t(b + k)] = i - 1;
      prev = cut;
    }
  }
  plan.vertex_begin.resize(size_t(ranks) + 1);
  for (int q = 0; q <= ranks; ++q) plan.vertex_begin[size_t(q)] = num_vertices * q / ranks;
  return plan;
}

namespace {

constexpr int64_t kF = sizeof(float);

// Rows [row, row + n) of t as a view.
MatView rows_of(Tensor& t, int64_t row, int64_t n) {
  return {t.numel() ? t.data() + row * t.cols() : nullptr, n, t.cols(), t.cols()};
}
ConstMatView rows_of(const Tensor& t, int64_t row, int64_t n) {
  return {t.numel() ? t.data() + row * t.cols() : nullptr, n, t.cols(), t.cols()};
}

void copy_rows(const Tensor& src, int64_t src_row, Tensor& dst, int64_t dst_row, int64_t n,
               bool accumulate = false) {
  if (n == 0 || src.cols() == 0) return;
  kernels::copy_view(src.device(), rows_of(src, src_row, n), rows_of(dst, dst_row, n), accumulate);
}

// Displacements for byte counts laid end to end.
std::vector<int64_t> displacements(const std::vector<int64_t>& counts) {
  std::vector<int64_t> d(counts.size(), 0);
  for (size_t i = 1; i < counts.size(); ++i) d[i] = d[i - 1] + counts[i - 1];
  return d;
}

void send_to(Communicator& comm, const Tensor& t, int peer) {
  exchange_begin_on(comm, t.device(),
                    {PeerBuffer{peer, const_cast<float*>(t.data()), t.numel() * kF}}, {})
      ->wait();
}

void recv_from(Communicator& comm, Tensor& t, int peer) {
  exchange_begin_on(comm, t.device(), {}, {PeerBuffer{peer, t.data(), t.numel() * kF}})->wait();
}

// `all`, a communication op's output, as `count` matrices of `rows` rows each (copies, each
// one op). No backward reads `all`'s value (the op's reads its gradient only, slice_rows
// nothing), so its storage goes now: the window's token keeps the node for ordering, which would
// otherwise keep a second copy of the window's rows until the next exchange.
std::vector<Var> split_rows(const Var& all, int count, int64_t rows) {
  std::vector<Var> out;
  out.reserve(size_t(count));
  for (int k = 0; k < count; ++k) out.push_back(slice_rows(all, k * rows, (k + 1) * rows));
  if (!all.node()->value_read) all.node()->value.drop_storage();
  return out;
}

}  // namespace

namespace {

std::vector<const GraphView*> view_pointers(const std::vector<std::unique_ptr<GraphView>>& graphs) {
  std::vector<const GraphView*> out;
  out.reserve(graphs.size());
  for (const auto& g : graphs) out.push_back(g.get());
  return out;
}

}  // namespace

SnapshotWindow::SnapshotWindow(Communicator& comm, const SnapshotPlan& plan, int begin, int end,
                               const std::vector<std::unique_ptr<GraphView>>& graphs,
                               const std::vector<Var>& features, bool training, uint64_t seed,
                               uint64_t step, Device dev)
    : SnapshotWindow(comm, plan, begin, end, view_pointers(graphs), features, training, seed, step,
                     dev) {}

SnapshotWindow::SnapshotWindow(Communicator& comm, const SnapshotPlan& plan, int begin, int end,
                               const std::vector<const GraphView*>& graphs,
                               const std::vector<Var>& features, bool training, uint64_t seed,
                               uint64_t step, Device dev)
    : comm_(comm), plan_(plan), begin_(begin), end_(end), features_(features), dev_(dev) {
  DGNN_CHECK(plan.ranks == comm.size(), Error,
             "snapshot plan for " + std::to_string(plan.ranks) + " ranks used on " +
                 std::to_string(comm.size()));
  DGNN_CHECK(0 <= begin && begin < end && end <= plan.num_steps() &&
                 plan.window_of(begin) == plan.window_of(end - 1),
             Error,
             "snapshot window [" + std::to_string(begin) + ", " + std::to_string(end) +
                 ") is not inside one window of the plan");
  own_ = plan.owned(begin, end, comm.rank());
  // The device is given, not read off the features: a rank that owns no step of the run holds
  // no per-step features, and must still move its matrices where the others' are.
  for (const Var& f : features)
    DGNN_CHECK(!f.defined() || f.device() == dev, DeviceError,
               std::string("snapshot window: features on ") + device_name(f.device()) +
                   " but the window runs on " + device_name(dev));
  ctx_.reserve(size_t(own_.second - own_.first));
  for (int s = own_.first; s < own_.second; ++s) {
    DGNN_CHECK(size_t(s) < graphs.size() && graphs[size_t(s)], Error,
               "snapshot window: no graph for owned step " + std::to_string(s));
    ctx_.push_back(ForwardContext{*graphs[size_t(s)], training, seed, step});
  }
  if (grad_enabled()) token_ = Var(Tensor(0, 0), true);
}

int SnapshotWindow::steps_of(int q) const {
  auto [a, b] = plan_.owned(begin_, end_, q);
  return b - a;
}

ForwardContext& SnapshotWindow::ctx(int s) {
  DGNN_CHECK(owns(s), Error, "snapshot window: step " + std::to_string(s) + " is not this rank's");
  return ctx_[size_t(s - own_.first)];
}

const Var& SnapshotWindow::x(int s) const {
  DGNN_CHECK(owns(s), Error, "snapshot window: step " + std::to_string(s) + " is not this rank's");
  const Var& v = features_.size() == 1 ? features_[0] : features_[size_t(s)];
  DGNN_CHECK(v.defined(), Error, "snapshot window: no features for step " + std::to_string(s));
  return v;
}

std::vector<Var> SnapshotWindow::inputs_with_token(const std::vector<Var>& data) const {
  std::vector<Var> in = data;
  if (token_.defined()) in.push_back(token_);
  return in;
}

void SnapshotWindow::chain(Var& v) {
  if (!v.node()->backward) return;  // nothing recorded (no gradients): nothing to order
  v.node()->collective = true;
  token_ = v;
}

Var SnapshotWindow::anchor() const {
  if (!token_.defined()) return Var(Tensor(1, 1, dev_));
  return make_op(
      Tensor(1, 1, dev_), {token_}, [](Node&) {}, "snapshot_anchor");
}

std::vector<Var> SnapshotWindow::to_vertex(const std::vector<Var>& owned, int64_t f) {
  const int p = comm_.size(), me = comm_.rank();
  const int n_own = own_.second - own_.first, w = end_ - begin_;
  const int64_t n = num_vertices(), nb = block(me);
  DGNN_CHECK(int(owned.size()) == n_own, ShapeError,
             "to_vertex: one matrix per owned step (" + std::to_string(n_own) + "), got " +
                 std::to_string(owned.size()));
  for (const Var& v : owned)
    DGNN_CHECK(v.rows() == n && v.cols() == f, ShapeError,
               "to_vertex: expected " + std::to_string(n) + " x " + std::to_string(f) + ", got " +
                   v.value().shape_str());
  if (p == 1) return owned;  // one rank's block is every vertex, its steps every step
  // To rank q: its block's rows of each owned step. From rank r: this block's rows of r's steps,
  // which (blocks being in rank order) lands step after step.
  std::vector<int64_t> sc(static_cast<size_t>(p)), rc(static_cast<size_t>(p));
  Tensor send = Tensor::uninitialized(int64_t(n_own) * n, f, dev_);
  int64_t row = 0;
  for (int q = 0; q < p; ++q) {
    sc[size_t(q)] = int64_t(n_own) * block(q) * f * kF;
    rc[size_t(q)] = int64_t(steps_of(q)) * nb * f * kF;
    for (int k = 0; k < n_own; ++k, row += block(q))
      copy_rows(owned[size_t(k)].value(), plan_.vertex_begin[size_t(q)], send, row, block(q));
  }
  const std::vector<int64_t> sd = displacements(sc), rd = displacements(rc);
  Tensor out = Tensor::uninitialized(int64_t(w) * nb, f, dev_);
  alltoallv_on(comm_, dev_, send.data(), sc, sd, out.data(), rc, rd);
  send = Tensor();
  Communicator* c = &comm_;
  const Device dev = dev_;
  const std::vector<int64_t> vb = plan_.vertex_begin;
  Var all = make_op(
      std::move(out), inputs_with_token(owned),
      [c, dev, sc, sd, rc, rd, vb, n_own, n, f](Node& self) {
        // The gradient of each block goes back to the step's owner, into its rows.
        Tensor back = Tensor::uninitialized(int64_t(n_own) * n, f, dev);
        alltoallv_on(*c, dev, std::as_const(self.grad).data(), rc, rd, back.data(), sc, sd);
        int64_t r = 0;
        for (size_t q = 0; q + 1 < vb.size(); ++q) {
          const int64_t bq = vb[q + 1] - vb[q];
          for (int k = 0; k < n_own; ++k, r += bq)
            if (self.inputs[size_t(k)]->requires_grad)
              copy_rows(back, r, self.inputs[size_t(k)]->grad_buffer(), vb[q], bq, true);
        }
      },
      "to_vertex", Reads::nothing());
  chain(all);
  return split_rows(all, w, nb);
}

std::vector<Var> SnapshotWindow::to_snapshot(const std::vector<Var>& steps, int64_t f) {
  const int p = comm_.size(), me = comm_.rank();
  const int n_own = own_.second - own_.first, w = end_ - begin_;
  const int64_t n = num_vertices(), nb = block(me);
  DGNN_CHECK(int(steps.size()) == w, ShapeError,
             "to_snapshot: one matrix per step of the window (" + std::to_string(w) + "), got " +
                 std::to_string(steps.size()));
  for (const Var& v : steps)
    DGNN_CHECK(v.rows() == nb && v.cols() == f, ShapeError,
               "to_snapshot: expected " + std::to_string(nb) + " x " + std::to_string(f) +
                   ", got " + v.value().shape_str());
  if (p == 1) return steps;
  // To rank r: this block's rows of r's steps (step order is rank order). From rank q: q's
  // block of each owned step, put in place in the step's N rows.
  Tensor send = Tensor::uninitialized(int64_t(w) * nb, f, dev_);
  for (int k = 0; k < w; ++k) copy_rows(steps[size_t(k)].value(), 0, send, k * nb, nb);
  std::vector<int64_t> sc(static_cast<size_t>(p)), rc(static_cast<size_t>(p)),
      recv_row(static_cast<size_t>(p), 0);
  for (int q = 0; q < p; ++q) {
    sc[size_t(q)] = int64_t(steps_of(q)) * nb * f * kF;
    rc[size_t(q)] = int64_t(n_own) * block(q) * f * kF;
    if (q > 0) recv_row[size_t(q)] = recv_row[size_t(q) - 1] + int64_t(n_own) * block(q - 1);
  }
  const std::vector<int64_t> sd = displacements(sc), rd = displacements(rc);
  Tensor recv = Tensor::uninitialized(int64_t(n_own) * n, f, dev_);
  alltoallv_on(comm_, dev_, send.data(), sc, sd, recv.data(), rc, rd);
  send = Tensor();
  const std::vector<int64_t> vb = plan_.vertex_begin;
  Tensor out = Tensor::uninitialized(int64_t(n_own) * n, f, dev_);
  for (int q = 0; q < p; ++q)
    for (int k = 0; k < n_own; ++k)
      copy_rows(recv, recv_row[size_t(q)] + k * block(q), out, k * n + vb[size_t(q)], block(q));
  recv = Tensor();
  Communicator* c = &comm_;
  const Device dev = dev_;
  Var all = make_op(
      std::move(out), inputs_with_token(steps),
      [c, dev, sc, sd, rc, rd, vb, recv_row, n_own, n, nb, w, f](Node& self) {
        const Tensor& g = self.grad;
        Tensor back = Tensor::uninitialized(int64_t(n_own) * n, f, dev);
        for (size_t q = 0; q + 1 < vb.size(); ++q) {
          const int64_t bq = vb[q + 1] - vb[q];
          for (int k = 0; k < n_own; ++k)
            copy_rows(g, k * n + vb[q], back, recv_row[q] + k * bq, bq);
        }
        Tensor mine = Tensor::uninitialized(int64_t(w) * nb, f, dev);
        alltoallv_on(*c, dev, back.data(), rc, rd, mine.data(), sc, sd);
        for (int k = 0; k < w; ++k)
          if (self.inputs[size_t(k)]->requires_grad)
            copy_rows(mine, k * nb, self.inputs[size_t(k)]->grad_buffer(), 0, nb, true);
      },
      "to_snapshot", Reads::nothing());
  chain(all);
  return split_rows(all, n_own, n);
}

std::vector<Var> SnapshotWindow::allgather(const std::vector<Var>& owned, int64_t rows, int64_t f) {
  const int p = comm_.size();
  const int n_own = own_.second - own_.first, w = end_ - begin_;
  DGNN_CHECK(int(owned.size()) == n_own, ShapeError,
             "allgather: one matrix per owned step (" + std::to_string(n_own) + "), got " +
                 std::to_string(owned.size()));
  for (const Var& v : owned)
    DGNN_CHECK(v.rows() == rows && v.cols() == f, ShapeError,
               "allgather: expected " + std::to_string(rows) + " x " + std::to_string(f) +
                   ", got " + v.value().shape_str());
  if (p == 1) return owned;  // one rank owns every step
  Tensor send = Tensor::uninitialized(int64_t(n_own) * rows, f, dev_);
  for (int k = 0; k < n_own; ++k) copy_rows(owned[size_t(k)].value(), 0, send, k * rows, rows);
  // The same rows to everyone; from rank r its steps', which land in step order.
  const std::vector<int64_t> sc(static_cast<size_t>(p), int64_t(n_own) * rows * f * kF),
      sd(static_cast<size_t>(p), 0);
  std::vector<int64_t> rc(static_cast<size_t>(p));
  for (int q = 0; q < p; ++q) rc[size_t(q)] = int64_t(steps_of(q)) * rows * f * kF;
  const std::vector<int64_t> rd = displacements(rc);
  Tensor out = Tensor::uninitialized(int64_t(w) * rows, f, dev_);
  alltoallv_on(comm_, dev_, send.data(), sc, sd, out.data(), rc, rd);
  send = Tensor();
  Communicator* c = &comm_;
  const Device dev = dev_;
  Var all = make_op(
      std::move(out), inputs_with_token(owned),
      [c, dev, sc, rc, rd, p, n_own, rows, f](Node& self) {
        // Each rank's gradient of every step goes to the step's owner, which sums them.
        Tensor back = Tensor::uninitialized(int64_t(p) * n_own * rows, f, dev);
        alltoallv_on(*c, dev, std::as_const(self.grad).data(), rc, rd, back.data(), sc,
                     displacements(sc));
        for (int k = 0; k < n_own; ++k) {
          if (!self.inputs[size_t(k)]->requires_grad) continue;
          Tensor& g = self.inputs[size_t(k)]->grad_buffer();
          for (int q = 0; q < p; ++q)
            copy_rows(back, (int64_t(q) * n_own + k) * rows, g, 0, rows, true);
        }
      },
      "allgather", Reads::nothing());
  chain(all);
  return split_rows(all, w, rows);
}

Var SnapshotWindow::state_in(const Var& held, int64_t rows, int64_t cols) {
  const int me = comm_.rank();
  const int first = plan_.owner[size_t(begin_)];
  const int holder = begin_ > 0 ? plan_.owner[size_t(begin_) - 1] : -1;
  Var state;
  // Across windows: the tape is cut there, so the state moves as a plain matrix.
  if (holder >= 0 && holder != first) {
    if (me == holder) {
      DGNN_CHECK(held.defined() && held.rows() == rows && held.cols() == cols, Error,
                 "state_in: this rank ran step " + std::to_string(begin_ - 1) + " but holds no " +
                     std::to_string(rows) + " x " + std::to_string(cols) + " state");
      DGNN_CHECK(!(grad_enabled() && held.requires_grad()), Error,
                 "state_in: the state entering a window must be detached (detach_state)");
      send_to(comm_, held.value(), first);
    }
    if (me == first) {
      Tensor t = Tensor::uninitialized(rows, cols, dev_);
      recv_from(comm_, t, holder);
      state = Var(std::move(t));
    }
  }
  if (own_.first == own_.second) return Var();
  if (own_.first == begin_) return holder == me ? held : state;
  // Inside the window: from the previous block's owner, and its gradient back to it.
  const int prev = plan_.owner[size_t(own_.first) - 1];
  Tensor t = Tensor::uninitialized(rows, cols, dev_);
  recv_from(comm_, t, prev);
  Communicator* c = &comm_;
  Var v = make_op(
      std::move(t), inputs_with_token({}), [c, prev](Node& self) { send_to(*c, self.grad, prev); },
      "state_from_prev");
  chain(v);
  return v;
}

bool SnapshotWindow::state_out(const Var& h) {
  if (own_.first == own_.second) return false;
  if (own_.second == end_) return true;
  const int next = plan_.owner[size_t(own_.second)];
  DGNN_CHECK(h.defined(), Error, "state_out: no state to hand on");
  send_to(comm_, h.value(), next);
  Communicator* c = &comm_;
  const int64_t rows = h.rows(), cols = h.cols();
  const Device dev = dev_;
  Var v = make_op(
      Tensor(0, cols, dev), inputs_with_token({h}),
      [c, dev, next, rows, cols](Node& self) {
        Tensor g = Tensor::uninitialized(rows, cols, dev);
        recv_from(*c, g, next);
        if (self.inputs[0]->requires_grad)
          copy_rows(g, 0, self.inputs[0]->grad_buffer(), 0, rows, true);
      },
      "state_to_next");
  chain(v);
  return false;
}

}  // namespace dgnn
