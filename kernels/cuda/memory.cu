// Device memory: stream-ordered allocation from the device's default pool, which context()
// configures to keep freed blocks (release threshold = all), so per-step scratch of the same
// shapes costs no cudaMalloc after the first step. Allocations and frees are ordered on the
// calling thread's stream (the context's, or the loader thread's own): a batch made on the
// loader's stream is used and freed on the training stream only after that stream waited for
// the batch's event, and the pool reuses a block across streams only once its free is ordered
// before the new use (the pool's default reuse rules).
#include "dgnn/kernels/cuda/context.hpp"

namespace dgnn::kernels::cuda {

void* alloc(size_t bytes) {
  void* p = nullptr;
  // Round up so the pool sees few distinct sizes (and views may over-read to 16 bytes).
  // Never a 0-byte request (its result is not documented; the CPU backend never returns null).
  const size_t rounded = bytes == 0 ? 256 : (bytes + 255) & ~size_t(255);
  const cudaError_t status = cudaMallocAsync(&p, rounded, stream());
  if (status != cudaSuccess) {
    cudaGetLastError();
    size_t free_b = 0, total_b = 0;
    cudaMemGetInfo(&free_b, &total_b);
    throw DeviceError("cudaMallocAsync of " + std::to_string(bytes) + " bytes failed (" +
                      cudaGetErrorString(status) + "); " + std::to_string(free_b >> 20) +
                      " MiB free of " + std::to_string(total_b >> 20) + " MiB");
  }
  return p;
}

void free(void* p) noexcept {
  if (p) cudaFreeAsync(p, stream());
}

void release_cached() noexcept {
  cudaMemPool_t pool;
  if (cudaStreamSynchronize(stream()) != cudaSuccess) return;
  if (cudaDeviceGetDefaultMemPool(&pool, context().device) == cudaSuccess)
    cudaMemPoolTrimTo(pool, 0);
}

void copy(void* dst, const void* src, size_t bytes, int kind) {
  static constexpr cudaMemcpyKind kinds[] = {cudaMemcpyHostToDevice, cudaMemcpyDeviceToHost,
                                             cudaMemcpyDeviceToDevice};
  DGNN_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, kinds[kind], stream()));
  // Host memory is pageable: the copy must finish before the caller reuses (H2D) or reads
  // (D2H) it.
  if (kind != 2) DGNN_CUDA_CHECK(cudaStreamSynchronize(stream()));
}

}  // namespace dgnn::kernels::cuda
