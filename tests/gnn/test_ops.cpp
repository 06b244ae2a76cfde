// Tensor basics, op forward values, and the tape's behaviour: no-grad scopes, accumulation,
// release of intermediates, deep graphs, and shape errors.
#include <catch2/catch.hpp>
#include <cmath>
#include <memory>
#include <utility>
#include <vector>

#include "dgnn/common/error.hpp"
#include "dgnn/gnn/core/loss.hpp"
#include "dgnn/gnn/core/ops.hpp"

using namespace dgnn;

namespace {

Tensor make(int64_t rows, int64_t cols, std::vector<float> v) {
  REQUIRE(int64_t(v.size()) == rows * cols);
  return Tensor::from_host(v.data(), rows, cols);
}

std::vector<float> host(const Tensor& t) { return {t.data(), t.data() + t.numel()}; }

}  // namespace

TEST_CASE("tensor: zero-filled, shape_str, clone, to, move", "[gnn][tensor]") {
  Tensor t(3, 4);
  CHECK(t.shape_str() == "[3 x 4]");
  CHECK(host(t) == std::vector<float>(12, 0.f));
  t.at(1, 2) = 5.f;
  Tensor c = t.clone();
  t.at(1, 2) = 6.f;
  CHECK(c.at(1, 2) == 5.f);  // an independent copy
  Tensor moved = std::move(c);
  CHECK(moved.at(1, 2) == 5.f);
  CHECK(moved.to(Device::cpu).at(1, 2) == 5.f);
  CHECK(Tensor::filled(2, 2, 1.5f).at(1, 1) == 1.5f);
  CHECK(Tensor(0, 7).empty());
  CHECK(Tensor(0, 7).shape_str() == "[0 x 7]");
  CHECK_THROWS_AS(Tensor(-1, 2), ShapeError);
  // at() is checked: outside the shape is an error naming both, never a read past the end.
  CHECK_THROWS_WITH(t.at(3, 0), Catch::Contains("Tensor::at(3, 0) of a [3 x 4] tensor"));
  CHECK_THROWS_AS(t.at(0, 4), ShapeError);
  CHECK_THROWS_AS(t.at(-1, 0), ShapeError);
  CHECK_THROWS_AS(std::as_const(t).at(0, -1), ShapeError);
#if !DGNN_HAVE_CUDA
  CHECK_THROWS_AS(t.to(Device::cuda), DeviceError);
#endif
}

TEST_CASE("ops: forward values", "[gnn][ops]") {
  const Var a(make(2, 3, {1, 2, 3, 4, 5, 6}));
  const Var b(make(3, 2, {1, 0, 0, 1, 1, 1}));
  CHECK(host(matmul(a, b).value()) == std::vector<float>{4, 5, 10, 11});
  CHECK(host(concat_cols({a, slice_cols(a, 1, 2)}).value()) ==
        std::vector<float>{1, 2, 3, 2, 4, 5, 6, 5});
  CHECK(host(gather_rows(a, {1, 1, 0}).value()) == std::vector<float>{4, 5, 6, 4, 5, 6, 1, 2, 3});
  CHECK(host(add_bias(a, Var(make(1, 3, {10, 20, 30}))).value()) ==
        std::vector<float>{11, 22, 33, 14, 25, 36});
  CHECK(sum(a).value().at(0, 0) == 21.f);
  CHECK(mean(a).value().at(0, 0) == 3.5f);
  CHECK(host(sub(a, scale(a, 2.f)).value()) == std::vector<float>{-1, -2, -3, -4, -5, -6});
  CHECK(host(relu(sub(a, Var(Tensor::filled(2, 3, 3.5f)))).value()) ==
        std::vector<float>{0, 0, 0, 0.5f, 1.5f, 2.5f});
}

TEST_CASE("ops: dropout is identity in evaluation and keyed in training", "[gnn][ops]") {
  const Var x(Tensor::filled(50, 20, 1.f), true);
  CHECK(dropout(x, 0.5f, {1, 2, 3}, nullptr, false).node() == x.node());
  CHECK(dropout(x, 0.f, {1, 2, 3}, nullptr, true).node() == x.node());
  const Tensor& y1 = dropout(x, 0.5f, {1, 2, 3}, nullptr, true).value();
  const Var y2 = dropout(x, 0.5f, {1, 2, 3}, nullptr, true);
  const Var y3 = dropout(x, 0.5f, {1, 2, 4}, nullptr, true);  // another site
  const Var y4 = dropout(x, 0.5f, {1, 3, 3}, nullptr, true);  // another step
  CHECK(host(y2.value()) != host(y3.value()));
  CHECK(host(y2.value()) != host(y4.value()));
  (void)y1;
  CHECK(DropoutKey{1, 2, 3}.hash() != DropoutKey{2, 1, 3}.hash());
  CHECK_THROWS_AS(dropout(x, 1.f, {}, nullptr, true), OptionError);
}

TEST_CASE("ops: cross_entropy and count_correct by hand", "[gnn][ops]") {
  // Row 0: logits (0, ln 3), label 1: p = 3/4. Row 1: (0, 0), label 0: p = 1/2.
  const Var z(make(3, 2, {0, std::log(3.f), 0, 0, 5, 5}), true);
  Var loss = cross_entropy(z, {0, 1}, {1, 0}, 4.0);
  CHECK(loss.value().at(0, 0) == Approx((-std::log(0.75) - std::log(0.5)) / 4.0));
  loss.backward();
  CHECK(z.grad().at(0, 0) == Approx(0.25 / 4));
  CHECK(z.grad().at(0, 1) == Approx(-0.25 / 4));
  CHECK(z.grad().at(1, 0) == Approx(-0.5 / 4));
  CHECK(z.grad().at(2, 0) == 0.f);                             // unlabelled
  CHECK(count_correct(z.value(), {0, 1, 2}, {1, 0, 1}) == 2);  // row 2 ties -> class 0

  CHECK_THROWS_AS(cross_entropy(z, {0}, {2}, 1.0), ShapeError);        // label past classes
  CHECK_THROWS_AS(cross_entropy(z, {3}, {0}, 1.0), ShapeError);        // row past rows
  CHECK_THROWS_AS(cross_entropy(z, {0, 0}, {0, 1}, 1.0), ShapeError);  // repeated row
  CHECK_THROWS_AS(cross_entropy(z, {0}, {0, 1}, 1.0), ShapeError);     // count mismatch
  CHECK_THROWS_AS(cross_entropy(z, {0}, {0}, 0.0), OptionError);
}

TEST_CASE("autograd: NoGradGuard records nothing", "[gnn][autograd]") {
  const Var w(Tensor::filled(3, 3, 0.5f), true);
  const Var x(Tensor::filled(2, 3, 1.f));
  CHECK(grad_enabled());
  {
    NoGradGuard outer;
    {
      NoGradGuard inner;
      CHECK_FALSE(grad_enabled());
    }
    CHECK_FALSE(grad_enabled());  // the inner guard restores the outer state, not "on"
    const Var y = relu(matmul(x, w));
    CHECK_FALSE(y.requires_grad());
    CHECK(y.node()->inputs.empty());
    CHECK_FALSE(y.node()->backward);
    CHECK(y.value().at(0, 0) == 1.5f);
  }
  CHECK(grad_enabled());
  const Var y = matmul(x, w);
  CHECK(y.requires_grad());
  CHECK(y.node()->inputs.size() == 2);
  // Nothing that requires a grad in, nothing recorded.
  const Var c = matmul(x, Var(Tensor::filled(3, 3, 1.f)));
  CHECK_FALSE(c.requires_grad());
  CHECK(c.node()->inputs.empty());
}

TEST_CASE("autograd: grads accumulate over uses and over backward calls", "[gnn][autograd]") {
  const Var x(make(1, 2, {3, -1}), true);
  sum(add(x, x)).backward();
  CHECK(host(x.grad()) == std::vector<float>{2, 2});
  sum(mul(x, x)).backward();  // + 2x, on top of the previous grad
  CHECK(host(x.grad()) == std::vector<float>{8, 0});
  x.node()->grad = Tensor();
  const Var xc = x;  // a second handle to the same node
  sum(matmul(x, Var(make(2, 1, {1, 1})))).backward();
  CHECK(host(xc.grad()) == std::vector<float>{1, 1});
  Var p = x;
  p.zero_grad();
  CHECK(x.grad().empty());
}

TEST_CASE("autograd: backward_to back-propagates a loss early, gradient_from puts it back",
          "[gnn][autograd]") {
  // A two-step recurrence h1 = tanh(x w), h2 = tanh(h1 w), scored by a head v each step:
  // loss = 0.5 * (sum(h1 v)^2 + sum(h2 v)^2). Early: each step's head back-propagated at once
  // (w only through the head's leaf: nothing), its gradient put back on h; then one backward.
  const Tensor xs = make(2, 2, {0.5f, -1, 2, 0.25f});
  const Tensor ws = make(2, 2, {0.3f, -0.2f, 0.1f, 0.4f});
  const Tensor vs = make(2, 1, {1.5f, -0.5f});
  auto head = [](const Var& h, const Var& v) {
    const Var s = sum(matmul(h, v));
    return scale(mul(s, s), 0.5f);
  };
  const Var x(xs.clone()), w(ws.clone(), true), v(vs.clone(), true);
  {
    const Var h1 = tanh(matmul(x, w)), h2 = tanh(matmul(h1, w));
    scale(add(head(h1, v), head(h2, v)), 0.5f).backward();
  }
  const std::vector<float> gw = host(w.grad()), gv = host(v.grad());
  w.node()->grad = Tensor();
  v.node()->grad = Tensor();

  const Var h1 = tanh(matmul(x, w));
  double l1 = 0, l2 = 0;
  const Var t1 = backward_to(h1, 0.5f, l1, [&](const Var& r) { return head(r, v); });
  CHECK(w.grad().empty());  // the head's backward stopped at the leaf
  const Var h2 = tanh(matmul(h1, w));
  const Var t2 = backward_to(h2, 0.5f, l2, [&](const Var& r) { return head(r, v); });
  CHECK(t1.value().item() == 0.f);
  CHECK(l1 > 0);
  add(t1, t2).backward();
  REQUIRE(w.grad().numel() == 4);
  for (size_t i = 0; i < gw.size(); ++i) CHECK(host(w.grad())[i] == Approx(gw[i]).epsilon(1e-5));
  for (size_t i = 0; i < gv.size(); ++i) CHECK(host(v.grad())[i] == Approx(gv[i]).epsilon(1e-5));
  // The shape is checked; an empty gradient adds nothing but keeps x on the tape.
  CHECK_THROWS_AS(gradient_from(h1, Tensor(1, 2)), ShapeError);
  const Var y(make(1, 2, {1, 2}), true);
  gradient_from(y, Tensor()).backward();
  CHECK(y.grad().empty());
}

TEST_CASE("autograd: only inputs that require grads get them", "[gnn][autograd]") {
  const Var a(make(2, 2, {1, 2, 3, 4}));
  const Var b(make(2, 2, {1, 0, 0, 1}), true);
  sum(matmul(a, b)).backward();
  CHECK(a.grad().empty());
  CHECK(host(b.grad()) == std::vector<float>{4, 4, 6, 6});
}

TEST_CASE("autograd: backward releases the intermediate graph", "[gnn][autograd]") {
  const Var w(Tensor::filled(4, 4, 0.1f), true);
  std::weak_ptr<Node> hidden;
  Var loss;
  {
    const Var h = relu(matmul(Var(Tensor::filled(8, 4, 1.f)), w));
    hidden = h.node();
    loss = mean(matmul(h, w));
  }
  REQUIRE_FALSE(hidden.expired());  // held only through the loss's inputs
  loss.backward();
  CHECK(hidden.expired());
  CHECK(loss.node()->inputs.empty());
  CHECK_FALSE(loss.node()->backward);
  CHECK(w.grad().rows() == 4);              // the leaf keeps its grad
  CHECK_THROWS_AS(loss.backward(), Error);  // the tape is gone
}

TEST_CASE("autograd: the tape drops values no backward reads once no Var holds them",
          "[gnn][autograd]") {
  const Var x(make(2, 2, {1, -2, 3, -4}), true), w(make(2, 2, {1, 2, -1, 1}), true);
  const Var bias(make(1, 2, {0.5f, -0.5f}), true);
  std::weak_ptr<Node> product, biased, rectified;
  Var loss, kept;
  {
    const Var p = matmul(x, w);    // read by nobody's backward (add_bias reads no values)
    const Var b = add_bias(p, bias);  // relu reads its own output, not its input
    const Var r = relu(b);
    kept = r;                      // still held: stays
    loss = sum(mul(r, r));         // mul reads r
    product = p.node(), biased = b.node(), rectified = r.node();
    CHECK(product.lock()->value.data());  // held by p here
  }
  REQUIRE_FALSE(product.expired());
  CHECK_FALSE(product.lock()->value.data());  // dropped, shape kept
  CHECK(product.lock()->value.rows() == 2);
  CHECK_FALSE(biased.lock()->value.data());
  CHECK(rectified.lock()->value.data());
  CHECK(host(kept.value()) == std::vector<float>{3.5f, 0, 7.5f, 1.5f});
  loss.backward();
  // G = 2 r [r > 0] = [7 0; 15 3]: dw = x^T G, dx = G w^T, db = G's column sums.
  CHECK(host(w.grad()) == std::vector<float>{52, 9, -74, -12});
  CHECK(host(x.grad()) == std::vector<float>{7, -7, 21, -12});
  CHECK(host(bias.grad()) == std::vector<float>{22, 3});
  // Without a tape nothing is dropped: the value is the caller's.
  NoGradGuard no_grad;
  const Var q = add_bias(matmul(x, w), bias);
  CHECK(host(q.value()) == std::vector<float>{3.5f, -0.5f, 7.5f, 1.5f});
}

TEST_CASE("autograd: slice_rows reads no values: a sliced product is dropped once unheld",
          "[gnn][autograd]") {
  // The snapshot strategy's re-shards slice one exchanged matrix into steps; the matrix must not
  // stay on the tape beside its slices.
  const Var x(make(2, 2, {1, -2, 3, -4}), true), w(make(2, 2, {1, 2, -1, 1}), true);
  std::weak_ptr<Node> product;
  Var loss;
  {
    const Var p = matmul(x, w);  // [3 0; 7 2]
    const Var top = slice_rows(p, 0, 1), bottom = slice_rows(p, 1, 2);
    loss = add(sum(mul(top, top)), sum(bottom));
    product = p.node();
  }
  REQUIRE_FALSE(product.expired());
  CHECK_FALSE(product.lock()->value.data());
  CHECK(product.lock()->value.rows() == 2);
  CHECK(host(loss.value()) == std::vector<float>{18});
  loss.backward();
  // G = [6 0; 1 1]: dw = x^T G, dx = G w^T.
  CHECK(host(w.grad()) == std::vector<float>{9, 3, -16, -4});
  CHECK(host(x.grad()) == std::vector<float>{6, -6, 3, 0});
}

TEST_CASE("autograd: deep tapes neither recurse in backward nor in destruction",
          "[gnn][autograd]") {
  const Var x(Tensor::filled(1, 1, 1.f), true);
  {
    Var y = x;
    for (int i = 0; i < 200000; ++i) y = scale(y, 1.f);
    y.backward();
    CHECK(x.grad().at(0, 0) == 1.f);
  }
  {
    Var y = x;
    for (int i = 0; i < 200000; ++i) y = add(y, x);
  }  // dropped without backward: the chain unlinks iteratively
  SUCCEED();
}

TEST_CASE("ops: shape errors name the shapes", "[gnn][ops]") {
  const Var a(Tensor(2, 3), true), b(Tensor(2, 2), true);
  try {
    matmul(a, b);
    FAIL("no ShapeError");
  } catch (const ShapeError& e) {
    CHECK(std::string(e.what()).find("[2 x 3]") != std::string::npos);
    CHECK(std::string(e.what()).find("[2 x 2]") != std::string::npos);
  }
  CHECK_THROWS_AS(add(a, b), ShapeError);
  CHECK_THROWS_AS(sub(a, b), ShapeError);
  CHECK_THROWS_AS(mul(a, b), ShapeError);
  CHECK_THROWS_AS(add_bias(a, Var(Tensor(1, 2))), ShapeError);
  CHECK_THROWS_AS(add_bias(a, Var(Tensor(2, 3))), ShapeError);
  CHECK_THROWS_AS(concat_cols({a, Var(Tensor(3, 3))}), ShapeError);
  CHECK_THROWS_AS(concat_cols({}), ShapeError);
  CHECK_THROWS_AS(slice_cols(a, 2, 4), ShapeError);
  CHECK_THROWS_AS(gather_rows(a, {0, 2}), ShapeError);
  CHECK_THROWS_AS(mean(Var(Tensor(0, 3))), ShapeError);
  CHECK_THROWS_AS(relu(a).backward(), ShapeError);  // not 1 x 1
}
