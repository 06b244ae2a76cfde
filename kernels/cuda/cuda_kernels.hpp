#pragma once
// The CUDA backend: the same kernels as kernels/kernels.hpp minus the device argument, on the
// current context's stream (kernels/cuda/context.hpp). Only kernels/dispatch.cpp calls these;
// shapes are already checked there, and empty shapes never reach them. Plain C++ (no CUDA
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
#include <string>

#include "dgnn/kernels/kernels.hpp"
#include "dgnn/kernels/sample_block.hpp"

namespace dgnn::kernels::cuda {

// ---- device and memory (context.cu, memory.cu; fill and copy_view in elementwise.cu) ------
// The device count, or -1 with the runtime's error in *error.
int device_count(std::string* error);
// Binds this process to device `index` (before any other call; default 0).
void select_device(int index);
int current_device();
// "NVIDIA H200, 132 SMs, 139 GiB" for the current device.
std::string device_description();
// The current device's UUID, 32 hex digits.
std::string device_uuid();
// The context's device (creating the context on first use) and the calling thread's stream (a
// cudaStream_t): for kernels.hpp's cuda_context_device and cuda_stream.
int context_device();
void* current_stream();
// Stream-ordered allocation from a caching pool (cudaMallocAsync on the context stream, the
// pool keeping freed blocks): per-step scratch costs no cudaMalloc after the first step.
void* alloc(size_t bytes);
void free(void* p) noexcept;
void release_cached() noexcept;
// kind: 0 host->device, 1 device->host, 2 device->device. Copies to the host synchronise.
void copy(void* dst, const void* src, size_t bytes, int kind);
void synchronize();
void fill(float* x, int64_t n, float value);
void copy_view(ConstMatView src, MatView dst, bool accumulate);

// ---- sparse (spmm.cu) --------------------------------------------------------------------
// Which SpMM implementation to use: auto times both on the first call per shape and keeps the
// faster; the others force one (tests, benchmarks, and DGNN_SPMM=rowwarp|cusparse|auto for a
// whole run). Our row-group kernel is bitwise reproducible; cuSPARSE's CSR SpMM was seen to
// differ in the last bits between runs on an H200.
enum class SpmmAlgo : uint8_t { automatic, cusparse, rowwarp };
void set_spmm_algo(SpmmAlgo algo);
// The implementation auto chose last (for benchmarks and logs).
const char* last_spmm_algo();
void spmm(const CsrView& a, ConstMatView x, MatView y, bool accumulate);
void spmm_extreme(const CsrView& a, ConstMatView x, MatView y, int32_t* arg, bool is_max);
void spmm_extreme_backward(const CsrView& at, int64_t row_base, const int32_t* arg, ConstMatView gy,
                           MatView gx, bool accumulate);
// ---- snapshots by difference (snapshot.cu) -------------------------------------------------
void apply_structure_diff(int64_t rows, const int64_t* off, const int32_t* idx,
                          const int32_t* add_src, const int32_t* add_dst, int64_t na,
                          const int32_t* del_src, const int32_t* del_dst, int64_t nd,
                          int64_t* out_off, int32_t* out_idx);
// out_off is computed here (rows + 1); out_off32 may be null.
void gcn_adjacency(int64_t rows, const int64_t* off, const int32_t* idx, int64_t* out_off,
                   int32_t* out_idx, float* out_val, int32_t* out_off32);
// ---- attention (attention.cu) ------------------------------------------------------------
void edge_add(const CsrView& a, ConstMatView src, ConstMatView dst, MatView out);
void sddmm(const CsrView& a, ConstMatView x, ConstMatView y, MatView out);
void edge_softmax(const CsrView& a, ConstMatView s, MatView out);
void edge_softmax_backward(const CsrView& a, ConstMatView alpha, ConstMatView dalpha, MatView ds,
                           bool accumulate);
void spmm_heads(const CsrView& a, ConstMatView w, ConstMatView x, MatView y, bool accumulate);
void edge_row_sum(const CsrView& a, ConstMatView w, MatView out, bool accumulate);

// ---- dense (gemm.cu) ---------------------------------------------------------------------
void gemm(bool trans_a, bool trans_b, float alpha, ConstMatView a, ConstMatView b, float beta,
          MatView c);

// ---- element-wise (elementwise.cu) -------------------------------------------------------
void unary(Unary op, const float* x, float* y, int64_t n, float alpha);
void unary_backward(Unary op, const float* x, const float* y, const float* dy, float* dx, int64_t n,
                    float alpha, bool accumulate);
void axpby(int64_t n, float a, const float* x, float b, float* y);
void mul(int64_t n, const float* x, const float* y, float* z, bool accumulate);
void add_row_vector(MatView y, const float* bias);
void column_sum(ConstMatView x, float* out, bool accumulate);
double sum(const float* x, int64_t n);

// ---- rows (rows.cu) ----------------------------------------------------------------------
void gather_rows(ConstMatView src, const int32_t* idx, int64_t n, MatView dst);
void scatter_add_rows(ConstMatView src, const int32_t* idx, int64_t n, MatView dst);
void scatter_rows(ConstMatView src, const int32_t* idx, int64_t n, MatView dst);

// ---- dropout (elementwise.cu) ------------------------------------------------------------
void dropout(ConstMatView x, float p, uint64_t key, const int64_t* row_ids, MatView y,
             uint8_t* mask);
void dropout_backward(ConstMatView dy, const uint8_t* mask, float p, MatView dx, bool accumulate);

// ---- losses (loss.cu) --------------------------------------------------------------------
double softmax_xent(ConstMatView logits, const int32_t* rows, const int32_t* labels, int64_t n,
                    float scale, MatView dlogits);
int64_t count_correct(ConstMatView logits, const int32_t* rows, const int32_t* labels, int64_t n);

// ---- recurrent cells (rnn.cu) ------------------------------------------------------------
void lstm_cell_forward(ConstMatView gates, ConstMatView c_prev, MatView h, MatView c);
void lstm_cell_backward(ConstMatView gates, ConstMatView c_prev, ConstMatView dh, ConstMatView dc,
                        MatView dgates, MatView dc_prev, bool accumulate);
void gru_cell_forward(ConstMatView xg, ConstMatView hg, ConstMatView h_prev, MatView h);
void gru_cell_backward(ConstMatView xg, ConstMatView hg, ConstMatView h_prev, ConstMatView dh,
                       MatView dxg, MatView dhg, MatView dh_prev, bool accumulate);

// ---- optimisers (optim.cu) ----
void adam_step(int64_t n, float* w, const float* g, float* m, float* v, float step_size,
               float beta1, float beta2, float eps, float inv_sqrt_bc2, float wd);
void sgd_step(int64_t n, float* w, const float* g, float* vel, float lr, float momentum, float wd);

// ---- neighbour sampling (sample.cu) -------------------------------------------------------
DeviceBlock sample_block(const SampleGraph& g, const int64_t* dst, int64_t n_dst, int fanout,
                         bool replace, uint64_t seed, uint64_t epoch, int layer, int32_t* local_of,
                         int64_t* first_of);

}  // namespace dgnn::kernels::cuda
