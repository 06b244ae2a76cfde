// Max / min over each CSR row's entries and its backward through the transpose (the CPU
// versions are in kernels/cpu/spmm.cpp). One thread per (row, column): neighbouring threads read
// neighbouring columns of a gathered row, and each output is reduced in the row's index order,
// so results are reproducible and need no atomics.
#include "dgnn/kernels/cuda/cuda_kernels.hpp"
#include "dgnn/kernels/cuda/launch.cuh"

namespace dgnn::kernels::cuda {

namespace {

// As on the CPU: a NaN is taken when met, then kept (nothing compares greater than it).
__device__ inline bool takes(float v, float best, bool is_max) {
  return (is_max ? v > best : v < best) | (v != v);
}

}  // namespace

void spmm_extreme(const CsrView& a, ConstMatView x, MatView y, int32_t* arg, bool is_max) {
  const int64_t* off = a.offsets;
  const int32_t* idx = a.indices;
  const float* xp = x.data;
  float* yp = y.data;
  const int64_t xld = x.ld, yld = y.ld, f = y.cols;
  each2d(a.rows, f, [=] __device__(int64_t r, int64_t j) {
    const int64_t begin = off[r], end = off[r + 1];
    if (begin == end) {
      yp[r * yld + j] = 0.f;
      if (arg) arg[r * f + j] = -1;
      return;
    }
    int32_t best_col = idx[begin];
    float best = xp[int64_t(best_col) * xld + j];
    for (int64_t e = begin + 1; e < end; ++e) {
      const int32_t col = idx[e];
      const float v = xp[int64_t(col) * xld + j];
      if (takes(v, best, is_max)) {
        best = v;
        best_col = col;
      }
    }
    yp[r * yld + j] = best;
    if (arg) arg[r * f + j] = best_col;
  });
}

void spmm_extreme_backward(const CsrView& at, int64_t row_base, const int32_t* arg, ConstMatView gy,
                           MatView gx, bool accumulate) {
  const int64_t* off = at.offsets;
  const int32_t* idx = at.indices;
  const float* g = gy.data;
  float* o = gx.data;
  const int64_t gld = gy.ld, old = gx.ld, f = gy.cols;
  each2d(at.rows, f, [=] __device__(int64_t r, int64_t j) {
    const int32_t self = int32_t(row_base + r);
    float acc = accumulate ? o[r * old + j] : 0.f;
    const int64_t begin = off[r], end = off[r + 1];
    for (int64_t e = begin; e < end; ++e) {
      const int64_t v = idx[e];
      if (e > begin && v == idx[e - 1]) continue;  // a repeated entry: one maximum
      if (arg[v * f + j] == self) acc = __fadd_rn(acc, g[v * gld + j]);
    }
    o[r * old + j] = acc;
  });
}

}  // namespace dgnn::kernels::cuda
