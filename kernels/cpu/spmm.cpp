// Sparse-dense product over CSR: the aggregation at the heart of every GNN layer.
#include <cstring>

#include "dgnn/kernels/cpu/cpu_kernels.hpp"

namespace dgnn::kernels::cpu {

namespace {

constexpr int64_t kPrefetch = 16;

// One output row, summed in the row's index order so the result never depends on threading.
// kWeighted is a template flag so the unweighted (most common) path has no per-entry branch
// or load of a value array.
template <bool kWeighted>
inline void spmm_row(const CsrView& a, ConstMatView x, float* __restrict out, int64_t r,
                     bool accumulate) {
  const int64_t f = x.cols;
  if (!accumulate) std::memset(out, 0, size_t(f) * sizeof(float));
  const int64_t end = a.offsets[r + 1];
  const int64_t nnz = a.offsets[a.rows];
  for (int64_t e = a.offsets[r]; e < end; ++e) {
    // The gathered rows are random reads, latency- not bandwidth-bound: ask for a row a few
    // entries ahead (across row ends too) so several misses are in flight at once.
    if (e + kPrefetch < nnz) {
      const float* ahead = x.row(a.indices[e + kPrefetch]);
      for (int64_t c = 0; c < f; c += 16) __builtin_prefetch(ahead + c);  // every cache line
    }
    const float* __restrict in = x.row(a.indices[e]);
    if constexpr (kWeighted) {
      const float w = a.values[e];
#pragma omp simd
      for (int64_t c = 0; c < f; ++c) out[c] += w * in[c];
    } else {
#pragma omp simd
      for (int64_t c = 0; c < f; ++c) out[c] += in[c];
    }
  }
}

template <bool kWeighted>
void spmm_impl(const CsrView& a, ConstMatView x, MatView y, bool accumulate) {
  // Degree is skewed in real graphs (power-law hubs), so rows are handed out dynamically in
  // chunks small enough to balance and large enough that scheduling stays cheap.
  const bool parallel = a.nnz() * x.cols >= (1 << 14);
#pragma omp parallel for schedule(dynamic, 64) if (parallel)
  for (int64_t r = 0; r < a.rows; ++r) spmm_row<kWeighted>(a, x, y.row(r), r, accumulate);
}

}  // namespace

void spmm(const CsrView& a, ConstMatView x, MatView y, bool accumulate) {
  if (a.rows == 0 || x.cols == 0) return;
  if (a.values)
    spmm_impl<true>(a, x, y, accumulate);
  else
    spmm_impl<false>(a, x, y, accumulate);
}

}  // namespace dgnn::kernels::cpu
