#pragma once
// The one dispatch point for arithmetic: every kernel takes the device first and plain views
// after, and is implemented per backend (kernels/cpu, kernels/cuda). Callers never #ifdef on the
// backend. Shapes are checked once, in dispatch.cpp (ShapeError), not per backend.
//
// The kernels themselves, each with its contract, are declared once in kernels/kernel_list.def;
// this header turns each entry into `ret name(Device dev, params)` in dgnn::kernels (the backends'
// headers turn the same entry into theirs). Below the list: the few entry points whose shape is
// not a kernel's (copy between two devices, the CUDA device's queries).
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "dgnn/common/views.hpp"
#include "dgnn/kernels/types.hpp"

namespace dgnn::kernels {

#define DGNN_DEFAULT(...) = __VA_ARGS__
#define DGNN_KERNEL(ret, name, params, args) ret name DGNN_WITH_DEVICE params;
#define DGNN_HOST_KERNEL(ret, name, params, args) ret name DGNN_WITH_DEVICE params;
#define DGNN_KERNEL_BY_HAND(ret, name, params, ...) ret name DGNN_WITH_DEVICE params __VA_ARGS__;
#define DGNN_HOST_KERNEL_BY_HAND(ret, name, params, ...) \
  ret name DGNN_WITH_DEVICE params __VA_ARGS__;
#define DGNN_CUDA_KERNEL_BY_HAND(ret, name, params, ...) \
  ret name DGNN_WITH_DEVICE params __VA_ARGS__;
#include "dgnn/kernels/kernel_list.def"

// src_dev's bytes at src to dst_dev's at dst (one device per process: cuda <-> cuda is a
// device-to-device copy).
void copy(Device dst_dev, void* dst, Device src_dev, const void* src, size_t bytes);

// Whether hashed_draws beats one draw at a time on this machine: with AVX-512, whose 64-bit
// lanes and multiplies it uses; elsewhere they are emulated, about 3x slower than the scalar
// draws.
bool vector_draws_pay();

// ---- device -----------------------------------------------------------------------------
// True when this build has CUDA and at least one device is usable; otherwise `why` says what
// was found (built without CUDA, or the count / error cudaGetDeviceCount gave).
bool cuda_available(std::string* why);
// The host heap's free pages back to the system when there are many (cpu::trim_free_heap): the
// training loop calls it before each step, whatever the device.
void trim_host_heap() noexcept;
// Binds this process to CUDA device local_rank % count (the node's ranks spread over its GPUs,
// one each when there are as many) and returns its index. DeviceError when CUDA is unusable.
int bind_cuda_device(int local_rank);
// "NVIDIA H200, 132 SMs, 139 GiB" for the bound device (empty without CUDA).
std::string cuda_device_description();
// The bound device's UUID as 32 hex digits (empty without CUDA): equal on two ranks exactly when
// they share a GPU, on one node or across nodes.
std::string cuda_device_id();
// For code that queues CUDA work of its own in order with the kernels' (comm/nccl), without
// reaching into kernels/cuda: the device the kernels' CUDA context lives on, and the calling
// thread's stream (a cudaStream_t), both creating the context on first use. DeviceError in a
// build without CUDA.
int cuda_context_device();
void* cuda_stream();

}  // namespace dgnn::kernels
