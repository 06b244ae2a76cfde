#include "gnn/graph_view.hpp"

#include <cmath>
#include <numeric>

#include "common/error.hpp"
#include "kernels/kernels.hpp"

namespace dgnn {

GraphView::GraphView(const Csr& in, Device dev)
    : in_(in), n_owned_(in.rows), n_halo_(0), n_interior_(in.rows), dev_(dev) {
  DGNN_CHECK(in.rows == in.cols, ShapeError, "GraphView of a whole graph needs a square CSR");
  global_ids_.resize(size_t(n_owned_));
  std::iota(global_ids_.begin(), global_ids_.end(), int64_t{0});
}

GraphView::GraphView(Csr local_in, int64_t n_owned, std::vector<int64_t> global_ids,
                     std::vector<int64_t> halo_in_degree, HaloExchange* halo, Device dev)
    : in_(std::move(local_in)),
      n_owned_(n_owned),
      n_halo_(in_.cols - n_owned),
      global_ids_(std::move(global_ids)),
      halo_in_degree_(std::move(halo_in_degree)),
      halo_(halo),
      dev_(dev) {
  DGNN_CHECK(in_.rows == n_owned && n_halo_ >= 0, ShapeError,
             "local CSR must be n_owned x (n_owned + n_halo)");
  DGNN_CHECK(int64_t(global_ids_.size()) == in_.cols, ShapeError,
             "need one global id per local vertex");
  DGNN_CHECK(int64_t(halo_in_degree_.size()) == n_halo_, ShapeError,
             "need the global in-degree of every halo vertex");
  DGNN_CHECK(n_halo_ == 0 || halo_ != nullptr, ShapeError, "halo vertices need a HaloExchange");
  while (n_interior_ < n_owned_) {
    bool interior = true;
    for (int64_t e = in_.offsets[n_interior_]; e < in_.offsets[n_interior_ + 1]; ++e)
      interior &= in_.indices[e] < n_owned_;
    if (!interior) break;
    ++n_interior_;
  }
}

namespace {

// GCN weights over A + I: one self-loop entry per row is inserted in column order (an existing
// self-loop is replaced, as PyG's add_remaining_self_loops does) and every entry is scaled by
// 1/sqrt(deg_u deg_v), deg counting the self loop.
Csr gcn_adjacency(const Csr& in, int64_t n_owned, const std::vector<int64_t>& halo_in_degree) {
  std::vector<double> inv_sqrt(size_t(in.cols));
  auto deg_with_loop = [&](int64_t v) {
    if (v < n_owned) {
      int64_t d = 1;
      for (int64_t e = in.offsets[v]; e < in.offsets[v + 1]; ++e) d += in.indices[e] != v;
      return double(d);
    }
    // The partitioner reports halo degrees without self loops.
    return double(halo_in_degree[size_t(v - n_owned)] + 1);
  };
  for (int64_t v = 0; v < in.cols; ++v) inv_sqrt[size_t(v)] = 1.0 / std::sqrt(deg_with_loop(v));

  Csr out;
  out.rows = in.rows;
  out.cols = in.cols;
  out.offsets.assign(size_t(in.rows) + 1, 0);
  for (int64_t v = 0; v < in.rows; ++v) {
    int64_t d = 1;
    for (int64_t e = in.offsets[v]; e < in.offsets[v + 1]; ++e) d += in.indices[e] != v;
    out.offsets[size_t(v) + 1] = out.offsets[size_t(v)] + d;
  }
  out.indices.resize(size_t(out.offsets.back()));
  out.values.resize(size_t(out.offsets.back()));
  for (int64_t v = 0; v < in.rows; ++v) {
    int64_t k = out.offsets[size_t(v)];
    bool placed = false;
    auto put = [&](int32_t u) {
      out.indices[size_t(k)] = u;
      out.values[size_t(k)] = float(inv_sqrt[size_t(u)] * inv_sqrt[size_t(v)]);
      ++k;
    };
    for (int64_t e = in.offsets[v]; e < in.offsets[v + 1]; ++e) {
      int32_t u = in.indices[e];
      if (u == v) continue;
      if (!placed && u > v) {
        put(int32_t(v));
        placed = true;
      }
      put(u);
    }
    if (!placed) put(int32_t(v));
  }
  return out;
}

Csr mean_adjacency(const Csr& in) {
  Csr out = in;
  out.values.assign(size_t(in.nnz()), 0.f);
  for (int64_t v = 0; v < in.rows; ++v) {
    int64_t d = in.degree(v);
    for (int64_t e = in.offsets[v]; e < in.offsets[v + 1]; ++e)
      out.values[size_t(e)] = 1.0f / float(d);
  }
  return out;
}

}  // namespace

const GraphView::Adjacency& GraphView::adjacency(Norm norm) const {
  std::lock_guard<std::mutex> lock(adj_mutex_);
  auto& slot = adj_[int(norm)];
  if (!slot) {
    auto a = std::make_unique<Adjacency>();
    switch (norm) {
      case Norm::sum: a->forward = in_; break;
      case Norm::mean: a->forward = mean_adjacency(in_); break;
      case Norm::gcn: a->forward = gcn_adjacency(in_, n_owned_, halo_in_degree_); break;
    }
    a->transposed = a->forward.transpose();
    const Csr& f = a->forward;
    const Csr& t = a->transposed;
    a->symmetric = f.rows == t.rows && f.offsets == t.offsets && f.indices == t.indices &&
                   f.values == t.values;
    if (a->symmetric) a->transposed = Csr{};
    slot = std::move(a);
  }
  return *slot;
}

const int64_t* GraphView::global_ids_on(Device dev) const {
  if (dev == Device::cpu) return global_ids_.data();
  std::lock_guard<std::mutex> lock(adj_mutex_);
  if (ids_on_device_.bytes() == 0 && !global_ids_.empty())
    ids_on_device_ = kernels::Buffer::upload(dev, global_ids_);
  return ids_on_device_.as<const int64_t>();
}

const kernels::DeviceCsr& GraphView::Adjacency::on(Device dev, bool backward_dir) const {
  if (symmetric) backward_dir = false;  // one copy serves both directions
  std::lock_guard<std::mutex> lock(mutex_);
  auto& slot = copies_[backward_dir ? 1 : 0][int(dev)];
  if (!slot)
    slot = std::make_unique<kernels::DeviceCsr>(dev,
                                                (backward_dir ? backward() : forward).view());
  return *slot;
}

namespace {

// Rows [begin, end) of a CSR on `dev`: offsets stay absolute, so the slice is a pointer shift.
CsrView row_slice(const kernels::DeviceCsr& a, int64_t begin, int64_t end) {
  return a.rows(begin, end);
}

MatView rows_of(MatView m, int64_t begin, int64_t end) {
  return {m.data + begin * m.ld, end - begin, m.cols, m.ld};
}

}  // namespace

Var aggregate(const GraphView& g, const Var& x, Norm norm) {
  DGNN_CHECK(x.rows() == g.n_owned(), ShapeError,
             "aggregate: x has " + std::to_string(x.rows()) + " rows, the graph owns " +
                 std::to_string(g.n_owned()) + " vertices");
  const auto& adj = g.adjacency(norm);
  const Device dev = x.device();
  const int64_t f = x.cols(), n_owned = g.n_owned(), n_all = g.n_owned() + g.n_halo();
  Tensor out = Tensor::uninitialized(n_owned, f, dev);
  if (g.n_halo() == 0) {
    kernels::spmm(dev, adj.forward_on(dev).view(), x.value().view(), out.view());
  } else {
    // Interior rows read owned columns only: they are computed while halo rows travel.
    Tensor full = Tensor::uninitialized(n_all, f, dev);
    kernels::copy(dev, full.data(), dev, x.value().data(), size_t(x.value().numel()) * 4);
    const int64_t split = g.overlap() ? g.n_interior() : 0;
    g.halo()->forward_begin(full.view());
    kernels::spmm(dev, row_slice(adj.forward_on(dev), 0, split), full.view(),
                  rows_of(out.view(), 0, split));
    g.halo()->forward_end(full.view());
    kernels::spmm(dev, row_slice(adj.forward_on(dev), split, n_owned), full.view(),
                  rows_of(out.view(), split, n_owned));
  }
  const GraphView* gp = &g;
  return make_op(
      std::move(out), {x},
      [gp, norm](Node& self) {
        const auto& a = gp->adjacency(norm);
        Node& in = *self.inputs[0];
        const Device d = self.value.device();
        const int64_t owned = gp->n_owned(), all = gp->n_owned() + gp->n_halo();
        if (gp->n_halo() == 0) {
          kernels::spmm(d, a.backward_on(d).view(), self.grad.view(), in.grad_buffer().view(), true);
          return;
        }
        // Halo rows of the input gradient first, so they travel while the owned rows compute.
        Tensor full = Tensor::uninitialized(all, self.grad.cols(), d);
        kernels::spmm(d, row_slice(a.backward_on(d), owned, all), self.grad.view(),
                      rows_of(full.view(), owned, all));
        if (!gp->overlap())
          kernels::spmm(d, row_slice(a.backward_on(d), 0, owned), self.grad.view(),
                        rows_of(full.view(), 0, owned));
        gp->halo()->backward_begin(full.view());
        if (gp->overlap())
          kernels::spmm(d, row_slice(a.backward_on(d), 0, owned), self.grad.view(),
                        rows_of(full.view(), 0, owned));
        gp->halo()->backward_end(full.view());
        Tensor& gx = in.grad_buffer();
        kernels::axpby(d, gx.numel(), 1.f, full.data(), 1.f, gx.data());
      },
      "aggregate");
}

}  // namespace dgnn
