// The process's CUDA context: device choice, the stream every kernel runs on, and the cuBLAS and
// cuSPARSE handles bound to it. Created on first use and kept until exit (handles are owned by
// one RAII object; the driver tears the rest down with the process).
#include <cstdlib>
#include <memory>
#include <mutex>
#include <string>

#include "dgnn/kernels/cuda/context.hpp"

namespace dgnn::kernels::cuda {

namespace {

std::string where(const char* call, const char* file, int line) {
  std::string s = call;
  s += " failed";
  return s + " (" + file + ":" + std::to_string(line) + ")";
}

int g_selected = 0;
bool g_created = false;

class ContextOwner {
 public:
  ContextOwner() {
    try {
      create();
    } catch (...) {
      release();  // what was created before the failure
      throw;
    }
  }
  ~ContextOwner() { release(); }
  ContextOwner(const ContextOwner&) = delete;
  ContextOwner& operator=(const ContextOwner&) = delete;
  Context& get() { return ctx_; }

 private:
  void create() {
    ctx_.device = g_selected;
    DGNN_CUDA_CHECK(cudaSetDevice(ctx_.device));
    DGNN_CUDA_CHECK(cudaStreamCreateWithFlags(&ctx_.stream, cudaStreamNonBlocking));
    DGNN_CUBLAS_CHECK(cublasCreate(&ctx_.cublas));
    DGNN_CUBLAS_CHECK(cublasSetStream(ctx_.cublas, ctx_.stream));
    // Deterministic results: no split-K reductions with atomics.
    DGNN_CUBLAS_CHECK(cublasSetAtomicsMode(ctx_.cublas, CUBLAS_ATOMICS_NOT_ALLOWED));
    DGNN_CUBLAS_CHECK(cublasSetMathMode(ctx_.cublas, CUBLAS_DEFAULT_MATH));
    DGNN_CUSPARSE_CHECK(cusparseCreate(&ctx_.cusparse));
    DGNN_CUSPARSE_CHECK(cusparseSetStream(ctx_.cusparse, ctx_.stream));
    // The pool behind alloc() keeps freed blocks instead of returning them at each sync.
    cudaMemPool_t pool;
    DGNN_CUDA_CHECK(cudaDeviceGetDefaultMemPool(&pool, ctx_.device));
    uint64_t keep = UINT64_MAX;
    DGNN_CUDA_CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep));
    g_created = true;
  }
  void release() {
    // At exit the runtime may already be shutting down: ignore errors here.
    if (ctx_.cusparse) cusparseDestroy(ctx_.cusparse);
    if (ctx_.cublas) cublasDestroy(ctx_.cublas);
    if (ctx_.stream) cudaStreamDestroy(ctx_.stream);
    ctx_.cusparse = nullptr;
    ctx_.cublas = nullptr;
    ctx_.stream = nullptr;
  }

  Context ctx_;
};

}  // namespace

void fail_cuda(cudaError_t status, const char* call, const char* file, int line) {
  cudaGetLastError();  // clear a non-sticky error so later calls can report their own
  throw DeviceError(where(call, file, line) + ": " + cudaGetErrorName(status) + ": " +
                    cudaGetErrorString(status));
}

void fail_thrust(const char* what, const char* call, const char* file, int line) {
  cudaGetLastError();  // as fail_cuda: a non-sticky error must not surface at the next check
  throw DeviceError(where(call, file, line) + ": " + what);
}

void fail_cublas(cublasStatus_t status, const char* call, const char* file, int line) {
  throw DeviceError(where(call, file, line) + ": " + cublasGetStatusName(status) + ": " +
                    cublasGetStatusString(status));
}

void fail_cusparse(cusparseStatus_t status, const char* call, const char* file, int line) {
  throw DeviceError(where(call, file, line) + ": " + cusparseGetErrorName(status) + ": " +
                    cusparseGetErrorString(status));
}

int device_count(std::string* error) {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    if (error) *error = std::string(cudaGetErrorName(status)) + ": " + cudaGetErrorString(status);
    cudaGetLastError();  // reset the (non-sticky) error so the next runtime call does not see it
    return -1;
  }
  return count;
}

void select_device(int index) {
  if (g_created && index != g_selected)
    throw DeviceError("select_device(" + std::to_string(index) +
                      "): the CUDA context already lives on device " +
                      std::to_string(g_selected));
  std::string error;
  const int count = device_count(&error);
  if (count <= 0)
    throw DeviceError(count == 0 ? std::string("cudaGetDeviceCount found no CUDA device")
                                 : "cudaGetDeviceCount failed: " + error);
  if (index < 0 || index >= count)
    throw DeviceError("CUDA device " + std::to_string(index) + " requested but " +
                      std::to_string(count) + " found");
  g_selected = index;
}

int current_device() { return g_selected; }

std::string device_description() {
  cudaDeviceProp prop;
  DGNN_CUDA_CHECK(cudaGetDeviceProperties(&prop, g_selected));
  return std::string(prop.name) + ", " + std::to_string(prop.multiProcessorCount) + " SMs, " +
         std::to_string(prop.totalGlobalMem >> 30) + " GiB, compute " +
         std::to_string(prop.major) + "." + std::to_string(prop.minor);
}

std::string device_uuid() {
  cudaDeviceProp prop;
  DGNN_CUDA_CHECK(cudaGetDeviceProperties(&prop, g_selected));
  static const char hex[] = "0123456789abcdef";
  std::string s;
  for (char b : prop.uuid.bytes) {
    const unsigned char u = static_cast<unsigned char>(b);
    s += hex[u >> 4];
    s += hex[u & 15];
  }
  return s;
}

Context& context() {
  static ContextOwner owner;
  Context& c = owner.get();
  // The current device is per host thread: whichever thread created the context (the loader's
  // prefetch thread, say), every other thread binds itself on its first use.
  thread_local int bound = -1;
  if (bound != c.device) {
    DGNN_CUDA_CHECK(cudaSetDevice(c.device));
    bound = c.device;
  }
  return c;
}

namespace {

// A thread's own stream, destroyed when the thread ends (work queued on it still completes).
struct OwnStream {
  cudaStream_t s = nullptr;
  ~OwnStream() {
    if (s) cudaStreamDestroy(s);
  }
};
thread_local OwnStream t_own;

}  // namespace

cudaStream_t stream() {
  Context& c = context();
  return t_own.s ? t_own.s : c.stream;
}

int context_device() { return context().device; }

void* current_stream() { return stream(); }

void require_context_stream(const char* call) {
  if (stream() != context().stream)
    throw DeviceError(std::string(call) +
                      ": called from a thread with a stream of its own; cuBLAS and cuSPARSE run "
                      "on the context's stream only");
}

void use_own_stream() {
  Context& c = context();
  if (t_own.s) return;
  OwnStream made;  // destroyed on a failure below, kept (moved into t_own) on success
  DGNN_CUDA_CHECK(cudaStreamCreateWithFlags(&made.s, cudaStreamNonBlocking));
  cudaEvent_t forked = nullptr;
  DGNN_CUDA_CHECK(cudaEventCreateWithFlags(&forked, cudaEventDisableTiming));
  const cudaError_t recorded = cudaEventRecord(forked, c.stream);
  const cudaError_t waited =
      recorded == cudaSuccess ? cudaStreamWaitEvent(made.s, forked, 0) : recorded;
  cudaEventDestroy(forked);  // released once the wait is done
  DGNN_CUDA_CHECK(waited);
  t_own.s = made.s;
  made.s = nullptr;
}

std::shared_ptr<void> record_mark() {
  cudaEvent_t e = nullptr;
  DGNN_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
  std::shared_ptr<void> owner(static_cast<void*>(e),
                              [](void* p) { cudaEventDestroy(static_cast<cudaEvent_t>(p)); });
  DGNN_CUDA_CHECK(cudaEventRecord(e, stream()));
  return owner;
}

void wait_mark(void* event) {
  DGNN_CUDA_CHECK(cudaStreamWaitEvent(stream(), static_cast<cudaEvent_t>(event), 0));
}

void synchronize() { DGNN_CUDA_CHECK(cudaStreamSynchronize(stream())); }

}  // namespace dgnn::kernels::cuda
