// SpMM on the GPU, two ways: cuSPARSE's generic SpMM (CSR, row-major dense operands, the
// deterministic CSR algorithm), and our own row-group kernel in the spirit of GE-SpMM: a group
// of threads owns one output row, each thread a float4 slice of the feature dimension, walking
// the row's entries in index order (so the sum order, hence the result, is fixed and matches
// the CPU kernel's order). The automatic choice times both once per shape and keeps the faster.
#include <cuda_runtime.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <mutex>
#include <tuple>

#include "dgnn/kernels/cuda/context.hpp"

namespace dgnn::kernels::cuda {

namespace {

// ---- our kernel --------------------------------------------------------------------------

template <int VEC>
struct Vec;
template <>
struct Vec<4> {
  using T = float4;
  static __device__ __forceinline__ float4 load(const float* p) {
    return __ldg(reinterpret_cast<const float4*>(p));
  }
  static __device__ __forceinline__ void fma(float4& acc, float v, const float4& x) {
    acc.x = fmaf(v, x.x, acc.x);
    acc.y = fmaf(v, x.y, acc.y);
    acc.z = fmaf(v, x.z, acc.z);
    acc.w = fmaf(v, x.w, acc.w);
  }
  static __device__ __forceinline__ float4 zero() { return make_float4(0.f, 0.f, 0.f, 0.f); }
  static __device__ __forceinline__ void store(float* p, float4 v, bool accumulate) {
    float4* q = reinterpret_cast<float4*>(p);
    if (accumulate) {
      const float4 o = *q;
      v.x += o.x;
      v.y += o.y;
      v.z += o.z;
      v.w += o.w;
    }
    *q = v;
  }
};
template <>
struct Vec<1> {
  using T = float;
  static __device__ __forceinline__ float load(const float* p) { return __ldg(p); }
  static __device__ __forceinline__ void fma(float& acc, float v, float x) { acc = fmaf(v, x, acc); }
  static __device__ __forceinline__ float zero() { return 0.f; }
  static __device__ __forceinline__ void store(float* p, float v, bool accumulate) {
    *p = accumulate ? *p + v : v;
  }
};

// GROUP consecutive threads own one row; thread `lane` covers columns lane*VEC + k*GROUP*VEC.
// Entries are read two at a time (both loads issued before the FMAs) for memory-level
// parallelism; the accumulation order stays the entries' order.
template <int VEC, int GROUP>
__global__ void spmm_rowgroup(int64_t rows, const int64_t* __restrict__ offsets,
                              const int32_t* __restrict__ indices,
                              const float* __restrict__ values, const float* __restrict__ x,
                              int64_t ldx, float* __restrict__ y, int64_t ldy, int64_t f,
                              bool accumulate) {
  using V = Vec<VEC>;
  const int64_t tid = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const int lane = int(tid % GROUP);
  const int64_t stride = int64_t(gridDim.x) * blockDim.x / GROUP;
  for (int64_t r = tid / GROUP; r < rows; r += stride) {
    const int64_t begin = offsets[r], end = offsets[r + 1];
    for (int64_t c = int64_t(lane) * VEC; c < f; c += int64_t(GROUP) * VEC) {
      auto acc = V::zero();
      int64_t e = begin;
      for (; e + 2 <= end; e += 2) {
        const int32_t j0 = __ldg(indices + e), j1 = __ldg(indices + e + 1);
        const float v0 = values ? __ldg(values + e) : 1.f;
        const float v1 = values ? __ldg(values + e + 1) : 1.f;
        const auto x0 = V::load(x + int64_t(j0) * ldx + c);
        const auto x1 = V::load(x + int64_t(j1) * ldx + c);
        V::fma(acc, v0, x0);
        V::fma(acc, v1, x1);
      }
      if (e < end) {
        const int32_t j = __ldg(indices + e);
        V::fma(acc, values ? __ldg(values + e) : 1.f, V::load(x + int64_t(j) * ldx + c));
      }
      V::store(y + r * ldy + c, acc, accumulate);
    }
  }
}

template <int VEC, int GROUP>
void launch_rowgroup(const CsrView& a, ConstMatView x, MatView y, bool accumulate) {
  const int64_t threads = a.rows * GROUP;
  spmm_rowgroup<VEC, GROUP><<<grid_for(threads), kBlock, 0, stream()>>>(
      a.rows, a.offsets, a.indices, a.values, x.data, x.ld, y.data, y.ld, x.cols, accumulate);
  DGNN_CUDA_LAUNCHED("spmm_rowgroup");
}

template <int VEC>
void rowgroup_vec(const CsrView& a, ConstMatView x, MatView y, bool accumulate) {
  // Threads per row: enough to cover the row once, a power of two, at most a warp.
  const int64_t slices = (x.cols + VEC - 1) / VEC;
  if (slices <= 1) return launch_rowgroup<VEC, 1>(a, x, y, accumulate);
  if (slices <= 2) return launch_rowgroup<VEC, 2>(a, x, y, accumulate);
  if (slices <= 4) return launch_rowgroup<VEC, 4>(a, x, y, accumulate);
  if (slices <= 8) return launch_rowgroup<VEC, 8>(a, x, y, accumulate);
  if (slices <= 16) return launch_rowgroup<VEC, 16>(a, x, y, accumulate);
  return launch_rowgroup<VEC, 32>(a, x, y, accumulate);
}

bool aligned16(const void* p) { return (reinterpret_cast<uintptr_t>(p) & 15) == 0; }

void spmm_rowwarp(const CsrView& a, ConstMatView x, MatView y, bool accumulate) {
  const bool vec4 = x.cols % 4 == 0 && x.ld % 4 == 0 && y.ld % 4 == 0 && aligned16(x.data) &&
                    aligned16(y.data);
  if (vec4) return rowgroup_vec<4>(a, x, y, accumulate);
  rowgroup_vec<1>(a, x, y, accumulate);
}

// ---- cuSPARSE ----------------------------------------------------------------------------

bool cusparse_applicable(const CsrView& a, ConstMatView x, MatView y) {
  // cuSPARSE reads offsets from 0 (a row slice past row 0 has absolute offsets) in 32 bits here,
  // and needs explicit values.
  // cuSPARSE also refuses more entries than the matrix has cells (duplicate entries).
  return a.offsets32 != nullptr && a.values != nullptr && a.device_nnz > 0 &&
         a.device_nnz < INT32_MAX && a.rows < INT32_MAX && a.cols < INT32_MAX &&
         double(a.device_nnz) <= double(a.rows) * double(a.cols);
}

void spmm_cusparse(const CsrView& a, ConstMatView x, MatView y, bool accumulate) {
  require_context_stream("spmm (cuSPARSE)");
  cusparseHandle_t h = context().cusparse;
  const int64_t nnz = a.device_nnz;
  cusparseConstSpMatDescr_t ma;
  cusparseConstDnMatDescr_t mx;
  cusparseDnMatDescr_t my;
  DGNN_CUSPARSE_CHECK(cusparseCreateConstCsr(&ma, a.rows, a.cols, nnz, a.offsets32, a.indices,
                                             a.values, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
                                             CUSPARSE_INDEX_BASE_ZERO, CUDA_R_32F));
  DGNN_CUSPARSE_CHECK(cusparseCreateConstDnMat(&mx, x.rows, x.cols, x.ld, x.data, CUDA_R_32F,
                                               CUSPARSE_ORDER_ROW));
  DGNN_CUSPARSE_CHECK(
      cusparseCreateDnMat(&my, y.rows, y.cols, y.ld, y.data, CUDA_R_32F, CUSPARSE_ORDER_ROW));
  const float alpha = 1.f, beta = accumulate ? 1.f : 0.f;
  // Overwriting: y may be recycled pool memory holding NaN bit patterns, and whether cuSPARSE
  // reads C when beta is 0 is not documented (0 * NaN = NaN): clear it first.
  if (!accumulate)
    DGNN_CUDA_CHECK(cudaMemset2DAsync(y.data, size_t(y.ld) * sizeof(float), 0,
                                      size_t(y.cols) * sizeof(float), size_t(y.rows), stream()));
  // CSR_ALG2 is deterministic for a non-transposed A; fall back to the default if this
  // shape is not supported by it.
  cusparseSpMMAlg_t alg = CUSPARSE_SPMM_CSR_ALG2;
  size_t bytes = 0;
  cusparseStatus_t st =
      cusparseSpMM_bufferSize(h, CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_OPERATION_NON_TRANSPOSE,
                              &alpha, ma, mx, &beta, my, CUDA_R_32F, alg, &bytes);
  if (st == CUSPARSE_STATUS_NOT_SUPPORTED) {
    alg = CUSPARSE_SPMM_ALG_DEFAULT;
    st = cusparseSpMM_bufferSize(h, CUSPARSE_OPERATION_NON_TRANSPOSE,
                                 CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, ma, mx, &beta, my,
                                 CUDA_R_32F, alg, &bytes);
  }
  try {
    if (st != CUSPARSE_STATUS_SUCCESS)
      fail_cusparse(st, "cusparseSpMM_bufferSize", __FILE__, __LINE__);
    Scratch<char> work{static_cast<int64_t>(bytes)};
    DGNN_CUSPARSE_CHECK(cusparseSpMM(h, CUSPARSE_OPERATION_NON_TRANSPOSE,
                                     CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, ma, mx, &beta, my,
                                     CUDA_R_32F, alg, work.get()));
  } catch (...) {
    cusparseDestroySpMat(ma);
    cusparseDestroyDnMat(mx);
    cusparseDestroyDnMat(my);
    throw;
  }
  cusparseDestroySpMat(ma);
  cusparseDestroyDnMat(mx);
  cusparseDestroyDnMat(my);
}

// ---- choice ------------------------------------------------------------------------------

// DGNN_SPMM=rowwarp|cusparse|auto picks the implementation for a whole run (rowwarp: bitwise
// reproducible results, since cuSPARSE's were seen to vary in the last bits between runs).
SpmmAlgo initial_algo() {
  const char* v = std::getenv("DGNN_SPMM");
  if (v == nullptr || std::strcmp(v, "auto") == 0 || *v == '\0') return SpmmAlgo::automatic;
  if (std::strcmp(v, "rowwarp") == 0) return SpmmAlgo::rowwarp;
  if (std::strcmp(v, "cusparse") == 0) return SpmmAlgo::cusparse;
  throw DeviceError(std::string("DGNN_SPMM=") + v + ": expected auto, rowwarp or cusparse");
}
SpmmAlgo g_algo = SpmmAlgo::automatic;
bool g_algo_set = false;  // DGNN_SPMM read on first use (an error there is a DeviceError, not a crash at load)
std::atomic<const char*> g_last{"none"};
std::mutex g_mutex;
// (rows, entries rounded up to a power of two, F, ld) -> the faster implementation
// (true = cuSPARSE).
std::map<std::tuple<int64_t, int64_t, int64_t, int64_t>, bool> g_choice;

float time_ms(void (*fn)(const CsrView&, ConstMatView, MatView, bool), const CsrView& a,
              ConstMatView x, MatView y) {
  struct Events {  // destroyed on every exit, a throwing fn included
    cudaEvent_t t0 = nullptr, t1 = nullptr;
    ~Events() {
      if (t0) cudaEventDestroy(t0);
      if (t1) cudaEventDestroy(t1);
    }
  } ev;
  DGNN_CUDA_CHECK(cudaEventCreate(&ev.t0));
  DGNN_CUDA_CHECK(cudaEventCreate(&ev.t1));
  fn(a, x, y, false);  // warm-up (cuSPARSE's first call on a shape does setup work)
  DGNN_CUDA_CHECK(cudaEventRecord(ev.t0, stream()));
  constexpr int reps = 3;
  for (int i = 0; i < reps; ++i) fn(a, x, y, false);
  DGNN_CUDA_CHECK(cudaEventRecord(ev.t1, stream()));
  DGNN_CUDA_CHECK(cudaEventSynchronize(ev.t1));
  float ms = 0;
  DGNN_CUDA_CHECK(cudaEventElapsedTime(&ms, ev.t0, ev.t1));
  return ms / reps;
}

}  // namespace

void set_spmm_algo(SpmmAlgo algo) {
  std::lock_guard<std::mutex> lock(g_mutex);
  g_algo = algo;
  g_algo_set = true;
}

const char* last_spmm_algo() { return g_last; }

void spmm(const CsrView& a, ConstMatView x, MatView y, bool accumulate) {
  SpmmAlgo algo;
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    if (!g_algo_set) {
      g_algo = initial_algo();
      g_algo_set = true;
    }
    algo = g_algo;
  }
  const bool can_cusparse = cusparse_applicable(a, x, y);
  if (algo == SpmmAlgo::cusparse && !can_cusparse)
    throw DeviceError(
        "spmm: cuSPARSE was requested but cannot take this view (a row slice, no entries, more "
        "than 2^31 entries, or duplicate entries)");
  bool use_cusparse = algo == SpmmAlgo::cusparse;
  if (algo == SpmmAlgo::automatic && can_cusparse) {
    // Keyed by the entries' power of two, not their count: the snapshots of a temporal graph
    // (each its own count) share a few timings instead of one each, and the table stays small.
    int64_t nnz_class = 0;
    while ((int64_t(1) << nnz_class) < a.device_nnz) ++nnz_class;
    const auto key = std::make_tuple(a.rows, nnz_class, x.cols, x.ld);
    std::unique_lock<std::mutex> lock(g_mutex);
    auto it = g_choice.find(key);
    if (it == g_choice.end()) {
      lock.unlock();
      // Time both into scratch (never into y, which may be accumulated into).
      Scratch<float> tmp(y.rows * y.cols);
      const MatView t{tmp.get(), y.rows, y.cols, y.cols};
      const float ours = time_ms(spmm_rowwarp, a, x, t);
      // cuSPARSE failing on a shape (unsupported, out of workspace memory) is not an error
      // here: our kernel, which takes any shape, has just run it.
      float theirs = std::numeric_limits<float>::infinity();
      try {
        theirs = time_ms(spmm_cusparse, a, x, t);
      } catch (const DeviceError&) {
        cudaGetLastError();
      }
      lock.lock();
      it = g_choice.emplace(key, theirs < ours).first;
    }
    use_cusparse = it->second;
  }
  g_last = use_cusparse ? "cusparse" : "rowwarp";
  if (use_cusparse)
    spmm_cusparse(a, x, y, accumulate);
  else
    spmm_rowwarp(a, x, y, accumulate);
}

}  // namespace dgnn::kernels::cuda
