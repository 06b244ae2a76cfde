#pragma once
// The CPU (OpenMP + CBLAS) backend: kernels/kernel_list.def's entries with a CPU backend, minus
// the device argument. Only kernels/dispatch.cpp calls these; shapes are already checked there.
#include <cstddef>
#include <cstdint>

#include "dgnn/common/views.hpp"
#include "dgnn/kernels/types.hpp"

namespace dgnn::kernels::cpu {

#define DGNN_KERNEL(ret, name, params, args) ret name params;
#define DGNN_HOST_KERNEL(ret, name, params, args) ret name params;
#define DGNN_KERNEL_BY_HAND(ret, name, params, ...) ret name params __VA_ARGS__;
#define DGNN_HOST_KERNEL_BY_HAND(ret, name, params, ...) ret name params __VA_ARGS__;
#define DGNN_CPU_BACKEND(ret, name, params, ...) ret name params __VA_ARGS__;
#include "dgnn/kernels/kernel_list.def"

// Host bytes that alloc() handed out and free() has not taken back (size classes included, the
// pool's cached blocks not): what the tensors alive now hold, for tests that count memory.
size_t bytes_in_use() noexcept;

// Hands the pages of malloc's free chunks back to the system when they are at least an eighth
// of what is in use (and 4 MB): freed small objects and the blocks between live ones stay
// resident otherwise, and accumulate from step to step. Returns whether it trimmed.
bool trim_free_heap() noexcept;

}  // namespace dgnn::kernels::cpu
