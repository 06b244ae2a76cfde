// Optimiser updates on the GPU: the same arithmetic as kernels/cpu/optim.cpp, one thread per
// weight, every operation IEEE-rounded on its own in the CPU's order (sqrt and division are
// correctly rounded on both), so the updates should equal the CPU's bit for bit.
#include "dgnn/kernels/cuda/context.hpp"

namespace dgnn::kernels::cuda {

namespace {

__global__ void adam_kernel(int64_t n, float* __restrict__ w, const float* __restrict__ g,
                            float* __restrict__ m, float* __restrict__ v, float step_size,
                            float beta1, float beta2, float eps, float inv_sqrt_bc2, float wd) {
  for (int64_t k = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; k < n;
       k += int64_t(gridDim.x) * blockDim.x) {
    // Each operation rounded on its own, in the CPU's order: nvcc would otherwise fuse the
    // multiply-adds, which the CPU build (ISO C++, no contraction) does not.
    const float gk = __fadd_rn(g[k], __fmul_rn(wd, w[k]));
    const float mk = __fadd_rn(__fmul_rn(beta1, m[k]), __fmul_rn(1.f - beta1, gk));
    const float vk = __fadd_rn(__fmul_rn(beta2, v[k]), __fmul_rn(__fmul_rn(1.f - beta2, gk), gk));
    m[k] = mk;
    v[k] = vk;
    const float denom = __fadd_rn(__fmul_rn(__fsqrt_rn(vk), inv_sqrt_bc2), eps);
    w[k] = __fsub_rn(w[k], __fdiv_rn(__fmul_rn(step_size, mk), denom));
  }
}

__global__ void sgd_kernel(int64_t n, float* __restrict__ w, const float* __restrict__ g,
                           float* __restrict__ vel, float lr, float momentum, float wd) {
  for (int64_t k = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; k < n;
       k += int64_t(gridDim.x) * blockDim.x) {
    float gk = __fadd_rn(g[k], __fmul_rn(wd, w[k]));
    if (momentum != 0.f) gk = vel[k] = __fadd_rn(__fmul_rn(momentum, vel[k]), gk);
    w[k] = __fsub_rn(w[k], __fmul_rn(lr, gk));
  }
}

}  // namespace

void adam_step(int64_t n, float* w, const float* g, float* m, float* v, float step_size,
               float beta1, float beta2, float eps, float inv_sqrt_bc2, float wd) {
  adam_kernel<<<grid_for(n), kBlock, 0, stream()>>>(n, w, g, m, v, step_size, beta1, beta2, eps,
                                                    inv_sqrt_bc2, wd);
  DGNN_CUDA_LAUNCHED("adam_kernel");
}

void sgd_step(int64_t n, float* w, const float* g, float* vel, float lr, float momentum,
              float wd) {
  sgd_kernel<<<grid_for(n), kBlock, 0, stream()>>>(n, w, g, vel, lr, momentum, wd);
  DGNN_CUDA_LAUNCHED("sgd_kernel");
}

}  // namespace dgnn::kernels::cuda
