// Row movement on the context stream: gather, and a deterministic scatter-add.
//
// scatter_add_rows sums, for each target row, its sources in increasing i onto the row's
// existing value, exactly the additions of kernels/cpu's sequential loop, so the result is
// bit-identical to the CPU backend and run to run. No floating-point atomics: the sources are
// grouped by target with a stable radix sort of (idx[i], i), and each column of each target
// segment is then summed by one thread in segment (= increasing i) order.
#include <cub/device/device_radix_sort.cuh>

#include <cstdint>

#include "dgnn/kernels/cuda/context.hpp"
#include "dgnn/kernels/cuda/launch.cuh"

namespace dgnn::kernels::cuda {

namespace {

// keys[i] = idx[i] (as unsigned: targets are non-negative), order[i] = i.
template <typename V>
__global__ void sort_input_kernel(const int32_t* __restrict__ idx, int64_t n,
                                  uint32_t* __restrict__ keys, V* __restrict__ order) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    keys[i] = uint32_t(idx[i]);
    order[i] = V(i);
  }
}

// One thread per (sorted position k, column c). Threads at the head of a run of equal targets
// (k == 0 or keys[k - 1] != keys[k]) find the run's end and add its sources, in run order
// (increasing i, the sort being stable), onto dst[target][c]; the others have nothing to do.
template <typename V>
__global__ void segment_add_kernel(const uint32_t* __restrict__ keys,
                                   const V* __restrict__ order, int64_t n, ConstMatView src,
                                   MatView dst) {
  const int64_t cols = src.cols;
  const int64_t total = n * cols;
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t t = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; t < total; t += stride) {
    const int64_t k = t / cols, c = t % cols;
    const uint32_t target = keys[k];
    if (k > 0 && keys[k - 1] == target) continue;
    // The run's end: gallop (1, 2, 4, ... past k) to bracket it, then bisect. Short runs,
    // the common case, cost a probe or two.
    int64_t lo = k, step = 1;  // keys[lo] == target
    while (lo + step < n && keys[lo + step] == target) {
      lo += step;
      step *= 2;
    }
    int64_t hi = lo + step < n ? lo + step : n;  // keys[hi] != target, or hi == n
    while (hi - lo > 1) {
      const int64_t mid = lo + (hi - lo) / 2;
      if (keys[mid] == target)
        lo = mid;
      else
        hi = mid;
    }
    float* out = dst.data + int64_t(target) * dst.ld + c;
    const float* in = src.data + c;
    const int64_t sld = src.ld;
    float acc = *out;
#pragma unroll 4
    for (int64_t j = k; j < hi; ++j) acc = __fadd_rn(acc, in[int64_t(order[j]) * sld]);
    *out = acc;
  }
}

// Bits needed for keys in [0, rows): at least one, so the sort always runs a pass.
int key_bits(int64_t rows) {
  int bits = 1;
  while (bits < 32 && (int64_t(1) << bits) < rows) ++bits;
  return bits;
}

template <typename V, typename N>
void scatter_add_sorted(ConstMatView src, const int32_t* idx, int64_t n, MatView dst) {
  Scratch<uint32_t> keys_a(n), keys_b(n);
  Scratch<V> order_a(n), order_b(n);
  sort_input_kernel<V><<<grid_for(n), kBlock, 0, stream()>>>(idx, n, keys_a.get(), order_a.get());
  DGNN_CUDA_LAUNCHED("sort_input_kernel");

  cub::DoubleBuffer<uint32_t> keys(keys_a.get(), keys_b.get());
  cub::DoubleBuffer<V> order(order_a.get(), order_b.get());
  const int end_bit = key_bits(dst.rows);
  size_t temp_bytes = 0;
  DGNN_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, temp_bytes, keys, order, N(n), 0,
                                                  end_bit, stream()));
  // Never a null buffer for the real call: a null one would only query the size again.
  Scratch<unsigned char> temp(int64_t(temp_bytes > 0 ? temp_bytes : 1));
  DGNN_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(temp.get(), temp_bytes, keys, order, N(n), 0,
                                                  end_bit, stream()));

  segment_add_kernel<V><<<grid_for(n * src.cols), kBlock, 0, stream()>>>(
      keys.Current(), order.Current(), n, src, dst);
  DGNN_CUDA_LAUNCHED("segment_add_kernel");
}

}  // namespace

void gather_rows(ConstMatView src, const int32_t* idx, int64_t n, MatView dst) {
  const float* s = src.data;
  float* d = dst.data;
  const int64_t sld = src.ld, dld = dst.ld;
  each2d(n, src.cols, [=] __device__(int64_t i, int64_t c) {
    d[i * dld + c] = s[int64_t(idx[i]) * sld + c];
  });
}

void scatter_rows(ConstMatView src, const int32_t* idx, int64_t n, MatView dst) {
  const float* s = src.data;
  float* d = dst.data;
  const int64_t sld = src.ld, dld = dst.ld;
  each2d(n, src.cols, [=] __device__(int64_t i, int64_t c) {
    d[int64_t(idx[i]) * dld + c] = s[i * sld + c];
  });
}

void scatter_add_rows(ConstMatView src, const int32_t* idx, int64_t n, MatView dst) {
  if (n <= 0 || src.cols <= 0) return;
  // 32-bit source positions and sort offsets whenever they fit (always, in practice).
  if (n <= int64_t(UINT32_MAX))
    scatter_add_sorted<uint32_t, uint32_t>(src, idx, n, dst);
  else
    scatter_add_sorted<uint64_t, int64_t>(src, idx, n, dst);
}

}  // namespace dgnn::kernels::cuda
