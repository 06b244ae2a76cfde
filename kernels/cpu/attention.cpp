// Attention over the entries of a CSR: additive scores, SDDMM, per-row softmax and the
// per-head weighted SpMM. Rows run in parallel; within a row every sum follows the entry order,
// so results do not depend on the thread count.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "dgnn/kernels/cpu/cpu_kernels.hpp"

namespace dgnn::kernels::cpu {

void edge_add(const CsrView& a, ConstMatView src, ConstMatView dst, MatView out) {
  const int64_t h = out.cols;
#pragma omp parallel for schedule(dynamic, 256)
  for (int64_t r = 0; r < a.rows; ++r) {
    const float* d = dst.row(r);
    for (int64_t e = a.offsets[r]; e < a.offsets[r + 1]; ++e) {
      const float* s = src.row(a.indices[e]);
      float* o = out.row(e);
      for (int64_t k = 0; k < h; ++k) o[k] = s[k] + d[k];
    }
  }
}

void sddmm(const CsrView& a, ConstMatView x, ConstMatView y, MatView out) {
  const int64_t h = out.cols, dim = x.cols / h;
#pragma omp parallel for schedule(dynamic, 64)
  for (int64_t r = 0; r < a.rows; ++r) {
    const float* xr = x.row(r);
    for (int64_t e = a.offsets[r]; e < a.offsets[r + 1]; ++e) {
      const float* yc = y.row(a.indices[e]);
      float* o = out.row(e);
      for (int64_t k = 0; k < h; ++k) {
        float acc = 0.f;
        for (int64_t d = k * dim; d < (k + 1) * dim; ++d) acc += xr[d] * yc[d];
        o[k] = acc;
      }
    }
  }
}

void edge_softmax(const CsrView& a, ConstMatView s, MatView out) {
  const int64_t h = out.cols;
#pragma omp parallel
  {
    std::vector<float> mx(static_cast<size_t>(h)), sum(static_cast<size_t>(h));
#pragma omp for schedule(dynamic, 256)
    for (int64_t r = 0; r < a.rows; ++r) {
      const int64_t b = a.offsets[r], end = a.offsets[r + 1];
      if (b == end) continue;
      std::fill(mx.begin(), mx.end(), -INFINITY);
      std::fill(sum.begin(), sum.end(), 0.f);
      for (int64_t e = b; e < end; ++e)
        for (int64_t k = 0; k < h; ++k) mx[size_t(k)] = std::max(mx[size_t(k)], s.row(e)[k]);
      for (int64_t e = b; e < end; ++e)
        for (int64_t k = 0; k < h; ++k) {
          const float v = std::exp(s.row(e)[k] - mx[size_t(k)]);
          out.row(e)[k] = v;
          sum[size_t(k)] += v;
        }
      for (int64_t e = b; e < end; ++e)
        for (int64_t k = 0; k < h; ++k) out.row(e)[k] /= sum[size_t(k)];
    }
  }
}

void edge_softmax_backward(const CsrView& a, ConstMatView alpha, ConstMatView dalpha, MatView ds,
                           bool accumulate) {
  const int64_t h = ds.cols;
#pragma omp parallel
  {
    std::vector<float> dot(static_cast<size_t>(h));
#pragma omp for schedule(dynamic, 256)
    for (int64_t r = 0; r < a.rows; ++r) {
      const int64_t b = a.offsets[r], end = a.offsets[r + 1];
      std::fill(dot.begin(), dot.end(), 0.f);
      for (int64_t e = b; e < end; ++e)
        for (int64_t k = 0; k < h; ++k) dot[size_t(k)] += alpha.row(e)[k] * dalpha.row(e)[k];
      for (int64_t e = b; e < end; ++e)
        for (int64_t k = 0; k < h; ++k) {
          const float g = alpha.row(e)[k] * (dalpha.row(e)[k] - dot[size_t(k)]);
          ds.row(e)[k] = accumulate ? ds.row(e)[k] + g : g;
        }
    }
  }
}

void spmm_heads(const CsrView& a, ConstMatView w, ConstMatView x, MatView y, bool accumulate) {
  const int64_t h = w.cols, f = x.cols, dim = f / h;
#pragma omp parallel for schedule(dynamic, 64)
  for (int64_t r = 0; r < a.rows; ++r) {
    float* __restrict out = y.row(r);
    if (!accumulate) std::memset(out, 0, size_t(f) * sizeof(float));
    for (int64_t e = a.offsets[r]; e < a.offsets[r + 1]; ++e) {
      const float* __restrict in = x.row(a.indices[e]);
      const float* we = w.row(e);
      for (int64_t k = 0; k < h; ++k) {
        const float c = we[k];
#pragma omp simd
        for (int64_t d = k * dim; d < (k + 1) * dim; ++d) out[d] += c * in[d];
      }
    }
  }
}

void edge_row_sum(const CsrView& a, ConstMatView w, MatView out, bool accumulate) {
  const int64_t h = w.cols;
#pragma omp parallel for schedule(dynamic, 256)
  for (int64_t r = 0; r < a.rows; ++r) {
    float* o = out.row(r);
    if (!accumulate) std::fill(o, o + h, 0.f);
    for (int64_t e = a.offsets[r]; e < a.offsets[r + 1]; ++e)
      for (int64_t k = 0; k < h; ++k) o[k] += w.row(e)[k];
  }
}

}  // namespace dgnn::kernels::cpu
