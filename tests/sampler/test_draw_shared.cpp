// The draws of kernels/sample_draw.hpp (one implementation for the CPU and the GPU sampler)
// against the CPU sampler's draws as they were before they moved there, kept here verbatim as the
// reference: the move must not change a single sample (trained models and checkpoints depend on
// them), and the GPU sampler is checked against the same functions on a GPU (tests/gpu).
#include <catch2/catch.hpp>
#include <algorithm>
#include <vector>

#include "dgnn/common/hash_rng.hpp"
#include "dgnn/kernels/sample_draw.hpp"
#include "dgnn/sampler/sampler.hpp"

using namespace dgnn;

namespace {

// The CPU sampler's sample_positions before kernels/sample_draw.hpp (std::sort, lower_bound).
void reference_positions(int64_t deg, int fanout, bool replace, uint64_t key, int64_t* out) {
  const int64_t k = fanout < 0 || deg == 0 ? deg : replace ? fanout : std::min<int64_t>(fanout, deg);
  if (fanout < 0 || (!replace && k == deg)) {
    for (int64_t i = 0; i < deg; ++i) out[i] = i;
    return;
  }
  Rng rng(key);
  if (replace) {
    for (int64_t i = 0; i < k; ++i) out[i] = int64_t(rng.below(uint64_t(deg)));
    std::sort(out, out + k);
    return;
  }
  if (k * 8 >= deg) {
    int64_t chosen = 0;
    for (int64_t i = 0; i < deg && chosen < k; ++i)
      if (int64_t(rng.below(uint64_t(deg - i))) < k - chosen) out[chosen++] = i;
    return;
  }
  int64_t n = 0;
  for (int64_t j = deg - k; j < deg; ++j) {
    int64_t t = int64_t(rng.below(uint64_t(j + 1)));
    int64_t* pos = std::lower_bound(out, out + n, t);
    if (pos != out + n && *pos == t) {
      t = j;
      pos = out + n;
    }
    std::move_backward(pos, out + n, out + n + 1);
    *pos = t;
    ++n;
  }
}

// The CPU sampler's sample_row before the move (a separate positions buffer, forward pass).
std::vector<int64_t> reference_row(const std::vector<int32_t>& row, int64_t v, int fanout,
                                   bool replace, uint64_t key) {
  auto [lo_it, hi_it] = std::equal_range(row.begin(), row.end(), int32_t(v));
  const int64_t lo = lo_it - row.begin(), hi = hi_it - row.begin();
  const int64_t nself = hi - lo, cand = int64_t(row.size()) - nself;
  const int64_t k = cand == 0 || fanout < 0 ? cand : replace ? fanout : std::min<int64_t>(fanout, cand);
  std::vector<int64_t> pos(size_t(k) + 1), out;
  reference_positions(cand, fanout, replace, key, pos.data());
  bool self_done = nself == 0;
  for (int64_t i = 0; i < k; ++i) {
    const int64_t p = pos[size_t(i)] + (pos[size_t(i)] >= lo ? nself : 0);
    if (!self_done && p >= hi) {
      for (int64_t s = lo; s < hi; ++s) out.push_back(row[size_t(s)]);
      self_done = true;
    }
    out.push_back(row[size_t(p)]);
  }
  if (!self_done)
    for (int64_t s = lo; s < hi; ++s) out.push_back(row[size_t(s)]);
  return out;
}

}  // namespace

TEST_CASE("shared draws: positions identical to the CPU sampler's original ones") {
  int64_t compared = 0;
  for (int64_t deg : {0, 1, 2, 5, 7, 31, 33, 64, 100, 1000, 100000})
    for (int fanout : {-1, 1, 3, 5, 10, 25, 40, 200})
      for (bool replace : {false, true})
        for (uint64_t key : {0ull, 1ull, 77ull, 0xdeadbeefcafeull}) {
          const int64_t k = sample_count(deg, fanout, replace);
          std::vector<int64_t> want(size_t(k) + 1, -7), got(size_t(k) + 1, -7);
          reference_positions(deg, fanout, replace, key, want.data());
          draw::positions(deg, fanout, replace, key, got.data());
          INFO("deg " << deg << " fanout " << fanout << " replace " << replace << " key " << key);
          REQUIRE(got == want);
          compared += k;
        }
  CHECK(compared > 100000);
}

TEST_CASE("shared draws: rows with self loops identical to the original, weights alongside") {
  Rng rng(12345);
  int64_t with_self = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    const int64_t v = int64_t(rng.below(50));
    const int64_t deg = int64_t(rng.below(trial % 10 == 0 ? 400 : 40));
    std::vector<int32_t> row(static_cast<size_t>(deg));
    for (auto& x : row) x = int32_t(rng.below(50));
    if (trial % 3 == 0)
      for (int s = 0; s < 1 + trial % 2; ++s) row.push_back(int32_t(v));  // self loops
    std::sort(row.begin(), row.end());
    with_self += std::count(row.begin(), row.end(), int32_t(v)) > 0;
    std::vector<float> w(row.size());
    for (size_t i = 0; i < w.size(); ++i) w[i] = float(row[i]) + 0.5f;  // weight tracks its id
    const int fanout = std::vector<int>{-1, 1, 3, 5, 40}[size_t(trial % 5)];
    const bool replace = trial % 7 < 3;
    const uint64_t key = sample_key(9, uint64_t(trial), trial % 3, v);
    const auto want = reference_row(row, v, fanout, replace, key);
    const int64_t n = sample_row_count(row.data(), int64_t(row.size()), v, true, fanout, replace);
    REQUIRE(n == int64_t(want.size()));
    std::vector<int64_t> got(static_cast<size_t>(n));
    std::vector<float> got_w(static_cast<size_t>(n));
    sample_row(row.data(), w.data(), int64_t(row.size()), v, true, fanout, replace, key,
               got.data(), got_w.data());
    INFO("trial " << trial << " v " << v << " fanout " << fanout << " replace " << replace);
    REQUIRE(got == want);
    for (size_t i = 0; i < got.size(); ++i) REQUIRE(got_w[i] == float(got[i]) + 0.5f);
  }
  CHECK(with_self > 500);
}
