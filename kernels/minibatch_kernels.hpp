#pragma once
// What mini-batch training on a device needs beyond kernels.hpp's arithmetic: the types of a
// sampled block's normalised adjacencies, built where the block lives (so its structure never
// crosses the bus) by kernels::block_adjacency, and the marks the loader's background thread
// orders its stream with. The kernels (block_adjacency, gather_rows_by_id, bind_thread,
// use_own_stream) are kernels/kernel_list.def's; CPU versions are the reference
// (kernels/cpu/block_adjacency.cpp, the per-row code of kernels/block_norm.hpp), CUDA ones are
// in kernels/cuda/block_adjacency.cu.
#include <cstdint>
#include <memory>

#include "dgnn/common/views.hpp"
#include "dgnn/kernels/device_csr.hpp"
#include "dgnn/kernels/kernels.hpp"
#include "dgnn/kernels/sample_block.hpp"

namespace dgnn::kernels {

// A block's adjacency and its transpose (kernels::block_adjacency).
struct BlockAdjacency {
  DeviceCsr forward, backward;
};

// A batch carries a mark of its thread's stream at the end of its making; the training thread
// waits for it (on its stream, not the host) before using the batch. No-ops on the CPU.
struct StreamMark {
  Device dev = Device::cpu;
  std::shared_ptr<void> event;  // a CUDA event; empty on the CPU
};
StreamMark mark_stream(Device dev);
void wait_for(const StreamMark& mark);

}  // namespace dgnn::kernels
