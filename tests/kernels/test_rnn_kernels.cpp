// Fused LSTM / GRU cell kernels on hand-computed rows (gate pre-activations chosen so that the
// activations are exact: sigmoid(ln 3) = 3/4, tanh(atanh(1/2)) = 1/2), strided views, optional
// operands, accumulation, saturation, and the threaded path against row-by-row calls.
#include <catch2/catch.hpp>
#include <cmath>
#include <vector>

#include "dgnn/common/error.hpp"
#include "dgnn/common/hash_rng.hpp"
#include "dgnn/kernels/kernels.hpp"

using namespace dgnn;

namespace {

const float kLn3 = std::log(3.f);

ConstMatView cv(const std::vector<float>& v, int64_t rows, int64_t cols, int64_t ld) {
  return {v.data(), rows, cols, ld};
}
MatView mv(std::vector<float>& v, int64_t rows, int64_t cols, int64_t ld) {
  return {v.data(), rows, cols, ld};
}

}  // namespace

TEST_CASE("lstm_cell_forward on hand-computed rows", "[kernels][rnn]") {
  // H = 1. Row 0: i = 3/4, f = 1/2, g = 1/2, o = 1/4, c_prev = 1 -> c = 1/2 + 3/8 = 7/8.
  // Row 1: saturated gates (i, g, o -> 1, f -> 0): c = tanh(100) = 1 whatever c_prev, h = tanh 1.
  const std::vector<float> gates = {kLn3, 0.f, std::atanh(0.5f), -kLn3, 100, -100, 100, 1000};
  const std::vector<float> c_prev = {1.f, 5.f};
  // h and c are the two columns of one 2 x 2 buffer ([h | c], as the autograd op lays them out).
  std::vector<float> hc(4, -9.f);
  kernels::lstm_cell_forward(Device::cpu, cv(gates, 2, 4, 4), cv(c_prev, 2, 1, 1), mv(hc, 2, 1, 2),
                             {hc.data() + 1, 2, 1, 2});
  CHECK(hc[1] == Approx(0.875));
  CHECK(hc[0] == Approx(0.25 * std::tanh(0.875)));
  CHECK(hc[3] == Approx(1.0));
  CHECK(hc[2] == Approx(std::tanh(1.0)));
}

TEST_CASE("lstm_cell_backward on a hand-computed row", "[kernels][rnn]") {
  const std::vector<float> gates = {kLn3, 0.f, std::atanh(0.5f), -kLn3};
  const std::vector<float> c_prev = {1.f}, dh = {1.f}, dc = {2.f};
  const double t = std::tanh(0.875);
  // The gradient reaching c: directly (dc) and through h = o tanh(c).
  const double gc = 2.0 + 0.25 * (1 - t * t);
  std::vector<float> dgates(4, 1.f), dc_prev = {1.f};
  kernels::lstm_cell_backward(Device::cpu, cv(gates, 1, 4, 4), cv(c_prev, 1, 1, 1), cv(dh, 1, 1, 1),
                              cv(dc, 1, 1, 1), mv(dgates, 1, 4, 4), mv(dc_prev, 1, 1, 1),
                              true);                       // onto the 1s already there
  CHECK(dgates[0] == Approx(1 + gc * 0.5 * 0.75 * 0.25));  // d i: g * i(1-i)
  CHECK(dgates[1] == Approx(1 + gc * 1.0 * 0.5 * 0.5));    // d f: c_prev * f(1-f)
  CHECK(dgates[2] == Approx(1 + gc * 0.75 * 0.75));        // d g: i * (1 - g^2)
  CHECK(dgates[3] == Approx(1 + t * 0.25 * 0.75));         // d o: tanh(c) * o(1-o)
  CHECK(dc_prev[0] == Approx(1 + gc * 0.5));               // f

  // Without dc (null data counts as zero), overwriting, and with dgates not wanted.
  std::vector<float> dcp = {-7.f};
  kernels::lstm_cell_backward(Device::cpu, cv(gates, 1, 4, 4), cv(c_prev, 1, 1, 1), cv(dh, 1, 1, 1),
                              ConstMatView{}, MatView{}, mv(dcp, 1, 1, 1), false);
  CHECK(dcp[0] == Approx(0.25 * (1 - t * t) * 0.5));
}

TEST_CASE("gru_cell_forward and backward on a hand-computed row", "[kernels][rnn]") {
  // r = sigmoid(0.3 - 0.3) = 1/2, z = sigmoid((ln 3 - 1) + 1) = 3/4,
  // n = tanh(0.2 + r * 0.6) = tanh(1/2), h = (1/4) n + (3/4) * 2.
  const std::vector<float> xg = {0.3f, kLn3 - 1.f, 0.2f}, hg = {-0.3f, 1.f, 0.6f};
  const std::vector<float> h_prev = {2.f};
  std::vector<float> h = {-9.f};
  kernels::gru_cell_forward(Device::cpu, cv(xg, 1, 3, 3), cv(hg, 1, 3, 3), cv(h_prev, 1, 1, 1),
                            mv(h, 1, 1, 1));
  const double n = std::tanh(0.5);
  CHECK(h[0] == Approx(0.25 * n + 1.5));

  const std::vector<float> dh = {1.f};
  std::vector<float> dxg(3, 0.f), dhg(3, 0.f), dhp = {0.f};
  kernels::gru_cell_backward(Device::cpu, cv(xg, 1, 3, 3), cv(hg, 1, 3, 3), cv(h_prev, 1, 1, 1),
                             cv(dh, 1, 1, 1), mv(dxg, 1, 3, 3), mv(dhg, 1, 3, 3), mv(dhp, 1, 1, 1),
                             false);
  const double dn = 0.25 * (1 - n * n);       // through n's pre-activation
  const double dz = (2.0 - n) * 0.75 * 0.25;  // (h_prev - n) * z(1-z)
  const double dr = dn * 0.6 * 0.25;          // hn * r(1-r)
  CHECK(dxg[0] == Approx(dr));
  CHECK(dhg[0] == Approx(dr));
  CHECK(dxg[1] == Approx(dz));
  CHECK(dhg[1] == Approx(dz));
  CHECK(dxg[2] == Approx(dn));
  CHECK(dhg[2] == Approx(dn * 0.5));  // hn is scaled by r
  CHECK(dhp[0] == Approx(0.75));      // z
}

TEST_CASE("recurrent kernels keep strides and stay finite when saturated", "[kernels][rnn]") {
  // H = 2, N = 2 inside wider buffers whose padding must survive.
  // Row 0, column 0: i = 1, f = 0, g = 1, o = 1 exactly (sigmoid and tanh saturate in float).
  const std::vector<float> gates = {500,  -500, -500, 500, 500, -500, 500,  -500, 0, 0,
                                    -500, 500,  -500, 500, 500, -500, -500, 500,  0, 0};
  const std::vector<float> c_prev = {1e30f, -3, 0, 2, 0, 0};  // ld 3
  std::vector<float> h(6, 42.f), c(6, 42.f), dg(20, 42.f), dcp(6, 42.f);
  kernels::lstm_cell_forward(Device::cpu, cv(gates, 2, 8, 10), cv(c_prev, 2, 2, 3), mv(h, 2, 2, 3),
                             mv(c, 2, 2, 3));
  for (int r = 0; r < 2; ++r) {
    CHECK(c[r * 3 + 2] == 42.f);
    CHECK(h[r * 3 + 2] == 42.f);
    for (int j = 0; j < 2; ++j) CHECK(std::isfinite(h[r * 3 + j]));
  }
  CHECK(c[0] == Approx(1.0));  // f = 0 drops even a huge c_prev; i * g = 1
  kernels::lstm_cell_backward(Device::cpu, cv(gates, 2, 8, 10), cv(c_prev, 2, 2, 3), cv(h, 2, 2, 3),
                              cv(c, 2, 2, 3), mv(dg, 2, 8, 10), mv(dcp, 2, 2, 3), false);
  for (int r = 0; r < 2; ++r) {
    for (int j = 0; j < 8; ++j) CHECK(std::isfinite(dg[r * 10 + j]));
    CHECK(dg[r * 10 + 8] == 42.f);
  }
}

TEST_CASE("recurrent kernels: threaded rows equal row-by-row calls", "[kernels][rnn]") {
  // Large enough for the OpenMP path; each row computed alone must give the same bits.
  const int64_t n = 4096, hid = 8;
  Rng rng(9);
  auto random = [&](size_t size) {
    std::vector<float> v(size);
    for (float& x : v) x = rng.uniform() * 6 - 3;
    return v;
  };
  const std::vector<float> xg = random(size_t(n * 3 * hid)), hg = random(size_t(n * 3 * hid));
  const std::vector<float> hp = random(size_t(n * hid)), dh = random(size_t(n * hid));
  std::vector<float> h(size_t(n * hid)), dxg(size_t(n * 3 * hid)), dhg(dxg), dhp(h);
  kernels::gru_cell_forward(Device::cpu, cv(xg, n, 3 * hid, 3 * hid), cv(hg, n, 3 * hid, 3 * hid),
                            cv(hp, n, hid, hid), mv(h, n, hid, hid));
  kernels::gru_cell_backward(Device::cpu, cv(xg, n, 3 * hid, 3 * hid), cv(hg, n, 3 * hid, 3 * hid),
                             cv(hp, n, hid, hid), cv(dh, n, hid, hid), mv(dxg, n, 3 * hid, 3 * hid),
                             mv(dhg, n, 3 * hid, 3 * hid), mv(dhp, n, hid, hid), false);
  std::vector<float> h1(static_cast<size_t>(hid)), dx1(static_cast<size_t>(3 * hid)), ds1(dx1),
      dp1(h1);
  for (int64_t r = 0; r < n; r += 97) {
    auto row3 = [&](const std::vector<float>& v) {
      return ConstMatView(v.data() + r * 3 * hid, 1, 3 * hid, 3 * hid);
    };
    auto row1 = [&](const std::vector<float>& v) {
      return ConstMatView(v.data() + r * hid, 1, hid, hid);
    };
    kernels::gru_cell_forward(Device::cpu, row3(xg), row3(hg), row1(hp), mv(h1, 1, hid, hid));
    kernels::gru_cell_backward(Device::cpu, row3(xg), row3(hg), row1(hp), row1(dh),
                               mv(dx1, 1, 3 * hid, 3 * hid), mv(ds1, 1, 3 * hid, 3 * hid),
                               mv(dp1, 1, hid, hid), false);
    for (int64_t j = 0; j < hid; ++j) {
      REQUIRE(h1[j] == h[r * hid + j]);
      REQUIRE(dp1[j] == dhp[r * hid + j]);
    }
    for (int64_t j = 0; j < 3 * hid; ++j) {
      REQUIRE(dx1[j] == dxg[r * 3 * hid + j]);
      REQUIRE(ds1[j] == dhg[r * 3 * hid + j]);
    }
  }
}

TEST_CASE("recurrent kernels reject mismatched shapes", "[kernels][rnn]") {
  std::vector<float> buf(64);
  const ConstMatView g(buf.data(), 2, 8, 8), c2(buf.data(), 2, 2, 2), c3(buf.data(), 2, 3, 3);
  MatView out{buf.data(), 2, 2, 2};
  CHECK_THROWS_AS(kernels::lstm_cell_forward(Device::cpu, g, c3, out, out), ShapeError);
  CHECK_THROWS_AS(kernels::lstm_cell_forward(Device::cpu, g, c2, {buf.data(), 1, 2, 2}, out),
                  ShapeError);
  CHECK_THROWS_AS(kernels::lstm_cell_backward(Device::cpu, g, c2, c2, c2, {buf.data(), 2, 4, 4},
                                              MatView{}, false),
                  ShapeError);
  const ConstMatView x(buf.data(), 2, 6, 6);
  CHECK_THROWS_AS(kernels::gru_cell_forward(Device::cpu, x, g, c2, out), ShapeError);
  CHECK_THROWS_AS(kernels::gru_cell_backward(Device::cpu, x, x, c2, ConstMatView{}, MatView{},
                                             MatView{}, out, false),
                  ShapeError);  // dh is not optional for the GRU: it has one output
}
