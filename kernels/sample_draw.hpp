#pragma once
// The neighbour draws of sampler/ (uniform, per vertex, keyed by (seed, epoch, layer, vertex)),
// written once for both backends: the host compiler builds them into the CPU sampler and nvcc
// into the GPU one (kernels/cuda/sample.cu, one thread per vertex), so the two draw bit-identical
// samples. Plain C++ with no CUDA header; only the function qualifiers change under nvcc.
// No allocation and no std:: algorithms (they are host-only): small loops written out.
#include <cstdint>

#include "dgnn/common/hash_rng.hpp"

#if defined(__CUDACC__)
#define DGNN_HD __host__ __device__
#else
#define DGNN_HD
#endif

namespace dgnn::draw {

// The high 64 bits of a * b: the multiply-shift that maps a hash uniformly onto [0, n).
DGNN_HD inline uint64_t mulhi64(uint64_t a, uint64_t b) {
#if defined(__CUDA_ARCH__)
  return __umul64hi(a, b);
#else
  return uint64_t((unsigned __int128)a * b >> 64);
#endif
}

// The stream of Rng (common/hash_rng.hpp) that the sampler has always drawn from: mix64 of a
// counter started at mix64(key). Rng itself is host-only; this is the same arithmetic.
struct Stream {
  uint64_t state;
  DGNN_HD explicit Stream(uint64_t key) : state(mix64(key)) {}
  DGNN_HD uint64_t below(uint64_t n) { return mulhi64(mix64(state++), n); }
};

DGNN_HD inline int64_t count(int64_t deg, int fanout, bool replace) {
  if (fanout < 0 || deg == 0) return deg;
  return replace ? fanout : (fanout < deg ? fanout : deg);
}

DGNN_HD inline uint64_t key(uint64_t seed, uint64_t epoch, int layer, int64_t v) {
  return hash_combine(hash_combine(hash_combine(seed, epoch), uint64_t(layer)), uint64_t(v));
}

// Ascending order of a[0 .. n): insertion sort for the short lists fanouts give, heapsort past
// that (no recursion, no scratch: it runs in one GPU thread).
DGNN_HD inline void sort(int64_t* a, int64_t n) {
  if (n <= 32) {
    for (int64_t i = 1; i < n; ++i) {
      const int64_t x = a[i];
      int64_t j = i;
      for (; j > 0 && a[j - 1] > x; --j) a[j] = a[j - 1];
      a[j] = x;
    }
    return;
  }
  auto sift = [a](int64_t root, int64_t end) {
    while (2 * root + 1 < end) {
      int64_t child = 2 * root + 1;
      if (child + 1 < end && a[child] < a[child + 1]) ++child;
      if (!(a[root] < a[child])) return;
      const int64_t t = a[root];
      a[root] = a[child];
      a[child] = t;
      root = child;
    }
  };
  for (int64_t s = n / 2 - 1; s >= 0; --s) sift(s, n);
  for (int64_t end = n - 1; end > 0; --end) {
    const int64_t t = a[0];
    a[0] = a[end];
    a[end] = t;
    sift(0, end);
  }
}

// See sampler.hpp's sample_positions: the positions drawn, ascending, in out[0 .. count).
DGNN_HD inline void positions(int64_t deg, int fanout, bool replace, uint64_t k_key, int64_t* out) {
  const int64_t k = count(deg, fanout, replace);
  if (fanout < 0 || (!replace && k == deg)) {
    for (int64_t i = 0; i < deg; ++i) out[i] = i;
    return;
  }
  Stream rng(k_key);
  if (replace) {
    for (int64_t i = 0; i < k; ++i) out[i] = int64_t(rng.below(uint64_t(deg)));
    sort(out, k);
    return;
  }
  if (k * 8 >= deg) {
    // Dense selection (Knuth's algorithm S): one pass, output already in order.
    int64_t chosen = 0;
    for (int64_t i = 0; i < deg && chosen < k; ++i)
      if (int64_t(rng.below(uint64_t(deg - i))) < k - chosen) out[chosen++] = i;
    return;
  }
  // Sparse selection (Floyd's algorithm), kept sorted by insertion: O(k) draws independent of
  // the degree (hubs with 10^5 neighbours cost as little as others).
  int64_t n = 0;
  for (int64_t j = deg - k; j < deg; ++j) {
    int64_t t = int64_t(rng.below(uint64_t(j + 1)));
    int64_t lo = 0, hi = n;  // lower_bound of t in out[0 .. n)
    while (lo < hi) {
      const int64_t mid = lo + (hi - lo) / 2;
      if (out[mid] < t)
        lo = mid + 1;
      else
        hi = mid;
    }
    if (lo != n && out[lo] == t) {
      t = j;  // j exceeds everything chosen so far: it goes last
      lo = n;
    }
    for (int64_t i = n; i > lo; --i) out[i] = out[i - 1];
    out[lo] = t;
    ++n;
  }
}

// The entries equal to v (self loops; several when duplicates are kept) of a sorted row:
// [*lo, *hi). None searched when the graph has no self loops.
DGNN_HD inline void self_range(const int32_t* row, int64_t deg, int64_t v, bool self_loops,
                               int64_t* lo, int64_t* hi) {
  *lo = *hi = 0;
  if (!self_loops) return;
  int64_t a = 0, b = deg;
  while (a < b) {  // first entry >= v
    const int64_t m = a + (b - a) / 2;
    if (int64_t(row[m]) < v)
      a = m + 1;
    else
      b = m;
  }
  int64_t c = a, d = deg;
  while (c < d) {  // first entry > v
    const int64_t m = c + (d - c) / 2;
    if (int64_t(row[m]) <= v)
      c = m + 1;
    else
      d = m;
  }
  *lo = a;
  *hi = c;
}

// See sampler.hpp's sample_row_count.
DGNN_HD inline int64_t row_count(const int32_t* row, int64_t deg, int64_t v, bool self_loops,
                                 int fanout, bool replace) {
  int64_t lo, hi;
  self_range(row, deg, v, self_loops, &lo, &hi);
  return count(deg - (hi - lo), fanout, replace) + (hi - lo);
}

// See sampler.hpp's sample_row. out_ids (row_count entries) doubles as the scratch of the
// positions, so one thread needs no memory of its own: the positions are drawn into its front,
// then turned into ids from the back (an entry moves only forwards, past positions already read).
DGNN_HD inline void row(const int32_t* row, const float* w, int64_t deg, int64_t v, bool self_loops,
                        int fanout, bool replace, uint64_t k_key, int64_t* out_ids, float* out_w) {
  int64_t lo, hi;
  self_range(row, deg, v, self_loops, &lo, &hi);
  const int64_t nself = hi - lo, cand = deg - nself;
  const int64_t k = count(cand, fanout, replace);
  positions(cand, fanout, replace, k_key, out_ids);
  // Candidates skip the self entries; those are all kept, in their place in the row: after the
  // candidates before lo, before those at or past it.
  int64_t before = 0;  // candidates placed before the self entries
  for (int64_t i = k - 1; i >= 0; --i) {
    const int64_t q = out_ids[i];
    const int64_t p = q + (q >= lo ? nself : 0);
    const int64_t o = i + (p >= hi ? nself : 0);
    if (p < lo && before == 0) before = i + 1;
    out_ids[o] = row[p];
    if (out_w) out_w[o] = w[p];
  }
  for (int64_t s = 0; s < nself; ++s) {
    out_ids[before + s] = row[lo + s];
    if (out_w) out_w[before + s] = w[lo + s];
  }
}

}  // namespace dgnn::draw
