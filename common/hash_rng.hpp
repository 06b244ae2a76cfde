#pragma once
// Counter-based random numbers: a value is a pure function of its key, so any rank can
// reproduce any element (dropout masks keyed by global vertex id, generators keyed by seed).
#include <cmath>
#include <cstdint>

namespace dgnn {

// SplitMix64 finaliser: a bijective, well-mixing 64-bit hash.
constexpr uint64_t mix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

constexpr uint64_t hash_combine(uint64_t a, uint64_t b) { return mix64(a ^ mix64(b)); }

// Uniform float in [0, 1) from 24 high bits of a hash.
constexpr float unit_float(uint64_t h) { return float(h >> 40) * (1.0f / 16777216.0f); }

// Small sequential generator for places where a stream is natural (generators, init).
class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(mix64(seed)) {}
  uint64_t next() { return mix64(state_++); }
  // Uniform in [0, n).
  uint64_t below(uint64_t n) { return uint64_t((unsigned __int128)next() * n >> 64); }
  float uniform() { return unit_float(next()); }
  double uniform_double() { return double(next() >> 11) * (1.0 / 9007199254740992.0); }
  // Standard normal (Box-Muller; one value per call keeps the stream position simple).
  float normal() {
    double u1 = (double(next() >> 11) + 1.0) * (1.0 / 9007199254740993.0);
    double u2 = uniform_double();
    return float(std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2));
  }

 private:
  uint64_t state_;
};

}  // namespace dgnn
