// Softmax cross-entropy and accuracy against hand computations.
#include <catch2/catch.hpp>
#include <cmath>
#include <vector>

#include "dgnn/common/error.hpp"
#include "dgnn/kernels/kernels.hpp"

using namespace dgnn;

TEST_CASE("softmax_xent matches a hand computation", "[kernels][loss]") {
  // 3 x 3 logits; rows 0 and 2 are labelled (2 and 0), row 1 is not and must stay untouched.
  const std::vector<float> logits = {1, 2, 3, 9, 9, 9, 0, 0, std::log(2.f)};
  const std::vector<int32_t> rows = {0, 2}, labels = {2, 0};
  std::vector<float> d(9, -5.f);
  const double loss =
      kernels::softmax_xent(Device::cpu, ConstMatView(logits.data(), 3, 3, 3), rows.data(),
                            labels.data(), 2, 0.5f, {d.data(), 3, 3, 3});
  // Row 0: log(e + e^2 + e^3) - 3. Row 2: softmax (1/4, 1/4, 1/2), label 0: log 4.
  const double e = std::exp(1.0);
  const double l0 = std::log(e + e * e + e * e * e) - 3.0;
  CHECK(loss == Approx(l0 + std::log(4.0)));
  const double z = e + e * e + e * e * e;
  CHECK(d[0] == Approx(0.5 * e / z));
  CHECK(d[1] == Approx(0.5 * e * e / z));
  CHECK(d[2] == Approx(0.5 * (e * e * e / z - 1)));
  CHECK(d[3] == -5.f);
  CHECK(d[6] == Approx(0.5 * (0.25 - 1)));
  CHECK(d[7] == Approx(0.5 * 0.25));
  CHECK(d[8] == Approx(0.5 * 0.5));

  // Without a gradient buffer only the loss comes back.
  CHECK(kernels::softmax_xent(Device::cpu, ConstMatView(logits.data(), 3, 3, 3), rows.data(),
                              labels.data(), 2, 1.f, MatView{}) == Approx(loss));
}

TEST_CASE("softmax_xent is stable for huge logits", "[kernels][loss]") {
  const std::vector<float> logits = {1000, 0, 0, 1000};
  const std::vector<int32_t> rows = {0, 1}, labels = {0, 0};
  std::vector<float> d(4);
  const double loss =
      kernels::softmax_xent(Device::cpu, ConstMatView(logits.data(), 2, 2, 2), rows.data(),
                            labels.data(), 2, 1.f, {d.data(), 2, 2, 2});
  CHECK(loss == Approx(1000.0));  // row 0 costs ~0, row 1 costs 1000
  for (float v : d) CHECK(std::isfinite(v));
  CHECK(d[2] == Approx(-1.f));
  CHECK(d[3] == Approx(1.f));
}

TEST_CASE("count_correct takes the first maximum on ties", "[kernels][loss]") {
  const std::vector<float> logits = {0, 5, 1, 2, 2, 0, 3, 1, 3};
  const std::vector<int32_t> rows = {0, 1, 2}, labels = {1, 1, 0};
  CHECK(kernels::count_correct(Device::cpu, ConstMatView(logits.data(), 3, 3, 3), rows.data(),
                               labels.data(), 3) == 2);  // row 1 ties at 0 and 1 -> 0: wrong
  const std::vector<int32_t> one = {1}, label0 = {0};
  CHECK(kernels::count_correct(Device::cpu, ConstMatView(logits.data(), 3, 3, 3), one.data(),
                               label0.data(), 1) == 1);
}
