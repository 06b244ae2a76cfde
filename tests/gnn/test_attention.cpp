// Attention over edges: GAT's forward against a dense reference computed the obvious way (every
// in-neighbour plus the vertex itself, softmax per head), and every attention op's backward,
// and a GAT layer's parameter gradients, against central finite differences.
#include <catch2/catch.hpp>
#include <cmath>
#include <functional>
#include <vector>

#include "../random_tensor.hpp"
#include "dgnn/common/hash_rng.hpp"
#include "dgnn/gnn/core/attention.hpp"
#include "dgnn/gnn/core/ops.hpp"
#include "dgnn/gnn/models/layers.hpp"
#include "dgnn/graph/csr.hpp"

using namespace dgnn;
using dgnn::test::random_tensor;

namespace {

// 7 vertices: a hub (3) every other vertex points at, a self loop (4 -> 4, replaced by the one
// attention adds), a vertex with no in-edge (6: only its self loop), and a duplicate-free rest.
Csr graph() {
  const std::vector<std::pair<int, int>> e = {{0, 3}, {1, 3}, {2, 3}, {4, 3}, {5, 3}, {6, 3},
                                              {3, 0}, {0, 1}, {1, 2}, {2, 0}, {4, 4}, {5, 4},
                                              {3, 5}};
  std::vector<int32_t> rows, cols;
  for (auto [s, d] : e) rows.push_back(d), cols.push_back(s);
  return csr_from_coo(7, 7, rows, cols, {});
}

// Tensors are move-only: an initializer list cannot hold them.
template <class... T>
std::vector<Tensor> tensors(T&&... t) {
  std::vector<Tensor> v;
  (v.push_back(std::forward<T>(t)), ...);
  return v;
}

// Central differences of sum(f(inputs) * proj) against the backward, for every input element.
void check_gradients(const std::vector<Tensor>& values,
                     const std::function<Var(const std::vector<Var>&)>& f, uint64_t seed) {
  std::vector<Var> in;
  for (const Tensor& v : values) in.emplace_back(v.clone(), true);
  const Var y = f(in);
  const Tensor proj = random_tensor(y.rows(), y.cols(), seed);
  sum(mul(y, Var(proj.clone()))).backward();
  auto project = [&](const Tensor& t) {
    double s = 0;
    for (int64_t i = 0; i < t.numel(); ++i) s += double(t.data()[i]) * double(proj.data()[i]);
    return s;
  };
  const double eps = 1e-3;
  for (size_t k = 0; k < in.size(); ++k) {
    REQUIRE(in[k].grad().rows() == in[k].rows());
    float* x = in[k].value().data();
    for (int64_t j = 0; j < in[k].value().numel(); ++j) {
      const float orig = x[j], hi = float(orig + eps), lo = float(orig - eps);
      NoGradGuard no_grad;
      x[j] = hi;
      const double f_hi = project(f(in).value());
      x[j] = lo;
      const double f_lo = project(f(in).value());
      x[j] = orig;
      const double numeric = (f_hi - f_lo) / (double(hi) - double(lo));
      INFO("input " << k << " element " << j);
      CHECK(in[k].grad().data()[j] == Approx(numeric).margin(2e-3).epsilon(1e-2));
    }
  }
}

}  // namespace

TEST_CASE("GAT attention equals a dense reference, head by head") {
  const Csr a = graph();
  GraphView g(a);
  const int64_t n = 7, heads = 2, dim = 3;
  const Tensor z = random_tensor(n, heads * dim, 1), as = random_tensor(1, heads * dim, 2),
               ad = random_tensor(1, heads * dim, 3);
  NoGradGuard no_grad;
  const Var zv(z.clone()), asv(as.clone()), adv(ad.clone());
  const Var score = leaky_relu(edge_add(g, head_dot(zv, asv, heads), head_dot(zv, adv, heads)),
                               0.2f);
  const Tensor y = aggregate_edges(g, edge_softmax(g, score), zv).value().clone();
  for (int64_t v = 0; v < n; ++v) {
    // v's in-neighbours from the CSR, plus v itself once.
    std::vector<int64_t> nb;
    for (int64_t e = a.offsets[size_t(v)]; e < a.offsets[size_t(v) + 1]; ++e)
      if (a.indices[size_t(e)] != v) nb.push_back(a.indices[size_t(e)]);
    nb.push_back(v);
    for (int64_t h = 0; h < heads; ++h) {
      auto dot = [&](const Tensor& vec, int64_t u) {
        double s = 0;
        for (int64_t d = 0; d < dim; ++d) s += double(z.at(u, h * dim + d)) * vec.at(0, h * dim + d);
        return s;
      };
      std::vector<double> w;
      double total = 0;
      for (int64_t u : nb) {
        double s = dot(as, u) + dot(ad, v);
        s = s > 0 ? s : 0.2 * s;
        w.push_back(std::exp(s));
        total += w.back();
      }
      for (int64_t d = 0; d < dim; ++d) {
        double want = 0;
        for (size_t i = 0; i < nb.size(); ++i) want += w[i] / total * z.at(nb[i], h * dim + d);
        CHECK(y.at(v, h * dim + d) == Approx(want).margin(1e-5));
      }
    }
  }
}

TEST_CASE("attention ops' backward matches finite differences") {
  const Csr a = graph();
  GraphView g(a);
  const int64_t n = 7, nnz = g.attention().forward.nnz();
  REQUIRE(nnz == a.nnz() - 1 + n);  // 4 -> 4 replaced by the added self loop
  SECTION("head_dot") {
    check_gradients(tensors(random_tensor(n, 6, 4), random_tensor(1, 6, 5)),
                    [](const std::vector<Var>& v) { return head_dot(v[0], v[1], 3); }, 6);
  }
  SECTION("edge_add") {
    check_gradients(tensors(random_tensor(n, 2, 7), random_tensor(n, 2, 8)),
                    [&](const std::vector<Var>& v) { return edge_add(g, v[0], v[1]); }, 9);
  }
  SECTION("edge_dot (SDDMM)") {
    check_gradients(tensors(random_tensor(n, 4, 10), random_tensor(n, 4, 11)),
                    [&](const std::vector<Var>& v) { return edge_dot(g, v[0], v[1], 2); }, 12);
  }
  SECTION("edge_softmax") {
    check_gradients(tensors(random_tensor(nnz, 2, 13, 2.f)),
                    [&](const std::vector<Var>& v) { return edge_softmax(g, v[0]); }, 14);
  }
  SECTION("aggregate_edges") {
    check_gradients(tensors(random_tensor(nnz, 2, 15), random_tensor(n, 6, 16)),
                    [&](const std::vector<Var>& v) { return aggregate_edges(g, v[0], v[1]); }, 17);
  }
}

TEST_CASE("a GAT layer's parameter gradients match finite differences") {
  const Csr a = graph();
  GraphView g(a);
  GATConv layer(5, 8, 2);
  layer.reset_parameters(3);
  const Tensor x = random_tensor(7, 5, 18);
  std::vector<Tensor> values;
  for (auto& [name, p] : layer.named_parameters()) values.push_back(p->var.value().clone());
  // The parameters as inputs: each call writes them into the layer, then runs it.
  auto f = [&](const std::vector<Var>& v) {
    size_t i = 0;
    for (auto& [name, p] : layer.named_parameters()) p->var = v[i++];
    ForwardContext ctx{g, false, 0, 0};
    return layer.forward(ctx, Var(x.clone()));
  };
  check_gradients(values, f, 19);
}

TEST_CASE("attention ops reject mismatched shapes with a ShapeError") {
  const Csr a = graph();
  GraphView g(a);
  CHECK_THROWS_AS(edge_add(g, Var(Tensor(6, 2)), Var(Tensor(7, 2))), ShapeError);
  CHECK_THROWS_AS(edge_add(g, Var(Tensor(7, 2)), Var(Tensor(7, 3))), ShapeError);
  CHECK_THROWS_AS(edge_softmax(g, Var(Tensor(5, 2))), ShapeError);
  CHECK_THROWS_AS(aggregate_edges(g, Var(Tensor(g.attention().forward.nnz(), 2)), Var(Tensor(7, 5))),
                  ShapeError);
  CHECK_THROWS_AS(head_dot(Var(Tensor(7, 6)), Var(Tensor(1, 6)), 4), ShapeError);
  CHECK_THROWS_AS(GATConv(4, 6, 4), OptionError);
}
