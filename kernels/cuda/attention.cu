// Attention over the entries of a CSR on the GPU: one thread per (row, head) — or per (row,
// column) for the weighted SpMM — walking the row's entries in order, so every sum is taken in
// the CPU backend's order (results agree with it to rounding, and are the same run to run).
#include <cstdint>

#include "dgnn/kernels/cuda/context.hpp"
#include "dgnn/kernels/cuda/cuda_kernels.hpp"
#include "dgnn/kernels/cuda/launch.cuh"

namespace dgnn::kernels::cuda {

void edge_add(const CsrView& a, ConstMatView src, ConstMatView dst, MatView out) {
  const int64_t* off = a.offsets;
  const int32_t* idx = a.indices;
  const float* s = src.data;
  const float* d = dst.data;
  float* o = out.data;
  const int64_t sld = src.ld, dld = dst.ld, old = out.ld;
  each2d(a.rows, out.cols, [=] __device__(int64_t r, int64_t k) {
    const float dv = d[r * dld + k];
    for (int64_t e = off[r]; e < off[r + 1]; ++e) o[e * old + k] = s[int64_t(idx[e]) * sld + k] + dv;
  });
}

void sddmm(const CsrView& a, ConstMatView x, ConstMatView y, MatView out) {
  const int64_t* off = a.offsets;
  const int32_t* idx = a.indices;
  const float* xp = x.data;
  const float* yp = y.data;
  float* o = out.data;
  const int64_t xld = x.ld, yld = y.ld, old = out.ld, dim = x.cols / out.cols;
  each2d(a.rows, out.cols, [=] __device__(int64_t r, int64_t k) {
    const float* xr = xp + r * xld + k * dim;
    for (int64_t e = off[r]; e < off[r + 1]; ++e) {
      const float* yc = yp + int64_t(idx[e]) * yld + k * dim;
      float acc = 0.f;
      for (int64_t i = 0; i < dim; ++i) acc = __fadd_rn(acc, __fmul_rn(xr[i], yc[i]));
      o[e * old + k] = acc;
    }
  });
}

void edge_softmax(const CsrView& a, ConstMatView s, MatView out) {
  const int64_t* off = a.offsets;
  const float* sp = s.data;
  float* o = out.data;
  const int64_t sld = s.ld, old = out.ld;
  each2d(a.rows, out.cols, [=] __device__(int64_t r, int64_t k) {
    const int64_t b = off[r], end = off[r + 1];
    if (b == end) return;
    float mx = -INFINITY;
    for (int64_t e = b; e < end; ++e) mx = fmaxf(mx, sp[e * sld + k]);
    float sum = 0.f;
    for (int64_t e = b; e < end; ++e) {
      const float v = expf(sp[e * sld + k] - mx);
      o[e * old + k] = v;
      sum = __fadd_rn(sum, v);
    }
    for (int64_t e = b; e < end; ++e) o[e * old + k] = __fdiv_rn(o[e * old + k], sum);
  });
}

void edge_softmax_backward(const CsrView& a, ConstMatView alpha, ConstMatView dalpha, MatView ds,
                           bool accumulate) {
  const int64_t* off = a.offsets;
  const float* al = alpha.data;
  const float* da = dalpha.data;
  float* g = ds.data;
  const int64_t ald = alpha.ld, dld = dalpha.ld, gld = ds.ld;
  each2d(a.rows, ds.cols, [=] __device__(int64_t r, int64_t k) {
    const int64_t b = off[r], end = off[r + 1];
    float dot = 0.f;
    for (int64_t e = b; e < end; ++e)
      dot = __fadd_rn(dot, __fmul_rn(al[e * ald + k], da[e * dld + k]));
    for (int64_t e = b; e < end; ++e) {
      const float v = __fmul_rn(al[e * ald + k], __fsub_rn(da[e * dld + k], dot));
      g[e * gld + k] = accumulate ? __fadd_rn(g[e * gld + k], v) : v;
    }
  });
}

void spmm_heads(const CsrView& a, ConstMatView w, ConstMatView x, MatView y, bool accumulate) {
  const int64_t* off = a.offsets;
  const int32_t* idx = a.indices;
  const float* wp = w.data;
  const float* xp = x.data;
  float* yp = y.data;
  const int64_t wld = w.ld, xld = x.ld, yld = y.ld, dim = x.cols / w.cols;
  each2d(a.rows, y.cols, [=] __device__(int64_t r, int64_t c) {
    const int64_t k = c / dim;
    float acc = accumulate ? yp[r * yld + c] : 0.f;
    for (int64_t e = off[r]; e < off[r + 1]; ++e)
      acc = __fadd_rn(acc, __fmul_rn(wp[e * wld + k], xp[int64_t(idx[e]) * xld + c]));
    yp[r * yld + c] = acc;
  });
}

void edge_row_sum(const CsrView& a, ConstMatView w, MatView out, bool accumulate) {
  const int64_t* off = a.offsets;
  const float* wp = w.data;
  float* o = out.data;
  const int64_t wld = w.ld, old = out.ld;
  each2d(a.rows, out.cols, [=] __device__(int64_t r, int64_t k) {
    float acc = accumulate ? o[r * old + k] : 0.f;
    for (int64_t e = off[r]; e < off[r + 1]; ++e) acc = __fadd_rn(acc, wp[e * wld + k]);
    o[r * old + k] = acc;
  });
}

}  // namespace dgnn::kernels::cuda
