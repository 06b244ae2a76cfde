// Link prediction's uniform draws eight at a time (kernels.hpp: hashed_draws). GCC's vector
// extension over eight 64-bit lanes: one zmm register with AVX-512 (vpmullq multiplies them).
// The narrower ISA levels (DGNN_ISA_CLONES) emulate the lanes and are slower than one draw at a
// time, so callers ask vector_draws_pay() first; they still give the same values.
#include <cstring>

#include "dgnn/kernels/cpu/cpu_kernels.hpp"
#include "dgnn/kernels/cpu/fast_math.hpp"

// U8 values pass only between inline functions of this file: no ABI crosses it.
#pragma GCC diagnostic ignored "-Wpsabi"

namespace dgnn::kernels::cpu {

namespace {

typedef uint64_t U8 __attribute__((vector_size(64)));
typedef int64_t I8 __attribute__((vector_size(64)));
typedef double D8 __attribute__((vector_size(64)));
typedef int32_t W8 __attribute__((vector_size(32)));

// common/hash_rng.hpp's mix64, lane by lane.
inline U8 mix64(const U8& in) {
  U8 x = in + 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// x % n for 2 <= n < 2^31, exactly, without an integer division. The quotient is estimated in
// double twice: x / n (below 2^63) to within 2^12 of the truth, so that r = x - q n is exact in
// wrapping 64-bit arithmetic and below 2^43 in magnitude, then r / n, exact enough that r lands
// within one n of [0, n); the last steps add or take away n where it did not.
inline I8 mod(const U8& x, int64_t n, double inv) {
  const U8 q1 = __builtin_convertvector(__builtin_convertvector(x, D8) * inv, U8);
  const I8 r1 = I8(x - q1 * uint64_t(n));
  const I8 q2 = __builtin_convertvector(__builtin_convertvector(r1, D8) * inv, I8);
  I8 r = r1 - q2 * n;  // in [-n, 2n)
  r += (r < 0) & n;    // a comparison's lane is all ones where it holds
  r -= (r >= n) & n;
  return r;
}

}  // namespace

DGNN_ISA_CLONES
bool hashed_draws(uint64_t seed, uint64_t base, int64_t count, uint64_t n, int32_t u,
                  const uint64_t* links, int64_t num_links, int32_t* out) {
  if (n < 2 || n >= (uint64_t(1) << 31) || num_links > kDrawLinksMax) return false;
  const double inv = 1.0 / double(n);
  const U8 lane = {0, 1, 2, 3, 4, 5, 6, 7};
  const I8 self = I8{} + int64_t(u);
  const U8 high = U8{} + (uint64_t(uint32_t(u)) << 32);
  for (int64_t k0 = 0; k0 < count; k0 += 8) {
    const U8 b = lane + (base + uint64_t(k0));
    const I8 w = mod(mix64(seed ^ mix64(b)), int64_t(n), inv);
    I8 taken = w == self;
    const U8 key = high | U8(w);
    for (int64_t j = 0; j < num_links; ++j) taken |= I8(key == links[j]);
    const W8 v = __builtin_convertvector(w | taken, W8);  // -1 where taken
    if (count - k0 >= 8)
      std::memcpy(out + k0, &v, sizeof v);
    else
      for (int64_t l = 0; l < count - k0; ++l) out[k0 + l] = v[l];
  }
  return true;
}

bool vector_draws_pay() {
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
  static const bool wide = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq");
  return wide;
#else
  return false;  // one clone only (DGNN_ISA_CLONES): the baseline's emulated lanes
#endif
}

}  // namespace dgnn::kernels::cpu
