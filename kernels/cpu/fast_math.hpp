#pragma once
// exp, sigmoid and tanh for the recurrent cells, written so that a loop over them vectorises.
// glibc's expf / tanhf are scalar calls (tanhf goes through expm1f), and the cells evaluate five
// of them per state element per step in both directions: most of an LSTM's time on the CPU.
// These inline versions agree with libm to a few units in the last place (the tests of the
// cells and their GPU comparison hold them to 1e-5 relative). Their choices are selects, which
// vectorise only without trapping math: GCC otherwise sinks an arm's arithmetic into a branch
// it may not speculate. So the CPU kernels build with -fno-trapping-math (CMakeLists; dgnn
// never reads the floating-point exception flags, and the arithmetic is unchanged).
#include <bit>
#include <cmath>
#include <cstdint>

// A loop compiled once per x86-64 ISA level (AVX-512, AVX2 + FMA, baseline), the loader
// picking the machine's: the default build targets baseline x86-64 (SSE2, no FMA). GCC outlines
// an OpenMP region's body before it clones, so the cloned function is the one a parallel loop
// calls per block, never one that opens the region. Each clone is deterministic on its own.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define DGNN_ISA_CLONES \
  __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define DGNN_ISA_CLONES
#endif

namespace dgnn::kernels::cpu {

// e^x for x <= 0 (the cells only take exponentials of -|x|), Cody-Waite range reduction to
// |r| <= ln2 / 2 and a degree-6 polynomial (Cephes' expf coefficients). Below -87 the result
// flushes to 0, as expf's does past the normal range.
inline float exp_nonpositive(float x) {
  const float in = x;
  x = x < -87.f ? -87.f : x;
  // n = round(x / ln 2) by the 1.5 x 2^23 trick (no rounding instruction in baseline x86-64).
  const float shift = 12582912.f;
  const float n = (x * 1.44269504088896341f + shift) - shift;
  const float r = (x - n * 0.693359375f) + n * 2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.f;
  const float scale = std::bit_cast<float>(uint32_t(int32_t(n) + 127) << 23);
  return in < -87.f ? 0.f : p * scale;
}

// exp(-|x|) never overflows, so saturated gates stay exactly finite.
inline float fast_sigmoid(float x) {
  const float e = exp_nonpositive(-std::fabs(x));
  const float inv = 1.f / (1.f + e);
  return x >= 0.f ? inv : e * inv;
}

// (1 - e) / (1 + e) with e = exp(-2|x|) loses relative accuracy as |x| -> 0, where the odd
// Taylor series to x^9 takes over (its next term is below 1e-9 relative for |x| < 0.2).
inline float fast_tanh(float x) {
  const float t = std::fabs(x);
  const float e = exp_nonpositive(-2.f * t);
  const float big = (1.f - e) / (1.f + e);
  const float t2 = t * t;
  const float small =
      t * (1.f + t2 * (-1.f / 3 + t2 * (2.f / 15 + t2 * (-17.f / 315 + t2 * (62.f / 2835)))));
  return std::copysign(t < 0.2f ? small : big, x);
}

}  // namespace dgnn::kernels::cpu
