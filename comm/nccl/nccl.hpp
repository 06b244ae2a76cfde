#pragma once
// The NCCL transport of DeviceComm (comm/device_comm.hpp), built only with CUDA and NCCL
// (DGNN_HAVE_NCCL). Internal to comm/: attach_device_comm is the way in. This header includes
// neither NCCL's nor CUDA's headers.
#include <memory>

#include "dgnn/comm/device_comm.hpp"

namespace dgnn::nccl {

// Collective over `host`: rank 0 makes the NCCL id, `host` broadcasts it, and every rank joins
// with ncclCommInitRank on the GPU it is bound to (kernels::bind_cuda_device first). The ranks
// must be on distinct GPUs (choose_transport checks). The communicator is destroyed with the
// result (aborted instead when that happens while an exception unwinds).
std::unique_ptr<DeviceComm> make_comm(Communicator& host);

}  // namespace dgnn::nccl
