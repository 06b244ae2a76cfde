#include "dgnn/gnn/core/graph_view.hpp"

#include <algorithm>
#include <climits>
#include <cmath>
#include <numeric>

#include "dgnn/common/error.hpp"
#include "dgnn/gnn/core/ops.hpp"
#include "dgnn/kernels/block_norm.hpp"
#include "dgnn/kernels/buffer.hpp"
#include "dgnn/kernels/kernels.hpp"
#include "dgnn/kernels/minibatch_kernels.hpp"

namespace dgnn {

namespace {
// A view meant for a GPU where none can run is refused when it is made, not at its first use.
void require_usable(Device dev) {
  if (dev == Device::cpu) return;
  static const std::string why_not = [] {  // asked once per process: views are made per batch
    std::string why;
    return kernels::cuda_available(&why) ? std::string() : why;
  }();
  if (!why_not.empty())
    throw DeviceError("GraphView on " + std::string(device_name(dev)) + ": " + why_not);
}
}  // namespace

GraphView::GraphView(const Csr& in, Device dev)
    : in_(in), n_owned_(in.rows), n_halo_(0), n_interior_(in.rows), dev_(dev) {
  require_usable(dev);
  DGNN_CHECK(in.rows == in.cols, ShapeError, "GraphView of a whole graph needs a square CSR");
  ids_deferred_ = true;  // the dense ids 0..n-1, made if asked for
}

IdSubset::IdSubset(std::shared_ptr<const std::vector<int64_t>> of,
                   const std::vector<int32_t>& positions)
    : of_(std::move(of)), size_(int64_t(positions.size())) {
  const int64_t n = of_ ? int64_t(of_->size()) : 0;
  for (size_t k = 0; k < positions.size(); ++k)
    DGNN_CHECK(positions[k] >= 0 && positions[k] < n && (k == 0 || positions[k - 1] < positions[k]),
               ShapeError, "IdSubset: positions must be ascending and within the list");
  const size_t words = size_t((n + 63) / 64);
  if (words * 8 < positions.size() * 4) {
    bits_.assign(words, 0);
    for (int32_t p : positions) bits_[size_t(p) / 64] |= uint64_t(1) << (p % 64);
  } else {
    positions_ = positions;
  }
}

std::vector<int64_t> IdSubset::ids() const {
  std::vector<int64_t> out;
  out.reserve(size_t(size_));
  if (!bits_.empty()) {
    for (size_t w = 0; w < bits_.size(); ++w)
      for (uint64_t b = bits_[w]; b; b &= b - 1)
        out.push_back((*of_)[w * 64 + size_t(__builtin_ctzll(b))]);
  } else {
    for (int32_t p : positions_) out.push_back((*of_)[size_t(p)]);
  }
  return out;
}

GraphView::GraphView(Csr local_in, std::shared_ptr<const std::vector<int64_t>> owned_ids,
                     IdSubset halo_ids, std::vector<int64_t> halo_in_degree, HaloExchange* halo,
                     Device dev)
    : GraphView(std::move(local_in), owned_ids ? int64_t(owned_ids->size()) : -1,
                std::vector<int64_t>(), std::move(halo_in_degree), halo, dev, Deferred{}) {
  DGNN_CHECK(int64_t(halo_ids.size()) == n_halo_, ShapeError,
             "need one global id per halo vertex");
  owned_ids_ = std::move(owned_ids);
  halo_ids_ = std::move(halo_ids);
  ids_deferred_ = true;
}

const std::vector<int64_t>& GraphView::ids() const {
  std::call_once(ids_once_, [this] {
    if (!ids_deferred_) return;
    if (owned_ids_) {
      const std::vector<int64_t> halo = halo_ids_.ids();
      global_ids_.reserve(owned_ids_->size() + halo.size());
      global_ids_.assign(owned_ids_->begin(), owned_ids_->end());
      global_ids_.insert(global_ids_.end(), halo.begin(), halo.end());
    } else {
      global_ids_.resize(size_t(n_owned_));
      std::iota(global_ids_.begin(), global_ids_.end(), int64_t{0});
    }
  });
  return global_ids_;
}

GraphView::GraphView(Csr local_in, int64_t n_owned, std::vector<int64_t> global_ids,
                     std::vector<int64_t> halo_in_degree, HaloExchange* halo, Device dev)
    : GraphView(std::move(local_in), n_owned, std::move(global_ids), std::move(halo_in_degree),
                halo, dev, Deferred{}) {
  DGNN_CHECK(int64_t(global_ids_.size()) == in_.cols, ShapeError,
             "need one global id per local vertex");
}

GraphView::GraphView(Csr local_in, int64_t n_owned, std::vector<int64_t> global_ids,
                     std::vector<int64_t> halo_in_degree, HaloExchange* halo, Device dev,
                     Deferred)
    : in_(std::move(local_in)),
      n_owned_(n_owned),
      n_halo_(in_.cols - n_owned),
      global_ids_(std::move(global_ids)),
      halo_in_degree_(std::move(halo_in_degree)),
      halo_(halo),
      dev_(dev) {
  require_usable(dev);
  DGNN_CHECK(in_.rows == n_owned && n_halo_ >= 0, ShapeError,
             "local CSR must be n_owned x (n_owned + n_halo)");
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

GraphView::GraphView(Bipartite, Csr block_in, int64_t n_dst, std::vector<int64_t> global_ids,
                     std::vector<int64_t> src_degree, Device dev)
    : in_(std::move(block_in)),
      n_owned_(n_dst),
      n_halo_(in_.cols - n_dst),
      n_interior_(n_dst),
      bipartite_(true),
      global_ids_(std::move(global_ids)),
      halo_in_degree_(std::move(src_degree)),
      dev_(dev) {
  require_usable(dev);
  DGNN_CHECK(in_.rows == n_dst && n_halo_ >= 0, ShapeError,
             "a block's CSR must be n_dst x n_src with n_src >= n_dst");
  DGNN_CHECK(int64_t(global_ids_.size()) == in_.cols, ShapeError,
             "a block needs one global id per source vertex");
  DGNN_CHECK(int64_t(halo_in_degree_.size()) == in_.cols, ShapeError,
             "a block needs the whole graph's in-degree of every source vertex");
}

GraphView::GraphView(Bipartite, kernels::DeviceBlock block)
    : n_owned_(block.n_dst),
      n_halo_(block.n_src - block.n_dst),
      n_interior_(block.n_dst),
      bipartite_(true),
      dev_(block.offsets.device()),
      block_(std::make_unique<kernels::DeviceBlock>(std::move(block))) {
  DGNN_CHECK(n_owned_ >= 0 && n_halo_ >= 0, ShapeError,
             "a block needs n_src >= n_dst >= 0, got " + std::to_string(block_->n_dst) +
                 " destinations and " + std::to_string(block_->n_src) + " sources");
  DGNN_CHECK(block_->src.bytes() == size_t(block_->n_src) * sizeof(int64_t), ShapeError,
             "a device block needs one global id per source vertex");
  in_.rows = n_owned_;
  in_.cols = block_->n_src;
}

const Csr& GraphView::structure() const {
  DGNN_CHECK(!block_, Error, "GraphView::structure: a device-sampled block has no host structure");
  return in_;
}

const int64_t* GraphView::global_ids() const {
  if (!block_) return ids().data();
  DGNN_CHECK(dev_ == Device::cpu, Error,
             "GraphView::global_ids: a device block's ids are in device memory (global_ids_on)");
  return block_->src.as<const int64_t>();
}

namespace {

kernels::BlockNorm block_norm_kind(Norm n) {
  switch (n) {
    case Norm::sum:
      return kernels::BlockNorm::sum;
    case Norm::mean:
      return kernels::BlockNorm::mean;
    case Norm::gcn:
      return kernels::BlockNorm::gcn;
  }
  return kernels::BlockNorm::sum;
}

int64_t non_self_entries(const Csr& in, int64_t v) {
  return block_norm::non_self(in.indices.data() + in.offsets[v], in.degree(v), v);
}

// In-degree (self loops not counted) per column: a row's own non-self entries for owned vertices
// of a whole graph or a rank's part (the partitioner reports halo degrees, likewise without self
// loops); on a block, the whole graph's degrees of its sources. The per-row arithmetic is
// kernels/block_norm.hpp's, shared with the block kernels of both backends: on a block a row's
// non-self entries are scaled by degree / entries sampled, so that a sum over the sample
// estimates the sum over the whole neighbourhood without bias (and equals it when every neighbour
// was taken); on a whole graph that scale is exactly 1.
std::vector<int64_t> degrees(const Csr& in, int64_t n_owned, bool bipartite,
                             const std::vector<int64_t>& other_degree) {
  if (bipartite) return other_degree;
  std::vector<int64_t> d(size_t(in.cols));
  for (int64_t v = 0; v < n_owned; ++v) d[size_t(v)] = non_self_entries(in, v);
  for (int64_t v = n_owned; v < in.cols; ++v) d[size_t(v)] = other_degree[size_t(v - n_owned)];
  return d;
}

// 1/sqrt(deg + 1) from a table computed once per column.
struct InvSqrtTable {
  const double* inv_sqrt;
  double operator()(int64_t u) const { return inv_sqrt[u]; }
};

// GCN weights over A + I (block_norm::gcn_row): one self-loop entry per row inserted in column
// order (an existing self-loop is replaced, as PyG's add_remaining_self_loops does), every entry
// scaled by 1/sqrt(deg_u deg_v), deg counting the self loop.
Csr gcn_adjacency(const Csr& in, const std::vector<int64_t>& degree) {
  std::vector<double> inv_sqrt(size_t(in.cols));
  for (int64_t v = 0; v < in.cols; ++v)
    inv_sqrt[size_t(v)] = block_norm::gcn_inv_sqrt(degree[size_t(v)]);
  Csr out;
  out.rows = in.rows;
  out.cols = in.cols;
  out.offsets.assign(size_t(in.rows) + 1, 0);
  for (int64_t v = 0; v < in.rows; ++v)
    out.offsets[size_t(v) + 1] =
        out.offsets[size_t(v)] +
        block_norm::gcn_row_length(in.indices.data() + in.offsets[v], in.degree(v), v);
  out.indices.resize(size_t(out.offsets.back()));
  out.values.resize(size_t(out.offsets.back()));
  for (int64_t v = 0; v < in.rows; ++v)
    block_norm::gcn_row(in.indices.data() + in.offsets[v], in.degree(v), v,
                        block_norm::DegreeArray{degree.data()}, InvSqrtTable{inv_sqrt.data()},
                        out.indices.data() + out.offsets[size_t(v)],
                        out.values.data() + out.offsets[size_t(v)]);
  return out;
}

// Edge weights (or ones), non-self entries times the row's scale: a block's sampled sum.
Csr scaled_sum_adjacency(const Csr& in, const std::vector<int64_t>& degree) {
  Csr out = in;
  out.values.resize(size_t(in.nnz()));
  for (int64_t v = 0; v < in.rows; ++v) {
    const int64_t b = in.offsets[v];
    block_norm::sum_row(in.indices.data() + b, in.values.empty() ? nullptr : in.values.data() + b,
                        in.degree(v), v, degree.data(), out.values.data() + b);
  }
  return out;
}

Csr mean_adjacency(const Csr& in) {
  Csr out = in;
  out.values.assign(size_t(in.nnz()), 0.f);
  for (int64_t v = 0; v < in.rows; ++v)
    block_norm::mean_row(in.degree(v), out.values.data() + in.offsets[v]);
  return out;
}

// A rank's part (rectangular: never `symmetric`) whose owned columns are symmetric: the
// transpose's owned rows equal the forward rows' owned entries, entry for entry, and its halo
// rows are the forward rows' halo entries, so none of it is kept (Adjacency::owned_symmetric).
// Left whole when any owned row differs.
void drop_transpose_if_owned_symmetric(GraphView::Adjacency& a, int64_t n_owned) {
  const Csr& f = a.forward;
  const Csr& t = a.transposed;
  if (f.values.empty() != t.values.empty()) return;
  for (int64_t r = 0; r < f.rows; ++r) {
    const int64_t b = f.offsets[size_t(r)], e = f.offsets[size_t(r) + 1];
    const auto first = f.indices.begin() + b;
    const int64_t k = std::lower_bound(first, f.indices.begin() + e, int32_t(n_owned)) - first;
    const int64_t tb = t.offsets[size_t(r)];
    if (t.offsets[size_t(r) + 1] - tb != k || !std::equal(first, first + k, t.indices.begin() + tb))
      return;
    if (!f.values.empty() &&
        !std::equal(f.values.begin() + b, f.values.begin() + b + k, t.values.begin() + tb))
      return;
  }
  a.transposed = Csr{};
  a.owned_symmetric = true;
}

}  // namespace

const GraphView::Adjacency& GraphView::adjacency(Norm norm) const {
  std::lock_guard<std::mutex> lock(adj_mutex_);
  auto& slot = adj_[int(norm)];
  if (!slot && block_) {
    auto a = std::make_unique<Adjacency>();
    kernels::BlockAdjacency m = kernels::block_adjacency(dev_, *block_, block_norm_kind(norm));
    a->adopt_both(dev_, std::move(m.forward), std::move(m.backward));
    slot = std::move(a);
  }
  if (!slot) {
    auto a = std::make_unique<Adjacency>();
    switch (norm) {
      case Norm::sum:
        a->forward = bipartite_
                         ? scaled_sum_adjacency(in_, degrees(in_, n_owned_, true, halo_in_degree_))
                         : in_;
        break;
      case Norm::mean:
        a->forward = mean_adjacency(in_);
        break;
      case Norm::gcn:
        a->forward = gcn_adjacency(in_, degrees(in_, n_owned_, bipartite_, halo_in_degree_));
        break;
    }
    a->transposed = a->forward.transpose();
    const Csr& f = a->forward;
    const Csr& t = a->transposed;
    a->symmetric = f.rows == t.rows && f.offsets == t.offsets && f.indices == t.indices &&
                   f.values == t.values;
    if (a->symmetric)
      a->transposed = Csr{};
    else if (!bipartite_ && n_halo_ > 0 && norm != Norm::mean)
      drop_transpose_if_owned_symmetric(*a, n_owned_);
    // A rank's part reads the halo degrees only here (bipartite blocks keep theirs: sum).
    if (norm == Norm::gcn && !bipartite_) std::vector<int64_t>().swap(halo_in_degree_);
    slot = std::move(a);
  }
  return *slot;
}

const int64_t* GraphView::global_ids_on(Device dev) const {
  if (block_) {
    DGNN_CHECK(dev == dev_, DeviceError,
               std::string("GraphView::global_ids_on(") + device_name(dev) +
                   "): this block lives on " + device_name(dev_));
    return block_->src.as<const int64_t>();
  }
  if (dev == Device::cpu) return ids().data();
  const std::vector<int64_t>& host = ids();
  std::lock_guard<std::mutex> lock(adj_mutex_);
  if (ids_on_device_.bytes() == 0 && !host.empty())
    ids_on_device_ = kernels::Buffer::upload(dev, host);
  return ids_on_device_.as<const int64_t>();
}

std::vector<int32_t> GraphView::Adjacency::owned_ends() const {
  const Csr& f = forward;
  std::vector<int32_t> end(size_t(f.rows));
  for (int64_t r = 0; r < f.rows; ++r) {
    const auto first = f.indices.begin() + f.offsets[size_t(r)];
    end[size_t(r)] = int32_t(
        std::lower_bound(first, f.indices.begin() + f.offsets[size_t(r) + 1], int32_t(f.rows)) -
        first);
  }
  return end;
}

Csr GraphView::Adjacency::halo_transpose() const {
  DGNN_CHECK(owned_symmetric, Error,
             "GraphView::Adjacency::halo_transpose: only an owned-symmetric adjacency's");
  const Csr& f = forward;
  const int64_t owned = f.rows;
  const std::vector<int32_t> owned_end = owned_ends();
  Csr t;
  t.rows = f.cols - owned;
  t.cols = owned;
  t.offsets.assign(size_t(t.rows) + 1, 0);
  for (int64_t r = 0; r < owned; ++r)
    for (int64_t k = f.offsets[size_t(r)] + owned_end[size_t(r)]; k < f.offsets[size_t(r) + 1]; ++k)
      ++t.offsets[size_t(f.indices[size_t(k)] - owned) + 1];
  for (int64_t h = 0; h < t.rows; ++h) t.offsets[size_t(h) + 1] += t.offsets[size_t(h)];
  t.indices.resize(size_t(t.offsets.back()));
  if (!f.values.empty()) t.values.resize(t.indices.size());
  std::vector<int64_t> at(t.offsets.begin(), t.offsets.end() - 1);
  // Rows in ascending order: each halo row's entries come out sorted by owned row, as a
  // stable counting-sort transpose lists them.
  for (int64_t r = 0; r < owned; ++r)
    for (int64_t k = f.offsets[size_t(r)] + owned_end[size_t(r)]; k < f.offsets[size_t(r) + 1];
         ++k) {
      const int64_t pos = at[size_t(f.indices[size_t(k)] - owned)]++;
      t.indices[size_t(pos)] = int32_t(r);
      if (!f.values.empty()) t.values[size_t(pos)] = f.values[size_t(k)];
    }
  return t;
}

const Csr& GraphView::Adjacency::backward() const {
  DGNN_CHECK(!owned_symmetric, Error,
             "GraphView::Adjacency::backward: an owned-symmetric adjacency keeps no transpose "
             "(owned_ends() and halo_transpose() give it)");
  return symmetric ? forward : transposed;
}

const kernels::DeviceCsr& GraphView::Adjacency::on(Device dev, bool backward_dir) const {
  if (symmetric) backward_dir = false;  // one copy serves both directions
  std::lock_guard<std::mutex> lock(mutex_);
  auto& slot = copies_[backward_dir ? 1 : 0][int(dev)];
  if (!slot && device_only_)
    throw DeviceError(std::string("GraphView: a device block's adjacency is not on ") +
                      device_name(dev));
  if (!slot && backward_dir && owned_symmetric) {
    // The CPU reads the split form (aggregate); a GPU gets the whole transpose, uploaded from a
    // host copy that is not kept.
    DGNN_CHECK(dev != Device::cpu, Error,
               "GraphView::Adjacency::backward_on(cpu): an owned-symmetric adjacency has no "
               "whole transpose on the host");
    const Csr whole = forward.transpose();
    slot = std::make_unique<kernels::DeviceCsr>(dev, whole.view());
  }
  if (!slot)
    slot = std::make_unique<kernels::DeviceCsr>(dev, (backward_dir ? backward() : forward).view());
  return *slot;
}

GraphView::Adjacency::ColumnSpans GraphView::Adjacency::column_spans(
    const std::vector<std::pair<int64_t, int64_t>>& pieces, int64_t n_owned) const {
  DGNN_CHECK(!device_only_, ShapeError, "column_spans: a device block has no host matrix");
  const Csr& a = forward;
  // The boundaries in column order: n_owned, then every piece's first column after the first.
  std::vector<std::pair<int64_t, size_t>> firsts;  // (first column, piece)
  for (size_t p = 0; p < pieces.size(); ++p) firsts.emplace_back(pieces[p].first, p);
  std::sort(firsts.begin(), firsts.end());
  int64_t expect = n_owned;
  for (auto& [first, p] : firsts) {
    DGNN_CHECK(first == expect && pieces[p].second > first, ShapeError,
               "column_spans: the pieces must cover the halo columns, one run each");
    expect = pieces[p].second;
  }
  DGNN_CHECK(expect == a.cols, ShapeError, "column_spans: the pieces must cover the halo columns");
  ColumnSpans s;
  s.at.resize(pieces.size());
  std::vector<int64_t> cut{n_owned};  // cut[j]: boundary j
  for (size_t j = 0; j < firsts.size(); ++j) {
    s.at[firsts[j].second] = j;
    if (j > 0) cut.push_back(firsts[j].first);
  }
  s.bounds.assign(cut.size(), std::vector<int32_t>(size_t(a.rows)));
#pragma omp parallel for schedule(dynamic, 256)
  for (int64_t r = 0; r < a.rows; ++r) {
    const int64_t e0 = a.offsets[r], e1 = a.offsets[r + 1];
    int64_t e = e0;
    for (size_t j = 0; j < cut.size(); ++j) {
      while (e < e1 && a.indices[size_t(e)] < cut[j]) ++e;
      s.bounds[j][size_t(r)] = int32_t(e - e0);
    }
  }
  return s;
}

void GraphView::Adjacency::adopt_forward(Device dev,
                                         std::unique_ptr<kernels::DeviceCsr> copy) const {
  DGNN_CHECK(dev != Device::cpu && copy && copy->device() == dev, ShapeError,
             "adopt_forward: a copy on that GPU");
  std::lock_guard<std::mutex> lock(mutex_);
  copies_[0][int(dev)] = std::move(copy);
}

void GraphView::Adjacency::adopt_backward(Device dev,
                                          std::unique_ptr<kernels::DeviceCsr> copy) const {
  DGNN_CHECK(dev != Device::cpu && copy && copy->device() == dev && !symmetric, ShapeError,
             "adopt_backward: a copy on that GPU of a non-symmetric matrix's transpose");
  std::lock_guard<std::mutex> lock(mutex_);
  copies_[1][int(dev)] = std::move(copy);
}

void GraphView::Adjacency::adopt_both(Device dev, kernels::DeviceCsr forward,
                                      kernels::DeviceCsr backward) const {
  DGNN_CHECK(forward.device() == dev && backward.device() == dev, ShapeError,
             "adopt_both: both copies on that device");
  std::lock_guard<std::mutex> lock(mutex_);
  copies_[0][int(dev)] = std::make_unique<kernels::DeviceCsr>(std::move(forward));
  copies_[1][int(dev)] = std::make_unique<kernels::DeviceCsr>(std::move(backward));
  device_only_ = true;
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

Var dst_rows(const GraphView& g, const Var& x) {
  if (!x.defined()) throw Error("dst_rows: undefined input Var");
  return x.rows() == g.n_owned() ? x : slice_rows(x, 0, g.n_owned());
}

namespace {

void check_aggregate_input(const char* op, const GraphView& g, const Var& x) {
  if (!x.defined()) throw Error(std::string(op) + ": undefined input Var");
  DGNN_CHECK(x.rows() == g.n_input_rows(), ShapeError,
             std::string(op) + ": x has " + std::to_string(x.rows()) + " rows, the graph " +
                 (g.bipartite() ? "block has " + std::to_string(g.n_input_rows()) + " sources"
                                : "owns " + std::to_string(g.n_owned()) + " vertices"));
}

// out = a kernel over the rows of the forward adjacency `fwd` and x. On a rank of a job (a halo
// exchange), x is extended by its halo rows ([owned | halo]); interior rows read owned columns only
// and are computed while the halo rows travel. kernel(A's rows, input, out's rows, first row).
template <class Kernel>
Tensor forward_rows(const GraphView& g, const Var& x, const kernels::DeviceCsr& fwd,
                    Kernel kernel) {
  const Device dev = x.device();
  const int64_t f = x.cols(), n_owned = g.n_owned(), n_all = g.n_owned() + g.n_halo();
  Tensor out = Tensor::uninitialized(n_owned, f, dev);
  // A rank with no halo rows of its own may still owe its rows to peers (a directed graph's
  // plan is not symmetric): it exchanges whenever it has a plan, or its peers wait forever.
  if (!g.halo() || g.bipartite()) {
    kernel(fwd.view(), ConstMatView(x.value().view()), out.view(), int64_t(0));
    return out;
  }
  Tensor full = Tensor::uninitialized(n_all, f, dev);
  kernels::copy(dev, full.data(), dev, x.value().data(), size_t(x.value().numel()) * 4);
  const int64_t split = g.overlap() ? g.n_interior() : 0;
  g.halo()->forward_begin(full.view());
  kernel(row_slice(fwd, 0, split), ConstMatView(full.view()), rows_of(out.view(), 0, split),
         int64_t(0));
  g.halo()->forward_end(full.view());
  kernel(row_slice(fwd, split, n_owned), ConstMatView(full.view()),
         rows_of(out.view(), split, n_owned), split);
  return out;
}

// The halo path of a backward: halo(rows) writes the halo rows' gradient (sent to their owners
// as soon as it is made), owned(rows) the owned rows' (while the halo's travel, unless
// --no-overlap); what peers send back is added, then the whole is added into the input's grad.
template <class Halo, class Owned>
void backward_exchanged(const GraphView* gp, Node& in, int64_t f, Device d, Halo halo,
                        Owned owned_rows) {
  Tensor& gx = in.grad_buffer();
  const int64_t owned = gp->n_owned(), all = gp->n_owned() + gp->n_halo();
  Tensor full = Tensor::uninitialized(all, f, d);
  halo(rows_of(full.view(), owned, all));
  if (!gp->overlap()) owned_rows(rows_of(full.view(), 0, owned));
  gp->halo()->backward_begin(full.view());
  if (gp->overlap()) owned_rows(rows_of(full.view(), 0, owned));
  gp->halo()->backward_end(full.view());
  kernels::axpby(d, gx.numel(), 1.f, full.data(), 1.f, gx.data());
}

// The input gradient through the transposed adjacency `bwd` (input rows by output rows): on a
// rank of a job, its halo rows' gradient rows are computed first and sent to their owners (added
// there) while the owned rows compute. kernel(At's rows, out's rows, first row).
template <class Kernel>
void backward_rows(const GraphView* gp, const kernels::DeviceCsr& bwd, Node& in, int64_t f,
                   Device d, Kernel kernel) {
  const int64_t owned = gp->n_owned(), all = gp->n_owned() + gp->n_halo();
  if (!gp->halo() || gp->bipartite()) {  // as in forward_rows: peers may send gradients back
    kernel(bwd.view(), in.grad_buffer().view(), int64_t(0), true);
    return;
  }
  backward_exchanged(
      gp, in, f, d, [&](MatView rows) { kernel(row_slice(bwd, owned, all), rows, owned, false); },
      [&](MatView rows) { kernel(row_slice(bwd, 0, owned), rows, 0, false); });
}

// backward_rows through an owned-symmetric adjacency on the CPU (Adjacency::owned_symmetric):
// the halo rows from the transpose's halo rows (made here, freed on return), the owned rows from
// the forward rows' owned entries (the same entries in the same order as the transpose's owned
// rows, so the same bits).
void backward_owned_symmetric(const GraphView* gp, const GraphView::Adjacency& adj, Node& in,
                              ConstMatView gy) {
  const Csr halo = adj.halo_transpose();
  backward_exchanged(
      gp, in, gy.cols, Device::cpu,
      [&](MatView rows) { kernels::spmm(Device::cpu, halo.view(), gy, rows); },
      [&](MatView rows) {
        kernels::fill(Device::cpu, rows.data, rows.rows * rows.cols, 0.f);
        const std::vector<int32_t> owned_end = adj.owned_ends();
        kernels::spmm_span(Device::cpu, adj.forward.view(), nullptr, owned_end.data(), 0, gy,
                           rows);
      });
}

}  // namespace

namespace {

// Whether aggregate() streams the halo in pieces (HaloExchange::set_piece_rows) on this view.
bool streams(const GraphView& g, Device dev) {
  return g.halo() && !g.bipartite() && dev == Device::cpu && g.halo()->piece_rows() > 0;
}

// aggregate() over a streamed halo: the owned columns first, while the first pieces travel,
// then each piece's columns as it arrives, added in (each output row is summed in one fixed
// order: owned columns, then the pieces in arrival order). Backward: each halo piece's gradient
// rows (its rows of the transpose) go back as they are computed, the owned rows meanwhile.
Var aggregate_streamed(const GraphView& g, const Var& x, Norm norm) {
  const GraphView::Adjacency& adj = g.adjacency(norm);
  HaloExchange& halo = *g.halo();
  const GraphView::Adjacency::ColumnSpans spans = adj.column_spans(halo.pieces(), g.n_owned());
  const CsrView a = adj.forward.view();
  Tensor out = Tensor::uninitialized(g.n_owned(), x.cols(), Device::cpu);
  const ConstMatView xv(x.value().view());
  const MatView y = out.view();
  // --no-overlap: the owned columns before any piece moves, not while the first ones travel.
  const std::function<void()> owned = [&] {
    kernels::fill(Device::cpu, out.data(), out.numel(), 0.f);
    kernels::spmm_span(Device::cpu, a, nullptr, spans.owned_end(), 0, xv, y);
  };
  if (!g.overlap()) owned();
  halo.stream_forward(
      xv, g.overlap() ? owned : [] {},
      [&](size_t p, ConstMatView rows) {
        kernels::spmm_span(Device::cpu, a, spans.begin(p), spans.end(p), halo.pieces()[p].first,
                           rows, y);
      });
  const GraphView* gp = &g;
  return make_op(
      std::move(out), {x},
      [gp, norm](Node& self) {
        const GraphView::Adjacency& adj = gp->adjacency(norm);
        // An owned-symmetric adjacency: the owned rows are the forward rows' owned entries and
        // the halo rows are made here (Adjacency::owned_symmetric).
        const bool split = adj.owned_symmetric;
        const Csr halo = split ? adj.halo_transpose() : Csr{};
        const Csr& bwd = split ? halo : adj.backward();
        HaloExchange& h = *gp->halo();
        const ConstMatView gy(self.grad.view());
        const MatView gx = self.inputs[0]->grad_buffer().view();
        const int64_t owned = gp->n_owned();
        const std::function<void()> owned_rows = [&] {
          if (split) {
            const std::vector<int32_t> owned_end = adj.owned_ends();
            kernels::spmm_span(Device::cpu, adj.forward.view(), nullptr, owned_end.data(), 0,
                               gy, gx);
            return;
          }
          CsrView at = bwd.view();
          at.rows = owned;
          kernels::spmm(Device::cpu, at, gy, gx, true);
        };
        h.stream_backward(
            [&](size_t p, MatView rows) {
              const auto [first, end] = h.pieces()[p];
              CsrView at = bwd.view();
              at.offsets += split ? first - owned : first;
              at.rows = end - first;
              kernels::spmm(Device::cpu, at, gy, rows);
            },
            gp->overlap() ? owned_rows : [] {}, gx);
        if (!gp->overlap()) owned_rows();
      },
      "aggregate", Reads::nothing());
}

}  // namespace

Var aggregate(const GraphView& g, const Var& x, Norm norm) {
  check_aggregate_input("aggregate", g, x);
  const Device dev = x.device();
  if (streams(g, dev)) return aggregate_streamed(g, x, norm);
  Tensor out = forward_rows(g, x, g.adjacency(norm).forward_on(dev),
                            [dev](const CsrView& a, ConstMatView in, MatView y, int64_t) {
                              kernels::spmm(dev, a, in, y);
                            });
  const GraphView* gp = &g;
  return make_op(
      std::move(out), {x},
      [gp, norm](Node& self) {
        const Device d = self.value.device();
        const ConstMatView gy(self.grad.view());
        const GraphView::Adjacency& adj = gp->adjacency(norm);
        if (d == Device::cpu && adj.owned_symmetric) {
          backward_owned_symmetric(gp, adj, *self.inputs[0], gy);
          return;
        }
        backward_rows(gp, adj.backward_on(d), *self.inputs[0], self.grad.cols(), d,
                      [d, gy](const CsrView& at, MatView gx, int64_t, bool acc) {
                        kernels::spmm(d, at, gy, gx, acc);
                      });
      },
      "aggregate", Reads::nothing());
}

namespace {

Var aggregate_extreme(const GraphView& g, const Var& x, bool is_max) {
  const char* op = is_max ? "aggregate_max" : "aggregate_min";
  check_aggregate_input(op, g, x);
  const Device dev = x.device();
  const int64_t f = x.cols();
  // Which input row each output entry came from, in the numbering of [owned | halo] (or the
  // block's sources): the backward routes each output gradient to exactly that row. Not kept
  // when no backward will run (evaluation, constant input).
  const bool backward = grad_enabled() && x.requires_grad();
  auto arg = std::make_shared<kernels::Buffer>(
      dev, backward ? size_t(g.n_owned() * f) * sizeof(int32_t) : 0);
  int32_t* ap = backward ? arg->as<int32_t>() : nullptr;
  // The mean adjacency: the in-neighbours as the graph lists them (no self loop added), the same
  // on every rank count.
  Tensor out = forward_rows(
      g, x, g.adjacency(Norm::mean).forward_on(dev),
      [dev, ap, f, is_max](const CsrView& a, ConstMatView in, MatView y, int64_t first) {
        kernels::spmm_extreme(dev, a, in, y, ap ? ap + first * f : nullptr, is_max);
      });
  const GraphView* gp = &g;
  return make_op(
      std::move(out), {x},
      [gp, arg](Node& self) {
        const Device d = self.value.device();
        const ConstMatView gy(self.grad.view());
        const int32_t* a = arg->as<const int32_t>();
        backward_rows(gp, gp->adjacency(Norm::mean).backward_on(d), *self.inputs[0],
                      self.grad.cols(), d,
                      [d, gy, a](const CsrView& at, MatView gx, int64_t first, bool acc) {
                        kernels::spmm_extreme_backward(d, at, first, a, gy, gx, acc);
                      });
      },
      op);
}

}  // namespace

Var aggregate_max(const GraphView& g, const Var& x) { return aggregate_extreme(g, x, true); }
Var aggregate_min(const GraphView& g, const Var& x) { return aggregate_extreme(g, x, false); }

}  // namespace dgnn
