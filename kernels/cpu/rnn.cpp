// Fused LSTM and GRU cells. Rows are independent, so they are split between threads; each
// element's arithmetic is the same whatever the split, so results do not depend on the thread
// count. Backward recomputes the activations (see kernels/kernels.hpp for why). The activations
// are kernels/cpu/fast_math.hpp's, inline so that each row's loop runs in vector registers.
#include <algorithm>
#include <vector>

#include "dgnn/kernels/cpu/cpu_kernels.hpp"
#include "dgnn/kernels/cpu/fast_math.hpp"

namespace dgnn::kernels::cpu {

namespace {

constexpr int64_t kParallelMin = 1 << 14;  // elements (N x H) below which threads cost more

// out (+)= v over a row of n; `out` may be null (an output nobody wants).
inline void put_row(float* out, const float* v, int64_t n, bool accumulate) {
  if (!out) return;
  if (accumulate) {
#pragma omp simd
    for (int64_t j = 0; j < n; ++j) out[j] += v[j];
  } else {
#pragma omp simd
    for (int64_t j = 0; j < n; ++j) out[j] = v[j];
  }
}

// Each kernel runs its rows in blocks on all threads, a block by a function compiled per ISA
// level (DGNN_ISA_CLONES: the cells' exp / tanh are most of a recurrent step on the CPU).
template <class Rows>
void by_blocks(int64_t n, int64_t hid, Rows rows) {
  constexpr int64_t kBlock = 256;
  const int64_t blocks = (n + kBlock - 1) / kBlock;
#pragma omp parallel for schedule(static) if (n * hid >= kParallelMin)
  for (int64_t b = 0; b < blocks; ++b) rows(b * kBlock, std::min(n, (b + 1) * kBlock));
}

DGNN_ISA_CLONES
void lstm_forward_rows(ConstMatView gates, ConstMatView c_prev, MatView h, MatView c, int64_t r0,
                       int64_t r1) {
  const int64_t hid = c_prev.cols;
  for (int64_t r = r0; r < r1; ++r) {
    const float* a = gates.row(r);
    const float* cp = c_prev.row(r);
    float* hr = h.row(r);
    float* cr = c.row(r);
#pragma omp simd
    for (int64_t j = 0; j < hid; ++j) {
      const float i = fast_sigmoid(a[j]), f = fast_sigmoid(a[hid + j]);
      const float g = fast_tanh(a[2 * hid + j]), o = fast_sigmoid(a[3 * hid + j]);
      const float cn = f * cp[j] + i * g;
      cr[j] = cn;
      hr[j] = o * fast_tanh(cn);
    }
  }
}

DGNN_ISA_CLONES
void lstm_backward_rows(ConstMatView gates, ConstMatView c_prev, ConstMatView dh, ConstMatView dc,
                        MatView dgates, MatView dc_prev, bool accumulate, int64_t r0, int64_t r1) {
  const int64_t hid = c_prev.cols;
  // Per row: the four gate gradients and dc_prev, computed in one vectorised pass, then
  // written (or added) where they are wanted. Absent dh / dc read as zeros.
  std::vector<float> d(size_t(5 * hid)), zeros(size_t(hid), 0.f);
  for (int64_t r = r0; r < r1; ++r) {
    const float* a = gates.row(r);
    const float* cp = c_prev.row(r);
    const float* dhr = dh.data ? dh.row(r) : zeros.data();
    const float* dcr = dc.data ? dc.row(r) : zeros.data();
    float* out = d.data();
#pragma omp simd
    for (int64_t j = 0; j < hid; ++j) {
      const float i = fast_sigmoid(a[j]), f = fast_sigmoid(a[hid + j]);
      const float g = fast_tanh(a[2 * hid + j]), o = fast_sigmoid(a[3 * hid + j]);
      const float tc = fast_tanh(f * cp[j] + i * g);
      const float gh = dhr[j];
      // c reaches the loss directly (dc) and through h = o tanh(c).
      const float gc = dcr[j] + gh * o * (1.f - tc * tc);
      out[j] = gc * g * i * (1.f - i);
      out[hid + j] = gc * cp[j] * f * (1.f - f);
      out[2 * hid + j] = gc * i * (1.f - g * g);
      out[3 * hid + j] = gh * tc * o * (1.f - o);
      out[4 * hid + j] = gc * f;
    }
    put_row(dgates.data ? dgates.row(r) : nullptr, out, 4 * hid, accumulate);
    put_row(dc_prev.data ? dc_prev.row(r) : nullptr, out + 4 * hid, hid, accumulate);
  }
}

DGNN_ISA_CLONES
void gru_forward_rows(ConstMatView xg, ConstMatView hg, ConstMatView h_prev, MatView h, int64_t r0,
                      int64_t r1) {
  const int64_t hid = h_prev.cols;
  for (int64_t r = r0; r < r1; ++r) {
    const float* x = xg.row(r);
    const float* s = hg.row(r);
    const float* hp = h_prev.row(r);
    float* out = h.row(r);
#pragma omp simd
    for (int64_t j = 0; j < hid; ++j) {
      const float rg = fast_sigmoid(x[j] + s[j]);
      const float z = fast_sigmoid(x[hid + j] + s[hid + j]);
      const float nn = fast_tanh(x[2 * hid + j] + rg * s[2 * hid + j]);
      out[j] = (1.f - z) * nn + z * hp[j];
    }
  }
}

DGNN_ISA_CLONES
void gru_backward_rows(ConstMatView xg, ConstMatView hg, ConstMatView h_prev, ConstMatView dh,
                       MatView dxg, MatView dhg, MatView dh_prev, bool accumulate, int64_t r0,
                       int64_t r1) {
  const int64_t hid = h_prev.cols;
  // Per row: [dr | dz | dn] of the input side, then the state side's [dr | dz | dn r], then
  // dh_prev, in one vectorised pass.
  std::vector<float> d(size_t(7 * hid));
  for (int64_t r = r0; r < r1; ++r) {
    const float* x = xg.row(r);
    const float* s = hg.row(r);
    const float* hp = h_prev.row(r);
    const float* g = dh.row(r);
    float* out = d.data();
#pragma omp simd
    for (int64_t j = 0; j < hid; ++j) {
      const float rg = fast_sigmoid(x[j] + s[j]);
      const float z = fast_sigmoid(x[hid + j] + s[hid + j]);
      const float hn = s[2 * hid + j];
      const float nn = fast_tanh(x[2 * hid + j] + rg * hn);
      const float dn = g[j] * (1.f - z) * (1.f - nn * nn);  // through n's pre-activation
      const float dz = g[j] * (hp[j] - nn) * z * (1.f - z);
      const float dr = dn * hn * rg * (1.f - rg);
      // r and z see the sum xg + hg, so both get the same gradient; hn is scaled by r.
      out[j] = dr;
      out[hid + j] = dz;
      out[2 * hid + j] = dn;
      out[3 * hid + j] = dr;
      out[4 * hid + j] = dz;
      out[5 * hid + j] = dn * rg;
      out[6 * hid + j] = g[j] * z;
    }
    put_row(dxg.data ? dxg.row(r) : nullptr, out, 3 * hid, accumulate);
    put_row(dhg.data ? dhg.row(r) : nullptr, out + 3 * hid, 3 * hid, accumulate);
    put_row(dh_prev.data ? dh_prev.row(r) : nullptr, out + 6 * hid, hid, accumulate);
  }
}

}  // namespace

void lstm_cell_forward(ConstMatView gates, ConstMatView c_prev, MatView h, MatView c) {
  by_blocks(c_prev.rows, c_prev.cols,
            [&](int64_t r0, int64_t r1) { lstm_forward_rows(gates, c_prev, h, c, r0, r1); });
}

void lstm_cell_backward(ConstMatView gates, ConstMatView c_prev, ConstMatView dh, ConstMatView dc,
                        MatView dgates, MatView dc_prev, bool accumulate) {
  by_blocks(c_prev.rows, c_prev.cols, [&](int64_t r0, int64_t r1) {
    lstm_backward_rows(gates, c_prev, dh, dc, dgates, dc_prev, accumulate, r0, r1);
  });
}

void gru_cell_forward(ConstMatView xg, ConstMatView hg, ConstMatView h_prev, MatView h) {
  by_blocks(h_prev.rows, h_prev.cols,
            [&](int64_t r0, int64_t r1) { gru_forward_rows(xg, hg, h_prev, h, r0, r1); });
}

void gru_cell_backward(ConstMatView xg, ConstMatView hg, ConstMatView h_prev, ConstMatView dh,
                       MatView dxg, MatView dhg, MatView dh_prev, bool accumulate) {
  by_blocks(h_prev.rows, h_prev.cols, [&](int64_t r0, int64_t r1) {
    gru_backward_rows(xg, hg, h_prev, dh, dxg, dhg, dh_prev, accumulate, r0, r1);
  });
}

}  // namespace dgnn::kernels::cpu
