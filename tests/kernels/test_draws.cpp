// The batched uniform draws of link prediction (kernels.hpp: hashed_draws) against the scalar
// expression they replace: hash_combine then FastMod, the same values to the bit. They run here
// whether or not the machine has AVX-512 (vector_draws_pay only decides whether they are used).
#include <catch2/catch.hpp>
#include <cstdint>
#include <vector>

#include "dgnn/common/fast_mod.hpp"
#include "dgnn/common/hash_rng.hpp"
#include "dgnn/kernels/kernels.hpp"

using namespace dgnn;

namespace {

// mix64's inverse: x ^ (x >> k) undone by repeating it, the odd multipliers by their inverses
// mod 2^64 (Newton's iteration doubles the correct bits each time).
uint64_t unshift(uint64_t y, int k) {
  uint64_t x = y;
  for (int s = k; s < 64; s += k) x = y ^ (x >> k);
  return x;
}
uint64_t inverse(uint64_t c) {
  uint64_t inv = c;
  for (int i = 0; i < 6; ++i) inv *= 2 - c * inv;
  return inv;
}
uint64_t unmix64(uint64_t y) {
  y = unshift(y, 31) * inverse(0x94d049bb133111ebull);
  y = unshift(y, 27) * inverse(0xbf58476d1ce4e5b9ull);
  return unshift(y, 30) - 0x9e3779b97f4a7c15ull;
}

}  // namespace

TEST_CASE("hashed_draws: the scalar draws, eight at a time, links and self marked",
          "[kernels][draws]") {
  // Divisors at the ends of the range, powers of two and their neighbours, and the sizes of
  // real graphs; counts with and without a partial last block.
  const std::vector<uint64_t> ns{2,
                                 3,
                                 7,
                                 255,
                                 256,
                                 257,
                                 1899,
                                 3783,
                                 7600,
                                 50000,
                                 65535,
                                 65536,
                                 65537,
                                 1000003,
                                 (1u << 24) + 1,
                                 (1u << 30) - 1,
                                 1u << 30,
                                 (1u << 31) - 1};
  Rng rng(11);
  for (uint64_t n : ns) {
    const FastMod mod(n);
    for (int64_t count : {0, 1, 7, 8, 9, 100, 257}) {
      const uint64_t seed = rng.next(), base = rng.next();
      const int32_t u = int32_t(rng.below(n));
      std::vector<int32_t> out(static_cast<size_t>(count) + 1, 12345);
      REQUIRE(kernels::hashed_draws(Device::cpu, seed, base, count, n, u, nullptr, 0, out.data()));
      CHECK(out[size_t(count)] == 12345);  // nothing past count
      for (int64_t k = 0; k < count; ++k) {
        const int32_t w = int32_t(mod(hash_combine(seed, base + uint64_t(k))));
        INFO("n " << n << ", k " << k);
        CHECK(out[size_t(k)] == (w == u ? -1 : w));
      }
    }
  }
  // Hashes chosen to sit where the remainder's quotient estimates are at their limits: near 0,
  // 2^53, 2^63 and 2^64, and next to multiples of n. The key giving a hash comes from mix64's
  // inverse.
  for (uint64_t n : ns) {
    const FastMod mod(n);
    const uint64_t top = ~uint64_t(0) / n * n;  // the largest multiple of n
    for (uint64_t h : {uint64_t(0), uint64_t(1), n - 1, n, n + 1, uint64_t(1) << 53,
                       (uint64_t(1) << 53) + 1, uint64_t(1) << 63, (uint64_t(1) << 63) - 1, top - 1,
                       top, top + 1, ~uint64_t(0) - 1, ~uint64_t(0)}) {
      const uint64_t seed = 99, key = unmix64(seed ^ unmix64(h));
      REQUIRE(hash_combine(seed, key) == h);
      int32_t out = 12345;
      REQUIRE(kernels::hashed_draws(Device::cpu, seed, key, 1, n, -1, nullptr, 0, &out));
      INFO("n " << n << ", hash " << h);
      CHECK(out == int32_t(mod(h)));
      CHECK(uint64_t(out) == h % n);
    }
  }
}

TEST_CASE("hashed_draws: a draw among u's links is marked for the caller", "[kernels][draws]") {
  const uint64_t n = 10, seed = 3, base = 77;
  const int32_t u = 4;
  const FastMod mod(n);
  std::vector<int32_t> plain(64);
  REQUIRE(kernels::hashed_draws(Device::cpu, seed, base, 64, n, -1, nullptr, 0, plain.data()));
  // Link u to 2, 5 and 9: exactly the draws of those vertices (and of u itself) are marked.
  const std::vector<uint64_t> links{uint64_t(u) << 32 | 2, uint64_t(u) << 32 | 5,
                                    uint64_t(u) << 32 | 9};
  std::vector<int32_t> out(64);
  REQUIRE(kernels::hashed_draws(Device::cpu, seed, base, 64, n, u, links.data(), 3, out.data()));
  int marked = 0;
  for (size_t k = 0; k < 64; ++k) {
    const int32_t w = plain[k];
    const bool taken = w == u || w == 2 || w == 5 || w == 9;
    CHECK(out[k] == (taken ? -1 : w));
    marked += taken;
  }
  CHECK(marked > 0);
  // What it does not take: too many links, and divisors outside [2, 2^31).
  std::vector<uint64_t> many(kernels::kDrawLinksMax + 1, 0);
  CHECK_FALSE(kernels::hashed_draws(Device::cpu, seed, base, 8, n, u, many.data(),
                                    int64_t(many.size()), out.data()));
  CHECK_FALSE(kernels::hashed_draws(Device::cpu, seed, base, 8, 1, 0, nullptr, 0, out.data()));
  CHECK_FALSE(kernels::hashed_draws(Device::cpu, seed, base, 8, uint64_t(1) << 31, 0, nullptr, 0,
                                    out.data()));
}
