#pragma once
// The CPU (OpenMP + CBLAS) backend: the same kernels as kernels/kernels.hpp minus the device
// argument. Only kernels/dispatch.cpp calls these; shapes are already checked there.
#include <cstddef>
#include <cstdint>

#include "dgnn/kernels/kernels.hpp"

namespace dgnn::kernels::cpu {

void* alloc(size_t bytes);
void free(void* p) noexcept;
void release_cached() noexcept;
void copy(void* dst, const void* src, size_t bytes);
void fill(float* x, int64_t n, float value);
void copy_view(ConstMatView src, MatView dst, bool accumulate);

void spmm(const CsrView& a, ConstMatView x, MatView y, bool accumulate);
void spmm_extreme(const CsrView& a, ConstMatView x, MatView y, int32_t* arg, bool is_max);
void spmm_extreme_backward(const CsrView& at, int64_t row_base, const int32_t* arg, ConstMatView gy,
                           MatView gx, bool accumulate);
void edge_add(const CsrView& a, ConstMatView src, ConstMatView dst, MatView out);
void sddmm(const CsrView& a, ConstMatView x, ConstMatView y, MatView out);
void edge_softmax(const CsrView& a, ConstMatView s, MatView out);
void edge_softmax_backward(const CsrView& a, ConstMatView alpha, ConstMatView dalpha, MatView ds,
                           bool accumulate);
void spmm_heads(const CsrView& a, ConstMatView w, ConstMatView x, MatView y, bool accumulate);
void edge_row_sum(const CsrView& a, ConstMatView w, MatView out, bool accumulate);

void gemm(bool trans_a, bool trans_b, float alpha, ConstMatView a, ConstMatView b, float beta,
          MatView c);

void unary(Unary op, const float* x, float* y, int64_t n, float alpha);
void unary_backward(Unary op, const float* x, const float* y, const float* dy, float* dx, int64_t n,
                    float alpha, bool accumulate);
void axpby(int64_t n, float a, const float* x, float b, float* y);
void mul(int64_t n, const float* x, const float* y, float* z, bool accumulate);
void add_row_vector(MatView y, const float* bias);
void column_sum(ConstMatView x, float* out, bool accumulate);
double sum(const float* x, int64_t n);

void gather_rows(ConstMatView src, const int32_t* idx, int64_t n, MatView dst);
void scatter_add_rows(ConstMatView src, const int32_t* idx, int64_t n, MatView dst);
void scatter_rows(ConstMatView src, const int32_t* idx, int64_t n, MatView dst);

void pair_mlp_forward(const PairMlp& p, MatView logits);
void pair_mlp_backward(const PairMlp& p, ConstMatView dlogits, MatView dhu, MatView dhv,
                       MatView dw1, float* db1, MatView dw2, float* db2);
void factored_pair_logits(ConstMatView h, ConstMatView b, const float* m, const float* au,
                          const float* w2, float b2, const int32_t* v, int64_t k, float* out);
double softplus_sum(const float* x, int64_t n, float sign);
void count_below_at_most(const float* x, int64_t n, float lo, float hi, int64_t* below,
                         int64_t* at_most);
bool hashed_draws(uint64_t seed, uint64_t base, int64_t count, uint64_t n, int32_t u,
                  const uint64_t* links, int64_t num_links, int32_t* out);
bool vector_draws_pay();

void dropout(ConstMatView x, float p, uint64_t key, const int64_t* row_ids, MatView y,
             uint8_t* mask);
void dropout_backward(ConstMatView dy, const uint8_t* mask, float p, MatView dx, bool accumulate);

double softmax_xent(ConstMatView logits, const int32_t* rows, const int32_t* labels, int64_t n,
                    float scale, MatView dlogits);
int64_t count_correct(ConstMatView logits, const int32_t* rows, const int32_t* labels, int64_t n);

void lstm_cell_forward(ConstMatView gates, ConstMatView c_prev, MatView h, MatView c);
void lstm_cell_backward(ConstMatView gates, ConstMatView c_prev, ConstMatView dh, ConstMatView dc,
                        MatView dgates, MatView dc_prev, bool accumulate);
void gru_cell_forward(ConstMatView xg, ConstMatView hg, ConstMatView h_prev, MatView h);
void gru_cell_backward(ConstMatView xg, ConstMatView hg, ConstMatView h_prev, ConstMatView dh,
                       MatView dxg, MatView dhg, MatView dh_prev, bool accumulate);

// ---- optimisers (optim.cpp) ----
void adam_step(int64_t n, float* w, const float* g, float* m, float* v, float step_size,
               float beta1, float beta2, float eps, float inv_sqrt_bc2, float wd);
void sgd_step(int64_t n, float* w, const float* g, float* vel, float lr, float momentum, float wd);

}  // namespace dgnn::kernels::cpu
