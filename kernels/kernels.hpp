#pragma once
// The one dispatch point for arithmetic: every kernel is declared here once, takes the device
// first and plain views after, and is implemented per backend (kernels/cpu, kernels/cuda).
// Callers never #ifdef on the backend. Shapes are checked here (ShapeError), not per backend.
#include <cstddef>
#include <cstdint>
#include <string>

#include "dgnn/common/hash_rng.hpp"
#include "dgnn/common/views.hpp"

namespace dgnn::kernels {

// ---- memory ------------------------------------------------------------------------------
void* alloc(Device dev, size_t bytes);  // 64-byte aligned on the CPU; never returns null
void free(Device dev, void* p) noexcept;
// Returns blocks that free() kept for reuse (large blocks are cached by size) to the system.
void release_cached(Device dev) noexcept;
// Waits until every kernel queued on `dev` has finished (a no-op on the CPU): for timings and
// before the host reads results a kernel wrote asynchronously.
void synchronize(Device dev);
void copy(Device dst_dev, void* dst, Device src_dev, const void* src, size_t bytes);
void fill(Device dev, float* x, int64_t n, float value);
// dst (+)= src for two same-shaped strided views (column blocks for concat / slice).
void copy_view(Device dev, ConstMatView src, MatView dst, bool accumulate = false);

// ---- sparse ------------------------------------------------------------------------------
// Y = A X, or Y += A X when accumulate. A: rows x cols (values null = all ones),
// X: cols x F, Y: rows x F. Deterministic: each output row is summed in index order.
void spmm(Device dev, const CsrView& a, ConstMatView x, MatView y, bool accumulate = false);

// Max (or min) over each row's entries: y[r, j] = max over entries e of row r of x[col(e), j]
// (A's values ignored), 0 for an empty row; arg[r, j] = the column it came from (the first in
// index order among equals), -1 for an empty row. A NaN in a row's inputs gives NaN. arg is
// y.rows x y.cols, contiguous, or null when no backward will need it. A.cols must be below 2^31.
void spmm_extreme(Device dev, const CsrView& a, ConstMatView x, MatView y, int32_t* arg,
                  bool is_max);
// Its backward, through the transpose At (x's rows by y's rows): gx[r, j] (+)= sum over row r's
// entries e of At where arg[col(e), j] == row_base + r of gy[col(e), j]. row_base: At's first
// row in the whole transpose (a slice of it). At's rows list their entries in ascending order
// (every transpose here is a stable sort by column), so a repeated entry of A (a duplicate edge,
// a neighbour sampled twice), which yields one maximum, is adjacent and counted once.
// Deterministic, no atomics.
void spmm_extreme_backward(Device dev, const CsrView& at, int64_t row_base, const int32_t* arg,
                           ConstMatView gy, MatView gx, bool accumulate = false);

// ---- attention over the entries of a CSR -------------------------------------------------
// Edge matrices have one row per entry of A (entry e = row e; A a whole matrix, offsets from
// 0) and one column per attention head. All deterministic: each output is summed in A's order.
// out[e, h] = src[col(e), h] + dst[row(e), h]: GAT's additive score. src: A.cols x H,
// dst: A.rows x H, out: nnz x H.
void edge_add(Device dev, const CsrView& a, ConstMatView src, ConstMatView dst, MatView out);
// SDDMM, per head: out[e, h] = sum over d < D of x[row(e), hD + d] * y[col(e), hD + d], with
// H = out.cols heads of D = x.cols / H columns. x: A.rows x HD, y: A.cols x HD.
void sddmm(Device dev, const CsrView& a, ConstMatView x, ConstMatView y, MatView out);
// Softmax over each row's entries, per head (an empty row has nothing to normalise).
void edge_softmax(Device dev, const CsrView& a, ConstMatView s, MatView out);
// Its backward: ds (+)= alpha * (dalpha - sum over the row of alpha * dalpha).
void edge_softmax_backward(Device dev, const CsrView& a, ConstMatView alpha, ConstMatView dalpha,
                           MatView ds, bool accumulate = false);
// SpMM with a weight per entry and head: y[r, hD + d] (+)= sum_e w[e, h] x[col(e), hD + d].
// w: nnz x H, x: A.cols x HD, y: A.rows x HD.
void spmm_heads(Device dev, const CsrView& a, ConstMatView w, ConstMatView x, MatView y,
                bool accumulate = false);
// out[r, h] (+)= sum over row r's entries of w[e, h].
void edge_row_sum(Device dev, const CsrView& a, ConstMatView w, MatView out,
                  bool accumulate = false);

// ---- dense -------------------------------------------------------------------------------
// C = alpha * op(A) * op(B) + beta * C, op = transpose when the flag is set (BLAS sgemm).
void gemm(Device dev, bool trans_a, bool trans_b, float alpha, ConstMatView a, ConstMatView b,
          float beta, MatView c);

// ---- element-wise (contiguous arrays of n floats) ---------------------------------------
enum class Unary : uint8_t { relu, leaky_relu, sigmoid, tanh, exp, neg };
// y = f(x). leaky_relu uses `alpha` as the negative slope.
void unary(Device dev, Unary op, const float* x, float* y, int64_t n, float alpha = 0.f);
// dx (+)= dy * f'(x), given x and y = f(x) (either may be used).
void unary_backward(Device dev, Unary op, const float* x, const float* y, const float* dy,
                    float* dx, int64_t n, float alpha = 0.f, bool accumulate = true);
// y = a * x + b * y
void axpby(Device dev, int64_t n, float a, const float* x, float b, float* y);
// z = x * y (element-wise), or z += x * y when accumulate
void mul(Device dev, int64_t n, const float* x, const float* y, float* z, bool accumulate = false);
// Each row of Y += bias (1 x cols).
void add_row_vector(Device dev, MatView y, const float* bias);
// out (1 x cols) (+)= sum over rows of X.
void column_sum(Device dev, ConstMatView x, float* out, bool accumulate);
// Sum of all n elements, in double.
double sum(Device dev, const float* x, int64_t n);

// ---- rows --------------------------------------------------------------------------------
// dst[i] = src[idx[i]] for i < n (dst has n rows).
void gather_rows(Device dev, ConstMatView src, const int32_t* idx, int64_t n, MatView dst);
// dst[idx[i]] += src[i] for i < n. Sequential in i on equal targets (deterministic).
void scatter_add_rows(Device dev, ConstMatView src, const int32_t* idx, int64_t n, MatView dst);
// dst[idx[i]] = src[i] for i < n: the inverse of gather_rows (halo rows landing in place). The
// targets must be distinct (which of two writes to one row wins is not defined).
void scatter_rows(Device dev, ConstMatView src, const int32_t* idx, int64_t n, MatView dst);

// ---- pair scoring (the link-prediction head) ---------------------------------------------
// An MLP on vertex pairs that never materialises the pair features: pair i's endpoints are
// row u[i] of hu and row v[i] of hv (a null index: row i itself), its input
// x = [hu | hv | hu * hv] (3D), a = relu(x W1 + b1) (H wide), logit = a W2 + b2 (C wide).
// W1 (3D x H) is three D-row blocks, so x W1 = (hu W1a)[u] + (hv W1b)[v] + (hu * hv) W1c: the
// first two are products over the tables' rows (fewer than the pairs), only the third is per pair.
struct PairMlp {
  ConstMatView hu;             // Nu x D
  const int32_t* u = nullptr;  // pairs entries in [0, Nu), or null (then Nu = pairs, unless 0)
  ConstMatView hv;             // Nv x D
  const int32_t* v = nullptr;
  int64_t pairs = 0;
  ConstMatView w1;            // 3D x H
  const float* b1 = nullptr;  // H
  ConstMatView w2;            // H x C
  const float* b2 = nullptr;  // C
};
// logits (pairs x C) = the MLP's output.
void pair_mlp_forward(Device dev, const PairMlp& p, MatView logits);
// The gradients given dlogits (pairs x C), added (+=) to dhu, dhv (which may be one buffer when
// hu and hv are one table), dw1, db1, dw2, db2; an output with null data is not computed.
// Deterministic: the same sums in the same order for any thread count.
void pair_mlp_backward(Device dev, const PairMlp& p, ConstMatView dlogits, MatView dhu, MatView dhv,
                       MatView dw1, float* db1, MatView dw2, float* db2);

// The same MLP with one output, factored for scoring many candidates v of one source u (link
// evaluation: a positive and its sampled negatives, or every vertex): from per-vertex rows
// h (N x D, the embeddings) and b = h W1b (N x H), and u's own terms au = h_u W1a + b1 (H) and
// m = diag(h_u) W1c (D x H, row-major),
//   out[i] = w2 . relu(au + b[v_i] + h[v_i] m) + b2   for i < k  (v null: v_i = i).
// Each pair's arithmetic is the same wherever it stands and whatever k: a pair always scores
// alike. Host only (DeviceError elsewhere): the GPU scores batches with pair_mlp_forward.
void factored_pair_logits(Device dev, ConstMatView h, ConstMatView b, const float* m,
                          const float* au, const float* w2, float b2, const int32_t* v, int64_t k,
                          float* out);
// sum_i softplus(sign * x_i) = sum_i log(1 + exp(sign * x_i)), accumulated in double in a fixed
// order: binary cross-entropy of logits x against target 0 (sign 1) or 1 (sign -1). Each term
// to about 1e-7 relative (vectorised exp and log1p, not libm's). Host only.
double softplus_sum(Device dev, const float* x, int64_t n, float sign);
// How many of x[0, n) are below `lo`, and how many at most `hi`, added to *below and *at_most:
// a source's candidates against one positive's tie interval (its MRR). Host only.
void count_below_at_most(Device dev, const float* x, int64_t n, float lo, float hi, int64_t* below,
                         int64_t* at_most);

// Link prediction's uniform draws, eight at a time: about 10M a step at --neg-eval 100 on a
// 50k-vertex graph, each two SplitMix64 finalisers and a remainder. out[k] =
// hash_combine(seed, base + k) % n for k < count, the values of the scalar expression
// (common/hash_rng.hpp, common/fast_mod.hpp) exactly; a draw equal to `u`, or whose key
// (u << 32 | draw) is one of links[0, num_links) (u's links, any order), is written as -1
// instead: the caller redraws it. False (nothing written) when n < 2, n >= 2^31 or num_links >
// kDrawLinksMax: the caller draws those itself. Host only.
constexpr int64_t kDrawLinksMax = 32;
bool hashed_draws(Device dev, uint64_t seed, uint64_t base, int64_t count, uint64_t n, int32_t u,
                  const uint64_t* links, int64_t num_links, int32_t* out);
// Whether hashed_draws beats one draw at a time on this machine: with AVX-512, whose 64-bit
// lanes and multiplies it uses; elsewhere they are emulated, about 3x slower than the scalar
// draws.
bool vector_draws_pay();

// ---- dropout -----------------------------------------------------------------------------
// The mask, shared by every backend so that their masks agree bit for bit. One 64-bit hash
// per (row, 4 columns) gives four 16-bit uniforms: 4x cheaper than a hash per element, and
// p is resolved to 1/65536. A pure function of (key, row id, column).
constexpr uint64_t dropout_row_key(uint64_t key, int64_t row_id) {
  return hash_combine(key, uint64_t(row_id));
}
constexpr uint32_t dropout_threshold(float p) { return uint32_t(double(p) * 65536.0 + 0.5); }
constexpr bool dropout_keep(uint64_t row_key, int64_t col, uint32_t threshold) {
  return ((mix64(row_key + uint64_t(col >> 2)) >> ((col & 3) * 16)) & 0xFFFF) >= threshold;
}
// Inverted dropout whose mask is a pure function of (key, row_id[r], column): any rank that
// holds row r draws the same mask. keep iff dropout_keep(...); kept values scale by 1/(1-p).
// row_ids null means the row index itself. mask (rows*cols bytes, or null when no backward
// will need it) receives 1 for kept.
void dropout(Device dev, ConstMatView x, float p, uint64_t key, const int64_t* row_ids,
             MatView y, uint8_t* mask);
// dx (+)= dy * mask / (1-p)
void dropout_backward(Device dev, ConstMatView dy, const uint8_t* mask, float p, MatView dx,
                      bool accumulate);

// ---- losses ------------------------------------------------------------------------------
// Softmax cross-entropy over the listed rows: returns the summed loss (double) over those rows
// and, when dlogits.data is not null, writes dlogits[row] = scale * (softmax(row) - onehot)
// for listed rows (other rows untouched). Labels are class indices in [0, cols).
double softmax_xent(Device dev, ConstMatView logits, const int32_t* rows, const int32_t* labels,
                    int64_t n, float scale, MatView dlogits);
// Number of listed rows whose argmax equals the label (ties: lowest index).
int64_t count_correct(Device dev, ConstMatView logits, const int32_t* rows, const int32_t* labels,
                      int64_t n);

// ---- optimisers -------------------------------------------------------------------------
// One Adam step over n weights (decoupled bias corrections given by the caller):
// g' = g + wd w; m = b1 m + (1-b1) g'; v = b2 v + (1-b2) g'^2;
// w -= step_size m / (sqrt(v) inv_sqrt_bc2 + eps).
void adam_step(Device dev, int64_t n, float* w, const float* g, float* m, float* v,
               float step_size, float beta1, float beta2, float eps, float inv_sqrt_bc2, float wd);
// One SGD step: g' = g + wd w; with momentum, vel = momentum vel + g' and g' = vel; w -= lr g'.
void sgd_step(Device dev, int64_t n, float* w, const float* g, float* vel, float lr, float momentum,
              float wd);

// ---- device -----------------------------------------------------------------------------
// True when this build has CUDA and at least one device is usable; otherwise `why` says what
// was found (built without CUDA, or the count / error cudaGetDeviceCount gave).
bool cuda_available(std::string* why);
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

// ---- recurrent cells ---------------------------------------------------------------------
// Fused cells: one pass over the rows does every gate's activation and the state update, so a
// step of an unrolled recurrence reads its pre-activations once instead of once per op.
// Backward recomputes the activations from the pre-activations rather than keeping them: the
// tape holds the pre-activations anyway, and keeping N x 4H activations per step would double
// the memory of a long unrolled sequence for a few exp/tanh per element.
//
// LSTM: gates (N x 4H, [i | f | g | o] pre-activations), c_prev (N x H) -> h, c (N x H):
// c = sigmoid(f) c_prev + sigmoid(i) tanh(g), h = sigmoid(o) tanh(c).
void lstm_cell_forward(Device dev, ConstMatView gates, ConstMatView c_prev, MatView h, MatView c);
// dgates, dc_prev (+)= the gradients given dh and dc. A dh or dc with null data counts as zero
// (an output nothing used); a dgates or dc_prev with null data is not computed.
void lstm_cell_backward(Device dev, ConstMatView gates, ConstMatView c_prev, ConstMatView dh,
                        ConstMatView dc, MatView dgates, MatView dc_prev, bool accumulate);
// GRU (PyTorch's formulation): xg, hg (N x 3H, [r | z | n] pre-activations of the input and of
// the previous state), h_prev (N x H) -> h (N x H): r = sigmoid(xr + hr), z = sigmoid(xz + hz),
// n = tanh(xn + r hn), h = (1 - z) n + z h_prev.
void gru_cell_forward(Device dev, ConstMatView xg, ConstMatView hg, ConstMatView h_prev, MatView h);
// dxg, dhg, dh_prev (+)= the gradients given dh; an output with null data is not computed.
void gru_cell_backward(Device dev, ConstMatView xg, ConstMatView hg, ConstMatView h_prev,
                       ConstMatView dh, MatView dxg, MatView dhg, MatView dh_prev, bool accumulate);

}  // namespace dgnn::kernels
