#pragma once
// The CUDA backend: kernels/kernel_list.def's entries with a CUDA backend, minus the device
// argument, on the current context's stream (kernels/cuda/context.hpp). Only kernels/*.cpp call
// these; shapes are already checked there, and empty shapes never reach them. Plain C++ (no CUDA
// header), so dispatch.cpp compiles with the host compiler.
//
// Semantics match kernels/cpu exactly, including determinism: every result that the CPU
// backend sums in a fixed order is summed in a fixed order here too (no floating-point
// atomics), so two runs on the GPU give bit-identical results. Results agree with the CPU
// backend to rounding (the order of the sums differs).
//
// Synchronisation: kernels are asynchronous on the context stream; functions that return a
// host value (sum, softmax_xent, count_correct) and copies to host memory synchronise it.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "dgnn/common/views.hpp"
#include "dgnn/kernels/types.hpp"

namespace dgnn::kernels::cuda {

// Which SpMM implementation to use (set_spmm_algo in kernels/kernel_list.def).
enum class SpmmAlgo : uint8_t { automatic, cusparse, rowwarp };

#define DGNN_KERNEL(ret, name, params, args) ret name params;
#define DGNN_KERNEL_BY_HAND(ret, name, params, ...) ret name params __VA_ARGS__;
#define DGNN_CUDA_KERNEL_BY_HAND(ret, name, params, ...) ret name params __VA_ARGS__;
#define DGNN_CUDA_BACKEND(ret, name, params, ...) ret name params __VA_ARGS__;
#include "dgnn/kernels/kernel_list.def"

}  // namespace dgnn::kernels::cuda
