// SpMM on a hand-computed 4-vertex graph, on strided views, and against a naive dense product.
#include <omp.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <utility>
#include <vector>

#include "dgnn/common/error.hpp"
#include "dgnn/common/hash_rng.hpp"
#include "dgnn/kernels/kernels.hpp"

using namespace dgnn;

namespace {

// Row r lists its in-neighbours: 0 <- {1, 2}, 1 <- {0}, 2 <- {} (empty), 3 <- {0, 1, 2}.
const std::vector<int64_t> kOffsets = {0, 2, 3, 3, 6};
const std::vector<int32_t> kIndices = {1, 2, 0, 0, 1, 2};
const std::vector<float> kValues = {0.5f, 2.f, -1.f, 1.f, 2.f, 3.f};
const std::vector<float> kX = {1, 2, 3, 4, 5, 6, 7, 8};  // 4 x 2

CsrView graph(bool weighted) {
  return {4, 4, kOffsets.data(), kIndices.data(), weighted ? kValues.data() : nullptr};
}

}  // namespace

TEST_CASE("spmm sums in-neighbours of a 4-vertex graph", "[kernels][spmm]") {
  std::vector<float> y(8, -99.f);  // garbage that must be overwritten
  kernels::spmm(Device::cpu, graph(false), ConstMatView(kX.data(), 4, 2, 2), {y.data(), 4, 2, 2});
  CHECK(y == std::vector<float>{8, 10, 1, 2, 0, 0, 9, 12});
}

TEST_CASE("spmm uses edge weights", "[kernels][spmm]") {
  std::vector<float> y(8, -99.f);
  kernels::spmm(Device::cpu, graph(true), ConstMatView(kX.data(), 4, 2, 2), {y.data(), 4, 2, 2});
  CHECK(y == std::vector<float>{11.5f, 14, -1, -2, 0, 0, 22, 28});
}

TEST_CASE("spmm accumulates into Y", "[kernels][spmm]") {
  std::vector<float> y(8, 1.f);
  kernels::spmm(Device::cpu, graph(true), ConstMatView(kX.data(), 4, 2, 2), {y.data(), 4, 2, 2},
                true);
  CHECK(y == std::vector<float>{12.5f, 15, 0, -1, 1, 1, 23, 29});
}

TEST_CASE("spmm reads and writes strided views and rectangular A", "[kernels][spmm]") {
  // X is 4 x 2 inside a 4 x 3 buffer; Y is 2 x 2 inside a 2 x 5 buffer whose padding must
  // survive. A keeps rows 0 and 3 of the graph: 2 x 4.
  std::vector<float> xbuf = {1, 2, -7, 3, 4, -7, 5, 6, -7, 7, 8, -7};
  std::vector<float> ybuf(10, 42.f);
  const std::vector<int64_t> offsets = {0, 2, 5};
  const std::vector<int32_t> indices = {1, 2, 0, 1, 2};
  const CsrView a{2, 4, offsets.data(), indices.data(), nullptr};
  kernels::spmm(Device::cpu, a, ConstMatView(xbuf.data(), 4, 2, 3), {ybuf.data(), 2, 2, 5});
  CHECK(ybuf == std::vector<float>{8, 10, 42, 42, 42, 9, 12, 42, 42, 42});
}

TEST_CASE("spmm with no rows, no features or no edges", "[kernels][spmm]") {
  const std::vector<int64_t> offsets = {0, 0, 0};
  std::vector<float> y(4, 5.f);
  const CsrView empty{2, 4, offsets.data(), nullptr, nullptr};
  kernels::spmm(Device::cpu, empty, ConstMatView(kX.data(), 4, 2, 2), {y.data(), 2, 2, 2});
  CHECK(y == std::vector<float>{0, 0, 0, 0});
  kernels::spmm(Device::cpu, graph(false), ConstMatView(kX.data(), 4, 0, 0), {y.data(), 4, 0, 0});
  CHECK(y == std::vector<float>{0, 0, 0, 0});
}

TEST_CASE("spmm rejects mismatched shapes naming both", "[kernels][spmm]") {
  std::vector<float> y(8);
  try {
    kernels::spmm(Device::cpu, graph(false), ConstMatView(kX.data(), 2, 4, 4), {y.data(), 4, 4, 4});
    FAIL("no ShapeError");
  } catch (const ShapeError& e) {
    const std::string what = e.what();
    CHECK(what.find("[4 x 4]") != std::string::npos);
    CHECK(what.find("[2 x 4]") != std::string::npos);
  }
  CHECK_THROWS_AS(kernels::spmm(Device::cpu, graph(false), ConstMatView(kX.data(), 4, 2, 2),
                                {y.data(), 3, 2, 2}),
                  ShapeError);
}

TEST_CASE("spmm equals a naive product on a random skewed graph, for any thread count",
          "[kernels][spmm]") {
  // Large enough for the parallel path; one hub row with a third of the edges.
  const int64_t n = 600, f = 37;
  Rng rng(7);
  std::vector<int64_t> offsets = {0};
  std::vector<int32_t> indices;
  std::vector<float> values;
  for (int64_t r = 0; r < n; ++r) {
    const int64_t deg = r == 5 ? 3000 : int64_t(rng.below(12));
    for (int64_t k = 0; k < deg; ++k) {
      indices.push_back(int32_t(rng.below(n)));
      values.push_back(rng.uniform() - 0.5f);
    }
    offsets.push_back(int64_t(indices.size()));
  }
  std::vector<float> x(size_t(n * f));
  for (float& v : x) v = rng.uniform() * 2 - 1;
  const CsrView a{n, n, offsets.data(), indices.data(), values.data()};

  std::vector<double> ref(size_t(n * f), 0.0);
  for (int64_t r = 0; r < n; ++r)
    for (int64_t e = offsets[r]; e < offsets[r + 1]; ++e)
      for (int64_t c = 0; c < f; ++c) ref[r * f + c] += double(values[e]) * x[indices[e] * f + c];

  auto run = [&](int threads) {
    const int saved = omp_get_max_threads();
    omp_set_num_threads(threads);
    std::vector<float> y(size_t(n * f));
    kernels::spmm(Device::cpu, a, ConstMatView(x.data(), n, f, f), {y.data(), n, f, f});
    omp_set_num_threads(saved);
    return y;
  };
  const std::vector<float> y1 = run(1), y3 = run(3);
  CHECK(y1 == y3);  // bit-identical: each row is summed in index order whatever the threading
  for (size_t i = 0; i < ref.size(); ++i) REQUIRE(y1[i] == Approx(ref[i]).margin(1e-4));
}

TEST_CASE("spmm_extreme: max / min over in-neighbours, their columns, empty rows",
          "[kernels][spmm]") {
  std::vector<float> y(8, -99.f);
  std::vector<int32_t> arg(8, 99);
  const ConstMatView x(kX.data(), 4, 2, 2);
  kernels::spmm_extreme(Device::cpu, graph(true), x, {y.data(), 4, 2, 2}, arg.data(), true);
  CHECK(y == std::vector<float>{5, 6, 1, 2, 0, 0, 5, 6});  // weights ignored
  CHECK(arg == std::vector<int32_t>{2, 2, 0, 0, -1, -1, 2, 2});
  kernels::spmm_extreme(Device::cpu, graph(false), x, {y.data(), 4, 2, 2}, arg.data(), false);
  CHECK(y == std::vector<float>{3, 4, 1, 2, 0, 0, 1, 2});
  CHECK(arg == std::vector<int32_t>{1, 1, 0, 0, -1, -1, 0, 0});

  SECTION("equal values: the first neighbour in index order; NaN wins") {
    const std::vector<float> xt = {7, 1, 7, 1, 7, NAN, 0, 0};  // rows 0, 1 equal; row 2 has NaN
    kernels::spmm_extreme(Device::cpu, graph(false), ConstMatView(xt.data(), 4, 2, 2),
                          {y.data(), 4, 2, 2}, arg.data(), true);
    CHECK(arg[0] == 1);  // row 0 <- {1, 2}: 7 == 7, the first (1) stays
    CHECK(std::isnan(y[1]));
    CHECK(arg[1] == 2);
    CHECK(arg[6] == 0);  // row 3 <- {0, 1, 2}: 7, 7, 7: column 0
    CHECK(std::isnan(y[7]));
  }
  SECTION("shapes are checked") {
    CHECK_THROWS_AS(
        kernels::spmm_extreme(Device::cpu, graph(false), x, {y.data(), 3, 2, 2}, arg.data(), true),
        ShapeError);
  }
  SECTION("without arg (no backward to come): the same values") {
    std::vector<float> y2(8, -99.f);
    kernels::spmm_extreme(Device::cpu, graph(false), x, {y2.data(), 4, 2, 2}, nullptr, true);
    CHECK(y2 == std::vector<float>{5, 6, 1, 2, 0, 0, 5, 6});
  }
}

TEST_CASE("spmm_extreme backward routes each gradient to its arg row, on slices of the transpose",
          "[kernels][spmm]") {
  const int64_t n = 500, f = 19;
  Rng rng(11);
  std::vector<std::vector<int32_t>> in(n);
  for (int64_t r = 0; r < n; ++r) {
    const int64_t deg = r == 7 ? 2000 : int64_t(rng.below(9));
    for (int64_t k = 0; k < deg; ++k) in[size_t(r)].push_back(int32_t(rng.below(n)));
  }
  std::vector<int64_t> off = {0}, toff(size_t(n + 1), 0);
  std::vector<int32_t> idx, tidx;
  for (int64_t r = 0; r < n; ++r) {
    for (int32_t c : in[size_t(r)]) {
      idx.push_back(c);
      ++toff[size_t(c) + 1];
    }
    off.push_back(int64_t(idx.size()));
  }
  for (int64_t r = 0; r < n; ++r) toff[size_t(r + 1)] += toff[size_t(r)];
  tidx.resize(idx.size());
  std::vector<int64_t> fill(toff.begin(), toff.end() - 1);
  for (int64_t r = 0; r < n; ++r)
    for (int32_t c : in[size_t(r)]) tidx[size_t(fill[size_t(c)]++)] = int32_t(r);
  std::vector<float> x(size_t(n * f)), gy(size_t(n * f));
  for (float& v : x) v = rng.uniform() * 2 - 1;
  for (float& v : gy) v = rng.uniform() * 2 - 1;
  const CsrView a{n, n, off.data(), idx.data(), nullptr};
  const CsrView at{n, n, toff.data(), tidx.data(), nullptr};

  for (bool is_max : {true, false}) {
    INFO((is_max ? "max" : "min"));
    std::vector<float> y(size_t(n * f));
    std::vector<int32_t> arg(size_t(n * f));
    kernels::spmm_extreme(Device::cpu, a, ConstMatView(x.data(), n, f, f), {y.data(), n, f, f},
                          arg.data(), is_max);
    std::vector<double> want(size_t(n * f), 0.0);
    for (int64_t r = 0; r < n; ++r)
      for (int64_t c = 0; c < f; ++c) {
        float best = 0.f;
        int32_t from = -1;
        for (int32_t u : in[size_t(r)]) {
          const float v = x[size_t(u * f + c)];
          if (from < 0 || (is_max ? v > best : v < best)) best = v, from = u;
        }
        REQUIRE(y[size_t(r * f + c)] == best);
        REQUIRE(arg[size_t(r * f + c)] == from);
        if (from >= 0) want[size_t(from * f + c)] += gy[size_t(r * f + c)];
      }
    auto run = [&](int threads, int64_t split) {
      const int saved = omp_get_max_threads();
      omp_set_num_threads(threads);
      std::vector<float> gx(size_t(n * f), 1.f);  // accumulated into
      for (auto [b, e] : {std::pair<int64_t, int64_t>{0, split}, {split, n}}) {
        CsrView part = at;
        part.rows = e - b;
        part.offsets = toff.data() + b;
        kernels::spmm_extreme_backward(Device::cpu, part, b, arg.data(),
                                       ConstMatView(gy.data(), n, f, f),
                                       {gx.data() + b * f, e - b, f, f}, true);
      }
      omp_set_num_threads(saved);
      return gx;
    };
    const std::vector<float> g1 = run(1, 0), g3 = run(3, 123);
    CHECK(g1 == g3);
    for (size_t i = 0; i < want.size(); ++i) REQUIRE(g1[i] == Approx(1.0 + want[i]).margin(1e-4));
  }
}

TEST_CASE("spmm_span over runs of each row's columns adds up to spmm", "[kernels][spmm]") {
  // Columns split at 1 and 2: the runs [0, 1), [1, 2), [2, 4) of every row, each read from its
  // own matrix of rows (a streamed halo's pieces), add up to the whole product.
  for (bool weighted : {false, true}) {
    const CsrView a = graph(weighted);
    std::vector<float> want(8);
    kernels::spmm(Device::cpu, a, ConstMatView{kX.data(), 4, 2, 2}, MatView{want.data(), 4, 2, 2});
    std::vector<int32_t> at1, at2;  // entries below column 1 and 2, per row
    for (int64_t r = 0; r < 4; ++r) {
      int32_t n1 = 0, n2 = 0;
      for (int64_t e = kOffsets[r]; e < kOffsets[r + 1]; ++e) n1 += kIndices[e] < 1, n2 += kIndices[e] < 2;
      at1.push_back(n1);
      at2.push_back(n2);
    }
    std::vector<float> y(8, 0.f);
    const MatView yv{y.data(), 4, 2, 2};
    kernels::spmm_span(Device::cpu, a, nullptr, at1.data(), 0, ConstMatView{kX.data(), 1, 2, 2}, yv);
    kernels::spmm_span(Device::cpu, a, at2.data(), nullptr, 2, ConstMatView{kX.data() + 4, 2, 2, 2}, yv);
    kernels::spmm_span(Device::cpu, a, at1.data(), at2.data(), 1, ConstMatView{kX.data() + 2, 1, 2, 2}, yv);
    for (size_t i = 0; i < 8; ++i) CHECK(y[i] == Approx(want[i]));
  }
  CHECK_THROWS_AS(kernels::spmm_span(Device::cpu, graph(false), nullptr, nullptr, -1,
                                     ConstMatView{kX.data(), 4, 2, 2}, MatView{nullptr, 4, 2, 2}),
                  ShapeError);
}
