#pragma once
// Helpers for tests that run a kernel on the CPU and on the GPU and compare: device buffers
// uploaded from and downloaded to std::vector, strided host matrices, and comparisons that
// report the first mismatch instead of one CHECK per element.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "dgnn/common/hash_rng.hpp"
#include "dgnn/kernels/kernels.hpp"

namespace dgnn::test {

// A device copy of a host vector, freed at scope end.
template <typename T>
class DeviceBuf {
 public:
  explicit DeviceBuf(const std::vector<T>& host) : n_(host.size()) {
    p_ = static_cast<T*>(kernels::alloc(Device::cuda, bytes()));
    kernels::copy(Device::cuda, p_, Device::cpu, host.data(), bytes());
  }
  ~DeviceBuf() { kernels::free(Device::cuda, p_); }
  DeviceBuf(const DeviceBuf&) = delete;
  DeviceBuf& operator=(const DeviceBuf&) = delete;

  T* data() const { return p_; }
  size_t size() const { return n_; }
  size_t bytes() const { return n_ * sizeof(T); }
  // Overwrites the device copy with `host` (same size).
  void upload(const std::vector<T>& host) {
    REQUIRE(host.size() == n_);
    kernels::copy(Device::cuda, p_, Device::cpu, host.data(), bytes());
  }
  std::vector<T> download() const {
    std::vector<T> host(n_);
    kernels::copy(Device::cpu, host.data(), Device::cuda, p_, bytes());
    return host;
  }

 private:
  size_t n_ = 0;
  T* p_ = nullptr;
};

// A rows x cols matrix inside a buffer of rows x ld floats; the padding holds a sentinel, so a
// kernel that writes outside its view shows up in a whole-buffer comparison.
struct HostMat {
  int64_t rows = 0, cols = 0, ld = 0;
  std::vector<float> v;

  HostMat(int64_t r, int64_t c, int64_t l, float pad = -777.f)
      : rows(r), cols(c), ld(l), v(size_t(r * l), pad) {}
  float& at(int64_t r, int64_t c) { return v[size_t(r * ld + c)]; }
  // Fills the view (not the padding) with uniforms in [lo, hi).
  HostMat& uniform(Rng& rng, float lo, float hi) {
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c) at(r, c) = lo + (hi - lo) * rng.uniform();
    return *this;
  }
  // Fills the view with normals times `scale`.
  HostMat& normal(Rng& rng, float scale) {
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c) at(r, c) = scale * rng.normal();
    return *this;
  }
  MatView view() { return {v.data(), rows, cols, ld}; }
  ConstMatView cview() const { return {v.data(), rows, cols, ld}; }
  // The same geometry over a device buffer holding a copy of v.
  MatView view(const DeviceBuf<float>& d) const { return {d.data(), rows, cols, ld}; }
  ConstMatView cview(const DeviceBuf<float>& d) const { return {d.data(), rows, cols, ld}; }
};

inline std::vector<float> uniform_vector(Rng& rng, size_t n, float lo, float hi) {
  std::vector<float> v(n);
  for (float& x : v) x = lo + (hi - lo) * rng.uniform();
  return v;
}

// got ~ want element-wise: |got - want| <= rel * max(|got|, |want|) + abs; equal values
// (infinities included) and NaN against NaN pass.
inline void check_close(const std::vector<float>& got, const std::vector<float>& want, double rel,
                        double abs, const std::string& what) {
  REQUIRE(got.size() == want.size());
  size_t bad = 0, first = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const double a = got[i], b = want[i];
    const bool ok = (std::isnan(a) && std::isnan(b)) || a == b ||
                    std::fabs(a - b) <= rel * std::fmax(std::fabs(a), std::fabs(b)) + abs;
    if (!ok && bad++ == 0) first = i;
  }
  INFO(what << ": " << bad << " of " << got.size() << " elements differ; first at " << first
            << ": gpu " << (bad ? got[first] : 0.f) << ", cpu " << (bad ? want[first] : 0.f));
  CHECK(bad == 0);
}

// Bit-for-bit equality (NaN payloads and signed zeros included).
template <typename T>
void check_bits(const std::vector<T>& got, const std::vector<T>& want, const std::string& what) {
  REQUIRE(got.size() == want.size());
  size_t bad = 0, first = 0;
  for (size_t i = 0; i < got.size(); ++i)
    if (std::memcmp(&got[i], &want[i], sizeof(T)) != 0 && bad++ == 0) first = i;
  INFO(what << ": " << bad << " of " << got.size() << " elements differ bitwise; first at "
            << first << ": gpu " << (bad ? double(got[first]) : 0.0) << ", cpu "
            << (bad ? double(want[first]) : 0.0));
  CHECK(bad == 0);
}

}  // namespace dgnn::test
