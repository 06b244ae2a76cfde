// Element-wise arithmetic, reductions, dropout and strided copies on the context stream.
//
// Every product and sum is written with the round-to-nearest intrinsics (__fmul_rn, __fadd_rn,
// __fsub_rn, __fdiv_rn) in the order kernels/cpu writes it: nvcc would otherwise contract
// a * b + c into one fused multiply-add, whose single rounding differs from the CPU's two.
// With the intrinsics, everything but the transcendental functions (expf, tanhf, whose last
// bits differ between libm and CUDA) is bit-identical to the CPU backend, including dropout.
//
// The reductions (sum, column_sum) use the CPU backend's fixed blocking: sequential double
// partial sums over blocks of 4096 elements (sum) or 512 rows (column_sum), combined in block
// order. The same additions in the same order make them bit-identical to the CPU, and
// deterministic from run to run, with no atomics.
#include <cstdint>
#include <vector>

#include "dgnn/kernels/cuda/context.hpp"
#include "dgnn/kernels/cuda/launch.cuh"

namespace dgnn::kernels::cuda {

namespace {

constexpr int64_t kSumBlock = 1 << 12;       // elements per partial sum (as kernels/cpu)
constexpr int64_t kColumnSumBlock = 1 << 9;  // rows per partial column sum (as kernels/cpu)

// ---- launch helpers ----------------------------------------------------------------------

template <typename F>
__global__ void each_kernel(int64_t n, F f) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) f(i);
}

// f(i) for i in [0, n), grid-stride.
template <typename F>
void each(int64_t n, F f) {
  each_kernel<<<grid_for(n), kBlock, 0, stream()>>>(n, f);
  DGNN_CUDA_LAUNCHED("each_kernel");
}

// exp(-|x|) never overflows, so both branches stay finite for any input (as kernels/cpu).
__device__ __forceinline__ float stable_sigmoid(float x) {
  const float e = expf(-fabsf(x));
  const float d = __fadd_rn(1.f, e);
  return x >= 0.f ? __fdiv_rn(1.f, d) : __fdiv_rn(e, d);
}

// ---- unary backward ----------------------------------------------------------------------

// dx (+)= dy * f'(x). Reads only the operand the op's derivative needs (the other may be null).
// No __restrict__: callers may pass dx aliasing dy or y (in-place backward).
template <Unary Op, bool Accumulate>
__global__ void unary_backward_kernel(const float* x, const float* y, const float* dy, float* dx,
                                      int64_t n, float alpha) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    float d;
    if constexpr (Op == Unary::relu) {
      d = x[i] > 0.f ? 1.f : 0.f;
    } else if constexpr (Op == Unary::leaky_relu) {
      d = x[i] > 0.f ? 1.f : alpha;
    } else if constexpr (Op == Unary::sigmoid) {
      const float v = y[i];
      d = __fmul_rn(v, __fsub_rn(1.f, v));
    } else if constexpr (Op == Unary::tanh) {
      const float v = y[i];
      d = __fsub_rn(1.f, __fmul_rn(v, v));
    } else if constexpr (Op == Unary::exp) {
      d = y[i];
    } else {
      d = -1.f;
    }
    const float g = __fmul_rn(dy[i], d);
    if constexpr (Accumulate)
      dx[i] = __fadd_rn(dx[i], g);
    else
      dx[i] = g;
  }
}

template <Unary Op>
void unary_backward_launch(const float* x, const float* y, const float* dy, float* dx, int64_t n,
                           float alpha, bool accumulate) {
  if (accumulate)
    unary_backward_kernel<Op, true><<<grid_for(n), kBlock, 0, stream()>>>(x, y, dy, dx, n, alpha);
  else
    unary_backward_kernel<Op, false><<<grid_for(n), kBlock, 0, stream()>>>(x, y, dy, dx, n, alpha);
  DGNN_CUDA_LAUNCHED("unary_backward_kernel");
}

// ---- reductions --------------------------------------------------------------------------

// partial[b] = sum of x[b * kSumBlock, min(n, (b + 1) * kSumBlock)) in order, in double.
__global__ void sum_blocks_kernel(const float* __restrict__ x, int64_t n, int64_t blocks,
                                  double* __restrict__ partial) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t b = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; b < blocks; b += stride) {
    const int64_t begin = b * kSumBlock;
    const int64_t end = begin + kSumBlock < n ? begin + kSumBlock : n;
    double s = 0.0;
#pragma unroll 8
    for (int64_t i = begin; i < end; ++i) s += double(x[i]);
    partial[b] = s;
  }
}

// partial[b * cols + c] = sum over rows [b * kColumnSumBlock, ...) of x[r][c] in order, in double.
__global__ void column_sum_blocks_kernel(ConstMatView x, int64_t blocks,
                                         double* __restrict__ partial) {
  const int64_t cols = x.cols;
  const int64_t total = blocks * cols;
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t t = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; t < total; t += stride) {
    const int64_t b = t / cols, c = t % cols;
    const int64_t begin = b * kColumnSumBlock;
    const int64_t end = begin + kColumnSumBlock < x.rows ? begin + kColumnSumBlock : x.rows;
    const float* p = x.data + begin * x.ld + c;
    double s = 0.0;
#pragma unroll 8
    for (int64_t r = begin; r < end; ++r, p += x.ld) s += double(*p);
    partial[t] = s;
  }
}

// out[c] = (accumulate ? out[c] : 0) + partial[0][c] + partial[1][c] + ... in block order.
__global__ void column_sum_combine_kernel(const double* __restrict__ partial, int64_t blocks,
                                          int64_t cols, float* out, bool accumulate) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t c = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; c < cols; c += stride) {
    double s = accumulate ? double(out[c]) : 0.0;
    for (int64_t b = 0; b < blocks; ++b) s += partial[b * cols + c];
    out[c] = float(s);
  }
}

}  // namespace

// ---- memory-like ---------------------------------------------------------------------------

void fill(float* x, int64_t n, float value) {
  each(n, [=] __device__(int64_t i) { x[i] = value; });
}

void copy_view(ConstMatView src, MatView dst, bool accumulate) {
  const float* s = src.data;
  float* d = dst.data;
  const int64_t sld = src.ld, dld = dst.ld;
  if (accumulate)
    each2d(src.rows, src.cols, [=] __device__(int64_t r, int64_t c) {
      float* o = d + r * dld + c;
      *o = __fadd_rn(*o, s[r * sld + c]);
    });
  else
    each2d(src.rows, src.cols,
           [=] __device__(int64_t r, int64_t c) { d[r * dld + c] = s[r * sld + c]; });
}

// ---- element-wise ------------------------------------------------------------------------

void unary(Unary op, const float* x, float* y, int64_t n, float alpha) {
  switch (op) {
    case Unary::relu:
      return each(n, [=] __device__(int64_t i) {
        const float v = x[i];
        y[i] = v < 0.f ? 0.f : v;  // NaN stays NaN, as on the CPU
      });
    case Unary::leaky_relu:
      return each(n, [=] __device__(int64_t i) {
        const float v = x[i];
        y[i] = v > 0.f ? v : __fmul_rn(alpha, v);
      });
    case Unary::sigmoid:
      return each(n, [=] __device__(int64_t i) { y[i] = stable_sigmoid(x[i]); });
    case Unary::tanh:
      return each(n, [=] __device__(int64_t i) { y[i] = tanhf(x[i]); });
    case Unary::exp:
      return each(n, [=] __device__(int64_t i) { y[i] = expf(x[i]); });
    case Unary::neg:
      return each(n, [=] __device__(int64_t i) { y[i] = -x[i]; });
  }
}

void unary_backward(Unary op, const float* x, const float* y, const float* dy, float* dx, int64_t n,
                    float alpha, bool accumulate) {
  switch (op) {
    case Unary::relu:
      return unary_backward_launch<Unary::relu>(x, y, dy, dx, n, alpha, accumulate);
    case Unary::leaky_relu:
      return unary_backward_launch<Unary::leaky_relu>(x, y, dy, dx, n, alpha, accumulate);
    case Unary::sigmoid:
      return unary_backward_launch<Unary::sigmoid>(x, y, dy, dx, n, alpha, accumulate);
    case Unary::tanh:
      return unary_backward_launch<Unary::tanh>(x, y, dy, dx, n, alpha, accumulate);
    case Unary::exp:
      return unary_backward_launch<Unary::exp>(x, y, dy, dx, n, alpha, accumulate);
    case Unary::neg:
      return unary_backward_launch<Unary::neg>(x, y, dy, dx, n, alpha, accumulate);
  }
}

void axpby(int64_t n, float a, const float* x, float b, float* y) {
  // b == 0 overwrites rather than scales, so an uninitialised or NaN y does not leak through.
  if (b == 0.f)
    each(n, [=] __device__(int64_t i) { y[i] = __fmul_rn(a, x[i]); });
  else if (b == 1.f)
    each(n, [=] __device__(int64_t i) { y[i] = __fadd_rn(y[i], __fmul_rn(a, x[i])); });
  else
    each(n, [=] __device__(int64_t i) {
      y[i] = __fadd_rn(__fmul_rn(a, x[i]), __fmul_rn(b, y[i]));
    });
}

void mul(int64_t n, const float* x, const float* y, float* z, bool accumulate) {
  if (accumulate)
    each(n, [=] __device__(int64_t i) { z[i] = __fadd_rn(z[i], __fmul_rn(x[i], y[i])); });
  else
    each(n, [=] __device__(int64_t i) { z[i] = __fmul_rn(x[i], y[i]); });
}

void add_row_vector(MatView y, const float* bias) {
  float* d = y.data;
  const int64_t ld = y.ld;
  each2d(y.rows, y.cols, [=] __device__(int64_t r, int64_t c) {
    float* o = d + r * ld + c;
    *o = __fadd_rn(*o, bias[c]);
  });
}

void column_sum(ConstMatView x, float* out, bool accumulate) {
  const int64_t cols = x.cols;
  if (cols == 0) return;
  if (x.rows <= 0) {
    // No rows: no partials, so out becomes 0 (or stays as it is when accumulating).
    column_sum_combine_kernel<<<grid_for(cols), kBlock, 0, stream()>>>(nullptr, 0, cols, out,
                                                                      accumulate);
    DGNN_CUDA_LAUNCHED("column_sum_combine_kernel");
    return;
  }
  const int64_t blocks = (x.rows + kColumnSumBlock - 1) / kColumnSumBlock;
  Scratch<double> partial(blocks * cols);
  column_sum_blocks_kernel<<<grid_for(blocks * cols), kBlock, 0, stream()>>>(x, blocks,
                                                                           partial.get());
  DGNN_CUDA_LAUNCHED("column_sum_blocks_kernel");
  column_sum_combine_kernel<<<grid_for(cols), kBlock, 0, stream()>>>(partial.get(), blocks, cols,
                                                                    out, accumulate);
  DGNN_CUDA_LAUNCHED("column_sum_combine_kernel");
}

double sum(const float* x, int64_t n) {
  if (n <= 0) return 0.0;
  const int64_t blocks = (n + kSumBlock - 1) / kSumBlock;
  Scratch<double> partial(blocks);
  sum_blocks_kernel<<<grid_for(blocks), kBlock, 0, stream()>>>(x, n, blocks, partial.get());
  DGNN_CUDA_LAUNCHED("sum_blocks_kernel");
  // The partials are few (n / 4096): combine them on the host in block order, as the CPU does.
  std::vector<double> host(static_cast<size_t>(blocks));
  copy(host.data(), partial.get(), size_t(blocks) * sizeof(double), 1);
  double total = 0.0;
  for (double s : host) total += s;
  return total;
}

// ---- dropout -----------------------------------------------------------------------------

void dropout(ConstMatView x, float p, uint64_t key, const int64_t* row_ids, MatView y,
             uint8_t* mask) {
  const int64_t cols = x.cols;
  const float keep_scale = 1.f / (1.f - p);  // computed on the host, exactly as kernels/cpu
  const uint32_t threshold = dropout_threshold(p);
  const float* in = x.data;
  float* out = y.data;
  const int64_t xld = x.ld, yld = y.ld;
  // One thread per (row, group of four columns): one hash gives the group's four 16-bit
  // uniforms, bit for bit the rule of dgnn::dropout_keep (the tail group is partial).
  const int64_t groups = (cols + 3) / 4;
  each2d(x.rows, groups, [=] __device__(int64_t r, int64_t g) {
    const uint64_t row_key = dropout_row_key(key, row_ids ? row_ids[r] : r);
    const uint64_t bits = mix64(row_key + uint64_t(g));
    const int64_t c0 = g * 4;
    const int64_t c1 = c0 + 4 < cols ? c0 + 4 : cols;
    const float* src = in + r * xld;
    float* dst = out + r * yld;
    uint8_t* m = mask ? mask + r * cols : nullptr;
    for (int64_t c = c0; c < c1; ++c) {
      const bool keep = ((bits >> (16 * (c - c0))) & 0xFFFF) >= threshold;
      if (m) m[c] = keep;
      dst[c] = __fmul_rn(src[c], keep ? keep_scale : 0.f);
    }
  });
}

void dropout_backward(ConstMatView dy, const uint8_t* mask, float p, MatView dx, bool accumulate) {
  const int64_t cols = dy.cols;
  const float keep_scale = 1.f / (1.f - p);
  const float* g = dy.data;
  float* d = dx.data;
  const int64_t gld = dy.ld, dld = dx.ld;
  if (accumulate)
    each2d(dy.rows, cols, [=] __device__(int64_t r, int64_t c) {
      float* o = d + r * dld + c;
      *o = __fadd_rn(*o, mask[r * cols + c] ? __fmul_rn(g[r * gld + c], keep_scale) : 0.f);
    });
  else
    each2d(dy.rows, cols, [=] __device__(int64_t r, int64_t c) {
      d[r * dld + c] = mask[r * cols + c] ? __fmul_rn(g[r * gld + c], keep_scale) : 0.f;
    });
}

}  // namespace dgnn::kernels::cuda
