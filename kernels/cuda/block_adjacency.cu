// A sampled block's adjacencies on the GPU (kernels::block_adjacency; the CPU's reference is
// kernels/cpu/block_adjacency.cpp): one thread per row runs the per-row code of
// kernels/block_norm.hpp, the host's own; the transpose is a stable sort of the entries by column
// (Thrust's radix sort: deterministic), so each transposed row lists its destinations in
// ascending order, as Csr::transpose does. Everything on the context stream.
#include <thrust/binary_search.h>
#include <thrust/execution_policy.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/scan.h>
#include <thrust/sequence.h>
#include <thrust/sort.h>

#include <climits>
#include <cstdint>

#include "dgnn/kernels/block_norm.hpp"
#include "dgnn/kernels/cuda/context.hpp"
#include "dgnn/kernels/cuda/launch.cuh"
#include "dgnn/kernels/device_csr.hpp"
#include "dgnn/kernels/minibatch_kernels.hpp"

namespace dgnn::kernels::cuda {

namespace {

__global__ void gcn_lengths_kernel(int64_t rows, const int64_t* __restrict__ off,
                                   const int32_t* __restrict__ idx, int64_t* __restrict__ out_off) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t v = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; v < rows; v += stride)
    out_off[v + 1] = block_norm::gcn_row_length(idx + off[v], off[v + 1] - off[v], v);
}

__global__ void gcn_fill_kernel(int64_t rows, const int64_t* __restrict__ off,
                                const int32_t* __restrict__ idx,
                                const int64_t* __restrict__ src_degree,
                                const int64_t* __restrict__ out_off, int32_t* __restrict__ out_idx,
                                float* __restrict__ out_val) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t v = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; v < rows; v += stride)
    block_norm::gcn_row(idx + off[v], off[v + 1] - off[v], v, src_degree, out_idx + out_off[v],
                        out_val + out_off[v]);
}

// Sum and mean keep the block's entries: only the values are computed.
__global__ void values_kernel(int64_t rows, bool mean, const int64_t* __restrict__ off,
                              const int32_t* __restrict__ idx, const float* __restrict__ w,
                              const int64_t* __restrict__ src_degree, float* __restrict__ out_val) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t v = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; v < rows; v += stride) {
    const int64_t b = off[v], len = off[v + 1] - off[v];
    if (mean)
      block_norm::mean_row(len, out_val + b);
    else
      block_norm::sum_row(idx + b, w ? w + b : nullptr, len, v, src_degree, out_val + b);
  }
}

__global__ void row_of_entry_kernel(int64_t rows, const int64_t* __restrict__ off,
                                    int32_t* __restrict__ row_of) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t v = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; v < rows; v += stride)
    for (int64_t e = off[v]; e < off[v + 1]; ++e) row_of[e] = int32_t(v);
}

// Transposed entry i is forward entry perm[i]: its row becomes the column, its value moves along.
__global__ void transpose_fill_kernel(int64_t nnz, const int32_t* __restrict__ perm,
                                      const int32_t* __restrict__ row_of,
                                      const float* __restrict__ val, int32_t* __restrict__ t_idx,
                                      float* __restrict__ t_val) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < nnz; i += stride) {
    const int32_t e = perm[i];
    t_idx[i] = row_of[e];
    t_val[i] = val[e];
  }
}

__global__ void offsets32_kernel(int64_t n, const int64_t* __restrict__ off,
                                 int32_t* __restrict__ off32) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    off32[i] = int32_t(off[i]);
}

struct Transposed {
  Buffer offsets, indices, values;
};

// The transpose of a rows x cols matrix with nnz entries (offsets from 0): each row's entries
// in ascending column order, values carried (Csr::transpose's result).
Transposed transpose_buffers(int64_t rows, int64_t cols, int64_t nnz, const int64_t* off,
                             const int32_t* idx, const float* val) {
  Buffer t_off(Device::cuda, size_t(cols + 1) * sizeof(int64_t));
  Buffer t_idx(Device::cuda, size_t(nnz) * sizeof(int32_t));
  Buffer t_val(Device::cuda, size_t(nnz) * sizeof(float));
  if (nnz == 0) {
    DGNN_CUDA_CHECK(
        cudaMemsetAsync(t_off.as<int64_t>(), 0, size_t(cols + 1) * sizeof(int64_t), stream()));
  } else {
    PoolAllocator pool;
    const auto policy = thrust::cuda::par(pool).on(stream());
    Scratch<int32_t> keys(nnz), perm(nnz), row_of(nnz);
    DGNN_CUDA_CHECK(cudaMemcpyAsync(keys.get(), idx, size_t(nnz) * sizeof(int32_t),
                                    cudaMemcpyDeviceToDevice, stream()));
    DGNN_THRUST(thrust::sequence(policy, perm.get(), perm.get() + nnz));
    // Stable: entries of one column keep their (row-ascending) forward order.
    DGNN_THRUST(thrust::stable_sort_by_key(policy, keys.get(), keys.get() + nnz, perm.get()));
    // Column c's entries start at the first sorted key >= c; offsets[cols] = nnz.
    DGNN_THRUST(thrust::lower_bound(
        policy, keys.get(), keys.get() + nnz, thrust::counting_iterator<int64_t>(0),
        thrust::counting_iterator<int64_t>(cols + 1), t_off.as<int64_t>()));
    if (rows > 0) {
      row_of_entry_kernel<<<grid_for(rows), kBlock, 0, stream()>>>(rows, off, row_of.get());
      DGNN_CUDA_LAUNCHED("row_of_entry_kernel");
    }
    transpose_fill_kernel<<<grid_for(nnz), kBlock, 0, stream()>>>(
        nnz, perm.get(), row_of.get(), val, t_idx.as<int32_t>(), t_val.as<float>());
    DGNN_CUDA_LAUNCHED("transpose_fill_kernel");
  }
  return {std::move(t_off), std::move(t_idx), std::move(t_val)};
}

DeviceCsr transpose(int64_t rows, int64_t cols, int64_t nnz, const int64_t* off, const int32_t* idx,
                    const float* val) {
  Transposed t = transpose_buffers(rows, cols, nnz, off, idx, val);
  return DeviceCsr(Device::cuda, cols, rows, nnz, std::move(t.offsets), std::move(t.indices),
                   std::move(t.values));
}

}  // namespace

DeviceCsr transpose_with_offsets(const CsrView& a, std::vector<int64_t> host_offsets) {
  const int64_t nnz = a.device_nnz;
  DGNN_CHECK(nnz >= 0 && int64_t(host_offsets.size()) == a.cols + 1 &&
                 host_offsets.back() == nnz && nnz <= INT32_MAX,
             ShapeError,
             "transpose_with_offsets: a whole device matrix and its transpose's offsets");
  Transposed t = transpose_buffers(a.rows, a.cols, nnz, a.offsets, a.indices, a.values);
  Buffer off32;
  if (nnz < (int64_t(1) << 31)) {  // for cuSPARSE, as DeviceCsr gives uploaded matrices
    off32 = Buffer(Device::cuda, size_t(a.cols + 1) * sizeof(int32_t));
    offsets32_kernel<<<grid_for(a.cols + 1), kBlock, 0, stream()>>>(
        a.cols + 1, t.offsets.as<const int64_t>(), off32.as<int32_t>());
    DGNN_CUDA_LAUNCHED("offsets32_kernel");
  }
  return DeviceCsr(Device::cuda, a.cols, a.rows, std::move(host_offsets), std::move(t.offsets),
                   std::move(off32), std::move(t.indices), std::move(t.values));
}

BlockAdjacency block_adjacency(const DeviceBlock& b, BlockNorm norm) {
  const int64_t rows = b.n_dst;
  const int64_t* off = b.offsets.as<const int64_t>();
  const int32_t* idx = b.indices.as<const int32_t>();
  const int64_t* deg = b.src_degree.as<const int64_t>();
  Buffer f_off(Device::cuda, size_t(rows + 1) * sizeof(int64_t));
  Buffer f_idx, f_val;
  int64_t nnz = b.nnz;
  if (norm == BlockNorm::gcn) {
    int64_t* o = f_off.as<int64_t>();
    DGNN_CUDA_CHECK(cudaMemsetAsync(o, 0, sizeof(int64_t), stream()));
    if (rows > 0) {
      gcn_lengths_kernel<<<grid_for(rows), kBlock, 0, stream()>>>(rows, off, idx, o);
      DGNN_CUDA_LAUNCHED("gcn_lengths_kernel");
      PoolAllocator pool;
      DGNN_THRUST(
          thrust::inclusive_scan(thrust::cuda::par(pool).on(stream()), o + 1, o + 1 + rows, o + 1));
    }
    copy(&nnz, o + rows, sizeof(int64_t), 1);  // synchronises: the size of what comes next
    DGNN_CHECK(nnz <= INT32_MAX, ShapeError,
               "block_adjacency: " + std::to_string(nnz) + " entries exceed 32-bit numbering");
    f_idx = Buffer(Device::cuda, size_t(nnz) * sizeof(int32_t));
    f_val = Buffer(Device::cuda, size_t(nnz) * sizeof(float));
    if (rows > 0) {
      gcn_fill_kernel<<<grid_for(rows), kBlock, 0, stream()>>>(
          rows, off, idx, deg, o, f_idx.as<int32_t>(), f_val.as<float>());
      DGNN_CUDA_LAUNCHED("gcn_fill_kernel");
    }
  } else {
    copy(f_off.as<int64_t>(), off, size_t(rows + 1) * sizeof(int64_t), 2);
    f_idx = Buffer(Device::cuda, size_t(nnz) * sizeof(int32_t));
    f_val = Buffer(Device::cuda, size_t(nnz) * sizeof(float));
    if (nnz > 0) {
      copy(f_idx.as<int32_t>(), idx, size_t(nnz) * sizeof(int32_t), 2);
      values_kernel<<<grid_for(rows), kBlock, 0, stream()>>>(
          rows, norm == BlockNorm::mean, off, idx,
          b.values.bytes() ? b.values.as<const float>() : nullptr, deg, f_val.as<float>());
      DGNN_CUDA_LAUNCHED("values_kernel");
    }
  }
  DeviceCsr backward = transpose(rows, b.n_src, nnz, f_off.as<const int64_t>(),
                                 f_idx.as<const int32_t>(), f_val.as<const float>());
  return BlockAdjacency{DeviceCsr(Device::cuda, rows, b.n_src, nnz, std::move(f_off),
                                  std::move(f_idx), std::move(f_val)),
                        std::move(backward)};
}

void gather_rows_by_id(ConstMatView src, const int64_t* ids, int64_t n, MatView dst) {
  const float* s = src.data;
  float* d = dst.data;
  const int64_t sld = src.ld, dld = dst.ld;
  each2d(n, src.cols,
         [=] __device__(int64_t i, int64_t c) { d[i * dld + c] = s[ids[i] * sld + c]; });
}

void bind_thread() { DGNN_CUDA_CHECK(cudaSetDevice(context().device)); }

}  // namespace dgnn::kernels::cuda
