// KeySet (common/key_set.hpp) against std::unordered_set on the same random keys, through the
// growth of its table past the size it was made for.
#include <catch2/catch.hpp>
#include <unordered_set>

#include "dgnn/common/hash_rng.hpp"
#include "dgnn/common/key_set.hpp"

using namespace dgnn;

TEST_CASE("KeySet holds exactly the keys inserted, past its expected size") {
  Rng rng(4);
  KeySet set(100);  // grows several times below
  std::unordered_set<uint64_t> ref;
  for (int i = 0; i < 5000; ++i) {
    // Few distinct high words and small low words: many repeats and clustered hashes.
    const uint64_t key = rng.below(50) << 32 | rng.below(300);
    CHECK(set.insert(key) == ref.insert(key).second);
  }
  CHECK(set.size() == ref.size());
  for (uint64_t hi = 0; hi < 60; ++hi)
    for (uint64_t lo = 0; lo < 310; ++lo)
      CHECK(set.contains(hi << 32 | lo) == ref.count(hi << 32 | lo));
  CHECK_FALSE(KeySet(0).contains(0));
}
