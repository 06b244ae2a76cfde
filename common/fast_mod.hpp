#pragma once
// x % d for a 64-bit x and a divisor 0 < d < 2^32 fixed in advance, exactly, by two multiplies
// instead of a 64-bit division (tens of cycles each, paid per sampled vertex: link prediction
// draws tens of millions per evaluated step). Lemire, Kaser and Kurz, "Faster remainder by
// direct computation" (2019): with M = ceil(2^128 / d), x % d = ((M x mod 2^128) d) >> 128,
// exact for every 64-bit x once M has 64 + log2(d) bits or more (here 128).
#include <cstdint>

namespace dgnn {

class FastMod {
 public:
  // d > 0.
  explicit FastMod(uint64_t d) : m_(~static_cast<unsigned __int128>(0) / d + 1), d_(d) {}
  uint64_t operator()(uint64_t x) const {
    const unsigned __int128 low = m_ * x;  // mod 2^128
    const unsigned __int128 t = static_cast<unsigned __int128>(static_cast<uint64_t>(low)) * d_;
    const unsigned __int128 u =
        static_cast<unsigned __int128>(static_cast<uint64_t>(low >> 64)) * d_ + (t >> 64);
    return static_cast<uint64_t>(u >> 64);
  }

 private:
  unsigned __int128 m_;
  uint64_t d_;
};

}  // namespace dgnn
