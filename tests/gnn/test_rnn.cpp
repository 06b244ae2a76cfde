// The fused recurrent cells: equal to the same cell written with elementary ops (values and
// gradients), and back-propagation through an unrolled sequence (BPTT) against finite
// differences of the whole sequence's loss.
#include <catch2/catch.hpp>
#include <cmath>
#include <functional>
#include <vector>

#include "dgnn/common/error.hpp"
#include "dgnn/common/hash_rng.hpp"
#include "dgnn/gnn/core/ops.hpp"
#include "dgnn/gnn/core/rnn.hpp"

using namespace dgnn;

namespace {

Tensor random_tensor(int64_t rows, int64_t cols, Rng& rng, float range) {
  Tensor t(rows, cols);
  for (int64_t i = 0; i < t.numel(); ++i) t.data()[i] = (2 * rng.uniform() - 1) * range;
  return t;
}

// The textbook cells from elementary ops: an independent reference for the fused kernels.
LstmOut lstm_composed(const Var& gates, const Var& c_prev) {
  const int64_t h = c_prev.cols();
  const Var i = sigmoid(slice_cols(gates, 0, h)), f = sigmoid(slice_cols(gates, h, 2 * h));
  const Var g = tanh(slice_cols(gates, 2 * h, 3 * h)), o = sigmoid(slice_cols(gates, 3 * h, 4 * h));
  const Var c = add(mul(f, c_prev), mul(i, g));
  return {mul(o, tanh(c)), c};
}

Var gru_composed(const Var& xg, const Var& hg, const Var& h_prev) {
  const int64_t h = h_prev.cols();
  auto part = [h](const Var& v, int k) { return slice_cols(v, k * h, (k + 1) * h); };
  const Var r = sigmoid(add(part(xg, 0), part(hg, 0)));
  const Var z = sigmoid(add(part(xg, 1), part(hg, 1)));
  const Var n = tanh(add(part(xg, 2), mul(r, part(hg, 2))));
  return add(mul(one_minus(z), n), mul(z, h_prev));
}

// sum(y * r) over a fixed random r: a scalar that weighs every output element differently.
Var project(const Var& y, const Tensor& r) { return sum(mul(y, Var(r.clone()))); }

void check_close(const Tensor& a, const Tensor& b, double tol) {
  REQUIRE(a.rows() == b.rows());
  REQUIRE(a.cols() == b.cols());
  for (int64_t i = 0; i < a.numel(); ++i) {
    INFO("element " << i);
    CHECK(a.data()[i] == Approx(b.data()[i]).margin(tol));
  }
}

// Checks the gradient of loss(params) w.r.t. every parameter against central differences.
void check_fd(std::vector<Var>& params, const std::function<Var()>& loss) {
  constexpr double kEps = 1e-3, kAbs = 2e-3, kRel = 1e-2;
  for (Var& p : params) p.zero_grad();
  Var l = loss();
  l.backward();
  for (size_t k = 0; k < params.size(); ++k) {
    const Tensor grad = params[k].grad().clone();
    REQUIRE(grad.numel() == params[k].value().numel());
    float* x = params[k].value().data();
    for (int64_t j = 0; j < grad.numel(); ++j) {
      const float orig = x[j];
      const float hi = float(orig + kEps), lo = float(orig - kEps);
      NoGradGuard no_grad;
      x[j] = hi;
      const double f_hi = loss().value().at(0, 0);
      x[j] = lo;
      const double f_lo = loss().value().at(0, 0);
      x[j] = orig;
      const double numeric = (f_hi - f_lo) / (double(hi) - double(lo));
      INFO("parameter " << k << " element " << j << ": analytic " << grad.data()[j] << ", numeric "
                        << numeric);
      CHECK(std::fabs(grad.data()[j] - numeric) <= kAbs + kRel * std::fabs(numeric));
    }
  }
}

}  // namespace

TEST_CASE("lstm_cell equals the cell written with elementary ops", "[gnn][rnn]") {
  Rng rng(11);
  const int64_t n = 7, h = 5;
  const Tensor rh = random_tensor(n, h, rng, 1.f), rc = random_tensor(n, h, rng, 1.f);
  Var gates(random_tensor(n, 4 * h, rng, 3.f), true), c_prev(random_tensor(n, h, rng, 2.f), true);
  Var gates2(gates.value().clone(), true), c_prev2(c_prev.value().clone(), true);

  const LstmOut fused = lstm_cell(gates, c_prev);
  const LstmOut ref = lstm_composed(gates2, c_prev2);
  check_close(fused.h.value(), ref.h.value(), 1e-6);
  check_close(fused.c.value(), ref.c.value(), 1e-6);

  add(project(fused.h, rh), project(fused.c, rc)).backward();
  add(project(ref.h, rh), project(ref.c, rc)).backward();
  check_close(gates.grad(), gates2.grad(), 1e-5);
  check_close(c_prev.grad(), c_prev2.grad(), 1e-5);
}

TEST_CASE("lstm_cell skips inputs that need no gradient", "[gnn][rnn]") {
  Rng rng(12);
  Var gates(random_tensor(3, 8, rng, 2.f), true), c_prev(random_tensor(3, 2, rng, 1.f));
  const LstmOut o = lstm_cell(gates, c_prev);
  sum(o.c).backward();
  CHECK(gates.grad().numel() == 24);
  CHECK(c_prev.grad().numel() == 0);  // a constant: no buffer was made for it

  NoGradGuard no_grad;  // evaluation records nothing but computes the same numbers
  const LstmOut e = lstm_cell(gates, c_prev);
  CHECK_FALSE(e.h.requires_grad());
  check_close(e.c.value(), o.c.value(), 0);
}

TEST_CASE("gru_cell equals the cell written with elementary ops", "[gnn][rnn]") {
  Rng rng(13);
  const int64_t n = 6, h = 4;
  const Tensor r = random_tensor(n, h, rng, 1.f);
  Var xg(random_tensor(n, 3 * h, rng, 3.f), true), hg(random_tensor(n, 3 * h, rng, 3.f), true);
  Var hp(random_tensor(n, h, rng, 1.f), true);
  Var xg2(xg.value().clone(), true), hg2(hg.value().clone(), true), hp2(hp.value().clone(), true);

  const Var fused = gru_cell(xg, hg, hp), ref = gru_composed(xg2, hg2, hp2);
  check_close(fused.value(), ref.value(), 1e-6);
  project(fused, r).backward();
  project(ref, r).backward();
  check_close(xg.grad(), xg2.grad(), 1e-5);
  check_close(hg.grad(), hg2.grad(), 1e-5);
  check_close(hp.grad(), hp2.grad(), 1e-5);
}

TEST_CASE("recurrent cells reject mismatched shapes", "[gnn][rnn]") {
  const Var g(Tensor(3, 8)), c(Tensor(3, 3)), c_rows(Tensor(2, 2));
  CHECK_THROWS_AS(lstm_cell(g, c), ShapeError);       // 8 != 4 * 3
  CHECK_THROWS_AS(lstm_cell(g, c_rows), ShapeError);  // rows differ
  CHECK_THROWS_AS(lstm_cell(g, Var()), Error);
  const Var x(Tensor(3, 6)), h(Tensor(3, 2));
  CHECK_THROWS_AS(gru_cell(x, Var(Tensor(3, 9)), h), ShapeError);
  CHECK_THROWS_AS(gru_cell(x, x, Var(Tensor(3, 3))), ShapeError);
  CHECK_NOTHROW(gru_cell(x, x, h));
}

TEST_CASE("LSTM unrolled over 5 steps back-propagates through time", "[gnn][rnn][bptt]") {
  // gates_t = x_t Wx + h_{t-1} Wh + b; the loss reads every h_t and the last c, so gradients
  // reach the weights along every path through the recurrence.
  constexpr int kSteps = 5;
  const int64_t n = 3, f = 2, h = 3;
  Rng rng(21);
  std::vector<Tensor> xs, rs;
  for (int t = 0; t < kSteps; ++t) {
    xs.push_back(random_tensor(n, f, rng, 1.f));
    rs.push_back(random_tensor(n, h, rng, 1.f));
  }
  const Tensor rc = random_tensor(n, h, rng, 1.f);
  std::vector<Var> params = {
      Var(random_tensor(f, 4 * h, rng, 0.8f), true),  // Wx
      Var(random_tensor(h, 4 * h, rng, 0.8f), true),  // Wh
      Var(random_tensor(1, 4 * h, rng, 0.5f), true),  // b
      Var(random_tensor(n, h, rng, 0.5f), true),      // h0
      Var(random_tensor(n, h, rng, 0.5f), true),      // c0
  };
  auto loss = [&]() {
    Var hs = params[3], cs = params[4], total;
    for (int t = 0; t < kSteps; ++t) {
      const Var gates =
          add_bias(add(matmul(Var(xs[t].clone()), params[0]), matmul(hs, params[1])), params[2]);
      const LstmOut o = lstm_cell(gates, cs);
      hs = o.h;
      cs = o.c;
      const Var term = project(hs, rs[t]);
      total = t == 0 ? term : add(total, term);
    }
    return add(total, project(cs, rc));
  };
  check_fd(params, loss);
}

TEST_CASE("GRU unrolled over 5 steps back-propagates through time", "[gnn][rnn][bptt]") {
  constexpr int kSteps = 5;
  const int64_t n = 2, f = 3, h = 2;
  Rng rng(22);
  std::vector<Tensor> xs, rs;
  for (int t = 0; t < kSteps; ++t) {
    xs.push_back(random_tensor(n, f, rng, 1.f));
    rs.push_back(random_tensor(n, h, rng, 1.f));
  }
  std::vector<Var> params = {
      Var(random_tensor(f, 3 * h, rng, 0.8f), true),  // Wx
      Var(random_tensor(h, 3 * h, rng, 0.8f), true),  // Wh
      Var(random_tensor(1, 3 * h, rng, 0.5f), true),  // b_x
      Var(random_tensor(1, 3 * h, rng, 0.5f), true),  // b_h
      Var(random_tensor(n, h, rng, 0.5f), true),      // h0
  };
  auto loss = [&]() {
    Var hs = params[4], total;
    for (int t = 0; t < kSteps; ++t) {
      const Var xg = add_bias(matmul(Var(xs[t].clone()), params[0]), params[2]);
      const Var hg = add_bias(matmul(hs, params[1]), params[3]);
      hs = gru_cell(xg, hg, hs);
      const Var term = project(hs, rs[t]);
      total = t == 0 ? term : add(total, term);
    }
    return total;
  };
  check_fd(params, loss);
}
