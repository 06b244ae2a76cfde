#pragma once
// What the metrics (metrics.cpp) and RankCounter (rank_counter.cpp) share: scores as ordered
// keys, and the tie tolerance's check. Internal: not part of the installed interface's promises.
#include <cstdint>
#include <cstring>
#include <string>

#include "dgnn/common/error.hpp"

namespace dgnn::metrics_detail {

// Floats as unsigned keys in the same order (-0 just below +0; no NaN here).
inline uint32_t order_key(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u & 0x80000000u ? ~u : u | 0x80000000u;
}
inline float from_order_key(uint32_t k) {
  const uint32_t u = k & 0x80000000u ? k & 0x7fffffffu : ~k;
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

inline void check_tie(const char* fn, double tie) {
  if (!(tie >= 0) || tie > 1)
    throw Error(std::string(fn) + ": the tie tolerance must be in [0, 1], got " +
                std::to_string(tie));
}

}  // namespace dgnn::metrics_detail
