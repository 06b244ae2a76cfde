#pragma once
// The one place that asks whether the CUDA backend is built. A kernel entry point checks its
// arguments once, for every backend, then hands the runtime Device to DGNN_DISPATCH, which calls
// the backend's implementation of the same name (cpu::fn / cuda::fn, one signature each, as
// Ginkgo's GKO_REGISTER_OPERATION does); DGNN_ON_DEVICE names the two calls when they differ.
// In a build without CUDA the CUDA call is never compiled, and asking for it is a DeviceError.
// Only kernels/*.cpp include this header.
#include <string>

#include "dgnn/common/error.hpp"
#include "dgnn/common/views.hpp"
#include "dgnn/dgnn_config.hpp"
#include "dgnn/kernels/cpu/cpu_kernels.hpp"
#if DGNN_HAVE_CUDA
#include "dgnn/kernels/cuda/cuda_kernels.hpp"
#endif

namespace dgnn::kernels {

inline constexpr bool kHaveCuda = DGNN_HAVE_CUDA;

// The error for a kernel asked of a device this build cannot run.
[[noreturn]] inline void no_backend(Device dev, const char* fn) {
  throw DeviceError(std::string("kernels::") + fn + " on " + device_name(dev) +
                    (kHaveCuda ? ": the CUDA backend is not implemented yet"
                               : ": this dgnn was built without CUDA"));
}

}  // namespace dgnn::kernels

// `return cpu_call` or `return cuda_call` for `dev` (a variable in scope), else no_backend.
#if DGNN_HAVE_CUDA
#define DGNN_ON_DEVICE(name, cpu_call, cuda_call) \
  switch (dev) {                                  \
    case Device::cpu:                             \
      return cpu_call;                            \
    case Device::cuda:                            \
      return cuda_call;                           \
  }                                               \
  ::dgnn::kernels::no_backend(dev, name)
// Statements that only a CUDA build runs (device-only helpers); elsewhere the DeviceError.
#define DGNN_CUDA_ONLY(name, ...) __VA_ARGS__
// Statements that only a CUDA build compiles; elsewhere nothing.
#define DGNN_IF_CUDA(...) __VA_ARGS__
#else
#define DGNN_ON_DEVICE(name, cpu_call, cuda_call) \
  if (dev == Device::cpu) return cpu_call;        \
  ::dgnn::kernels::no_backend(dev, name)
#define DGNN_CUDA_ONLY(name, ...) ::dgnn::kernels::no_backend(Device::cuda, name)
#define DGNN_IF_CUDA(...)
#endif
// The common case: the same function in both backends.
#define DGNN_DISPATCH(fn, ...) DGNN_ON_DEVICE(#fn, cpu::fn(__VA_ARGS__), cuda::fn(__VA_ARGS__))
