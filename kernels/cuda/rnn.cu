// Fused LSTM and GRU cells, one thread per (row, state column), mirroring kernels/cpu/rnn.cpp
// operation for operation. Products and sums use the round-to-nearest intrinsics in the CPU's
// evaluation order (left to right), so nvcc cannot contract them into fused multiply-adds:
// only expf / tanhf differ from the CPU in their last bits. Backward recomputes the
// activations from the pre-activations (see kernels/kernels.hpp for why).
#include <cstdint>

#include "dgnn/kernels/cuda/context.hpp"
#include "dgnn/kernels/cuda/launch.cuh"

namespace dgnn::kernels::cuda {

namespace {

__device__ __forceinline__ float mul_rn(float a, float b) { return __fmul_rn(a, b); }
__device__ __forceinline__ float add_rn(float a, float b) { return __fadd_rn(a, b); }
__device__ __forceinline__ float sub_rn(float a, float b) { return __fsub_rn(a, b); }

// exp(-|x|) never overflows, so saturated gates stay exactly finite (as kernels/cpu).
__device__ __forceinline__ float sigmoid(float x) {
  const float e = expf(-fabsf(x));
  const float d = add_rn(1.f, e);
  return x >= 0.f ? __fdiv_rn(1.f, d) : __fdiv_rn(e, d);
}

// out[j] (+)= v; `out` may be null (an output nobody wants).
__device__ __forceinline__ void put(float* out, int64_t j, float v, bool accumulate) {
  if (!out) return;
  out[j] = accumulate ? add_rn(out[j], v) : v;
}

}  // namespace

void lstm_cell_forward(ConstMatView gates, ConstMatView c_prev, MatView h, MatView c) {
  const int64_t hid = c_prev.cols;
  each2d(c_prev.rows, hid, [=] __device__(int64_t r, int64_t j) {
    const float* a = gates.data + r * gates.ld;
    const float cp = c_prev.data[r * c_prev.ld + j];
    const float i = sigmoid(a[j]), f = sigmoid(a[hid + j]);
    const float g = tanhf(a[2 * hid + j]), o = sigmoid(a[3 * hid + j]);
    const float cn = add_rn(mul_rn(f, cp), mul_rn(i, g));
    c.data[r * c.ld + j] = cn;
    h.data[r * h.ld + j] = mul_rn(o, tanhf(cn));
  });
}

void lstm_cell_backward(ConstMatView gates, ConstMatView c_prev, ConstMatView dh, ConstMatView dc,
                        MatView dgates, MatView dc_prev, bool accumulate) {
  const int64_t hid = c_prev.cols;
  each2d(c_prev.rows, hid, [=] __device__(int64_t r, int64_t j) {
    const float* a = gates.data + r * gates.ld;
    const float cp = c_prev.data[r * c_prev.ld + j];
    float* dg = dgates.data ? dgates.data + r * dgates.ld : nullptr;
    float* dcp = dc_prev.data ? dc_prev.data + r * dc_prev.ld : nullptr;
    const float i = sigmoid(a[j]), f = sigmoid(a[hid + j]);
    const float g = tanhf(a[2 * hid + j]), o = sigmoid(a[3 * hid + j]);
    const float tc = tanhf(add_rn(mul_rn(f, cp), mul_rn(i, g)));
    const float gh = dh.data ? dh.data[r * dh.ld + j] : 0.f;
    // c reaches the loss directly (dc) and through h = o tanh(c).
    const float gd = dc.data ? dc.data[r * dc.ld + j] : 0.f;
    const float gc = add_rn(gd, mul_rn(mul_rn(gh, o), sub_rn(1.f, mul_rn(tc, tc))));
    if (dg) {
      put(dg, j, mul_rn(mul_rn(mul_rn(gc, g), i), sub_rn(1.f, i)), accumulate);
      put(dg, hid + j, mul_rn(mul_rn(mul_rn(gc, cp), f), sub_rn(1.f, f)), accumulate);
      put(dg, 2 * hid + j, mul_rn(mul_rn(gc, i), sub_rn(1.f, mul_rn(g, g))), accumulate);
      put(dg, 3 * hid + j, mul_rn(mul_rn(mul_rn(gh, tc), o), sub_rn(1.f, o)), accumulate);
    }
    put(dcp, j, mul_rn(gc, f), accumulate);
  });
}

void gru_cell_forward(ConstMatView xg, ConstMatView hg, ConstMatView h_prev, MatView h) {
  const int64_t hid = h_prev.cols;
  each2d(h_prev.rows, hid, [=] __device__(int64_t r, int64_t j) {
    const float* x = xg.data + r * xg.ld;
    const float* s = hg.data + r * hg.ld;
    const float hp = h_prev.data[r * h_prev.ld + j];
    const float rg = sigmoid(add_rn(x[j], s[j]));
    const float z = sigmoid(add_rn(x[hid + j], s[hid + j]));
    const float nn = tanhf(add_rn(x[2 * hid + j], mul_rn(rg, s[2 * hid + j])));
    h.data[r * h.ld + j] = add_rn(mul_rn(sub_rn(1.f, z), nn), mul_rn(z, hp));
  });
}

void gru_cell_backward(ConstMatView xg, ConstMatView hg, ConstMatView h_prev, ConstMatView dh,
                       MatView dxg, MatView dhg, MatView dh_prev, bool accumulate) {
  const int64_t hid = h_prev.cols;
  each2d(h_prev.rows, hid, [=] __device__(int64_t r, int64_t j) {
    const float* x = xg.data + r * xg.ld;
    const float* s = hg.data + r * hg.ld;
    const float hp = h_prev.data[r * h_prev.ld + j];
    const float g = dh.data[r * dh.ld + j];
    float* dx = dxg.data ? dxg.data + r * dxg.ld : nullptr;
    float* ds = dhg.data ? dhg.data + r * dhg.ld : nullptr;
    float* dhp = dh_prev.data ? dh_prev.data + r * dh_prev.ld : nullptr;
    const float rg = sigmoid(add_rn(x[j], s[j]));
    const float z = sigmoid(add_rn(x[hid + j], s[hid + j]));
    const float hn = s[2 * hid + j];
    const float nn = tanhf(add_rn(x[2 * hid + j], mul_rn(rg, hn)));
    const float dn = mul_rn(mul_rn(g, sub_rn(1.f, z)), sub_rn(1.f, mul_rn(nn, nn)));  // through n's pre-act.
    const float dz = mul_rn(mul_rn(mul_rn(g, sub_rn(hp, nn)), z), sub_rn(1.f, z));
    const float dr = mul_rn(mul_rn(mul_rn(dn, hn), rg), sub_rn(1.f, rg));
    // r and z see the sum xg + hg, so both get the same gradient; hn is scaled by r.
    put(dx, j, dr, accumulate);
    put(dx, hid + j, dz, accumulate);
    put(dx, 2 * hid + j, dn, accumulate);
    put(ds, j, dr, accumulate);
    put(ds, hid + j, dz, accumulate);
    put(ds, 2 * hid + j, mul_rn(dn, rg), accumulate);
    put(dhp, j, mul_rn(g, z), accumulate);
  });
}

}  // namespace dgnn::kernels::cuda
