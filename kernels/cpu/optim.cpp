// Optimiser updates: one fused pass over a parameter's weights, gradients and state.
#include <cmath>

#include "dgnn/kernels/cpu/cpu_kernels.hpp"

namespace dgnn::kernels::cpu {

void adam_step(int64_t n, float* w, const float* g, float* m, float* v, float step_size,
               float beta1, float beta2, float eps, float inv_sqrt_bc2, float wd) {
#pragma omp parallel for simd if (n >= (1 << 16))
  for (int64_t k = 0; k < n; ++k) {
    const float gk = g[k] + wd * w[k];
    m[k] = beta1 * m[k] + (1.f - beta1) * gk;
    v[k] = beta2 * v[k] + (1.f - beta2) * gk * gk;
    w[k] -= step_size * m[k] / (std::sqrt(v[k]) * inv_sqrt_bc2 + eps);
  }
}

void sgd_step(int64_t n, float* w, const float* g, float* vel, float lr, float momentum,
              float wd) {
#pragma omp parallel for simd if (n >= (1 << 16))
  for (int64_t k = 0; k < n; ++k) {
    float gk = g[k] + wd * w[k];
    if (momentum != 0.f) gk = vel[k] = momentum * vel[k] + gk;
    w[k] -= lr * gk;
  }
}

}  // namespace dgnn::kernels::cpu
