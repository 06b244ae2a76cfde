// radix_sort_bits (common/radix_sort.hpp) against std::stable_sort: evaluation's AUC and AP
// counts and every link step's sorted edge keys go through it.
#include <catch2/catch.hpp>
#include <algorithm>
#include <cstdint>
#include <vector>

#include "dgnn/common/hash_rng.hpp"
#include "dgnn/common/radix_sort.hpp"

using namespace dgnn;

TEST_CASE("radix_sort_bits sorts by a range of bits, stably, as std::stable_sort does",
          "[common]") {
  for (size_t n : {size_t(0), size_t(1), size_t(7), size_t(1000), size_t(100000)}) {
    INFO("n = " << n);
    std::vector<uint64_t> edges(n), halves(n), scratch;
    std::vector<uint32_t> keys(n), scratch32;
    for (size_t i = 0; i < n; ++i) {
      const uint64_t h = mix64(i + 1);
      // Edge keys of small vertex ids (most digits constant), (key << 32 | index) pairs with
      // many equal keys, and whole 32-bit keys.
      edges[i] = (h % 5000) << 32 | (h >> 40) % 5000;
      halves[i] = uint64_t(uint32_t(h) % 97) << 32 | i;
      keys[i] = uint32_t(h >> 17);
    }
    std::vector<uint64_t> e = edges, hv = halves;
    std::vector<uint32_t> k = keys;
    std::sort(e.begin(), e.end());
    std::stable_sort(hv.begin(), hv.end(), [](uint64_t a, uint64_t b) { return a >> 32 < b >> 32; });
    std::sort(k.begin(), k.end());
    radix_sort_bits(edges, scratch, 0, 64);
    radix_sort_bits(halves, scratch, 32, 64);  // by the high half only: ties keep their order
    radix_sort_bits(keys, scratch32, 0, 32);
    CHECK(edges == e);
    CHECK(halves == hv);
    CHECK(keys == k);
  }
}
