// The recurrent cells' inline activations (kernels/cpu/fast_math.hpp) against double-precision
// references over their whole range, at the edges (the series / exponential switch of tanh,
// saturation, signed zero) and on NaN and infinities.
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>

#include "dgnn/kernels/cpu/fast_math.hpp"

using namespace dgnn::kernels::cpu;

TEST_CASE("fast exp, sigmoid and tanh are within a few ulp of double precision", "[kernels][rnn]") {
  constexpr double kRel = 4e-7;  // about 7 ulp; measured at most 1.4 (exp) to 3 (tanh, sigmoid)
  double worst_exp = 0, worst_sigmoid = 0, worst_tanh = 0;
  for (double x = -90; x <= 90; x += 3e-4) {
    const float f = float(x);
    const double e = std::exp(double(f));
    if (f <= 0 && f > -87) worst_exp = std::fmax(worst_exp, std::fabs(exp_nonpositive(f) - e) / e);
    if (f > -87) {
      const double s = 1 / (1 + std::exp(-double(f)));
      worst_sigmoid = std::fmax(worst_sigmoid, std::fabs(fast_sigmoid(f) - s) / s);
    }
    const double t = std::tanh(double(f));
    if (t != 0) worst_tanh = std::fmax(worst_tanh, std::fabs(fast_tanh(f) - t) / std::fabs(t));
  }
  CHECK(worst_exp < kRel);
  CHECK(worst_sigmoid < kRel);
  CHECK(worst_tanh < kRel);
  // Near zero and around the switch from the series to the exponential form.
  for (float f : {1e-30f, 1e-6f, 1e-3f, 0.1999f, 0.2f, 0.2001f, 0.5f}) {
    CHECK(fast_tanh(f) == Approx(std::tanh(double(f))).epsilon(kRel));
    CHECK(fast_tanh(-f) == -fast_tanh(f));
  }
  CHECK(std::signbit(fast_tanh(-0.f)));
  CHECK(exp_nonpositive(0.f) == 1.f);
  CHECK(exp_nonpositive(-100.f) == 0.f);
  const float inf = std::numeric_limits<float>::infinity();
  CHECK(fast_sigmoid(inf) == 1.f);
  CHECK(fast_sigmoid(-inf) == 0.f);
  CHECK(fast_sigmoid(-200.f) == 0.f);
  CHECK(fast_tanh(inf) == 1.f);
  CHECK(fast_tanh(-inf) == -1.f);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  CHECK(std::isnan(fast_sigmoid(nan)));
  CHECK(std::isnan(fast_tanh(nan)));
  CHECK(std::isnan(exp_nonpositive(nan)));
}
