// Host memory: 64-byte aligned so rows start on cache lines and vector loads never split.
#include <cstdlib>
#include <cstring>
#include <string>

#include "common/error.hpp"
#include "kernels/cpu/cpu_kernels.hpp"

namespace dgnn::kernels::cpu {

namespace {
constexpr size_t kAlign = 64;
// Below this many elements the OpenMP fork costs more than the loop.
constexpr int64_t kParallelMin = 1 << 15;
}  // namespace

void* alloc(size_t bytes) {
  // aligned_alloc wants a size that is a multiple of the alignment, and a 0-byte request may
  // return null, which the contract forbids.
  size_t rounded = (bytes + kAlign - 1) / kAlign * kAlign;
  if (rounded == 0) rounded = kAlign;
  void* p = std::aligned_alloc(kAlign, rounded);
  if (!p) throw Error("out of host memory allocating " + std::to_string(bytes) + " bytes");
  return p;
}

void free(void* p) noexcept { std::free(p); }

void copy(void* dst, const void* src, size_t bytes) {
  if (bytes > 0) std::memcpy(dst, src, bytes);
}

void fill(float* x, int64_t n, float value) {
#pragma omp parallel for simd if (n >= kParallelMin)
  for (int64_t i = 0; i < n; ++i) x[i] = value;
}

void copy_view(ConstMatView src, MatView dst, bool accumulate) {
  const int64_t cols = src.cols;
#pragma omp parallel for if (src.rows * cols >= kParallelMin)
  for (int64_t r = 0; r < src.rows; ++r) {
    const float* s = src.row(r);
    float* d = dst.row(r);
    if (accumulate) {
#pragma omp simd
      for (int64_t c = 0; c < cols; ++c) d[c] += s[c];
    } else {
      std::memcpy(d, s, size_t(cols) * sizeof(float));
    }
  }
}

}  // namespace dgnn::kernels::cpu
