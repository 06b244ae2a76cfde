#pragma once
// KeySet: a set of 64-bit keys in one flat table (open addressing, linear probing), sized for
// a known number of keys up front. For the per-step edge sets of link prediction, built from
// tens of thousands of edges and probed for every sampled non-edge each step, where
// std::unordered_set's allocation per node was most of the sampling time.
#include <cstdint>
#include <vector>

#include "dgnn/common/hash_rng.hpp"

namespace dgnn {

class KeySet {
 public:
  // Room for `expected` keys at a load of at most one half. The all-ones key cannot be stored.
  explicit KeySet(size_t expected) {
    size_t cap = 16;
    while (cap < 2 * expected) cap *= 2;
    slots_.assign(cap, kEmpty);
    mask_ = cap - 1;
  }
  // Adds `key`; false if it was already there.
  bool insert(uint64_t key) {
    for (size_t i = mix64(key) & mask_;; i = (i + 1) & mask_) {
      if (slots_[i] == key) return false;
      if (slots_[i] == kEmpty) {
        slots_[i] = key;
        if (++size_ * 2 > slots_.size()) grow();
        return true;
      }
    }
  }
  bool contains(uint64_t key) const {
    for (size_t i = mix64(key) & mask_;; i = (i + 1) & mask_) {
      if (slots_[i] == key) return true;
      if (slots_[i] == kEmpty) return false;
    }
  }
  size_t size() const { return size_; }

 private:
  static constexpr uint64_t kEmpty = ~uint64_t{0};
  void grow() {
    std::vector<uint64_t> old;
    old.swap(slots_);
    slots_.assign(old.size() * 2, kEmpty);
    mask_ = slots_.size() - 1;
    size_ = 0;
    for (uint64_t k : old)
      if (k != kEmpty) insert(k);
  }
  std::vector<uint64_t> slots_;
  size_t mask_ = 0;
  size_t size_ = 0;
};

}  // namespace dgnn
