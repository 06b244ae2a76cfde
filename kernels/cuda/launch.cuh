#pragma once
// Launch helpers shared by the element-wise style kernels of kernels/cuda (CUDA sources only).
#include <cstdint>

#include "dgnn/kernels/cuda/context.hpp"

namespace dgnn::kernels::cuda {

// f(r, c) over a rows x cols grid, one flat index per element. I is 32-bit when the total (plus
// one grid stride) fits, so the division is cheap; 64-bit otherwise.
template <typename I, typename F>
__global__ void each2d_kernel(I total, I cols, F f) {
  const I stride = I(gridDim.x) * I(blockDim.x);
  for (I t = I(blockIdx.x) * I(blockDim.x) + I(threadIdx.x); t < total; t += stride)
    f(int64_t(t / cols), int64_t(t % cols));
}

template <typename F>
void each2d(int64_t rows, int64_t cols, F f) {
  const int64_t total = rows * cols;
  if (total <= 0) return;
  // grid_for caps the grid at 2^28 threads, so t + stride < 2^31 + 2^28 never wraps in 32 bits.
  if (total <= INT32_MAX)
    each2d_kernel<uint32_t><<<grid_for(total), kBlock, 0, stream()>>>(uint32_t(total),
                                                                    uint32_t(cols), f);
  else
    each2d_kernel<int64_t><<<grid_for(total), kBlock, 0, stream()>>>(total, cols, f);
  DGNN_CUDA_LAUNCHED("each2d_kernel");
}

}  // namespace dgnn::kernels::cuda
