#pragma once
// The normalised adjacencies (GCN, sum, mean), one row at a time, written once for every caller
// (as sample_draw.hpp is): the host compiler builds it into gnn/core/graph_view.cpp (a whole
// graph, a rank's part, a host block) and into the CPU reference, kernels/cpu/block_adjacency.cpp,
// and nvcc into the CUDA kernels (one thread per row). Each value is the same double arithmetic in
// the same order, rounded to float once, so an adjacency is the same bits on either side.
// Row v of a block: its entries are local source numbers (source v is destination v, so entry
// u == v is a self loop); src_degree[u] is u's whole-graph in-degree without self loops.
#include <cmath>
#include <cstdint>

#include "dgnn/kernels/sample_draw.hpp"  // DGNN_HD

namespace dgnn::block_norm {

DGNN_HD inline int64_t non_self(const int32_t* row, int64_t len, int64_t v) {
  int64_t s = 0;
  for (int64_t e = 0; e < len; ++e) s += row[e] != v;
  return s;
}

// The scale of a row's non-self entries: degree / entries sampled, an unbiased estimate of the
// whole neighbourhood's sum (1 when nothing was sampled).
DGNN_HD inline double row_scale(int64_t degree, int64_t non_self_entries) {
  return non_self_entries > 0 ? double(degree) / double(non_self_entries) : 1.0;
}

DGNN_HD inline double gcn_inv_sqrt(int64_t degree) { return 1.0 / sqrt(double(degree + 1)); }

// Entries of row v in the GCN adjacency (A + I): its non-self entries and one self loop.
DGNN_HD inline int64_t gcn_row_length(const int32_t* row, int64_t len, int64_t v) {
  return non_self(row, len, v) + 1;
}

// Row v of A + I: the self loop inserted before the first non-self entry numbered above v (an
// existing self loop replaced), each entry scale * 1/sqrt(deg_u + 1) * 1/sqrt(deg_v + 1), scale
// being the row's for non-self entries and 1 for the self loop. degree(u): u's in-degree without
// self loops (a block's src_degree; for a whole graph, whose rows hold every in-edge, the row's
// own non-self entries: scale is then exactly 1). inv_sqrt(u): gcn_inv_sqrt(degree(u)), computed
// or read from a table of them (the same bits either way).
template <class Degree, class InvSqrt>
DGNN_HD inline void gcn_row(const int32_t* row, int64_t len, int64_t v, Degree degree,
                            InvSqrt inv_sqrt, int32_t* out_idx, float* out_val) {
  const double iv = inv_sqrt(v);
  const double scale = row_scale(degree(v), non_self(row, len, v));
  int64_t k = 0;
  bool placed = false;
  for (int64_t e = 0; e < len; ++e) {
    const int32_t u = row[e];
    if (u == v) continue;
    if (!placed && u > v) {
      out_idx[k] = int32_t(v);
      out_val[k++] = float(1.0 * iv * iv);
      placed = true;
    }
    out_idx[k] = u;
    out_val[k++] = float(scale * inv_sqrt(u) * iv);
  }
  if (!placed) {
    out_idx[k] = int32_t(v);
    out_val[k] = float(1.0 * iv * iv);
  }
}

// 1/sqrt(degree(u) + 1), computed per call.
template <class Degree>
struct InvSqrtOf {
  Degree degree;
  DGNN_HD double operator()(int64_t u) const { return gcn_inv_sqrt(degree(u)); }
};
template <class Degree>
DGNN_HD inline void gcn_row(const int32_t* row, int64_t len, int64_t v, Degree degree,
                            int32_t* out_idx, float* out_val) {
  gcn_row(row, len, v, degree, InvSqrtOf<Degree>{degree}, out_idx, out_val);
}

// Degrees read from an array (a block's src_degree).
struct DegreeArray {
  const int64_t* degree;
  DGNN_HD int64_t operator()(int64_t u) const { return degree[u]; }
};
DGNN_HD inline void gcn_row(const int32_t* row, int64_t len, int64_t v, const int64_t* src_degree,
                            int32_t* out_idx, float* out_val) {
  gcn_row(row, len, v, DegreeArray{src_degree}, out_idx, out_val);
}

// Row v of the sum adjacency: edge weights (w null: ones), non-self entries times the row's scale.
DGNN_HD inline void sum_row(const int32_t* row, const float* w, int64_t len, int64_t v,
                            const int64_t* src_degree, float* out_val) {
  const double scale = row_scale(src_degree[v], non_self(row, len, v));
  for (int64_t e = 0; e < len; ++e) {
    const float x = w ? w[e] : 1.f;
    out_val[e] = row[e] == v ? x : float(double(x) * scale);
  }
}

// Row v of the mean adjacency: 1 / (entries in the row), self loops included.
DGNN_HD inline void mean_row(int64_t len, float* out_val) {
  for (int64_t e = 0; e < len; ++e) out_val[e] = 1.0f / float(len);
}

}  // namespace dgnn::block_norm
