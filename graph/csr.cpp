#include "dgnn/graph/csr.hpp"

#include <limits>
#include <string>

#include "dgnn/common/error.hpp"

namespace dgnn {

namespace {

// Counting-sort pass: entries are visited in the given order and placed stably by `key`, so a
// pass over entries already ordered by a secondary key keeps that order within each bucket.
std::vector<int64_t> bucket_offsets(int64_t buckets, const std::vector<int32_t>& key) {
  std::vector<int64_t> off(buckets + 1, 0);
  for (int32_t k : key) ++off[k + 1];
  for (int64_t b = 0; b < buckets; ++b) off[b + 1] += off[b];
  return off;
}

}  // namespace

Csr Csr::transpose() const {
  Csr t;
  t.rows = cols;
  t.cols = rows;
  t.offsets = bucket_offsets(cols, indices);
  t.indices.resize(indices.size());
  if (weighted()) t.values.resize(values.size());
  std::vector<int64_t> next(t.offsets.begin(), t.offsets.end() - 1);
  // Rows are visited in ascending order, so each transposed row comes out sorted.
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t e = offsets[r]; e < offsets[r + 1]; ++e) {
      int64_t pos = next[indices[e]]++;
      t.indices[pos] = int32_t(r);
      if (weighted()) t.values[pos] = values[e];
    }
  }
  return t;
}

int64_t Csr::memory_bytes() const {
  return int64_t(offsets.size() * sizeof(int64_t) + indices.size() * sizeof(int32_t) +
                 values.size() * sizeof(float));
}

Csr csr_from_coo(int64_t rows, int64_t cols, const std::vector<int32_t>& row,
                 const std::vector<int32_t>& col, const std::vector<float>& w) {
  DGNN_CHECK(row.size() == col.size(), ShapeError, "csr_from_coo: row and col sizes differ");
  DGNN_CHECK(w.empty() || w.size() == row.size(), ShapeError,
             "csr_from_coo: weights must be empty or one per entry");
  DGNN_CHECK(rows >= 0 && cols >= 0 && cols <= std::numeric_limits<int32_t>::max(), ShapeError,
             "csr_from_coo: bad shape");
  const int64_t nnz = int64_t(row.size());
  for (int64_t i = 0; i < nnz; ++i) {
    DGNN_CHECK(row[i] >= 0 && row[i] < rows && col[i] >= 0 && col[i] < cols, ShapeError,
               "csr_from_coo: entry " + std::to_string(i) + " (" + std::to_string(row[i]) + ", " +
                   std::to_string(col[i]) + ") is outside " + std::to_string(rows) + " x " +
                   std::to_string(cols));
  }
  const bool weighted = !w.empty();

  // LSD radix sort in two counting passes: by column, then stably by row, which leaves every
  // row's entries sorted by column (and equal entries in input order: deterministic). Each
  // pass reads sequentially and scatters the entries themselves, not an index, so no pass
  // gathers randomly.
  std::vector<int32_t> row1(nnz), col1(nnz);
  std::vector<float> w1(weighted ? nnz : 0);
  {
    std::vector<int64_t> next = bucket_offsets(cols, col);
    for (int64_t i = 0; i < nnz; ++i) {
      const int64_t pos = next[col[i]]++;
      row1[pos] = row[i];
      col1[pos] = col[i];
      if (weighted) w1[pos] = w[i];
    }
  }
  Csr c;
  c.rows = rows;
  c.cols = cols;
  c.offsets = bucket_offsets(rows, row);
  c.indices.resize(nnz);
  if (weighted) c.values.resize(nnz);
  std::vector<int64_t> next(c.offsets.begin(), c.offsets.end() - 1);
  for (int64_t i = 0; i < nnz; ++i) {
    const int64_t pos = next[row1[i]]++;
    c.indices[pos] = col1[i];
    if (weighted) c.values[pos] = w1[i];
  }
  return c;
}

}  // namespace dgnn
