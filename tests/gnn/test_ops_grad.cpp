// One harness for every differentiable op (in the spirit of ggml's test-backend-ops grad mode):
// each op is composed with a fixed random projection and a sum to get a scalar, and its
// backward is compared element by element with central finite differences.
#include <catch2/catch.hpp>
#include <cmath>
#include <functional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "dgnn/common/hash_rng.hpp"
#include "dgnn/gnn/core/loss.hpp"
#include "dgnn/gnn/core/ops.hpp"
#include "dgnn/gnn/core/rnn.hpp"

using namespace dgnn;

namespace {

struct Shape {
  int64_t rows, cols;
};

struct GradCase {
  std::string name;
  std::vector<Shape> inputs;
  std::function<Var(const std::vector<Var>&)> f;
  float range = 1.f;    // inputs uniform in +-[min_abs, range]
  float min_abs = 0.f;  // keeps inputs off kinks (relu at 0), where differences lie
};

// Dropout's row ids must outlive the call; these are arbitrary global ids.
const int64_t kRowIds[6] = {17, 3, 99, 4, 1000003, 8};

std::vector<GradCase> all_cases() {
  const std::vector<int32_t> rows = {0, 2, 3}, labels = {1, 3, 0};
  return {
      {"matmul", {{3, 4}, {4, 5}}, [](auto& v) { return matmul(v[0], v[1]); }},
      {"add", {{3, 4}, {3, 4}}, [](auto& v) { return add(v[0], v[1]); }},
      {"sub", {{3, 4}, {3, 4}}, [](auto& v) { return sub(v[0], v[1]); }},
      {"mul", {{3, 4}, {3, 4}}, [](auto& v) { return mul(v[0], v[1]); }},
      {"scale", {{3, 4}}, [](auto& v) { return scale(v[0], -1.7f); }},
      {"add_bias", {{4, 3}, {1, 3}}, [](auto& v) { return add_bias(v[0], v[1]); }},
      {"relu", {{4, 5}}, [](auto& v) { return relu(v[0]); }, 1.f, 0.05f},
      {"leaky_relu", {{4, 5}}, [](auto& v) { return leaky_relu(v[0], 0.1f); }, 1.f, 0.05f},
      {"sigmoid", {{4, 5}}, [](auto& v) { return sigmoid(v[0]); }, 3.f},
      {"tanh", {{4, 5}}, [](auto& v) { return tanh(v[0]); }, 2.f},
      {"concat_cols", {{3, 2}, {3, 4}, {3, 1}}, [](auto& v) { return concat_cols(v); }},
      {"slice_cols", {{3, 6}}, [](auto& v) { return slice_cols(v[0], 1, 4); }},
      {"slice_rows", {{6, 3}}, [](auto& v) { return slice_rows(v[0], 1, 4); }},
      {"gather_rows",
       {{5, 3}},
       [](auto& v) {
         return gather_rows(v[0], {4, 0, 4, 2, 4});
       }},
      {"sum", {{3, 4}}, [](auto& v) { return sum(v[0]); }},
      {"mean", {{3, 4}}, [](auto& v) { return mean(v[0]); }},
      {"dropout",
       {{6, 5}},
       [](auto& v) {
         return dropout(v[0], 0.4f, DropoutKey{7, 3, 1}, kRowIds, true);
       }},
      {"cross_entropy",
       {{5, 4}},
       [=](auto& v) { return cross_entropy(scale(v[0], 2.f), rows, labels, 4.0); }},
      {"row_sum", {{4, 3}}, [](auto& v) { return row_sum(v[0]); }},
      {"dot_rows", {{5, 3}, {5, 3}}, [](auto& v) { return dot_rows(v[0], v[1]); }},
      {"add_scalar", {{3, 4}}, [](auto& v) { return add_scalar(v[0], 0.75f); }},
      {"one_minus", {{3, 4}}, [](auto& v) { return one_minus(v[0]); }},
      // Positives, negatives and a soft target, unweighted and weighted.
      {"bce_with_logits",
       {{5, 1}},
       [](auto& v) {
         return bce_with_logits(scale(v[0], 3.f), {1, 0, 0, 1, 0.25f}, 3.0);
       }},
      {"bce_with_logits weighted",
       {{4, 1}},
       [](auto& v) {
         return bce_with_logits(v[0], {1, 0, 0, 1}, 2.5, {2.f, 0.5f, 0.5f, 1.f});
       }},
      // Both outputs feed the scalar, so dh and dc meet in the one cell node.
      {"lstm_cell",
       {{3, 8}, {3, 2}},
       [](auto& v) {
         const LstmOut o = lstm_cell(v[0], v[1]);
         return concat_cols({o.h, o.c});
       },
       2.f},
      // Only h is used: the c slice receives no gradient and must not break the cell's backward.
      {"lstm_cell h only", {{2, 12}, {2, 3}}, [](auto& v) { return lstm_cell(v[0], v[1]).h; }, 2.f},
      {"gru_cell",
       {{3, 6}, {3, 6}, {3, 2}},
       [](auto& v) { return gru_cell(v[0], v[1], v[2]); },
       2.f},
      // An input used twice: both paths' gradients must add up.
      {"mul(x, x) + 2x", {{3, 3}}, [](auto& v) { return add(mul(v[0], v[0]), scale(v[0], 2)); }},
      // The fused pair-scoring head: both ends from one table (their gradients meet in it), and
      // ends from two tables, the first unindexed (one row per pair); two logits per pair.
      {"pair_mlp one table",
       {{5, 3}, {9, 4}, {1, 4}, {4, 2}, {1, 2}},
       [](auto& v) {
         return pair_mlp({v[0], std::vector<int32_t>{0, 1, 4, 4, 2, 0}},
                         {v[0], std::vector<int32_t>{1, 1, 3, 0, 2, 4}}, v[1], v[2], v[3], v[4]);
       }},
      {"pair_mlp two tables",
       {{4, 3}, {6, 3}, {9, 5}, {1, 5}, {5, 1}, {1, 1}},
       [](auto& v) {
         return pair_mlp({v[0], std::nullopt}, {v[1], std::vector<int32_t>{5, 0, 2, 2}}, v[2], v[3],
                         v[4], v[5]);
       }},
      {"scale_by", {{4, 3}, {1, 1}}, [](auto& v) { return scale_by(v[0], v[1]); }},
      // A small network: every gradient flows through several recorded nodes.
      {"mlp",
       {{6, 3}, {3, 4}, {1, 4}, {4, 3}},
       [](auto& v) {
         const Var h = tanh(add_bias(matmul(v[0], v[1]), v[2]));
         return cross_entropy(matmul(h, v[3]), {0, 1, 2, 5}, {2, 0, 1, 1}, 4.0);
       }},
  };
}

Tensor random_tensor(Shape s, Rng& rng, float range, float min_abs) {
  Tensor t(s.rows, s.cols);
  for (int64_t i = 0; i < t.numel(); ++i) {
    const float mag = min_abs + (range - min_abs) * rng.uniform();
    t.data()[i] = rng.uniform() < 0.5f ? -mag : mag;
  }
  return t;
}

// sum(y * r) in double, so the differences measure the op and not this reduction.
double project(const Tensor& y, const Tensor& r) {
  double s = 0;
  for (int64_t i = 0; i < y.numel(); ++i) s += double(y.data()[i]) * double(r.data()[i]);
  return s;
}

void collect_ops(const Var& v, std::set<std::string>* ops) {
  std::vector<const Node*> stack = {v.node().get()};
  while (!stack.empty()) {
    const Node* n = stack.back();
    stack.pop_back();
    ops->insert(n->op);
    for (const auto& in : n->inputs) stack.push_back(in.get());
  }
}

}  // namespace

TEST_CASE("ops: every op's backward matches central finite differences", "[gnn][ops][grad]") {
  constexpr double kEps = 1e-3, kAbs = 1e-3, kRel = 1e-2;
  std::set<std::string> covered;
  uint64_t seed = 1;
  for (const GradCase& c : all_cases()) {
    Rng rng(seed++);
    std::vector<Var> in;
    for (Shape s : c.inputs) in.emplace_back(random_tensor(s, rng, c.range, c.min_abs), true);

    const Var y = c.f(in);
    const Tensor r = random_tensor({y.rows(), y.cols()}, rng, 1.f, 0.f);
    Var loss = sum(mul(y, Var(r.clone())));
    collect_ops(loss, &covered);
    loss.backward();

    for (size_t i = 0; i < in.size(); ++i) {
      const Tensor& grad = in[i].grad();
      INFO(c.name << ": input " << i << " grad " << grad.shape_str());
      REQUIRE(grad.rows() == in[i].rows());
      REQUIRE(grad.cols() == in[i].cols());
      float* x = in[i].value().data();
      for (int64_t j = 0; j < in[i].value().numel(); ++j) {
        const float orig = x[j];
        // The step actually taken in float, not the nominal one, is the denominator.
        const float hi = float(orig + kEps), lo = float(orig - kEps);
        NoGradGuard no_grad;
        x[j] = hi;
        const double f_hi = project(c.f(in).value(), r);
        x[j] = lo;
        const double f_lo = project(c.f(in).value(), r);
        x[j] = orig;
        const double numeric = (f_hi - f_lo) / (double(hi) - double(lo));
        const double analytic = grad.data()[j];
        INFO("element " << j << ": analytic " << analytic << ", numeric " << numeric);
        CHECK(std::fabs(analytic - numeric) <= kAbs + kRel * std::fabs(numeric));
      }
    }
  }
  // The harness is only as good as its list: every op in ops.hpp, loss.hpp and rnn.hpp must
  // have been on a checked tape.
  std::istringstream ops(
      "matmul add sub mul scale scale_by add_bias relu leaky_relu sigmoid tanh concat_cols "
      "slice_cols slice_rows gather_rows sum mean dropout cross_entropy row_sum dot_rows "
      "add_scalar one_minus bce_with_logits lstm_cell gru_cell pair_mlp");
  for (std::string op; ops >> op;) {
    INFO("op " << op);
    CHECK(covered.count(op) == 1);
  }
}
