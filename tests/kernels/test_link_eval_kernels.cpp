// The batched uniform draws of link prediction (kernels/cpu/link_eval.hpp) against the scalar
// expression they replace: hash_combine then FastMod, the same values to the bit.
#include <catch2/catch.hpp>
#include <cstdint>
#include <vector>

#include "dgnn/common/fast_mod.hpp"
#include "dgnn/common/hash_rng.hpp"
#include "dgnn/kernels/cpu/link_eval.hpp"

using namespace dgnn;

TEST_CASE("hashed_draws: the scalar draws, eight at a time, links and self marked",
          "[kernels][draws]") {
  // Divisors at the ends of the range, powers of two and their neighbours, and the sizes of
  // real graphs; counts with and without a partial last block.
  const std::vector<uint64_t> ns{2,        3,         7,          255,        256,
                                 257,      1899,      3783,       7600,       50000,
                                 65535,    65536,     65537,      1000003,    (1u << 24) + 1,
                                 (1u << 30) - 1, 1u << 30, (1u << 31) - 1};
  Rng rng(11);
  for (uint64_t n : ns) {
    const FastMod mod(n);
    for (int64_t count : {0, 1, 7, 8, 9, 100, 257}) {
      const uint64_t seed = rng.next(), base = rng.next();
      const int32_t u = int32_t(rng.below(n));
      std::vector<int32_t> out(static_cast<size_t>(count) + 1, 12345);
      REQUIRE(kernels::cpu::hashed_draws(seed, base, count, n, u, nullptr, 0, out.data()));
      CHECK(out[size_t(count)] == 12345);  // nothing past count
      for (int64_t k = 0; k < count; ++k) {
        const int32_t w = int32_t(mod(hash_combine(seed, base + uint64_t(k))));
        INFO("n " << n << ", k " << k);
        CHECK(out[size_t(k)] == (w == u ? -1 : w));
      }
    }
  }
  // Remainders of hashes near 0 and 2^64 (the quotient estimate's extremes): every lane of a
  // block whose keys wrap past 2^64.
  for (uint64_t n : ns) {
    const FastMod mod(n);
    for (uint64_t base : {~uint64_t(0) - 3, uint64_t(0)}) {
      std::vector<int32_t> out(16);
      REQUIRE(kernels::cpu::hashed_draws(5, base, 16, n, -1, nullptr, 0, out.data()));
      for (uint64_t k = 0; k < 16; ++k)
        CHECK(out[k] == int32_t(mod(hash_combine(5, base + k))));
    }
  }
}

TEST_CASE("hashed_draws: a draw among u's links is marked for the caller", "[kernels][draws]") {
  const uint64_t n = 10, seed = 3, base = 77;
  const int32_t u = 4;
  const FastMod mod(n);
  std::vector<int32_t> plain(64);
  REQUIRE(kernels::cpu::hashed_draws(seed, base, 64, n, -1, nullptr, 0, plain.data()));
  // Link u to 2, 5 and 9: exactly the draws of those vertices (and of u itself) are marked.
  const std::vector<uint64_t> links{uint64_t(u) << 32 | 2, uint64_t(u) << 32 | 5,
                                    uint64_t(u) << 32 | 9};
  std::vector<int32_t> out(64);
  REQUIRE(kernels::cpu::hashed_draws(seed, base, 64, n, u, links.data(), 3, out.data()));
  int marked = 0;
  for (size_t k = 0; k < 64; ++k) {
    const int32_t w = plain[k];
    const bool taken = w == u || w == 2 || w == 5 || w == 9;
    CHECK(out[k] == (taken ? -1 : w));
    marked += taken;
  }
  CHECK(marked > 0);
  // What it does not take: too many links, and divisors outside [2, 2^31).
  std::vector<uint64_t> many(kernels::cpu::kDrawLinksMax + 1, 0);
  CHECK_FALSE(kernels::cpu::hashed_draws(seed, base, 8, n, u, many.data(),
                                         int64_t(many.size()), out.data()));
  CHECK_FALSE(kernels::cpu::hashed_draws(seed, base, 8, 1, 0, nullptr, 0, out.data()));
  CHECK_FALSE(kernels::cpu::hashed_draws(seed, base, 8, uint64_t(1) << 31, 0, nullptr, 0,
                                         out.data()));
}
