// Row movement (gather / scatter-add) and dropout: kernels that index rows, not elements.
#include <algorithm>
#include <bit>
#include <cstring>
#include <vector>

#include "dgnn/common/hash_rng.hpp"
#include "dgnn/kernels/cpu/cpu_kernels.hpp"

namespace dgnn::kernels::cpu {

namespace {
constexpr int64_t kParallelMin = 1 << 15;
}  // namespace

void gather_rows(ConstMatView src, const int32_t* idx, int64_t n, MatView dst) {
  const size_t row_bytes = size_t(src.cols) * sizeof(float);
  if (row_bytes == 0) return;
#pragma omp parallel for if (n * src.cols >= kParallelMin)
  for (int64_t i = 0; i < n; ++i) std::memcpy(dst.row(i), src.row(idx[i]), row_bytes);
}

void scatter_rows(ConstMatView src, const int32_t* idx, int64_t n, MatView dst) {
  const size_t row_bytes = size_t(src.cols) * sizeof(float);
  if (row_bytes == 0) return;
#pragma omp parallel for if (n * src.cols >= kParallelMin)
  for (int64_t i = 0; i < n; ++i) std::memcpy(dst.row(idx[i]), src.row(i), row_bytes);
}

void scatter_add_rows(ConstMatView src, const int32_t* idx, int64_t n, MatView dst) {
  const int64_t cols = src.cols;
  if (n == 0 || cols == 0) return;
  auto add_row = [cols](float* __restrict d, const float* __restrict s) {
#pragma omp simd
    for (int64_t c = 0; c < cols; ++c) d[c] += s[c];
  };
  if (n * cols < kParallelMin) {
    for (int64_t i = 0; i < n; ++i) add_row(dst.row(idx[i]), src.row(i));
    return;
  }
  // Group sources by target with a stable counting sort, then give each target to one thread.
  // Within a target the sources stay in increasing i, so the sums are bit-identical to the
  // sequential loop for any thread count, with no atomics.
  const int64_t targets = dst.rows;
  std::vector<int64_t> start(size_t(targets) + 1, 0);
  for (int64_t i = 0; i < n; ++i) ++start[size_t(idx[i]) + 1];
  for (int64_t t = 0; t < targets; ++t) start[size_t(t) + 1] += start[size_t(t)];
  std::vector<int64_t> order(static_cast<size_t>(n));
  {
    std::vector<int64_t> next(start.begin(), start.end() - 1);
    for (int64_t i = 0; i < n; ++i) order[size_t(next[size_t(idx[i])]++)] = i;
  }
#pragma omp parallel for schedule(dynamic, 64)
  for (int64_t t = 0; t < targets; ++t) {
    float* d = dst.row(t);
    for (int64_t k = start[size_t(t)]; k < start[size_t(t) + 1]; ++k)
      add_row(d, src.row(order[size_t(k)]));
  }
}

void dropout(ConstMatView x, float p, uint64_t key, const int64_t* row_ids, MatView y,
             uint8_t* mask) {
  const int64_t cols = x.cols, groups = (cols + 3) / 4;
  const float keep_scale = 1.f / (1.f - p);
  const uint32_t threshold = dropout_threshold(p);
#pragma omp parallel if (x.rows * cols >= kParallelMin)
  {
    // A row's 16-bit uniforms first (four per hash, as dropout_keep draws them), then the
    // keep / scale pass as one vector loop: mixed with the hashing, the per-column decisions
    // stayed scalar and were most of the kernel's time.
    std::vector<uint16_t> u(size_t(groups * 4));
#pragma omp for
    for (int64_t r = 0; r < x.rows; ++r) {
      // The mask depends on the row's identity, never on its position in this matrix, so ranks
      // holding the same vertex in different places draw the same bits.
      const uint64_t row_key = dropout_row_key(key, row_ids ? row_ids[r] : r);
      for (int64_t g = 0; g < groups; ++g) {
        const uint64_t bits = mix64(row_key + uint64_t(g));
        for (int k = 0; k < 4; ++k) u[size_t(4 * g + k)] = uint16_t(bits >> (16 * k));
      }
      const float* in = x.row(r);
      float* out = y.row(r);
      const uint16_t* ur = u.data();
#pragma omp simd
      for (int64_t c = 0; c < cols; ++c) out[c] = in[c] * (ur[c] >= threshold ? keep_scale : 0.f);
      if (mask) {
        uint8_t* m = mask + r * cols;
#pragma omp simd
        for (int64_t c = 0; c < cols; ++c) m[c] = ur[c] >= threshold;
      }
    }
  }
}

void dropout_backward(ConstMatView dy, const uint8_t* mask, float p, MatView dx, bool accumulate) {
  const int64_t cols = dy.cols;
  const float keep_scale = 1.f / (1.f - p);
#pragma omp parallel for if (dy.rows * cols >= kParallelMin)
  for (int64_t r = 0; r < dy.rows; ++r) {
    const float* g = dy.row(r);
    const uint8_t* m = mask + r * cols;
    float* out = dx.row(r);
    // m ? g * scale : +0, as a bit mask rather than a select on the (random) mask bytes, which
    // GCC left as a mispredicted branch per element.
    auto kept = [keep_scale](float gc, uint8_t mc) {
      return std::bit_cast<float>(std::bit_cast<uint32_t>(gc * keep_scale) & -uint32_t(mc));
    };
    if (accumulate) {
#pragma omp simd
      for (int64_t c = 0; c < cols; ++c) out[c] += kept(g[c], m[c]);
    } else {
#pragma omp simd
      for (int64_t c = 0; c < cols; ++c) out[c] = kept(g[c], m[c]);
    }
  }
}

}  // namespace dgnn::kernels::cpu
