#pragma once
// Host loops of link evaluation, vectorised and compiled per ISA level (DGNN_ISA_CLONES).
//
// Batches of counter-based uniform vertex draws, eight at a time. Link prediction draws a
// hundred negatives per positive: about 10M draws per evaluated step on a 50k-vertex graph, each
// two SplitMix64 finalisers and a remainder (common/hash_rng.hpp, common/fast_mod.hpp). One at a
// time they were 64-bit multiplies in a chain; here the chains of eight draws run side by side in
// vector registers, with the same arithmetic, so the draws are the same values.
#include <cstdint>

namespace dgnn::kernels::cpu {

// Runs of links longer than this are left to the caller (hashed_draws checks none of them).
constexpr int64_t kDrawLinksMax = 32;

// out[k] = hash_combine(seed, base + k) % n for k < count: the values of the scalar expression
// (mix64, FastMod), exactly. A draw equal to `u`, or whose key (u << 32 | draw) is one of
// links[0, num_links) (u's links, any order), is written as -1 instead: the caller redraws it.
// False (nothing written) when n < 2, n >= 2^31 or num_links > kDrawLinksMax: the caller
// draws those itself.
bool hashed_draws(uint64_t seed, uint64_t base, int64_t count, uint64_t n, int32_t u,
                  const uint64_t* links, int64_t num_links, int32_t* out);

// How many of x[0, n) are below `lo` and how many at most `hi`, added to *below and *at_most:
// a source's candidates against one positive's tie interval (its MRR). Floats, compared as
// floats; a double bound is first rounded to the float that compares alike (metrics.cpp).
void count_below_at_most(const float* x, int64_t n, float lo, float hi, int64_t* below,
                         int64_t* at_most);

}  // namespace dgnn::kernels::cpu
