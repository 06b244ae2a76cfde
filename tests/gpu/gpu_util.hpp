#pragma once
// Helpers for tests that run a kernel on the CPU and on the GPU and compare.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <vector>

#include "dgnn/common/hash_rng.hpp"
#include "dgnn/kernels/buffer.hpp"
#include "dgnn/kernels/kernels.hpp"

namespace dgnn::gpu_test {

inline std::vector<float> random_floats(int64_t n, uint64_t seed, float lo = -1.f, float hi = 1.f) {
  std::vector<float> v(static_cast<size_t>(n));
  Rng rng(seed);
  for (auto& x : v) x = lo + (hi - lo) * rng.uniform();
  return v;
}

template <typename T>
kernels::Buffer to_gpu(const std::vector<T>& host) {
  return kernels::Buffer::upload(Device::cuda, host);
}

template <typename T>
std::vector<T> to_host(const kernels::Buffer& b, size_t count) {
  std::vector<T> out(count);
  if (count > 0) kernels::copy(Device::cpu, out.data(), Device::cuda, b.as<T>(), count * sizeof(T));
  return out;
}

// Every element within rel * max(1, |expected|) of the expected value.
inline void check_close(const std::vector<float>& got, const std::vector<float>& want,
                        double rel = 1e-5) {
  REQUIRE(got.size() == want.size());
  size_t bad = 0, first = got.size();
  for (size_t i = 0; i < got.size(); ++i) {
    const double tol = rel * std::max(1.0, std::fabs(double(want[i])));
    if (!(std::fabs(double(got[i]) - double(want[i])) <= tol)) {
      if (bad++ == 0) first = i;
    }
  }
  INFO("first mismatch at " << first << ": got " << (first < got.size() ? got[first] : 0.f)
                            << " want " << (first < want.size() ? want[first] : 0.f));
  CHECK(bad == 0);
}

}  // namespace dgnn::gpu_test
