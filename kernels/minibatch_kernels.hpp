#pragma once
// What mini-batch training on a device needs beyond kernels.hpp: a sampled block's normalised
// adjacencies built where the block lives (so its structure never crosses the bus), the gather of
// its input rows by global id, and the binding of the loader's background thread to the device.
// CPU versions are the reference (the same per-row code, kernels/block_norm.hpp); CUDA ones are in
// kernels/cuda/block_adjacency.cu. A header of its own rather than more of kernels.hpp: every
// CUDA source includes that one.
#include <cstdint>
#include <memory>

#include "dgnn/common/views.hpp"
#include "dgnn/kernels/device_csr.hpp"
#include "dgnn/kernels/sample_block.hpp"

namespace dgnn::kernels {

// gnn's Norm, in its order: sum (edge weights, sampled entries scaled by degree / sampled),
// mean (1 / entries), gcn (A + I, 1/sqrt(deg_u + 1) 1/sqrt(deg_v + 1), sampled entries scaled).
enum class BlockNorm : uint8_t { sum, mean, gcn };

// A block's adjacency (n_dst x n_src) and its transpose (n_src x n_dst, each row's entries in
// ascending destination order, as Csr::transpose), on the block's device, with exactly the
// entries and values gnn/core/graph_view.cpp gives the same block on the host. Whole matrices only
// (their offsets stay on the device); no 32-bit offsets, so SpMM takes its own reproducible
// kernel: a block's matrices serve one step, too short a life to time cuSPARSE against it.
struct BlockAdjacency {
  DeviceCsr forward, backward;
};
BlockAdjacency block_adjacency(Device dev, const DeviceBlock& block, BlockNorm norm);

// dst[i] = src[ids[i]] for i < n; ids (64-bit, e.g. a block's source ids) in dev's memory, each
// in [0, src.rows) (the caller's guarantee: the sampler numbers vertices of the graph).
void gather_rows_by_id(Device dev, ConstMatView src, const int64_t* ids, int64_t n, MatView dst);

// Makes the calling thread's kernels run on the process's device (a no-op on the CPU): a thread
// other than the one that created the CUDA context starts on device 0.
void bind_thread(Device dev);

// Streams for the loader's prefetch thread. use_own_stream gives the calling thread a stream of
// its own on `dev` (after what the training thread queued so far), so the next batch's sampling
// kernels and copies overlap the current step's instead of queueing behind them and making its
// host waits wait for them. A batch carries a mark of its thread's stream at the end of its
// making; the training thread waits for it (on its stream, not the host) before using the batch.
// No-ops on the CPU.
struct StreamMark {
  Device dev = Device::cpu;
  std::shared_ptr<void> event;  // a CUDA event; empty on the CPU
};
void use_own_stream(Device dev);
StreamMark mark_stream(Device dev);
void wait_for(const StreamMark& mark);

}  // namespace dgnn::kernels
