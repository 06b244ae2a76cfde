// The factored pair scorer of link evaluation (kernels.hpp: factored_pair_logits), the softplus
// sums of its loss and the counts of its MRR (count_below_at_most). Evaluation scores each
// positive with a hundred sampled negatives: about 10M pairs a step on a 50k-vertex graph, each an
// (E x H) product, so this loop is most of an evaluation. A block of R candidates keeps its
// pre-activations for one 16-wide chunk of the hidden layer in registers while the chunk's rows of
// m are read once for all R; bias, ReLU and the output layer follow on the chunk before the next
// one starts, so nothing per pair goes to memory. The baseline x86-64 build has neither FMA nor
// 256-bit vectors: the loops are compiled once per ISA level (target_clones) and the loader picks
// the machine's.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "dgnn/kernels/cpu/cpu_kernels.hpp"
#include "dgnn/kernels/cpu/fast_math.hpp"

// V16 values pass only between inline functions of this file: no ABI crosses it. The blocks'
// functions are always inlined into score_all: compiled apart, they would take the baseline
// ISA, not the clone's (measured: evaluation 1.55x slower when GCC stopped inlining them).
#pragma GCC diagnostic ignored "-Wpsabi"

namespace dgnn::kernels::cpu {

namespace {

constexpr int kLanes = 16;  // one chunk of the hidden layer
constexpr int kBlock = 4;   // candidates scored together
constexpr int kAhead = 8;   // candidates ahead whose rows are prefetched

// 16 floats as one value: GCC's vector extension, lowered to whatever registers the clone has
// (one zmm, two ymm, four xmm). Arrays of them indexed by unrolled constants stay in registers
// where plain float arrays were spilled to the stack.
typedef float V16 __attribute__((vector_size(64)));
inline V16 load16(const float* p) {
  V16 v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

// One 16-lane chunk of the hidden layer for R candidates. Each candidate's arithmetic is its own,
// in one fixed order (acc = sum_i x_i m_i over i ascending, then part += w2 relu(acc + au)):
// the same whether it is scored in a block of kBlock or alone, and whatever k is.
template <int R>
__attribute__((always_inline)) inline void chunk(const float* const* hv, int64_t e, int64_t hid,
                                                 const float* m, const float* au, const float* w2,
                                                 int64_t c0, V16 (&part)[R]) {
  V16 acc[R];
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r) acc[r] = V16{};
  for (int64_t i = 0; i < e; ++i) {
    const V16 mi = load16(m + i * hid + c0);
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) acc[r] += hv[r][i] * mi;
  }
  const V16 a = load16(au + c0), w = load16(w2 + c0), zero = V16{};
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r) {
    const V16 z = acc[r] + a;
    part[r] += w * (z > zero ? z : zero);
  }
}

// The tail chunk (hid not a multiple of 16), lane by lane with the same arithmetic.
template <int R>
__attribute__((always_inline)) inline void tail_chunk(const float* const* hv, int64_t e,
                                                      int64_t hid, const float* m, const float* au,
                                                      const float* w2, int64_t c0, V16 (&part)[R]) {
  for (int64_t c = c0; c < hid; ++c)
    for (int r = 0; r < R; ++r) {
      float acc = 0.f;
      for (int64_t i = 0; i < e; ++i) acc += hv[r][i] * m[i * hid + c];
      part[r][c - c0] += w2[c] * std::max(acc + au[c], 0.f);
    }
}

// The 16 lanes' partial sums in one fixed tree: lanes l and l + 8, then l and l + 4, then
// (0 + 2) + (1 + 3). As vector shuffles: written lane by lane, GCC spilled and reloaded them.
inline float lane_sum(const V16& p) {
  typedef float V8 __attribute__((vector_size(32)));
  typedef float V4 __attribute__((vector_size(16)));
  const V8 s8 = __builtin_shufflevector(p, p, 0, 1, 2, 3, 4, 5, 6, 7) +
                __builtin_shufflevector(p, p, 8, 9, 10, 11, 12, 13, 14, 15);
  const V4 s4 =
      __builtin_shufflevector(s8, s8, 0, 1, 2, 3) + __builtin_shufflevector(s8, s8, 4, 5, 6, 7);
  const V4 s2 = s4 + __builtin_shufflevector(s4, s4, 2, 3, 0, 1);
  return s2[0] + s2[1];
}

// lane_sum of four vectors at once, each by the same tree (so to the same bits), the four
// sharing each step's vector operations: 11 of them where four lane_sums take about 30.
inline void lane_sum4(const V16* p, float b2, float* out) {
  // Step 1 (l + 8): the first 8 lanes of ab are p[0]'s sums, the next 8 p[1]'s; cd likewise.
  const V16 ab =
      __builtin_shufflevector(p[0], p[1], 0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23) +
      __builtin_shufflevector(p[0], p[1], 8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30,
                              31);
  const V16 cd =
      __builtin_shufflevector(p[2], p[3], 0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23) +
      __builtin_shufflevector(p[2], p[3], 8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30,
                              31);
  // Step 2 (l + 4): lanes 4r .. 4r + 3 hold p[r]'s four sums.
  const V16 q =
      __builtin_shufflevector(ab, cd, 0, 1, 2, 3, 8, 9, 10, 11, 16, 17, 18, 19, 24, 25, 26, 27) +
      __builtin_shufflevector(ab, cd, 4, 5, 6, 7, 12, 13, 14, 15, 20, 21, 22, 23, 28, 29, 30, 31);
  // Step 3: (0 + 2) + (1 + 3) within each group of four.
  const V16 r =
      q + __builtin_shufflevector(q, q, 2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13);
  const V16 t =
      r + __builtin_shufflevector(r, r, 1, 0, 3, 2, 5, 4, 7, 6, 9, 8, 11, 10, 13, 12, 15, 14);
  for (int i = 0; i < 4; ++i) out[i] = t[4 * i] + b2;
}

template <int R>
__attribute__((always_inline)) inline void score_rows(const float* const* hv, int64_t e,
                                                      int64_t hid, const float* m, const float* au,
                                                      const float* w2, float b2, float* out) {
  V16 part[R];
  for (int r = 0; r < R; ++r) part[r] = V16{};
  int64_t c0 = 0;
  for (; c0 + kLanes <= hid; c0 += kLanes) chunk<R>(hv, e, hid, m, au, w2, c0, part);
  if (c0 < hid) tail_chunk<R>(hv, e, hid, m, au, w2, c0, part);
  if constexpr (R % 4 == 0)
    for (int r = 0; r < R; r += 4) lane_sum4(part + r, b2, out + r);
  else
    for (int r = 0; r < R; ++r) out[r] = lane_sum(part[r]) + b2;
}

DGNN_ISA_CLONES
void score_all(ConstMatView h, int64_t hid, const float* m, const float* au, const float* w2,
               float b2, const int32_t* v, int64_t k, float* out) {
  const int64_t e = h.cols;
  auto row = [v](int64_t i) { return v ? int64_t(v[i]) : i; };
  int64_t i = 0;
  for (; i + kBlock <= k; i += kBlock) {
    if (v)
      for (int64_t a = i + kAhead; a < std::min(k, i + kAhead + kBlock); ++a)
        __builtin_prefetch(h.row(v[a]));
    const float* hv[kBlock];
    for (int r = 0; r < kBlock; ++r) hv[r] = h.row(row(i + r));
    score_rows<kBlock>(hv, e, hid, m, au, w2, b2, out + i);
  }
  for (; i < k; ++i) {
    const float* hv[1] = {h.row(row(i))};
    score_rows<1>(hv, e, hid, m, au, w2, b2, out + i);
  }
}

// log(1 + t) for t in [0, 1]: 2 atanh(s) with s = t / (2 + t) <= 1/3, its odd series to s^17
// (the next term is below 1e-9 relative). A select-free loop body, so it vectorises.
inline float log1p_unit(float t) {
  const float s = t / (2.f + t), s2 = s * s;
  float p = 1.f / 17;
  p = p * s2 + 1.f / 15;
  p = p * s2 + 1.f / 13;
  p = p * s2 + 1.f / 11;
  p = p * s2 + 1.f / 9;
  p = p * s2 + 1.f / 7;
  p = p * s2 + 1.f / 5;
  p = p * s2 + 1.f / 3;
  p = p * s2 + 1.f;
  return 2.f * s * p;
}

DGNN_ISA_CLONES
double softplus_sum_impl(const float* x, int64_t n, float sign) {
  // Blocks of 64 summed in float (lane-wise), then in double: a fixed order for any n.
  double total = 0;
  for (int64_t i0 = 0; i0 < n; i0 += 64) {
    const int64_t len = std::min<int64_t>(64, n - i0);
    V16 acc{};
    int64_t j = 0;
    for (; j + 16 <= len; j += 16) {
      float t[16];
      for (int l = 0; l < 16; ++l) {
        const float z = sign * x[i0 + j + l];
        t[l] = std::max(z, 0.f) + log1p_unit(exp_nonpositive(-std::fabs(z)));
      }
      acc += load16(t);
    }
    for (; j < len; ++j) {
      const float z = sign * x[i0 + j];
      acc[0] += std::max(z, 0.f) + log1p_unit(exp_nonpositive(-std::fabs(z)));
    }
    total += double(lane_sum(acc));
  }
  return total;
}

// Compares as floats, 16 lanes at a time with AVX-512 (metrics.cpp's doubles took 8, unvectorised).
DGNN_ISA_CLONES
void count_below_at_most_impl(const float* x, int64_t n, float lo, float hi, int64_t* below,
                              int64_t* at_most) {
  // 32-bit lane counts, added to the 64-bit totals every 2^30 candidates.
  for (int64_t i0 = 0; i0 < n; i0 += int64_t(1) << 30) {
    const int64_t end = std::min(n, i0 + (int64_t(1) << 30));
    int32_t bl = 0, am = 0;
    for (int64_t i = i0; i < end; ++i) {
      bl += x[i] < lo;
      am += x[i] <= hi;
    }
    *below += bl;
    *at_most += am;
  }
}

}  // namespace

void factored_pair_logits(ConstMatView h, int64_t hid, const float* m, const float* au,
                          const float* w2, float b2, const int32_t* v, int64_t k, float* out) {
  score_all(h, hid, m, au, w2, b2, v, k, out);
}

double softplus_sum(const float* x, int64_t n, float sign) { return softplus_sum_impl(x, n, sign); }

void count_below_at_most(const float* x, int64_t n, float lo, float hi, int64_t* below,
                         int64_t* at_most) {
  count_below_at_most_impl(x, n, lo, hi, below, at_most);
}

}  // namespace dgnn::kernels::cpu
