// FastMod (common/fast_mod.hpp) against the % operator: the negative draws of link prediction
// use it, so a single wrong remainder would change which vertices are drawn.
#include <catch2/catch.hpp>
#include <cstdint>

#include "dgnn/common/fast_mod.hpp"
#include "dgnn/common/hash_rng.hpp"

using namespace dgnn;

TEST_CASE("FastMod equals x % d for 64-bit x and 32-bit d") {
  uint64_t x = 1;
  for (uint64_t d :
       {uint64_t(1), uint64_t(2), uint64_t(3), uint64_t(7), uint64_t(1000), uint64_t(3783),
        uint64_t(50000), uint64_t(1) << 20, (uint64_t(1) << 31) - 1, (uint64_t(1) << 32) - 1}) {
    const FastMod mod(d);
    INFO("d = " << d);
    for (uint64_t edge : {uint64_t(0), uint64_t(1), d - 1, d, d + 1, ~uint64_t(0), ~uint64_t(0) - 1,
                          uint64_t(1) << 63})
      CHECK(mod(edge) == edge % d);
    for (int i = 0; i < 200000; ++i) {
      x = mix64(x + uint64_t(i));
      if (mod(x) != x % d) FAIL("x = " << x);
    }
  }
  // Random divisors too.
  uint64_t s = 99;
  for (int i = 0; i < 2000; ++i) {
    s = mix64(s);
    const uint64_t d = (s >> 32) | 1;
    const FastMod mod(d);
    for (int j = 0; j < 200; ++j) {
      x = mix64(x ^ s);
      if (mod(x) != x % d) FAIL("x = " << x << ", d = " << d);
    }
  }
}
