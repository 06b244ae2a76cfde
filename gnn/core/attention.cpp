// Attention ops: the forward through kernels/ (edge_add, sddmm, edge_softmax, spmm_heads), and
// backward through the same kernels on the transposed structure, edge matrices put in its order
// by a gather with AttentionGraph::perm.
#include "dgnn/gnn/core/attention.hpp"

#include <string>
#include <utility>

#include "dgnn/common/error.hpp"
#include "dgnn/kernels/kernels.hpp"

namespace dgnn {

// ---- the structure -------------------------------------------------------------------------

const GraphView::AttentionGraph& GraphView::attention() const {
  DGNN_CHECK(!block_, OptionError,
             "attention (GAT) over a GPU-sampled block is not supported: its entries are built "
             "from the block's host structure");
  const Adjacency& gcn = adjacency(Norm::gcn);  // takes adj_mutex_ itself
  std::lock_guard<std::mutex> lock(adj_mutex_);
  if (!attention_) {
    auto at = std::make_unique<AttentionGraph>();
    Csr& f = at->forward;
    f.rows = gcn.forward.rows;
    f.cols = gcn.forward.cols;
    f.offsets = gcn.forward.offsets;
    f.indices = gcn.forward.indices;
    DGNN_CHECK(f.nnz() < (int64_t(1) << 31), ShapeError,
               "attention: more than 2^31 edges on one rank");
    // Transpose by counting sort: entries of each column in row order (deterministic).
    Csr& b = at->backward;
    b.rows = f.cols;
    b.cols = f.rows;
    b.offsets.assign(size_t(b.rows) + 1, 0);
    for (int32_t c : f.indices) ++b.offsets[size_t(c) + 1];
    for (int64_t c = 0; c < b.rows; ++c) b.offsets[size_t(c) + 1] += b.offsets[size_t(c)];
    b.indices.resize(f.indices.size());
    at->perm.resize(f.indices.size());
    std::vector<int64_t> next(b.offsets.begin(), b.offsets.end() - 1);
    for (int64_t r = 0; r < f.rows; ++r)
      for (int64_t e = f.offsets[size_t(r)]; e < f.offsets[size_t(r) + 1]; ++e) {
        const int64_t pos = next[size_t(f.indices[size_t(e)])]++;
        b.indices[size_t(pos)] = int32_t(r);
        at->perm[size_t(pos)] = int32_t(e);
      }
    at->edge_keys.resize(f.indices.size());
    const std::vector<int64_t>& id = ids();
    for (int64_t r = 0; r < f.rows; ++r)
      for (int64_t e = f.offsets[size_t(r)]; e < f.offsets[size_t(r) + 1]; ++e)
        at->edge_keys[size_t(e)] = int64_t(uint64_t(id[size_t(r)]) << 32 ^
                                           uint64_t(id[size_t(f.indices[size_t(e)])]));
    attention_ = std::move(at);
  }
  return *attention_;
}

const kernels::DeviceCsr& GraphView::AttentionGraph::on(Device dev, bool backward_dir) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto& slot = copies_[backward_dir ? 1 : 0][int(dev)];
  if (!slot)
    slot = std::make_unique<kernels::DeviceCsr>(dev, (backward_dir ? backward : forward).view());
  return *slot;
}

const int32_t* GraphView::AttentionGraph::perm_on(Device dev) const {
  if (dev == Device::cpu) return perm.data();
  std::lock_guard<std::mutex> lock(mutex_);
  if (perm_on_device_.bytes() == 0 && !perm.empty())
    perm_on_device_ = kernels::Buffer::upload(dev, perm);
  return perm_on_device_.as<const int32_t>();
}

const int64_t* GraphView::AttentionGraph::edge_keys_on(Device dev) const {
  if (dev == Device::cpu) return edge_keys.data();
  std::lock_guard<std::mutex> lock(mutex_);
  if (keys_on_device_.bytes() == 0 && !edge_keys.empty())
    keys_on_device_ = kernels::Buffer::upload(dev, edge_keys);
  return keys_on_device_.as<const int64_t>();
}

// ---- ops -----------------------------------------------------------------------------------

namespace {

std::string shape(const Var& v) { return v.value().shape_str(); }

void check_var(const char* op, const Var& v) {
  if (!v.defined()) throw ShapeError(std::string(op) + ": undefined input");
}

bool wants(const Node& n, size_t i) { return n.inputs[i] && n.inputs[i]->requires_grad; }

// An edge matrix in the transposed structure's order.
Tensor transposed_order(const GraphView::AttentionGraph& at, const Tensor& e) {
  const Device dev = e.device();
  Tensor out = Tensor::uninitialized(e.rows(), e.cols(), dev);
  kernels::gather_rows(dev, e.view(), at.perm_on(dev), e.rows(), out.view());
  return out;
}

int64_t n_sources(const GraphView& g) { return g.n_owned() + g.n_halo(); }

void check_sources(const char* op, const GraphView& g, const Var& x) {
  DGNN_CHECK(x.rows() == n_sources(g), ShapeError,
             std::string(op) + ": the source side has " + std::to_string(x.rows()) +
                 " rows, the graph " + std::to_string(n_sources(g)) +
                 " sources (use with_halo on a rank's part)");
}

void check_destinations(const char* op, const GraphView& g, const Var& x) {
  DGNN_CHECK(x.rows() == g.n_owned(), ShapeError,
             std::string(op) + ": the destination side has " + std::to_string(x.rows()) +
                 " rows, the graph " + std::to_string(g.n_owned()) + " destinations");
}

}  // namespace

Var with_halo(const GraphView& g, const Var& x) {
  check_var("with_halo", x);
  DGNN_CHECK(x.rows() == g.n_input_rows(), ShapeError,
             "with_halo: x has " + std::to_string(x.rows()) + " rows, the graph takes " +
                 std::to_string(g.n_input_rows()));
  // No halo exchange (one process, a block), or nothing to exchange on any rank: with a plan,
  // a rank without halo rows still sends its rows to peers (directed graphs).
  if (!g.halo() || g.bipartite()) return x;
  const Device dev = x.device();
  const int64_t f = x.cols(), owned = g.n_owned(), all = n_sources(g);
  Tensor full = Tensor::uninitialized(all, f, dev);
  kernels::copy(dev, full.data(), dev, x.value().data(), size_t(x.value().numel()) * 4);
  g.halo()->forward_begin(full.view());
  g.halo()->forward_end(full.view());
  const GraphView* gp = &g;
  return make_op(
      std::move(full), {x},
      [gp, owned, all](Node& self) {
        const Device d = self.value.device();
        Tensor back = Tensor::uninitialized(all, self.grad.cols(), d);
        kernels::copy(d, back.data(), d, self.grad.data(), size_t(self.grad.numel()) * 4);
        gp->halo()->backward_begin(back.view());
        gp->halo()->backward_end(back.view());
        Tensor& gx = self.inputs[0]->grad_buffer();
        kernels::axpby(d, owned * back.cols(), 1.f, back.data(), 1.f, gx.data());
      },
      "with_halo");
}

Var head_dot(const Var& z, const Var& a, int64_t heads) {
  check_var("head_dot", z);
  check_var("head_dot", a);
  DGNN_CHECK(heads >= 1 && a.rows() == 1 && a.cols() == z.cols() && z.cols() % heads == 0,
             ShapeError,
             "head_dot: z " + shape(z) + " and a " + shape(a) + " with " + std::to_string(heads) +
                 " heads (a must be 1 x z.cols, split evenly into the heads)");
  // One destination per row of z with a single entry each, against a's one "source": the SDDMM
  // of a diagonal pattern.
  const Device dev = z.device();
  const int64_t n = z.rows();
  auto pattern = std::make_shared<Csr>();
  pattern->rows = n;
  pattern->cols = 1;
  pattern->offsets.resize(size_t(n) + 1);
  for (int64_t r = 0; r <= n; ++r) pattern->offsets[size_t(r)] = r;
  pattern->indices.assign(size_t(n), 0);
  auto on_dev = std::make_shared<kernels::DeviceCsr>(dev, pattern->view());
  Tensor out = Tensor::uninitialized(n, heads, dev);
  kernels::sddmm(dev, on_dev->view(), z.value().view(), a.value().view(), out.view());
  return make_op(
      std::move(out), {z, a},
      [pattern, on_dev, heads](Node& self) {
        const Device d = self.value.device();
        const Tensor& zv = self.inputs[0]->value;
        const Tensor& av = self.inputs[1]->value;
        // dz[n] += dout[n, h] a_h; da += sum_n dout[n, h] z[n]_h (the pattern's transpose has
        // every row in its single column).
        if (wants(self, 0))
          kernels::spmm_heads(d, on_dev->view(), std::as_const(self.grad).view(), av.view(),
                              self.inputs[0]->grad_buffer().view(), true);
        if (wants(self, 1)) {
          Csr t;
          t.rows = 1;
          t.cols = pattern->rows;
          t.offsets = {0, pattern->rows};
          t.indices.resize(size_t(pattern->rows));
          for (int64_t r = 0; r < pattern->rows; ++r) t.indices[size_t(r)] = int32_t(r);
          const kernels::DeviceCsr td(d, t.view());
          kernels::spmm_heads(d, td.view(), std::as_const(self.grad).view(), zv.view(),
                              self.inputs[1]->grad_buffer().view(), true);
        }
      },
      "head_dot");
}

Var edge_add(const GraphView& g, const Var& src, const Var& dst) {
  check_var("edge_add", src);
  check_var("edge_add", dst);
  check_sources("edge_add", g, src);
  check_destinations("edge_add", g, dst);
  DGNN_CHECK(src.cols() == dst.cols(), ShapeError,
             "edge_add: src " + shape(src) + " and dst " + shape(dst) + " differ in heads");
  const Device dev = src.device();
  const auto& at = g.attention();
  Tensor out = Tensor::uninitialized(at.forward.nnz(), src.cols(), dev);
  kernels::edge_add(dev, at.forward_on(dev).view(), src.value().view(), dst.value().view(),
                    out.view());
  const GraphView* gp = &g;
  return make_op(
      std::move(out), {src, dst},
      [gp](Node& self) {
        const Device d = self.value.device();
        const auto& a = gp->attention();
        if (wants(self, 0))
          kernels::edge_row_sum(d, a.backward_on(d).view(), transposed_order(a, self.grad).view(),
                                self.inputs[0]->grad_buffer().view(), true);
        if (wants(self, 1))
          kernels::edge_row_sum(d, a.forward_on(d).view(), std::as_const(self.grad).view(),
                                self.inputs[1]->grad_buffer().view(), true);
      },
      "edge_add");
}

Var edge_dot(const GraphView& g, const Var& q, const Var& k, int64_t heads) {
  check_var("edge_dot", q);
  check_var("edge_dot", k);
  check_destinations("edge_dot", g, q);
  check_sources("edge_dot", g, k);
  DGNN_CHECK(heads >= 1 && q.cols() == k.cols() && q.cols() % heads == 0, ShapeError,
             "edge_dot: q " + shape(q) + " and k " + shape(k) + " with " + std::to_string(heads) +
                 " heads (equal widths, split evenly into the heads)");
  const Device dev = q.device();
  const auto& at = g.attention();
  Tensor out = Tensor::uninitialized(at.forward.nnz(), heads, dev);
  kernels::sddmm(dev, at.forward_on(dev).view(), q.value().view(), k.value().view(), out.view());
  const GraphView* gp = &g;
  return make_op(
      std::move(out), {q, k},
      [gp](Node& self) {
        const Device d = self.value.device();
        const auto& a = gp->attention();
        // dq[v] += sum_e ds[e] k[source(e)], dk[u] += sum_e ds[e] q[destination(e)].
        if (wants(self, 0))
          kernels::spmm_heads(d, a.forward_on(d).view(), std::as_const(self.grad).view(),
                              self.inputs[1]->value.view(), self.inputs[0]->grad_buffer().view(),
                              true);
        if (wants(self, 1))
          kernels::spmm_heads(d, a.backward_on(d).view(), transposed_order(a, self.grad).view(),
                              self.inputs[0]->value.view(), self.inputs[1]->grad_buffer().view(),
                              true);
      },
      "edge_dot");
}

Var edge_softmax(const GraphView& g, const Var& scores) {
  check_var("edge_softmax", scores);
  const auto& at = g.attention();
  DGNN_CHECK(scores.rows() == at.forward.nnz(), ShapeError,
             "edge_softmax: scores " + shape(scores) + " but the graph has " +
                 std::to_string(at.forward.nnz()) + " attention entries");
  const Device dev = scores.device();
  Tensor out = Tensor::uninitialized(scores.rows(), scores.cols(), dev);
  kernels::edge_softmax(dev, at.forward_on(dev).view(), scores.value().view(), out.view());
  const GraphView* gp = &g;
  return make_op(
      std::move(out), {scores},
      [gp](Node& self) {
        const Device d = self.value.device();
        kernels::edge_softmax_backward(d, gp->attention().forward_on(d).view(), self.value.view(),
                                       std::as_const(self.grad).view(),
                                       self.inputs[0]->grad_buffer().view(), true);
      },
      "edge_softmax");
}

Var aggregate_edges(const GraphView& g, const Var& w, const Var& x) {
  check_var("aggregate_edges", w);
  check_var("aggregate_edges", x);
  check_sources("aggregate_edges", g, x);
  const auto& at = g.attention();
  DGNN_CHECK(w.rows() == at.forward.nnz() && w.cols() >= 1 && x.cols() % w.cols() == 0, ShapeError,
             "aggregate_edges: weights " + shape(w) + " for " + std::to_string(at.forward.nnz()) +
                 " entries and x " + shape(x) + " (x's columns split evenly into the heads)");
  const Device dev = x.device();
  Tensor out = Tensor::uninitialized(g.n_owned(), x.cols(), dev);
  kernels::spmm_heads(dev, at.forward_on(dev).view(), w.value().view(), x.value().view(),
                      out.view());
  const GraphView* gp = &g;
  return make_op(
      std::move(out), {w, x},
      [gp](Node& self) {
        const Device d = self.value.device();
        const auto& a = gp->attention();
        const Tensor& wv = self.inputs[0]->value;
        const Tensor& xv = self.inputs[1]->value;
        // dw[e, h] = <dy[destination(e)], x[source(e)]> per head; dx = A^T (w) dy.
        if (wants(self, 0)) {
          Tensor dw = Tensor::uninitialized(wv.rows(), wv.cols(), d);
          kernels::sddmm(d, a.forward_on(d).view(), std::as_const(self.grad).view(), xv.view(),
                         dw.view());
          Tensor& gw = self.inputs[0]->grad_buffer();
          kernels::axpby(d, gw.numel(), 1.f, dw.data(), 1.f, gw.data());
        }
        if (wants(self, 1))
          kernels::spmm_heads(d, a.backward_on(d).view(), transposed_order(a, wv).view(),
                              std::as_const(self.grad).view(), self.inputs[1]->grad_buffer().view(),
                              true);
      },
      "aggregate_edges");
}

}  // namespace dgnn
