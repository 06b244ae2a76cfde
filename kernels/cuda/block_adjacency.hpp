#pragma once
// The CUDA side of kernels/minibatch_kernels.hpp (kernels/cuda/block_adjacency.cu), on the
// context's stream. Plain C++ (no CUDA header), for kernels/minibatch_kernels.cpp; kept out of
// cuda_kernels.hpp so that adding it does not rebuild every CUDA source.
#include <cstdint>

#include "kernels/minibatch_kernels.hpp"

namespace dgnn::kernels::cuda {

// Synchronises once per matrix (the GCN adjacency's entry count comes back to the host).
BlockAdjacency block_adjacency(const DeviceBlock& block, BlockNorm norm);
void gather_rows_by_id(ConstMatView src, const int64_t* ids, int64_t n, MatView dst);
void bind_thread();

}  // namespace dgnn::kernels::cuda
