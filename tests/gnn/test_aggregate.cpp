// aggregate(): forward against a dense reference on hand-made graphs, backward against finite
// differences, for every normalisation.
#include <catch2/catch.hpp>
#include <cmath>

#include "../random_tensor.hpp"
#include "dgnn/common/error.hpp"
#include "dgnn/common/hash_rng.hpp"
#include "dgnn/gnn/core/graph_view.hpp"
#include "dgnn/gnn/core/ops.hpp"

using namespace dgnn;
using dgnn::test::random_tensor;

namespace {

Csr make_csr(int64_t n, const std::vector<std::pair<int, int>>& edges_src_dst) {
  std::vector<int32_t> rows, cols;
  for (auto [s, d] : edges_src_dst) {
    rows.push_back(d);
    cols.push_back(s);
  }
  return csr_from_coo(n, n, rows, cols, {});
}

// Dense weights w[v][u] of the normalised adjacency, computed the obvious way.
std::vector<std::vector<double>> dense_reference(const Csr& g, Norm norm) {
  const int64_t n = g.rows;
  std::vector<std::vector<double>> a(size_t(n), std::vector<double>(size_t(n), 0.0));
  for (int64_t v = 0; v < n; ++v)
    for (int64_t e = g.offsets[v]; e < g.offsets[v + 1]; ++e) a[v][g.indices[e]] += 1.0;
  if (norm == Norm::mean) {
    for (auto& row : a) {
      double d = 0;
      for (double x : row) d += x;
      if (d > 0)
        for (double& x : row) x /= d;
    }
  } else if (norm == Norm::gcn) {
    for (int64_t v = 0; v < n; ++v) a[v][v] = 1.0;  // A + I (an existing loop is replaced)
    std::vector<double> deg(size_t(n), 0);
    for (int64_t v = 0; v < n; ++v)
      for (int64_t u = 0; u < n; ++u) deg[v] += a[v][u];
    for (int64_t v = 0; v < n; ++v)
      for (int64_t u = 0; u < n; ++u) a[v][u] /= std::sqrt(deg[v] * deg[u]);
  }
  return a;
}

// The gradient of sum(op(x) * proj) with respect to x against central differences, entry by
// entry.
template <class Op>
void check_against_differences(const Op& op, const Tensor& x0, uint64_t proj_seed) {
  Tensor proj = random_tensor(x0.rows(), x0.cols(), proj_seed);
  auto loss_of = [&](const Tensor& xv, Var* xout) {
    Var x(xv.clone(), true);
    Var l = sum(mul(op(x), Var(proj.clone())));
    if (xout) *xout = x;
    return l;
  };
  Var x;
  loss_of(x0, &x).backward();
  REQUIRE(!x.grad().empty());
  const float eps = 1e-2f;
  for (int64_t i = 0; i < x0.numel(); ++i) {
    Tensor xp = x0.clone(), xm = x0.clone();
    xp.data()[i] += eps;
    xm.data()[i] -= eps;
    double fd = (double(loss_of(xp, nullptr).value().data()[0]) -
                 double(loss_of(xm, nullptr).value().data()[0])) /
                (2 * eps);
    CHECK(x.grad().data()[i] == Approx(fd).margin(2e-3));
  }
}

}  // namespace

TEST_CASE("aggregate matches a dense reference for sum, mean and gcn") {
  // A directed graph with a self loop, an isolated vertex (4) and a vertex of in-degree 3.
  Csr g = make_csr(5, {{0, 1}, {1, 2}, {2, 0}, {3, 0}, {1, 0}, {2, 2}, {0, 3}});
  GraphView view(g);
  Tensor x = random_tensor(5, 3, 7);
  for (Norm norm : {Norm::sum, Norm::mean, Norm::gcn}) {
    auto ref = dense_reference(g, norm);
    Var y = aggregate(view, Var(x.clone()), norm);
    for (int v = 0; v < 5; ++v)
      for (int f = 0; f < 3; ++f) {
        double expect = 0;
        for (int u = 0; u < 5; ++u) expect += ref[v][u] * x.at(u, f);
        CHECK(y.value().at(v, f) == Approx(expect).margin(1e-6));
      }
  }
}

TEST_CASE("gcn weights on a path are 1/sqrt(deg_u deg_v) with self loops") {
  // Undirected path 0 - 1 - 2: degrees with loops 2, 3, 2.
  Csr g = make_csr(3, {{0, 1}, {1, 0}, {1, 2}, {2, 1}});
  GraphView view(g);
  const Csr& a = view.adjacency(Norm::gcn).forward;
  REQUIRE(a.nnz() == 7);
  CHECK(a.indices == std::vector<int32_t>{0, 1, 0, 1, 2, 1, 2});
  CHECK(a.values[0] == Approx(0.5));
  CHECK(a.values[1] == Approx(1 / std::sqrt(6.0)));
  CHECK(a.values[3] == Approx(1 / 3.0));
}

TEST_CASE("aggregate backward matches finite differences") {
  Csr g = make_csr(6, {{0, 1}, {1, 2}, {2, 3}, {3, 4}, {4, 5}, {5, 0}, {0, 3}, {2, 5}, {4, 4}});
  GraphView view(g);
  for (Norm norm : {Norm::sum, Norm::mean, Norm::gcn})
    check_against_differences([&](const Var& x) { return aggregate(view, x, norm); },
                              random_tensor(6, 4, 11), 12);
}

TEST_CASE("aggregate_max / aggregate_min: forward by hand, backward by finite differences") {
  // The second graph repeats edges (kept duplicates, or a neighbour sampled twice): one maximum,
  // one gradient.
  const bool dup = GENERATE(false, true);
  INFO((dup ? "with repeated edges" : "simple graph"));
  std::vector<std::pair<int, int>> edges = {{0, 1}, {1, 2}, {2, 3}, {3, 4}, {4, 5},
                                            {5, 0}, {0, 3}, {2, 5}, {4, 4}};
  if (dup) edges.insert(edges.end(), {{0, 1}, {0, 3}, {0, 3}, {4, 4}});
  Csr g = make_csr(6, edges);
  GraphView view(g);
  // Distinct values at least 0.37 apart, so no maximum changes hands within eps.
  Tensor x0 = Tensor::zeros(6, 4);
  Rng rng(5);
  std::vector<int> order(24);
  for (int i = 0; i < 24; ++i) order[size_t(i)] = i;
  for (int i = 23; i > 0; --i) std::swap(order[size_t(i)], order[rng.below(uint64_t(i + 1))]);
  for (int i = 0; i < 24; ++i) x0.data()[i] = 0.37f * float(order[size_t(i)]) - 4.f;
  for (bool is_max : {true, false}) {
    INFO((is_max ? "max" : "min"));
    auto agg = [&](const Var& x) {
      return is_max ? aggregate_max(view, x) : aggregate_min(view, x);
    };
    // Forward against the in-neighbour lists.
    Tensor y = agg(Var(x0.clone())).value().clone();
    for (int64_t v = 0; v < 6; ++v)
      for (int64_t c = 0; c < 4; ++c) {
        float best = 0.f;
        bool any = false;
        for (int64_t e = g.offsets[size_t(v)]; e < g.offsets[size_t(v + 1)]; ++e) {
          const float val = x0.data()[g.indices[size_t(e)] * 4 + c];
          if (!any || (is_max ? val > best : val < best)) best = val;
          any = true;
        }
        CHECK(y.data()[v * 4 + c] == best);
      }
    check_against_differences(agg, x0, 12);
  }
}

TEST_CASE("aggregate rejects a feature matrix of the wrong height") {
  Csr g = make_csr(3, {{0, 1}});
  GraphView view(g);
  CHECK_THROWS_AS(aggregate(view, Var(Tensor(4, 2)), Norm::sum), ShapeError);
}

TEST_CASE("IdSubset gives back its members in the list's order, as bits or as positions") {
  auto list = std::make_shared<std::vector<int64_t>>();
  for (int64_t k = 0; k < 200; ++k) list->push_back(1000 - 3 * k);  // any order: the list's
  const std::shared_ptr<const std::vector<int64_t>> of = list;
  // Many members (bits: 32 bytes, fewer than 4 a member) and few (positions: 8 bytes).
  std::vector<int32_t> dense, sparse = {5, 199};
  for (int32_t k = 0; k < 200; k += 2) dense.push_back(k);
  const IdSubset a(of, dense), b(of, sparse), none(of, {});
  CHECK(a.bytes() == 32);
  CHECK(b.bytes() == 8);
  std::vector<int64_t> want;
  for (int32_t k : dense) want.push_back((*list)[size_t(k)]);
  CHECK(a.ids() == want);
  CHECK(a.size() == 100);
  CHECK(b.ids() == std::vector<int64_t>{1000 - 15, 1000 - 597});
  CHECK(none.ids().empty());
  CHECK_THROWS_AS(IdSubset(of, {3, 3}), ShapeError);
  CHECK_THROWS_AS(IdSubset(of, {200}), ShapeError);
  CHECK_THROWS_AS(IdSubset(of, {4, 2}), ShapeError);
}
