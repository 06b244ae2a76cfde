#pragma once
// Csr: an owning compressed-sparse-row matrix (64-bit offsets, 32-bit column indices).
// For a graph, row v lists the in-neighbours of v (the sources of edges u -> v), which is
// what aggregation reads: y[v] = sum over in-neighbours u of w(u,v) * x[u].
#include <cstdint>
#include <vector>

#include "dgnn/common/views.hpp"

namespace dgnn {

struct Csr {
  int64_t rows = 0;
  int64_t cols = 0;
  std::vector<int64_t> offsets;  // rows + 1 entries
  std::vector<int32_t> indices;  // nnz entries, sorted within each row
  std::vector<float> values;     // empty (all ones) or nnz entries

  int64_t nnz() const { return offsets.empty() ? 0 : offsets.back(); }
  bool weighted() const { return !values.empty(); }
  int64_t degree(int64_t r) const { return offsets[r + 1] - offsets[r]; }
  CsrView view() const {
    return {rows, cols, offsets.data(), indices.data(), values.empty() ? nullptr : values.data()};
  }
  // cols x rows; values follow their entries. Deterministic (stable counting sort).
  Csr transpose() const;
  // Bytes held by the arrays.
  int64_t memory_bytes() const;
};

// Builds a CSR of `rows` x `cols` from COO triples (row[i], col[i], w[i]) by counting sort;
// w may be empty. Entries within a row end up sorted by column; duplicates are kept.
Csr csr_from_coo(int64_t rows, int64_t cols, const std::vector<int32_t>& row,
                 const std::vector<int32_t>& col, const std::vector<float>& w);

}  // namespace dgnn
