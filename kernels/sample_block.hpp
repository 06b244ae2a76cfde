#pragma once
// One layer of neighbour sampling on a device: the bipartite block of sampler.hpp, built where
// the graph lives (kernels/cuda/sample.cu), with the CPU sampler's draws (kernels/sample_draw.hpp)
// and its numbering of sources, so the block is the one sampler/NeighborSampler builds for the
// same key. The CPU itself samples with sampler/ (this entry has no CPU backend).
#include <cstdint>

#include "dgnn/common/views.hpp"
#include "dgnn/kernels/buffer.hpp"

namespace dgnn::kernels {

// The whole graph, on the device: in-edges per vertex (sorted rows), self loops excluded from
// degree; self_loops false says the graph has none.
struct SampleGraph {
  CsrView in;  // device pointers; values null = unweighted
  const int64_t* degree = nullptr;
  bool self_loops = false;
};

// A block in device memory: adj (n_dst x n_src) as offsets (int64, n_dst + 1), indices (int32,
// nnz) and values (float, nnz; empty when the graph is unweighted); src (int64 global ids,
// destinations first, then new sources in order of first appearance in the rows) and src_degree.
struct DeviceBlock {
  int64_t n_dst = 0, n_src = 0, nnz = 0;
  Buffer offsets, indices, values, src, src_degree;
};

// Samples `fanout` in-neighbours of each of dst[0 .. n_dst) (device memory, distinct ids) with
// the draw keys of (seed, epoch, layer). local_of (int32) and first_of (int64) are device scratch
// of one entry per vertex, filled with -1 and INT64_MAX, and left so on return. Synchronises
// (the block's sizes come back to the host).
DeviceBlock sample_block(Device dev, const SampleGraph& g, const int64_t* dst, int64_t n_dst,
                         int fanout, bool replace, uint64_t seed, uint64_t epoch, int layer,
                         int32_t* local_of, int64_t* first_of);

}  // namespace dgnn::kernels
