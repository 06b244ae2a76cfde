#pragma once
// One layer of neighbour sampling on a device: the bipartite block of sampler.hpp, built where
// the graph lives (kernels/cuda/sample.cu), with the CPU sampler's draws (kernels/sample_draw.hpp)
// and its numbering of sources, so the block is the one sampler/NeighborSampler builds for the
// same key: its types here, the kernel in kernels/kernel_list.def. The CPU itself samples with
// sampler/ (this kernel has no CPU backend).
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

// kernels::sample_block (kernels/kernel_list.def) builds one.

}  // namespace dgnn::kernels
