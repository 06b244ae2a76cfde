#pragma once
// The process's CUDA context (device, stream, cuBLAS and cuSPARSE handles) and the checking
// macros, for kernels/cuda only: this header includes CUDA's, so nothing else may include it
// (CPU-only builds never see a CUDA header). Code outside kernels/ that queues CUDA work of its
// own (comm/nccl) takes the stream from kernels.hpp (cuda_stream, cuda_context_device).
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cusparse.h>

#include <cstddef>
#include <cstdint>
#include <exception>
#include <string>

#include "dgnn/common/error.hpp"

namespace dgnn::kernels::cuda {

// Throws DeviceError("<call> failed: <name>: <text> (<file>:<line>)").
[[noreturn]] void fail_cuda(cudaError_t status, const char* call, const char* file, int line);
[[noreturn]] void fail_cublas(cublasStatus_t status, const char* call, const char* file, int line);
[[noreturn]] void fail_cusparse(cusparseStatus_t status, const char* call, const char* file,
                                int line);

#define DGNN_CUDA_CHECK(call)                                                              \
  do {                                                                                     \
    const cudaError_t dgnn_status_ = (call);                                               \
    if (dgnn_status_ != cudaSuccess)                                                       \
      ::dgnn::kernels::cuda::fail_cuda(dgnn_status_, #call, __FILE__, __LINE__);           \
  } while (0)
#define DGNN_CUBLAS_CHECK(call)                                                            \
  do {                                                                                     \
    const cublasStatus_t dgnn_status_ = (call);                                            \
    if (dgnn_status_ != CUBLAS_STATUS_SUCCESS)                                             \
      ::dgnn::kernels::cuda::fail_cublas(dgnn_status_, #call, __FILE__, __LINE__);         \
  } while (0)
#define DGNN_CUSPARSE_CHECK(call)                                                          \
  do {                                                                                     \
    const cusparseStatus_t dgnn_status_ = (call);                                          \
    if (dgnn_status_ != CUSPARSE_STATUS_SUCCESS)                                           \
      ::dgnn::kernels::cuda::fail_cusparse(dgnn_status_, #call, __FILE__, __LINE__);       \
  } while (0)
// After a kernel launch: launch-configuration errors surface here, with the kernel's name.
#define DGNN_CUDA_LAUNCHED(name) DGNN_CUDA_CHECK(cudaGetLastError())

// A Thrust call (it throws thrust::system_error or bad_alloc, not a status) whose failure becomes
// a DeviceError naming it, as the checks above do; our own DeviceErrors (the pool) pass through.
[[noreturn]] void fail_thrust(const char* what, const char* call, const char* file, int line);
template <typename F>
auto thrust_call(const char* call, const char* file, int line, F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const DeviceError&) {
    throw;
  } catch (const std::exception& e) {
    fail_thrust(e.what(), call, file, line);
  }
}
#define DGNN_THRUST(...) \
  ::dgnn::kernels::cuda::thrust_call(#__VA_ARGS__, __FILE__, __LINE__, [&] { return __VA_ARGS__; })

// Lazily created on first use, on the device select_device chose (default 0); lives until exit.
struct Context {
  int device = 0;
  cudaStream_t stream = nullptr;      // every kernel and copy runs on this stream
  cublasHandle_t cublas = nullptr;    // bound to `stream`
  cusparseHandle_t cusparse = nullptr;  // bound to `stream`
};
Context& context();
// The calling thread's stream: the context's, unless the thread took one of its own
// (use_own_stream: the loader's prefetch thread). cuBLAS and cuSPARSE stay on the context's.
cudaStream_t stream();
// cuBLAS and cuSPARSE calls, whose handles are bound to the context's stream, are made from a
// thread whose stream that is (their scratch and memsets are ordered on stream()): DeviceError
// otherwise (the loader's thread, say).
void require_context_stream(const char* call);

// Launch geometry for an element-wise kernel over n items: 256 threads a block, grid capped
// (kernels use grid-stride loops).
constexpr int kBlock = 256;
inline unsigned grid_for(int64_t n, int64_t per_block = kBlock) {
  int64_t g = (n + per_block - 1) / per_block;
  if (g < 1) g = 1;
  if (g > 65535LL * 16) g = 65535LL * 16;
  return unsigned(g);
}

// Device scratch from the caching pool, freed at scope end (stream-ordered).
template <typename T>
class Scratch {
 public:
  explicit Scratch(int64_t n);
  ~Scratch();
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  T* get() const { return p_; }

 private:
  T* p_ = nullptr;
};

}  // namespace dgnn::kernels::cuda

#include "dgnn/kernels/cuda/cuda_kernels.hpp"

namespace dgnn::kernels::cuda {
template <typename T>
Scratch<T>::Scratch(int64_t n) : p_(static_cast<T*>(n > 0 ? alloc(size_t(n) * sizeof(T)) : nullptr)) {}
template <typename T>
Scratch<T>::~Scratch() {
  free(p_);
}

// Thrust's temporary storage from the caching pool (stream-ordered, like every other scratch),
// so a sort or scan costs no cudaMalloc after the first: thrust::cuda::par(pool).on(stream()).
struct PoolAllocator {
  using value_type = char;
  char* allocate(std::ptrdiff_t n) { return static_cast<char*>(alloc(size_t(n))); }
  void deallocate(char* p, size_t) { free(p); }
};
}  // namespace dgnn::kernels::cuda
