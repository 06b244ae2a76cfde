#pragma once
// An LSD radix sort of unsigned integers by a range of their bits, stable, in passes of 8 bits
// (256 buckets a pass scatter faster than 2048 on the machines measured). For the sorts of
// millions of keys a link-prediction step makes (order keys of scores, (u, v) edge keys), where
// std::sort's comparisons cost several times as much. A digit every value shares is skipped, so
// small vertex ids cost fewer passes.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace dgnn {

constexpr int kRadixBits = 8;
constexpr uint32_t kRadixMask = (1u << kRadixBits) - 1;
constexpr int radix_passes(int first, int last) {
  return (last - first + kRadixBits - 1) / kRadixBits;
}

// `a` ascending by bits [first, last) of its values; b: scratch. `hist`: the passes' digit
// counts, pass by pass (radix_passes(first, last) x 256), when the caller made them as it wrote
// the values (else counted here).
template <class T>
void radix_sort_bits(std::vector<T>& a, std::vector<T>& b, int first, int last,
                     const uint32_t* hist = nullptr) {
  const int passes = radix_passes(first, last);
  b.resize(a.size());
  std::vector<size_t> count(size_t(passes) * (kRadixMask + 1), 0);
  if (hist)
    std::copy(hist, hist + count.size(), count.begin());
  else
    for (T v : a)
      for (int pass = 0; pass < passes; ++pass)
        ++count[size_t(pass) * (kRadixMask + 1) +
                size_t((v >> (first + pass * kRadixBits)) & kRadixMask)];
  for (int pass = 0; pass < passes; ++pass) {
    size_t* c = count.data() + size_t(pass) * (kRadixMask + 1);
    // A digit every value shares moves nothing.
    if (std::find(c, c + kRadixMask + 1, a.size()) != c + kRadixMask + 1) continue;
    size_t sum = 0;
    for (size_t d = 0; d <= kRadixMask; ++d) {
      const size_t n = c[d];
      c[d] = sum;
      sum += n;
    }
    const int shift = first + pass * kRadixBits;
    for (T v : a) b[c[size_t((v >> shift) & kRadixMask)]++] = v;
    a.swap(b);
  }
}

}  // namespace dgnn
