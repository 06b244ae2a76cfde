// The pair-scoring MLP (kernels.hpp), fused over blocks of pairs. Materialising the head's
// intermediates for every pair — two gathered endpoint rows, their product, the 3D-wide
// concatenation, the pre-activations, and as many gradients — streamed about 20 pair-sized
// matrices through memory per step and dominated a GCRN epoch (issue 7: 240k pairs a step).
// Here a block of pairs lives in cache from gather to logit, only the product block
// (hu * hv) W1c is a per-pair GEMM, and backward recomputes the block instead of keeping it.
#include <omp.h>

#include <algorithm>
#include <tuple>
#include <utility>
#include <vector>

#include "dgnn/kernels/cpu/cpu_kernels.hpp"

namespace dgnn::kernels::cpu {

namespace {

// Pairs per block: a block's product rows and activations (256 x 32 floats each at the usual
// widths) stay in L1 / L2 between the steps that use them. Fixed, so that the per-block
// partial sums, and therefore the results, do not depend on the thread count.
constexpr int64_t kBlock = 256;
// Blocks per chunk of the backward (16384 pairs): what it stages at once.
constexpr int64_t kChunk = 64;

ConstMatView w1_block(ConstMatView w1, int64_t k, int64_t d) {
  return {w1.data + k * d * w1.ld, d, w1.cols, w1.ld};
}
MatView w1_block(MatView w1, int64_t k, int64_t d) {
  return {w1.data + k * d * w1.ld, d, w1.cols, w1.ld};
}

// Pair i's row of an endpoint table (a null index: row i).
inline const float* end_row(ConstMatView t, const int32_t* idx, int64_t i) {
  return t.row(idx ? idx[i] : i);
}

// Endpoint rows are scattered over tables of megabytes (one row per vertex): their loads miss
// the caches and, issued one pair at a time, wait for each other. Prefetching the rows of the
// pair kAhead places on keeps several misses in flight (measured: 1.7x on the forward).
constexpr int64_t kAhead = 8;
inline void prefetch_row(const float* row, int64_t floats, bool write = false) {
  for (int64_t k = 0; k < floats; k += 16) {
    if (write)
      __builtin_prefetch(row + k, 1);
    else
      __builtin_prefetch(row + k, 0);
  }
}

// A contiguous rows x cols scratch matrix from the host pool (the same shapes recur every step).
class Scratch {
 public:
  Scratch(int64_t rows, int64_t cols, bool zero)
      : p_(static_cast<float*>(cpu::alloc(size_t(std::max<int64_t>(rows * cols, 1)) * 4))),
        rows_(rows),
        cols_(cols) {
    if (zero) fill(p_, rows * cols, 0.f);
  }
  ~Scratch() { cpu::free(p_); }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  MatView view() const { return {p_, rows_, cols_, cols_}; }

 private:
  float* p_;
  int64_t rows_, cols_;
};

// The per-table products: P = hu W1a, Q = hv W1b.
struct Tables {
  Scratch p, q;
  explicit Tables(const PairMlp& m)
      : p(m.hu.rows, m.w1.cols, false), q(m.hv.rows, m.w1.cols, false) {
    const int64_t d = m.hu.cols;
    gemm(false, false, 1.f, m.hu, w1_block(m.w1, 0, d), 0.f, p.view());
    gemm(false, false, 1.f, m.hv, w1_block(m.w1, 1, d), 0.f, q.view());
  }
};

// Pairs [begin, begin + n): hh = hu * hv (n x D) and a = relu(hh W1c + P[u] + Q[v] + b1) (n x H).
void block_forward(const PairMlp& m, const Tables& t, int64_t begin, int64_t n, float* hh,
                   float* a) {
  const int64_t d = m.hu.cols, h = m.w1.cols;
  const ConstMatView pv = t.p.view(), qv = t.q.view();
  for (int64_t r = 0; r < n; ++r) {
    if (const int64_t ahead = begin + r + kAhead; ahead < m.pairs) {
      prefetch_row(end_row(m.hu, m.u, ahead), d);
      prefetch_row(end_row(m.hv, m.v, ahead), d);
      prefetch_row(end_row(pv, m.u, ahead), h);
      prefetch_row(end_row(qv, m.v, ahead), h);
    }
    const float* x = end_row(m.hu, m.u, begin + r);
    const float* y = end_row(m.hv, m.v, begin + r);
    float* o = hh + r * d;
    for (int64_t k = 0; k < d; ++k) o[k] = x[k] * y[k];
  }
  gemm(false, false, 1.f, ConstMatView{hh, n, d, d}, w1_block(m.w1, 2, d), 0.f,
       MatView{a, n, h, h});
  for (int64_t r = 0; r < n; ++r) {
    const float* pr = end_row(pv, m.u, begin + r);
    const float* qr = end_row(qv, m.v, begin + r);
    float* ar = a + r * h;
    for (int64_t j = 0; j < h; ++j) {
      const float s = ar[j] + pr[j] + qr[j] + m.b1[j];
      ar[j] = s > 0.f ? s : 0.f;
    }
  }
}

// One end's gradient: pair i contributes the row [dz | d(hu*hv) * other end's row] (H + D
// wide) to its table row (an unindexed end: to row i). The rows are summed per table row in
// pair order, whatever the thread count: one thread adds each pair's row as it is computed;
// several stage [dz | d(hu*hv)] per pair, then split the table rows between them, each thread
// walking all pairs in order and adding those whose row it owns. The same additions in the
// same order either way, so the same bits.
struct EndGrad {
  const int32_t* idx;
  ConstMatView other;  // the other end's table and index
  const int32_t* other_idx;
  Scratch sum;  // table rows x (H + D)

  // pair i's contribution, from its dz (h wide) and d(hu*hv) (d wide), added or written.
  void put(int64_t i, float* o, const float* gz, const float* gp, int64_t h, int64_t d,
           bool add) const {
    const float* y = end_row(other, other_idx, i);
    if (add) {
      for (int64_t j = 0; j < h; ++j) o[j] += gz[j];
      for (int64_t k = 0; k < d; ++k) o[h + k] += gp[k] * y[k];
    } else {
      for (int64_t j = 0; j < h; ++j) o[j] = gz[j];
      for (int64_t k = 0; k < d; ++k) o[h + k] = gp[k] * y[k];
    }
  }
  // The staged rows of pairs [base, base + n) (staged row i - base) into the table rows
  // [lo, hi), in pair order.
  void add_staged(ConstMatView staged, int64_t base, int64_t n, int64_t lo, int64_t hi,
                  int64_t h, int64_t d) const {
    const MatView s = sum.view();
    const int64_t end = base + n;
    for (int64_t i = base; i < end; ++i) {
      if (i + kAhead < end && idx[i + kAhead] >= lo && idx[i + kAhead] < hi)
        prefetch_row(s.row(idx[i + kAhead]), s.cols, true);
      const int64_t t = idx[i];
      if (t < lo || t >= hi) continue;
      const float* g = staged.row(i - base);
      put(i, s.row(t), g, g + h, h, d, true);
    }
  }
};

}  // namespace

void pair_mlp_forward(const PairMlp& m, MatView logits) {
  const int64_t pairs = m.pairs, d = m.hu.cols, h = m.w1.cols, c = m.w2.cols;
  if (pairs == 0) return;
  const Tables t(m);
  const int64_t blocks = (pairs + kBlock - 1) / kBlock;
#pragma omp parallel if (blocks > 1)
  {
    std::vector<float> hh(size_t(kBlock * d)), a(size_t(kBlock * h));
#pragma omp for schedule(static)
    for (int64_t b = 0; b < blocks; ++b) {
      const int64_t begin = b * kBlock, n = std::min(kBlock, pairs - begin);
      block_forward(m, t, begin, n, hh.data(), a.data());
      const MatView out{logits.row(begin), n, c, logits.ld};
      gemm(false, false, 1.f, ConstMatView{a.data(), n, h, h}, m.w2, 0.f, out);
      for (int64_t r = 0; r < n; ++r)
        for (int64_t k = 0; k < c; ++k) out.row(r)[k] += m.b2[k];
    }
  }
}

void pair_mlp_backward(const PairMlp& m, ConstMatView dlogits, MatView dhu, MatView dhv,
                       MatView dw1, float* db1, MatView dw2, float* db2) {
  const int64_t pairs = m.pairs, d = m.hu.cols, h = m.w1.cols, c = m.w2.cols;
  if (pairs == 0) return;
  const Tables t(m);
  const int64_t blocks = (pairs + kBlock - 1) / kBlock;
  const int threads = omp_get_max_threads();
  // Each end's gradient rows; needed for its table's gradient and for dW1's first blocks.
  const bool ends = dhu.data || dhv.data || dw1.data;
  const int64_t width = h + d;
  EndGrad gu{m.u, m.hv, m.v, Scratch(ends ? m.hu.rows : 0, width, m.u != nullptr)};
  EndGrad gv{m.v, m.hu, m.u, Scratch(ends ? m.hv.rows : 0, width, m.v != nullptr)};
  const bool staged = ends && threads > 1 && (m.u || m.v);
  // The pairs go in chunks of kChunk blocks: the staged rows and the weights' per-block partial
  // sums are a chunk's, not the step's (staging all of a GCRN step's pairs on evolving SBM 100k
  // took 168 MB, the largest single allocation of a two-thread run, at its peak). Chunks in order, pairs in
  // order within each: every table row and every weight sum gets the same additions in the
  // same order as without chunks.
  const int64_t chunk_pairs = kChunk * kBlock;
  Scratch stage(staged ? std::min(pairs, chunk_pairs) : 0, width, false);
  // Per-block partial sums of the weights' gradients, added up in block order afterwards:
  // dW1c (D x H), db1 (H), dW2 (H x C), db2 (C).
  const int64_t stride = d * h + h + h * c + c;
  std::vector<float> part(size_t(std::min(blocks, kChunk) * stride));
  std::vector<double> total(size_t(stride), 0.0);
  std::vector<const EndGrad*> todo;
  for (const EndGrad* e : {&gu, &gv})
    if (e->idx) todo.push_back(e);
  for (int64_t first = 0; first < blocks; first += kChunk) {
    const int64_t last = std::min(blocks, first + kChunk);
    const int64_t base = first * kBlock, chunk = std::min(pairs, last * kBlock) - base;
    std::fill(part.begin(), part.end(), 0.f);
#pragma omp parallel if (last - first > 1)
    {
      std::vector<float> hh(size_t(kBlock * d)), a(size_t(kBlock * h)), dz(size_t(kBlock * h)),
          dhh(size_t(kBlock * d));
#pragma omp for schedule(static)
      for (int64_t b = first; b < last; ++b) {
        const int64_t begin = b * kBlock, n = std::min(kBlock, pairs - begin);
        block_forward(m, t, begin, n, hh.data(), a.data());
        const ConstMatView dl{dlogits.row(begin), n, c, dlogits.ld};
        const MatView dzv{dz.data(), n, h, h};
        // dz = dlogits W2^T where the unit was active (a > 0 exactly where its input was).
        gemm(false, true, 1.f, dl, m.w2, 0.f, dzv);
        for (int64_t i = 0; i < n * h; ++i) dz[size_t(i)] *= a[size_t(i)] > 0.f ? 1.f : 0.f;
        float* pw1 = part.data() + (b - first) * stride;
        float* pb1 = pw1 + d * h;
        float* pw2 = pb1 + h;
        float* pb2 = pw2 + h * c;
        if (dw1.data)
          gemm(true, false, 1.f, ConstMatView{hh.data(), n, d, d}, dzv, 0.f, {pw1, d, h, h});
        if (dw2.data)
          gemm(true, false, 1.f, ConstMatView{a.data(), n, h, h}, dl, 0.f, {pw2, h, c, c});
        for (int64_t r = 0; r < n; ++r) {
          for (int64_t j = 0; j < h; ++j) pb1[j] += dz[size_t(r * h + j)];
          for (int64_t k = 0; k < c; ++k) pb2[k] += dl.row(r)[k];
        }
        if (!ends) continue;
        // d(hu * hv) = dz W1c^T; hu's row gets it times hv, hv's times hu.
        gemm(false, true, 1.f, ConstMatView{dzv}, w1_block(m.w1, 2, d), 0.f,
             {dhh.data(), n, d, d});
        for (int64_t r = 0; r < n; ++r) {
          const int64_t i = begin + r;
          const float* gz = dz.data() + r * h;
          const float* gp = dhh.data() + r * d;
          if (staged) {
            float* o = stage.view().row(i - base);
            std::copy(gz, gz + h, o);
            std::copy(gp, gp + d, o + h);
          }
          for (const EndGrad* e : {&gu, &gv}) {
            const MatView sum = e->sum.view();
            if (!e->idx) {
              e->put(i, sum.row(i), gz, gp, h, d, false);
            } else if (!staged) {
              if (i + kAhead < pairs) prefetch_row(sum.row(e->idx[i + kAhead]), width, true);
              e->put(i, sum.row(e->idx[i]), gz, gp, h, d, true);
            }
          }
        }
      }
    }
    if (staged) {
      // The indexed ends' table rows, split into as many ranges as there are threads.
      const int64_t ranges = std::max<int64_t>(1, threads / int64_t(todo.size()));
      const int64_t tasks = int64_t(todo.size()) * ranges;
#pragma omp parallel for schedule(static, 1)
      for (int64_t task = 0; task < tasks; ++task) {
        const EndGrad& e = *todo[size_t(task / ranges)];
        const int64_t rows = e.sum.view().rows, r = task % ranges;
        e.add_staged(stage.view(), base, chunk, rows * r / ranges, rows * (r + 1) / ranges, h, d);
      }
    }
    // The weights: partial sums in block order, in double (walking the blocks' rows in memory
    // order; each sum still adds its blocks first to last).
    for (int64_t b = first; b < last; ++b)
      for (int64_t e = 0; e < stride; ++e)
        total[size_t(e)] += part[size_t((b - first) * stride + e)];
  }
  auto reduce = [&](int64_t offset, int64_t count, auto&& out) {
    for (int64_t e = 0; e < count; ++e) out(e, float(total[size_t(offset + e)]));
  };
  if (dw1.data) {
    const MatView w1c = w1_block(dw1, 2, d);
    reduce(0, d * h, [&](int64_t e, float s) { w1c.row(e / h)[e % h] += s; });
  }
  if (db1) reduce(d * h, h, [&](int64_t e, float s) { db1[e] += s; });
  if (dw2.data) reduce(d * h + h, h * c, [&](int64_t e, float s) { dw2.row(e / c)[e % c] += s; });
  if (db2) reduce(d * h + h + h * c, c, [&](int64_t e, float s) { db2[e] += s; });
  if (!ends) return;
  // Each table: dW1a (dW1b) += table^T dz-sums; d table += dz-sums W1a^T + the product part.
  int k = 0;
  for (auto [end, table, dtable] : {std::tuple{&gu, m.hu, dhu}, std::tuple{&gv, m.hv, dhv}}) {
    const MatView s = end->sum.view();
    const ConstMatView sz{s.data, s.rows, h, s.ld}, sp{s.data + h, s.rows, d, s.ld};
    if (dw1.data) gemm(true, false, 1.f, table, sz, 1.f, w1_block(dw1, k, d));
    if (dtable.data) {
      gemm(false, true, 1.f, sz, w1_block(m.w1, k, d), 1.f, dtable);
      copy_view(sp, dtable, true);
    }
    ++k;
  }
}

}  // namespace dgnn::kernels::cpu
