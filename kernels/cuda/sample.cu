// One layer of neighbour sampling on the GPU (kernels/sample_block.hpp): the CPU sampler's block,
// bit for bit. The draws are kernels/sample_draw.hpp, the same code the CPU runs, one thread per
// destination (a warp per long row taken whole); the per-row counts are scanned into offsets
// with Thrust; the compact numbering of sources follows NeighborSampler::sample exactly:
// destinations first, then each new vertex at its first appearance in the concatenated rows.
// That order is found without a sort: an atomicMin of the entry index per vertex (an integer
// minimum: the same result whatever the thread order), then a stable copy_if of the entries
// that hold their vertex's first appearance.
#include <thrust/copy.h>
#include <thrust/execution_policy.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/scan.h>

#include <climits>
#include <cstdint>

#include "dgnn/kernels/cuda/context.hpp"
#include "dgnn/kernels/sample_block.hpp"
#include "dgnn/kernels/sample_draw.hpp"

namespace dgnn::kernels::cuda {

namespace {

auto on_stream(PoolAllocator& a) { return thrust::cuda::par(a).on(stream()); }

__global__ void count_kernel(SampleGraph g, const int64_t* __restrict__ dst, int64_t n, int fanout,
                             bool replace, int64_t* __restrict__ counts) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    const int64_t v = dst[i];
    const int64_t b = g.in.offsets[v];
    counts[i] = draw::row_count(g.in.indices + b, g.in.offsets[v + 1] - b, v, g.self_loops, fanout,
                                replace);
  }
}

// A row taken whole (fanout -1, or without replacement no more candidates than the fanout):
// draw::row's output is then the row itself, entry for entry. Such rows of kWarpRow entries or
// more are copied by a warp each (copy_whole_rows_kernel) rather than walked by one thread, so a
// hub's 10^5 neighbours do not serialise its warp.
constexpr int64_t kWarpRow = 64;

__device__ bool copied_by_warp(const SampleGraph& g, int64_t v, int64_t b, int64_t deg, int fanout,
                               bool replace) {
  if (deg < kWarpRow) return false;
  if (fanout < 0) return true;
  if (replace) return false;
  int64_t lo, hi;
  draw::self_range(g.in.indices + b, deg, v, g.self_loops, &lo, &hi);
  return int64_t(fanout) >= deg - (hi - lo);
}

// One thread per destination: its draws, in row order, as global ids (and weights).
__global__ void draw_kernel(SampleGraph g, const int64_t* __restrict__ dst, int64_t n, int fanout,
                            bool replace, uint64_t seed, uint64_t epoch, int layer,
                            const int64_t* __restrict__ offsets, int64_t* __restrict__ nbrs,
                            float* __restrict__ weights) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    const int64_t v = dst[i];
    const int64_t b = g.in.offsets[v];
    const int64_t deg = g.in.offsets[v + 1] - b;
    if (copied_by_warp(g, v, b, deg, fanout, replace)) continue;
    const int64_t o = offsets[i];
    draw::row(g.in.indices + b, g.in.values ? g.in.values + b : nullptr, deg, v, g.self_loops,
              fanout, replace, draw::key(seed, epoch, layer, v), nbrs + o,
              weights ? weights + o : nullptr);
  }
}

// One warp per destination whose row is taken whole and long: the row copied, lane by lane.
__global__ void copy_whole_rows_kernel(SampleGraph g, const int64_t* __restrict__ dst, int64_t n,
                                       int fanout, bool replace,
                                       const int64_t* __restrict__ offsets,
                                       int64_t* __restrict__ nbrs, float* __restrict__ weights) {
  const int lane = int(threadIdx.x) & 31;
  const int64_t warps = int64_t(gridDim.x) * (blockDim.x / 32);
  for (int64_t i = (int64_t(blockIdx.x) * blockDim.x + threadIdx.x) / 32; i < n; i += warps) {
    const int64_t v = dst[i];
    const int64_t b = g.in.offsets[v];
    const int64_t deg = g.in.offsets[v + 1] - b;
    if (!copied_by_warp(g, v, b, deg, fanout, replace)) continue;  // the same for the whole warp
    const int64_t o = offsets[i];
    for (int64_t j = lane; j < deg; j += 32) {
      nbrs[o + j] = g.in.indices[b + j];
      if (weights) weights[o + j] = g.in.values[b + j];
    }
  }
}

__global__ void mark_dst_kernel(const int64_t* __restrict__ dst, int64_t n,
                                int32_t* __restrict__ local_of, int64_t* __restrict__ src) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    local_of[dst[i]] = int32_t(i);
    src[i] = dst[i];
  }
}

__global__ void first_seen_kernel(const int64_t* __restrict__ nbrs, int64_t nnz,
                                  const int32_t* __restrict__ local_of,
                                  int64_t* __restrict__ first_of) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t e = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; e < nnz; e += stride) {
    const int64_t u = nbrs[e];
    if (local_of[u] < 0)
      atomicMin(reinterpret_cast<unsigned long long*>(first_of + u), (unsigned long long)e);
  }
}

// The r-th new source (in entry order) gets local number n_dst + r.
__global__ void number_new_kernel(const int64_t* __restrict__ nbrs,
                                  const int64_t* __restrict__ new_entries, int64_t n_new,
                                  int64_t n_dst, int32_t* __restrict__ local_of,
                                  int64_t* __restrict__ src) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t r = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; r < n_new; r += stride) {
    const int64_t u = nbrs[new_entries[r]];
    local_of[u] = int32_t(n_dst + r);
    src[n_dst + r] = u;
  }
}

__global__ void relabel_kernel(const int64_t* __restrict__ nbrs, int64_t nnz,
                               const int32_t* __restrict__ local_of, int32_t* __restrict__ indices) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t e = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; e < nnz; e += stride)
    indices[e] = local_of[nbrs[e]];
}

// Degrees of the sources, and the scratch put back for the next block.
__global__ void finish_kernel(const int64_t* __restrict__ src, int64_t n_src,
                              const int64_t* __restrict__ degree, int64_t* __restrict__ src_degree,
                              int32_t* __restrict__ local_of, int64_t* __restrict__ first_of) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t j = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; j < n_src; j += stride) {
    const int64_t u = src[j];
    src_degree[j] = degree[u];
    local_of[u] = -1;
    first_of[u] = INT64_MAX;
  }
}

// Entry e holds the first appearance of a vertex that is not a destination.
struct FirstOfNew {
  const int64_t* nbrs;
  const int32_t* local_of;
  const int64_t* first_of;
  __device__ bool operator()(int64_t e) const {
    const int64_t u = nbrs[e];
    return local_of[u] < 0 && first_of[u] == e;
  }
};

}  // namespace

DeviceBlock sample_block(const SampleGraph& g, const int64_t* dst, int64_t n_dst, int fanout,
                         bool replace, uint64_t seed, uint64_t epoch, int layer, int32_t* local_of,
                         int64_t* first_of) {
  DeviceBlock b;
  b.n_dst = n_dst;
  b.offsets = Buffer(Device::cuda, size_t(n_dst + 1) * sizeof(int64_t));
  int64_t* offsets = b.offsets.as<int64_t>();
  DGNN_CUDA_CHECK(cudaMemsetAsync(offsets, 0, sizeof(int64_t), stream()));
  PoolAllocator pool;
  if (n_dst > 0) {
    count_kernel<<<grid_for(n_dst), kBlock, 0, stream()>>>(g, dst, n_dst, fanout, replace,
                                                           offsets + 1);
    DGNN_CUDA_LAUNCHED("count_kernel");
    DGNN_THRUST(
        thrust::inclusive_scan(on_stream(pool), offsets + 1, offsets + 1 + n_dst, offsets + 1));
  }
  copy(&b.nnz, offsets + n_dst, sizeof(int64_t), 1);
  const int64_t nnz = b.nnz;
  // Checked before any kernel touches local_of / first_of (they must be left clean): the
  // sources are at most n_dst + nnz.
  DGNN_CHECK(nnz <= INT32_MAX && n_dst + nnz <= INT32_MAX, ShapeError,
             "sample_block: " + std::to_string(nnz) + " sampled entries over " +
                 std::to_string(n_dst) + " destinations exceed 32-bit numbering");

  Scratch<int64_t> nbrs(nnz);
  const bool weighted = g.in.values != nullptr;
  b.values = Buffer(Device::cuda, weighted ? size_t(nnz) * sizeof(float) : 0);
  if (n_dst > 0) {
    draw_kernel<<<grid_for(n_dst), kBlock, 0, stream()>>>(
        g, dst, n_dst, fanout, replace, seed, epoch, layer, offsets, nbrs.get(),
        weighted ? b.values.as<float>() : nullptr);
    DGNN_CUDA_LAUNCHED("draw_kernel");
    copy_whole_rows_kernel<<<grid_for(n_dst * 32), kBlock, 0, stream()>>>(
        g, dst, n_dst, fanout, replace, offsets, nbrs.get(),
        weighted ? b.values.as<float>() : nullptr);
    DGNN_CUDA_LAUNCHED("copy_whole_rows_kernel");
  }

  // Numbering: destinations, then new vertices in order of first appearance. At most nnz new.
  Buffer src(Device::cuda, size_t(n_dst + nnz) * sizeof(int64_t));
  if (n_dst > 0) {
    mark_dst_kernel<<<grid_for(n_dst), kBlock, 0, stream()>>>(dst, n_dst, local_of,
                                                              src.as<int64_t>());
    DGNN_CUDA_LAUNCHED("mark_dst_kernel");
  }
  int64_t n_new = 0;
  Scratch<int64_t> new_entries(nnz);
  if (nnz > 0) {
    first_seen_kernel<<<grid_for(nnz), kBlock, 0, stream()>>>(nbrs.get(), nnz, local_of,
                                                              first_of);
    DGNN_CUDA_LAUNCHED("first_seen_kernel");
    // copy_if keeps the order of its input: the entries, ascending.
    int64_t* end =
        DGNN_THRUST(thrust::copy_if(on_stream(pool), thrust::counting_iterator<int64_t>(0),
                                    thrust::counting_iterator<int64_t>(nnz), new_entries.get(),
                                    FirstOfNew{nbrs.get(), local_of, first_of}));
    n_new = end - new_entries.get();
  }
  b.n_src = n_dst + n_new;  // <= n_dst + nnz, checked above
  if (n_new > 0) {
    number_new_kernel<<<grid_for(n_new), kBlock, 0, stream()>>>(
        nbrs.get(), new_entries.get(), n_new, n_dst, local_of, src.as<int64_t>());
    DGNN_CUDA_LAUNCHED("number_new_kernel");
  }
  b.indices = Buffer(Device::cuda, size_t(nnz) * sizeof(int32_t));
  if (nnz > 0) {
    relabel_kernel<<<grid_for(nnz), kBlock, 0, stream()>>>(nbrs.get(), nnz, local_of,
                                                           b.indices.as<int32_t>());
    DGNN_CUDA_LAUNCHED("relabel_kernel");
  }
  b.src_degree = Buffer(Device::cuda, size_t(b.n_src) * sizeof(int64_t));
  if (b.n_src > 0) {
    finish_kernel<<<grid_for(b.n_src), kBlock, 0, stream()>>>(
        src.as<int64_t>(), b.n_src, g.degree, b.src_degree.as<int64_t>(), local_of, first_of);
    DGNN_CUDA_LAUNCHED("finish_kernel");
  }
  // Trimmed to the sources found (src was sized for the worst case).
  b.src = Buffer(Device::cuda, size_t(b.n_src) * sizeof(int64_t));
  if (b.n_src > 0) copy(b.src.as<int64_t>(), src.as<int64_t>(), size_t(b.n_src) * sizeof(int64_t), 2);
  return b;
}

}  // namespace dgnn::kernels::cuda
