// What each step of a snapshot sequence reads: its vertex features (static, or one-hot degree
// buckets per snapshot) and, on a GPU, its adjacency uploaded as a difference from the last.
#include <algorithm>
#include <memory>

#include "dgnn/common/error.hpp"
#include "dgnn/gnn/temporal/temporal_trainer.hpp"
#include "dgnn/kernels/device_snapshot.hpp"

namespace dgnn {

namespace {

// log2 degree buckets: 0, 1, 2-3, 4-7, ... up to 2^14+; in and (when directed) out degree.
constexpr int kBuckets = 16;

int bucket(int64_t d) {
  int b = 0;
  while (d > 0 && b < kBuckets - 1) {
    d >>= 1;
    ++b;
  }
  return b;
}

// Rows `rows` (null: every vertex, in id order) of snapshot `a`'s degree buckets. A row reads
// its vertex's in-edges and, directed, the entries pointing at it: what a rank's vertex_share
// holds whole for its own vertices.
Tensor degree_features(const Csr& a, int64_t n, bool directed,
                       const std::vector<int64_t>* rows = nullptr) {
  const int64_t m = rows ? int64_t(rows->size()) : n;
  Tensor x(m, directed ? 2 * kBuckets : kBuckets);
  std::vector<int64_t> out_deg(size_t(directed ? n : 0), 0);
  if (directed)
    for (int64_t e = 0; e < a.nnz(); ++e) ++out_deg[size_t(a.indices[size_t(e)])];
  for (int64_t i = 0; i < m; ++i) {
    const int64_t v = rows ? (*rows)[size_t(i)] : i;
    x.at(i, bucket(a.degree(v))) = 1.f;
    if (directed) x.at(i, kBuckets + bucket(out_deg[size_t(v)])) = 1.f;
  }
  return x;
}

}  // namespace

int64_t degree_feature_dim(const TemporalGraph& g) { return g.directed ? 2 * kBuckets : kBuckets; }

std::vector<Var> snapshot_features(const TemporalGraph& g, const std::vector<float>& features,
                                   int64_t feature_dim, int64_t* out_dim) {
  std::vector<Var> out;
  const int64_t n = g.num_vertices;
  if (feature_dim > 0) {
    *out_dim = feature_dim;
    out.emplace_back(Tensor::from_host(features.data(), n, feature_dim));
    return out;  // one tensor: the same features at every step
  }
  *out_dim = degree_feature_dim(g);
  SnapshotCursor cur(g);
  do out.emplace_back(degree_features(cur.current(), n, g.directed));
  while (cur.next());
  return out;
}

std::vector<Var> snapshot_features(const TemporalGraph& g, const std::vector<int64_t>& rows,
                                   const std::vector<float>& features, int64_t feature_dim,
                                   int64_t* out_dim) {
  std::vector<Var> out;
  const int64_t m = int64_t(rows.size());
  if (feature_dim > 0) {
    DGNN_CHECK(int64_t(features.size()) == g.num_vertices * feature_dim, ShapeError,
               "need feature_dim features per vertex");
    *out_dim = feature_dim;
    Tensor x = Tensor::uninitialized(m, feature_dim);
    for (int64_t i = 0; i < m; ++i)
      std::copy_n(features.data() + rows[size_t(i)] * feature_dim, feature_dim,
                  x.data() + i * feature_dim);
    out.emplace_back(std::move(x));
    return out;
  }
  *out_dim = degree_feature_dim(g);
  SnapshotCursor cur(g);
  do out.emplace_back(degree_features(cur.current(), g.num_vertices, g.directed, &rows));
  while (cur.next());
  return out;
}

std::vector<Var> snapshot_features(const TemporalGraph& g, const std::vector<Csr>& held,
                                   const std::vector<float>& features, int64_t feature_dim,
                                   int64_t* out_dim) {
  if (feature_dim > 0) return snapshot_features(g, features, feature_dim, out_dim);
  DGNN_CHECK(int(held.size()) == g.num_snapshots(), ShapeError, "need a slot per snapshot");
  *out_dim = degree_feature_dim(g);
  std::vector<Var> out(held.size());
  for (size_t s = 0; s < held.size(); ++s)
    if (held[s].rows == g.num_vertices)
      out[s] = Var(degree_features(held[s], g.num_vertices, g.directed));
  return out;
}

SnapshotUploads upload_snapshots_by_difference(const TemporalGraph& g,
                                               const std::vector<std::unique_ptr<GraphView>>& views,
                                               Device dev) {
  DGNN_CHECK(int(views.size()) == g.num_snapshots(), ShapeError, "need one view per snapshot");
  SnapshotUploads up;
  kernels::DeviceStructure cur;
  const GraphView* prev = nullptr;
  int prev_t = -1;
  for (int t = 0; t < g.num_snapshots(); ++t) {
    if (!views[size_t(t)]) continue;  // not held here
    const GraphView& v = *views[size_t(t)];
    DGNN_CHECK(v.n_halo() == 0 && !v.bipartite() && v.structure().rows == g.num_vertices,
               ShapeError, "upload_snapshots_by_difference: whole-graph views only");
    if (!prev) {
      cur = kernels::upload_structure(dev, v.structure().view());
      up.bytes += cur.bytes();
    } else {
      SnapshotDiff computed;
      // g's differences delete and re-add an entry whose weight changes; the GCN adjacency
      // does not read weights, so a weighted graph's structural difference is smaller.
      const bool from_g = prev_t == t - 1 && g.diffs.size() >= size_t(t) && !g.weighted &&
                          !g.diffs[size_t(t) - 1].whole;
      if (!from_g) computed = csr_difference(prev->structure(), v.structure(), false);
      const SnapshotDiff& d = from_g ? g.diffs[size_t(t) - 1] : computed;
      cur =
          kernels::apply_structure_diff(cur, d.add_src, d.add_dst, d.del_src, d.del_dst, &up.bytes);
      ++up.as_difference;
    }
    prev = &v;
    prev_t = t;
    const GraphView::Adjacency& adj = v.adjacency(Norm::gcn);
    const int64_t n = adj.forward.rows, nnz = adj.forward.nnz();
    // What uploading it whole would move: offsets (and their 32-bit copy), indices, values; a
    // directed snapshot's transpose as much again.
    const int64_t whole = 8 * (n + 1) + (nnz < (int64_t(1) << 31) ? 4 * (n + 1) : 0) + 8 * nnz;
    up.whole_bytes += adj.symmetric ? whole : 2 * whole;
    auto forward = std::make_unique<kernels::DeviceCsr>(
        kernels::gcn_adjacency_on_device(cur, adj.forward.offsets));
    // Directed: the backward (transposed) adjacency is built from it on the device too.
    if (!adj.symmetric)
      adj.adopt_backward(dev, std::make_unique<kernels::DeviceCsr>(
                                  kernels::transpose_on_device(*forward, adj.transposed.offsets)));
    adj.adopt_forward(dev, std::move(forward));
    ++up.snapshots;
  }
  return up;
}

}  // namespace dgnn
