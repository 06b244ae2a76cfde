// Fused LSTM and GRU cells. Rows are independent, so they are split between threads; each
// element's arithmetic is the same whatever the split, so results do not depend on the thread
// count. Backward recomputes the activations (see kernels/kernels.hpp for why).
#include <cmath>

#include "kernels/cpu/cpu_kernels.hpp"

namespace dgnn::kernels::cpu {

namespace {

constexpr int64_t kParallelMin = 1 << 14;  // elements (N x H) below which threads cost more

// exp(-|x|) never overflows, so saturated gates stay exactly finite.
inline float sigmoid(float x) {
  const float e = std::exp(-std::fabs(x));
  return x >= 0.f ? 1.f / (1.f + e) : e / (1.f + e);
}

// out (+)= v; `out` may be null (an output nobody wants).
inline void put(float* out, int64_t j, float v, bool accumulate) {
  if (!out) return;
  if (accumulate)
    out[j] += v;
  else
    out[j] = v;
}

}  // namespace

void lstm_cell_forward(ConstMatView gates, ConstMatView c_prev, MatView h, MatView c) {
  const int64_t n = c_prev.rows, hid = c_prev.cols;
#pragma omp parallel for if (n * hid >= kParallelMin)
  for (int64_t r = 0; r < n; ++r) {
    const float* a = gates.row(r);
    const float* cp = c_prev.row(r);
    float* hr = h.row(r);
    float* cr = c.row(r);
    for (int64_t j = 0; j < hid; ++j) {
      const float i = sigmoid(a[j]), f = sigmoid(a[hid + j]);
      const float g = std::tanh(a[2 * hid + j]), o = sigmoid(a[3 * hid + j]);
      const float cn = f * cp[j] + i * g;
      cr[j] = cn;
      hr[j] = o * std::tanh(cn);
    }
  }
}

void lstm_cell_backward(ConstMatView gates, ConstMatView c_prev, ConstMatView dh, ConstMatView dc,
                        MatView dgates, MatView dc_prev, bool accumulate) {
  const int64_t n = c_prev.rows, hid = c_prev.cols;
#pragma omp parallel for if (n * hid >= kParallelMin)
  for (int64_t r = 0; r < n; ++r) {
    const float* a = gates.row(r);
    const float* cp = c_prev.row(r);
    const float* dhr = dh.data ? dh.row(r) : nullptr;
    const float* dcr = dc.data ? dc.row(r) : nullptr;
    float* dg = dgates.data ? dgates.row(r) : nullptr;
    float* dcp = dc_prev.data ? dc_prev.row(r) : nullptr;
    for (int64_t j = 0; j < hid; ++j) {
      const float i = sigmoid(a[j]), f = sigmoid(a[hid + j]);
      const float g = std::tanh(a[2 * hid + j]), o = sigmoid(a[3 * hid + j]);
      const float tc = std::tanh(f * cp[j] + i * g);
      const float gh = dhr ? dhr[j] : 0.f;
      // c reaches the loss directly (dc) and through h = o tanh(c).
      const float gc = (dcr ? dcr[j] : 0.f) + gh * o * (1.f - tc * tc);
      if (dg) {
        put(dg, j, gc * g * i * (1.f - i), accumulate);
        put(dg, hid + j, gc * cp[j] * f * (1.f - f), accumulate);
        put(dg, 2 * hid + j, gc * i * (1.f - g * g), accumulate);
        put(dg, 3 * hid + j, gh * tc * o * (1.f - o), accumulate);
      }
      put(dcp, j, gc * f, accumulate);
    }
  }
}

void gru_cell_forward(ConstMatView xg, ConstMatView hg, ConstMatView h_prev, MatView h) {
  const int64_t n = h_prev.rows, hid = h_prev.cols;
#pragma omp parallel for if (n * hid >= kParallelMin)
  for (int64_t r = 0; r < n; ++r) {
    const float* x = xg.row(r);
    const float* s = hg.row(r);
    const float* hp = h_prev.row(r);
    float* out = h.row(r);
    for (int64_t j = 0; j < hid; ++j) {
      const float rg = sigmoid(x[j] + s[j]);
      const float z = sigmoid(x[hid + j] + s[hid + j]);
      const float nn = std::tanh(x[2 * hid + j] + rg * s[2 * hid + j]);
      out[j] = (1.f - z) * nn + z * hp[j];
    }
  }
}

void gru_cell_backward(ConstMatView xg, ConstMatView hg, ConstMatView h_prev, ConstMatView dh,
                       MatView dxg, MatView dhg, MatView dh_prev, bool accumulate) {
  const int64_t n = h_prev.rows, hid = h_prev.cols;
#pragma omp parallel for if (n * hid >= kParallelMin)
  for (int64_t r = 0; r < n; ++r) {
    const float* x = xg.row(r);
    const float* s = hg.row(r);
    const float* hp = h_prev.row(r);
    const float* g = dh.row(r);
    float* dx = dxg.data ? dxg.row(r) : nullptr;
    float* ds = dhg.data ? dhg.row(r) : nullptr;
    float* dhp = dh_prev.data ? dh_prev.row(r) : nullptr;
    for (int64_t j = 0; j < hid; ++j) {
      const float rg = sigmoid(x[j] + s[j]);
      const float z = sigmoid(x[hid + j] + s[hid + j]);
      const float hn = s[2 * hid + j];
      const float nn = std::tanh(x[2 * hid + j] + rg * hn);
      const float dn = g[j] * (1.f - z) * (1.f - nn * nn);  // through n's pre-activation
      const float dz = g[j] * (hp[j] - nn) * z * (1.f - z);
      const float dr = dn * hn * rg * (1.f - rg);
      // r and z see the sum xg + hg, so both get the same gradient; hn is scaled by r.
      put(dx, j, dr, accumulate);
      put(dx, hid + j, dz, accumulate);
      put(dx, 2 * hid + j, dn, accumulate);
      put(ds, j, dr, accumulate);
      put(ds, hid + j, dz, accumulate);
      put(ds, 2 * hid + j, dn * rg, accumulate);
      put(dhp, j, g[j] * z, accumulate);
    }
  }
}

}  // namespace dgnn::kernels::cpu
