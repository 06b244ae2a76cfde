#pragma once
// A host tensor of uniform values in [-range, range), from its own seed: the tests' inputs.
#include <cstdint>

#include "dgnn/common/hash_rng.hpp"
#include "dgnn/gnn/core/tensor.hpp"

namespace dgnn::test {

inline Tensor random_tensor(int64_t r, int64_t c, uint64_t seed, float range = 1.f) {
  Tensor t(r, c);
  Rng rng(seed);
  for (int64_t i = 0; i < t.numel(); ++i) t.data()[i] = (rng.uniform() * 2 - 1) * range;
  return t;
}

}  // namespace dgnn::test
