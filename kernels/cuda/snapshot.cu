// Snapshots by difference on the device: applying a structure difference (per row: the previous
// entries minus deletions, merged with additions, as the host's apply_diff does) and building the
// GCN adjacency, both one thread per row, with Thrust for the binary searches and scans.
#include <thrust/binary_search.h>
#include <thrust/execution_policy.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/scan.h>

#include <cstdint>

#include "dgnn/kernels/block_norm.hpp"
#include "dgnn/kernels/cuda/context.hpp"
#include "dgnn/kernels/cuda/cuda_kernels.hpp"

namespace dgnn::kernels::cuda {

namespace {

__global__ void diff_lengths_kernel(int64_t rows, const int64_t* __restrict__ off,
                                    const int64_t* __restrict__ add_start,
                                    const int64_t* __restrict__ del_start,
                                    int64_t* __restrict__ out_off) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t r = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; r < rows; r += stride)
    out_off[r + 1] = (off[r + 1] - off[r]) - (del_start[r + 1] - del_start[r]) +
                     (add_start[r + 1] - add_start[r]);
  if (blockIdx.x == 0 && threadIdx.x == 0) out_off[0] = 0;
}

__global__ void diff_merge_kernel(int64_t rows, const int64_t* __restrict__ off,
                                  const int32_t* __restrict__ idx,
                                  const int32_t* __restrict__ add_src,
                                  const int64_t* __restrict__ add_start,
                                  const int32_t* __restrict__ del_src,
                                  const int64_t* __restrict__ del_start,
                                  const int64_t* __restrict__ out_off, int32_t* __restrict__ out) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t r = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; r < rows; r += stride) {
    int64_t a = off[r], ai = add_start[r], di = del_start[r], w = out_off[r];
    const int64_t ae = off[r + 1], aend = add_start[r + 1], de = del_start[r + 1];
    while (a < ae || ai < aend) {
      if (a < ae && (ai >= aend || idx[a] < add_src[ai])) {
        const int32_t s = idx[a++];
        if (di < de && del_src[di] == s) {
          ++di;  // deleted
          continue;
        }
        out[w++] = s;
      } else {
        out[w++] = add_src[ai++];
      }
    }
  }
}

__global__ void gcn_lengths_kernel(int64_t rows, const int64_t* __restrict__ off,
                                   const int32_t* __restrict__ idx, int64_t* __restrict__ out_off) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t r = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; r < rows; r += stride) {
    out_off[r + 1] = block_norm::gcn_row_length(idx + off[r], off[r + 1] - off[r], r);
  }
  if (blockIdx.x == 0 && threadIdx.x == 0) out_off[0] = 0;
}

// A whole graph's degree of u: its non-self in-entries, (u's adjacency row length) - 1.
struct RowLengthDegree {
  const int64_t* out_off;
  __host__ __device__ int64_t operator()(int64_t u) const {
    return out_off[u + 1] - out_off[u] - 1;
  }
};

// Row r of A + I with the host's values (block_norm::gcn_row, the blocks' code: with every
// in-edge in the row, its scale is exactly 1, so value = double(1) * inv_sqrt(u) * inv_sqrt(v)
// rounded to float once, as gnn/core/graph_view.cpp computes it).
__global__ void gcn_fill_kernel(int64_t rows, const int64_t* __restrict__ off,
                                const int32_t* __restrict__ idx,
                                const int64_t* __restrict__ out_off, int32_t* __restrict__ out_idx,
                                float* __restrict__ out_val, int32_t* __restrict__ out_off32) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t v = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; v < rows; v += stride) {
    block_norm::gcn_row(idx + off[v], off[v + 1] - off[v], v, RowLengthDegree{out_off},
                        out_idx + out_off[v], out_val + out_off[v]);
    if (out_off32) out_off32[v + 1] = int32_t(out_off[v + 1]);
    if (out_off32 && v == 0) out_off32[0] = 0;
  }
}

}  // namespace

void apply_structure_diff(int64_t rows, const int64_t* off, const int32_t* idx,
                          const int32_t* add_src, const int32_t* add_dst, int64_t na,
                          const int32_t* del_src, const int32_t* del_dst, int64_t nd,
                          int64_t* out_off, int32_t* out_idx) {
  if (rows == 0) {
    DGNN_CUDA_CHECK(cudaMemsetAsync(out_off, 0, sizeof(int64_t), stream()));
    return;
  }
  PoolAllocator pool;  // temporaries from the caching pool, not cudaMalloc / cudaFree
  const auto policy = thrust::cuda::par(pool).on(stream());
  // Where each row's additions and deletions start in the (dst, src)-sorted lists.
  Scratch<int64_t> add_start(rows + 1), del_start(rows + 1);
  const thrust::counting_iterator<int64_t> first(0), last(rows + 1);
  DGNN_THRUST(thrust::lower_bound(policy, add_dst, add_dst + na, first, last, add_start.get()));
  DGNN_THRUST(thrust::lower_bound(policy, del_dst, del_dst + nd, first, last, del_start.get()));
  diff_lengths_kernel<<<grid_for(rows), kBlock, 0, stream()>>>(rows, off, add_start.get(),
                                                              del_start.get(), out_off);
  DGNN_CUDA_LAUNCHED("diff_lengths_kernel");
  DGNN_THRUST(thrust::inclusive_scan(policy, out_off + 1, out_off + 1 + rows, out_off + 1));
  diff_merge_kernel<<<grid_for(rows), kBlock, 0, stream()>>>(
      rows, off, idx, add_src, add_start.get(), del_src, del_start.get(), out_off, out_idx);
  DGNN_CUDA_LAUNCHED("diff_merge_kernel");
}

void gcn_adjacency(int64_t rows, const int64_t* off, const int32_t* idx, int64_t* out_off,
                   int32_t* out_idx, float* out_val, int32_t* out_off32) {
  if (rows == 0) {
    DGNN_CUDA_CHECK(cudaMemsetAsync(out_off, 0, sizeof(int64_t), stream()));
    if (out_off32) DGNN_CUDA_CHECK(cudaMemsetAsync(out_off32, 0, sizeof(int32_t), stream()));
    return;
  }
  PoolAllocator pool;  // temporaries from the caching pool, not cudaMalloc / cudaFree
  const auto policy = thrust::cuda::par(pool).on(stream());
  gcn_lengths_kernel<<<grid_for(rows), kBlock, 0, stream()>>>(rows, off, idx, out_off);
  DGNN_CUDA_LAUNCHED("gcn_lengths_kernel");
  DGNN_THRUST(thrust::inclusive_scan(policy, out_off + 1, out_off + 1 + rows, out_off + 1));
  gcn_fill_kernel<<<grid_for(rows), kBlock, 0, stream()>>>(rows, off, idx, out_off, out_idx,
                                                           out_val, out_off32);
  DGNN_CUDA_LAUNCHED("gcn_fill_kernel");
}

}  // namespace dgnn::kernels::cuda
