// Sparse-dense product over CSR: the aggregation at the heart of every GNN layer.
#include <bit>
#include <cstring>

#include "dgnn/kernels/cpu/cpu_kernels.hpp"

namespace dgnn::kernels::cpu {

namespace {

constexpr int64_t kPrefetch = 16;

// out += the entries [e0, e1) of A times their rows of x (column - col_base), summed in index
// order, so the result never depends on threading. kWeighted is a template flag so the unweighted
// (most common) path has no per-entry branch or load of a value array. Rows are asked for a few
// entries ahead, up to `ahead_end`, since the gathered rows are random reads, latency- not
// bandwidth-bound: several misses are then in flight at once.
template <bool kWeighted>
inline void add_entries(const CsrView& a, ConstMatView x, float* __restrict out, int64_t e0,
                        int64_t e1, int64_t ahead_end, int64_t col_base) {
  const int64_t f = x.cols;
  for (int64_t e = e0; e < e1; ++e) {
    if (e + kPrefetch < ahead_end) {
      const float* ahead = x.row(a.indices[e + kPrefetch] - col_base);
      for (int64_t c = 0; c < f; c += 16) __builtin_prefetch(ahead + c);  // every cache line
    }
    const float* __restrict in = x.row(a.indices[e] - col_base);
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

// One output row (prefetching across row ends too).
template <bool kWeighted>
inline void spmm_row(const CsrView& a, ConstMatView x, float* __restrict out, int64_t r,
                     bool accumulate) {
  if (!accumulate) std::memset(out, 0, size_t(x.cols) * sizeof(float));
  add_entries<kWeighted>(a, x, out, a.offsets[r], a.offsets[r + 1], a.offsets[a.rows], 0);
}

// A run of every row's entries (spmm_span), prefetching within the run: its rows are spread
// over the whole of x.
template <bool kWeighted>
void spmm_span_impl(const CsrView& a, const int32_t* begin, const int32_t* end, int64_t col_base,
                    ConstMatView x, MatView y) {
  const bool parallel = a.nnz() * x.cols >= (1 << 14);
#pragma omp parallel for schedule(dynamic, 64) if (parallel)
  for (int64_t r = 0; r < a.rows; ++r) {
    const int64_t e0 = a.offsets[r] + (begin ? begin[r] : 0);
    const int64_t e1 = end ? a.offsets[r] + end[r] : a.offsets[r + 1];
    add_entries<kWeighted>(a, x, y.row(r), e0, e1, e1, col_base);
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

void spmm_span(const CsrView& a, const int32_t* begin, const int32_t* end, int64_t col_base,
               ConstMatView x, MatView y) {
  if (a.values)
    spmm_span_impl<true>(a, begin, end, col_base, x, y);
  else
    spmm_span_impl<false>(a, begin, end, col_base, x, y);
}

void spmm(const CsrView& a, ConstMatView x, MatView y, bool accumulate) {
  if (a.rows == 0 || x.cols == 0) return;
  if (a.values)
    spmm_impl<true>(a, x, y, accumulate);
  else
    spmm_impl<false>(a, x, y, accumulate);
}

namespace {

// A NaN is taken when met and then kept (nothing compares greater than it): the comparison
// alone would skip it. Written with | rather than || so the loop below vectorises.
template <bool kMax>
inline bool takes(float v, float best) {
  return (kMax ? v > best : v < best) | (v != v);
}

// kArg: also record where each extreme came from (for a backward; skipped without one).
template <bool kMax, bool kArg>
void extreme_impl(const CsrView& a, ConstMatView x, MatView y, int32_t* arg) {
  const int64_t f = x.cols;
  const bool parallel = a.nnz() * f >= (1 << 14);
#pragma omp parallel for schedule(dynamic, 64) if (parallel)
  for (int64_t r = 0; r < a.rows; ++r) {
    float* __restrict out = y.row(r);
    int32_t* __restrict am = kArg ? arg + r * f : nullptr;
    const int64_t begin = a.offsets[r], end = a.offsets[r + 1];
    if (begin == end) {
      std::memset(out, 0, size_t(f) * sizeof(float));
      if constexpr (kArg)
        for (int64_t c = 0; c < f; ++c) am[c] = -1;
      continue;
    }
    const int32_t first = a.indices[begin];
    std::memcpy(out, x.row(first), size_t(f) * sizeof(float));
    if constexpr (kArg)
      for (int64_t c = 0; c < f; ++c) am[c] = first;
    const int64_t nnz = a.offsets[a.rows];
    for (int64_t e = begin + 1; e < end; ++e) {
      if (e + kPrefetch < nnz) {  // as spmm_row: several gathered rows in flight
        const float* ahead = x.row(a.indices[e + kPrefetch]);
        for (int64_t c = 0; c < f; c += 16) __builtin_prefetch(ahead + c);
      }
      const int32_t col = a.indices[e];
      const float* __restrict in = x.row(col);
#pragma omp simd
      for (int64_t c = 0; c < f; ++c) {
        const float v = in[c], b = out[c];
        const bool t = takes<kMax>(v, b);
        out[c] = t ? v : b;
        if constexpr (kArg) am[c] = t ? col : am[c];
      }
    }
  }
}

}  // namespace

void spmm_extreme(const CsrView& a, ConstMatView x, MatView y, int32_t* arg, bool is_max) {
  if (a.rows == 0 || x.cols == 0) return;
  if (is_max)
    arg ? extreme_impl<true, true>(a, x, y, arg) : extreme_impl<true, false>(a, x, y, arg);
  else
    arg ? extreme_impl<false, true>(a, x, y, arg) : extreme_impl<false, false>(a, x, y, arg);
}

void spmm_extreme_backward(const CsrView& at, int64_t row_base, const int32_t* arg, ConstMatView gy,
                           MatView gx, bool accumulate) {
  const int64_t f = gy.cols;
  if (at.rows == 0 || f == 0) return;
  const bool parallel = at.nnz() * f >= (1 << 14);
  const int64_t nnz = at.offsets[at.rows];
#pragma omp parallel for schedule(dynamic, 64) if (parallel)
  for (int64_t r = 0; r < at.rows; ++r) {
    float* __restrict out = gx.row(r);
    if (!accumulate) std::memset(out, 0, size_t(f) * sizeof(float));
    const int32_t self = int32_t(row_base + r);
    const int64_t begin = at.offsets[r], end = at.offsets[r + 1];
    for (int64_t e = begin; e < end; ++e) {
      if (e + kPrefetch < nnz) {  // both gathered rows of an entry ahead, as spmm_row
        const int64_t ahead = at.indices[e + kPrefetch];
        const float* ga = gy.row(ahead);
        const int32_t* aa = arg + ahead * f;
        for (int64_t c = 0; c < f; c += 16) {
          __builtin_prefetch(ga + c);
          __builtin_prefetch(aa + c);
        }
      }
      const int64_t v = at.indices[e];
      if (e > begin && v == at.indices[e - 1]) continue;  // a repeated entry: one maximum
      const int32_t* __restrict am = arg + v * f;
      const float* __restrict g = gy.row(v);
      // g[c] where the maximum came from this row, else +0, selected with a bit mask: the
      // loop vectorises (a ?: does not), and an inf or NaN elsewhere is never multiplied in.
#pragma omp simd
      for (int64_t c = 0; c < f; ++c) {
        const uint32_t keep = uint32_t(0) - uint32_t(am[c] == self);
        out[c] += std::bit_cast<float>(std::bit_cast<uint32_t>(g[c]) & keep);
      }
    }
  }
}

}  // namespace dgnn::kernels::cpu
