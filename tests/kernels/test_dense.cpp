// gemm in every transpose combination against naive loops, and the element-wise kernels.
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <vector>

#include "dgnn/common/error.hpp"
#include "dgnn/common/hash_rng.hpp"
#include "dgnn/kernels/kernels.hpp"

using namespace dgnn;

namespace {

// A row-major matrix stored with ld = cols + 3, so every test also exercises strides.
struct Mat {
  int64_t rows, cols, ld;
  std::vector<float> data;
  Mat(int64_t r, int64_t c, uint64_t seed) : rows(r), cols(c), ld(c + 3), data(size_t(r * ld)) {
    Rng rng(seed);
    for (float& v : data) v = rng.uniform() * 2 - 1;
  }
  float at(int64_t r, int64_t c) const { return data[size_t(r * ld + c)]; }
  MatView view() { return {data.data(), rows, cols, ld}; }
  ConstMatView cview() const { return {data.data(), rows, cols, ld}; }
};

}  // namespace

TEST_CASE("gemm matches naive loops for all transpose combinations", "[kernels][gemm]") {
  const int64_t m = 5, n = 7, k = 4;
  const float alpha = 1.5f, beta = -0.5f;
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      DYNAMIC_SECTION("trans_a=" << ta << " trans_b=" << tb) {
        const Mat a = ta ? Mat(k, m, 1) : Mat(m, k, 1);
        const Mat b = tb ? Mat(n, k, 2) : Mat(k, n, 2);
        Mat c(m, n, 3);
        const Mat c0 = c;
        kernels::gemm(Device::cpu, ta, tb, alpha, a.cview(), b.cview(), beta, c.view());
        for (int64_t i = 0; i < m; ++i) {
          for (int64_t j = 0; j < n; ++j) {
            double s = 0;
            for (int64_t p = 0; p < k; ++p)
              s += double(ta ? a.at(p, i) : a.at(i, p)) * (tb ? b.at(j, p) : b.at(p, j));
            REQUIRE(c.at(i, j) == Approx(alpha * s + beta * c0.at(i, j)).margin(1e-5));
          }
          for (int64_t j = n; j < c.ld; ++j) REQUIRE(c.at(i, j) == c0.at(i, j));  // padding
        }
      }
    }
  }
}

TEST_CASE("gemm with zero sizes", "[kernels][gemm]") {
  // k = 0: the product is empty, so C = beta * C; beta = 0 clears even NaN.
  Mat a(3, 0, 1), b(0, 2, 2), c(3, 2, 3);
  const Mat c0 = c;
  kernels::gemm(Device::cpu, false, false, 1.f, a.cview(), b.cview(), 2.f, c.view());
  for (int64_t i = 0; i < 3; ++i)
    for (int64_t j = 0; j < 2; ++j) CHECK(c.at(i, j) == 2.f * c0.at(i, j));
  c.data[0] = NAN;
  kernels::gemm(Device::cpu, false, false, 1.f, a.cview(), b.cview(), 0.f, c.view());
  CHECK(c.at(0, 0) == 0.f);
  // m = 0: nothing to do, nothing touched.
  Mat a2(0, 4, 1), b2(4, 2, 2), c2(0, 2, 3);
  CHECK_NOTHROW(
      kernels::gemm(Device::cpu, false, false, 1.f, a2.cview(), b2.cview(), 0.f, c2.view()));
}

TEST_CASE("gemm rejects mismatched inner sizes", "[kernels][gemm]") {
  Mat a(3, 4, 1), b(5, 2, 2), c(3, 2, 3);
  CHECK_THROWS_AS(
      kernels::gemm(Device::cpu, false, false, 1.f, a.cview(), b.cview(), 0.f, c.view()),
      ShapeError);
  Mat b2(4, 2, 2), c2(3, 3, 3);
  CHECK_THROWS_AS(
      kernels::gemm(Device::cpu, false, false, 1.f, a.cview(), b2.cview(), 0.f, c2.view()),
      ShapeError);
}

TEST_CASE("unary ops and their derivatives", "[kernels][elementwise]") {
  const std::vector<float> x = {-2.f, -0.5f, 0.5f, 3.f};
  std::vector<float> y(4), dx(4, 0.f);
  const std::vector<float> dy = {1.f, 2.f, 3.f, 4.f};
  using kernels::Unary;

  kernels::unary(Device::cpu, Unary::relu, x.data(), y.data(), 4);
  CHECK(y == std::vector<float>{0, 0, 0.5f, 3});
  kernels::unary_backward(Device::cpu, Unary::relu, x.data(), y.data(), dy.data(), dx.data(), 4);
  CHECK(dx == std::vector<float>{0, 0, 3, 4});
  // A NaN passes through ReLU (as in PyTorch): a diverging layer is not masked as 0.
  const float nan = std::numeric_limits<float>::quiet_NaN();
  float yn = 0.f;
  kernels::unary(Device::cpu, Unary::relu, &nan, &yn, 1);
  CHECK(std::isnan(yn));

  kernels::unary(Device::cpu, Unary::leaky_relu, x.data(), y.data(), 4, 0.1f);
  CHECK(y[0] == Approx(-0.2f));
  CHECK(y[3] == 3.f);
  kernels::unary_backward(Device::cpu, Unary::leaky_relu, x.data(), y.data(), dy.data(), dx.data(),
                          4, 0.1f, false);
  CHECK(dx[0] == Approx(0.1f));
  CHECK(dx[1] == Approx(0.2f));
  CHECK(dx[3] == 4.f);

  kernels::unary(Device::cpu, Unary::sigmoid, x.data(), y.data(), 4);
  for (int i = 0; i < 4; ++i) CHECK(y[i] == Approx(1.0 / (1.0 + std::exp(-x[i]))));
  kernels::unary_backward(Device::cpu, Unary::sigmoid, x.data(), y.data(), dy.data(), dx.data(), 4,
                          0.f, false);
  for (int i = 0; i < 4; ++i) CHECK(dx[i] == Approx(dy[i] * y[i] * (1 - y[i])));

  kernels::unary(Device::cpu, Unary::tanh, x.data(), y.data(), 4);
  for (int i = 0; i < 4; ++i) CHECK(y[i] == Approx(std::tanh(x[i])));
  kernels::unary_backward(Device::cpu, Unary::tanh, x.data(), y.data(), dy.data(), dx.data(), 4,
                          0.f, false);
  for (int i = 0; i < 4; ++i) CHECK(dx[i] == Approx(dy[i] * (1 - y[i] * y[i])));

  kernels::unary(Device::cpu, Unary::exp, x.data(), y.data(), 4);
  for (int i = 0; i < 4; ++i) CHECK(y[i] == Approx(std::exp(x[i])));
  kernels::unary(Device::cpu, Unary::neg, x.data(), y.data(), 4);
  CHECK(y == std::vector<float>{2, 0.5f, -0.5f, -3});

  // Extreme inputs stay finite.
  const std::vector<float> big = {-1000.f, 1000.f};
  kernels::unary(Device::cpu, Unary::sigmoid, big.data(), y.data(), 2);
  CHECK(y[0] == 0.f);
  CHECK(y[1] == 1.f);
}

TEST_CASE("axpby, mul, add_row_vector", "[kernels][elementwise]") {
  std::vector<float> x = {1, 2, 3}, y = {10, 20, 30};
  kernels::axpby(Device::cpu, 3, 2.f, x.data(), 0.5f, y.data());
  CHECK(y == std::vector<float>{7, 14, 21});
  std::vector<float> nan = {NAN, NAN, NAN};
  kernels::axpby(Device::cpu, 3, 1.f, x.data(), 0.f, nan.data());  // b = 0 overwrites NaN
  CHECK(nan == x);

  std::vector<float> z(3, 1.f);
  kernels::mul(Device::cpu, 3, x.data(), y.data(), z.data());
  CHECK(z == std::vector<float>{7, 28, 63});
  kernels::mul(Device::cpu, 3, x.data(), x.data(), z.data(), true);
  CHECK(z == std::vector<float>{8, 32, 72});

  std::vector<float> m = {1, 2, 9, 3, 4, 9};  // 2 x 2 with ld 3
  const std::vector<float> bias = {10, 100};
  kernels::add_row_vector(Device::cpu, {m.data(), 2, 2, 3}, bias.data());
  CHECK(m == std::vector<float>{11, 102, 9, 13, 104, 9});
}

TEST_CASE("column_sum and sum are exact on known data and independent of threads",
          "[kernels][elementwise]") {
  const std::vector<float> m = {1, 2, 3, 4, 5, 6};  // 3 x 2
  std::vector<float> out = {100, 100};
  kernels::column_sum(Device::cpu, ConstMatView(m.data(), 3, 2, 2), out.data(), false);
  CHECK(out == std::vector<float>{9, 12});
  kernels::column_sum(Device::cpu, ConstMatView(m.data(), 3, 2, 2), out.data(), true);
  CHECK(out == std::vector<float>{18, 24});
  CHECK(kernels::sum(Device::cpu, m.data(), 6) == 21.0);
  CHECK(kernels::sum(Device::cpu, m.data(), 0) == 0.0);

  // Large: 0.1 summed a million times in double is far closer than a float loop would be.
  const int64_t n = 1 << 20;
  std::vector<float> big(size_t(n), 0.1f);
  CHECK(kernels::sum(Device::cpu, big.data(), n) == Approx(double(0.1f) * n).epsilon(1e-12));
  std::vector<float> cols(4);
  kernels::column_sum(Device::cpu, ConstMatView(big.data(), n / 4, 4, 4), cols.data(), false);
  for (float c : cols) CHECK(c == Approx(double(0.1f) * n / 4).epsilon(1e-6));
}
