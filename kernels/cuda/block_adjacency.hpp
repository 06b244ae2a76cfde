#pragma once
// The CUDA side of kernels/minibatch_kernels.hpp (kernels/cuda/block_adjacency.cu; the streams
// in context.cu), on the calling thread's stream. Plain C++ (no CUDA header), for
// kernels/minibatch_kernels.cpp; kept out of cuda_kernels.hpp so that adding it does not rebuild
// every CUDA source.
#include <cstdint>
#include <memory>
#include <vector>

#include "dgnn/kernels/minibatch_kernels.hpp"

namespace dgnn::kernels::cuda {

// Synchronises once per matrix (the GCN adjacency's entry count comes back to the host).
BlockAdjacency block_adjacency(const DeviceBlock& block, BlockNorm norm);
void gather_rows_by_id(ConstMatView src, const int64_t* ids, int64_t n, MatView dst);
// The transpose of a whole device matrix (a.device_nnz entries), built on the device, with the
// host-known offsets of the result kept (row slices) and 32-bit offsets for cuSPARSE.
DeviceCsr transpose_with_offsets(const CsrView& a, std::vector<int64_t> host_offsets);
void bind_thread();
// The calling thread's kernels go to a stream of its own from now on, which first waits for
// everything queued on the context's stream so far (what the thread may read was made there).
void use_own_stream();
// An event recorded on the calling thread's stream (what it has queued so far), and making the
// calling thread's stream wait for one (no host wait). The pointer owns the event.
std::shared_ptr<void> record_mark();
void wait_mark(void* event);

}  // namespace dgnn::kernels::cuda
