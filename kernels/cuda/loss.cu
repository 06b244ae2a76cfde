// Softmax cross-entropy and accuracy over a list of labelled rows, one warp per listed row.
//
// softmax_xent follows kernels/cpu/loss.cpp's arithmetic: the row maximum in float, the
// shifted exponentials exp(double(z - m)) summed in double, lse = m + log(sum) in double, the
// gradient scale * float(exp(double(z) - lse)) with scale subtracted at the label. Only the
// order of the per-row sum (strided over the warp's lanes, then a fixed shuffle tree) and the
// last bits of exp/log differ. The per-row losses go to a scratch array that one block sums in
// a fixed tree, so the total is the same from run to run.
#include <cstdint>

#include "dgnn/kernels/cuda/context.hpp"

namespace dgnn::kernels::cuda {

namespace {

constexpr int kWarp = 32;
constexpr unsigned kFullMask = 0xffffffffu;
constexpr int kRowsPerBlock = kBlock / kWarp;
constexpr int kReduceThreads = 256;  // power of two: the tree halves it

// loss[i] = lse(row) - z[label] for listed row i; dlogits (when not null) for its row.
__global__ void softmax_xent_kernel(ConstMatView logits, const int32_t* __restrict__ rows,
                                    const int32_t* __restrict__ labels, int64_t n, float scale,
                                    MatView dlogits, double* __restrict__ loss) {
  const int lane = int(threadIdx.x % kWarp);
  const int64_t warps = int64_t(gridDim.x) * (blockDim.x / kWarp);
  const int64_t cols = logits.cols;
  for (int64_t i = (int64_t(blockIdx.x) * blockDim.x + threadIdx.x) / kWarp; i < n; i += warps) {
    const int64_t row = rows[i];
    const int64_t label = labels[i];
    const float* z = logits.data + row * logits.ld;
    // Read before any lane writes the gradient (dlogits may be the logits themselves).
    const float z_label = z[label];
    // Maximum by the CPU's rule (m = z[c] > m ? z[c] : m, starting at z[0]); comparisons only,
    // so the order does not matter and m is the CPU's m exactly.
    float m = z[0];
    for (int64_t c = lane; c < cols; c += kWarp) {
      const float v = z[c];
      m = v > m ? v : m;
    }
    for (int off = kWarp / 2; off > 0; off /= 2) {
      const float o = __shfl_xor_sync(kFullMask, m, off);
      m = o > m ? o : m;
    }
    double s = 0.0;
    for (int64_t c = lane; c < cols; c += kWarp) s += exp(double(__fsub_rn(z[c], m)));
    for (int off = kWarp / 2; off > 0; off /= 2) s += __shfl_xor_sync(kFullMask, s, off);
    const double lse = double(m) + log(s);
    if (lane == 0) loss[i] = lse - double(z_label);
    if (dlogits.data) {
      float* d = dlogits.data + row * dlogits.ld;
      for (int64_t c = lane; c < cols; c += kWarp) {
        float v = __fmul_rn(scale, float(exp(double(z[c]) - lse)));
        if (c == label) v = __fsub_rn(v, scale);
        d[c] = v;
      }
    }
  }
}

// out[0] = sum of x[0, n) in double: each thread sums a fixed stride, then a fixed tree.
__global__ void sum_double_kernel(const double* __restrict__ x, int64_t n, double* out) {
  __shared__ double partial[kReduceThreads];
  double s = 0.0;
  for (int64_t i = threadIdx.x; i < n; i += kReduceThreads) s += x[i];
  partial[threadIdx.x] = s;
  __syncthreads();
  for (int half = kReduceThreads / 2; half > 0; half /= 2) {
    if (int(threadIdx.x) < half) partial[threadIdx.x] += partial[threadIdx.x + half];
    __syncthreads();
  }
  if (threadIdx.x == 0) out[0] = partial[0];
}

// Adds to *count the listed rows whose argmax (ties: lowest index) equals the label.
__global__ void count_correct_kernel(ConstMatView logits, const int32_t* __restrict__ rows,
                                     const int32_t* __restrict__ labels, int64_t n,
                                     unsigned long long* count) {
  __shared__ unsigned long long block_count;
  if (threadIdx.x == 0) block_count = 0;
  __syncthreads();
  const int lane = int(threadIdx.x % kWarp);
  const int64_t warps = int64_t(gridDim.x) * (blockDim.x / kWarp);
  const int64_t cols = logits.cols;
  unsigned long long mine = 0;
  for (int64_t i = (int64_t(blockIdx.x) * blockDim.x + threadIdx.x) / kWarp; i < n; i += warps) {
    const float* z = logits.data + int64_t(rows[i]) * logits.ld;
    // The CPU scans c = 1, 2, ... keeping best unless z[c] > z[best]. So a NaN z[0] is never
    // beaten (the answer is 0); otherwise NaNs are never chosen, and the answer is the lowest
    // index of the largest non-NaN value. Candidates (value, index) with index -1 = none,
    // combined by larger value, then lower index: an order, so the tree's shape is irrelevant.
    float best_v = 0.f;
    long long best_i = -1;
    for (int64_t c = lane; c < cols; c += kWarp) {
      const float v = z[c];
      if (!isnan(v) && (best_i < 0 || v > best_v)) {
        best_v = v;
        best_i = c;
      }
    }
    for (int off = kWarp / 2; off > 0; off /= 2) {
      const float ov = __shfl_xor_sync(kFullMask, best_v, off);
      const long long oi = __shfl_xor_sync(kFullMask, best_i, off);
      if (oi >= 0 && (best_i < 0 || ov > best_v || (ov == best_v && oi < best_i))) {
        best_v = ov;
        best_i = oi;
      }
    }
    if (lane == 0) {
      const long long pred = (isnan(z[0]) || best_i < 0) ? 0 : best_i;
      mine += pred == (long long)labels[i] ? 1 : 0;
    }
  }
  // Integer sums: exact in any order.
  if (mine) atomicAdd(&block_count, mine);
  __syncthreads();
  if (threadIdx.x == 0 && block_count) atomicAdd(count, block_count);
}

}  // namespace

double softmax_xent(ConstMatView logits, const int32_t* rows, const int32_t* labels, int64_t n,
                    float scale, MatView dlogits) {
  if (n <= 0) return 0.0;
  Scratch<double> loss(n);
  Scratch<double> total(1);
  softmax_xent_kernel<<<grid_for(n, kRowsPerBlock), kBlock, 0, stream()>>>(
      logits, rows, labels, n, scale, dlogits, loss.get());
  DGNN_CUDA_LAUNCHED("softmax_xent_kernel");
  sum_double_kernel<<<1, kReduceThreads, 0, stream()>>>(loss.get(), n, total.get());
  DGNN_CUDA_LAUNCHED("sum_double_kernel");
  double result = 0.0;
  copy(&result, total.get(), sizeof(double), 1);
  return result;
}

int64_t count_correct(ConstMatView logits, const int32_t* rows, const int32_t* labels, int64_t n) {
  if (n <= 0) return 0;
  Scratch<unsigned long long> count(1);
  DGNN_CUDA_CHECK(cudaMemsetAsync(count.get(), 0, sizeof(unsigned long long), stream()));
  count_correct_kernel<<<grid_for(n, kRowsPerBlock), kBlock, 0, stream()>>>(logits, rows, labels,
                                                                           n, count.get());
  DGNN_CUDA_LAUNCHED("count_correct_kernel");
  unsigned long long result = 0;
  copy(&result, count.get(), sizeof(result), 1);
  return int64_t(result);
}

}  // namespace dgnn::kernels::cuda
