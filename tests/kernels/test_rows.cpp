// gather / scatter-add of rows, and dropout masks keyed by row identity.
#include <catch2/catch.hpp>
#include <cmath>
#include <numeric>
#include <vector>

#include "dgnn/common/error.hpp"
#include "dgnn/common/hash_rng.hpp"
#include "dgnn/kernels/kernels.hpp"

using namespace dgnn;

TEST_CASE("gather_rows picks rows, repeats allowed", "[kernels][rows]") {
  const std::vector<float> src = {1, 2, 3, 4, 5, 6};  // 3 x 2
  const std::vector<int32_t> idx = {2, 0, 2};
  std::vector<float> dst(9, -1.f);  // 3 x 2 inside ld 3
  kernels::gather_rows(Device::cpu, ConstMatView(src.data(), 3, 2, 2), idx.data(), 3,
                       {dst.data(), 3, 2, 3});
  CHECK(dst == std::vector<float>{5, 6, -1, 1, 2, -1, 5, 6, -1});
}

TEST_CASE("scatter_add_rows accumulates repeated targets", "[kernels][rows]") {
  const std::vector<float> src = {1, 2, 3, 4, 5, 6};  // 3 x 2
  const std::vector<int32_t> idx = {1, 0, 1};
  std::vector<float> dst = {10, 10, 20, 20};  // 2 x 2
  kernels::scatter_add_rows(Device::cpu, ConstMatView(src.data(), 3, 2, 2), idx.data(), 3,
                            {dst.data(), 2, 2, 2});
  CHECK(dst == std::vector<float>{13, 14, 26, 28});
}

TEST_CASE("scatter_rows overwrites the listed rows and leaves the others", "[kernels][rows]") {
  const std::vector<float> src = {1, 2, 3, 4};  // 2 x 2
  const std::vector<int32_t> idx = {2, 0};
  std::vector<float> dst = {10, 10, 20, 20, 30, 30};  // 3 x 2
  kernels::scatter_rows(Device::cpu, ConstMatView(src.data(), 2, 2, 2), idx.data(), 2,
                        {dst.data(), 3, 2, 2});
  CHECK(dst == std::vector<float>{3, 4, 20, 20, 1, 2});
  // gather_rows undoes it.
  std::vector<float> back(4);
  kernels::gather_rows(Device::cpu, ConstMatView(dst.data(), 3, 2, 2), idx.data(), 2,
                       {back.data(), 2, 2, 2});
  CHECK(back == src);
  CHECK_THROWS_AS(kernels::scatter_rows(Device::cpu, ConstMatView(src.data(), 2, 2, 2),
                                        idx.data(), 1, {dst.data(), 3, 2, 2}),
                  ShapeError);
}

TEST_CASE("scatter_add_rows is bit-identical to the sequential loop at scale", "[kernels][rows]") {
  const int64_t n = 20000, cols = 8, targets = 50;
  Rng rng(3);
  std::vector<float> src(size_t(n * cols));
  for (float& v : src) v = rng.uniform() * 1000.f - 500.f;  // rounding makes order visible
  std::vector<int32_t> idx(static_cast<size_t>(n));
  for (int32_t& i : idx) i = int32_t(rng.below(targets));
  std::vector<float> ref(size_t(targets * cols), 0.f), dst(ref);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t c = 0; c < cols; ++c) ref[idx[i] * cols + c] += src[i * cols + c];
  kernels::scatter_add_rows(Device::cpu, ConstMatView(src.data(), n, cols, cols), idx.data(), n,
                            {dst.data(), targets, cols, cols});
  CHECK(dst == ref);
}

TEST_CASE("gather/scatter reject wrong shapes", "[kernels][rows]") {
  const std::vector<float> src(6);
  std::vector<float> dst(6);
  const std::vector<int32_t> idx = {0, 1};
  CHECK_THROWS_AS(kernels::gather_rows(Device::cpu, ConstMatView(src.data(), 3, 2, 2), idx.data(),
                                       2, {dst.data(), 3, 2, 2}),
                  ShapeError);
  CHECK_THROWS_AS(kernels::scatter_add_rows(Device::cpu, ConstMatView(src.data(), 3, 2, 2),
                                            idx.data(), 2, {dst.data(), 2, 3, 3}),
                  ShapeError);
}

namespace {

struct DropoutRun {
  std::vector<float> y;
  std::vector<uint8_t> mask;
};

DropoutRun run_dropout(const std::vector<float>& x, int64_t rows, int64_t cols, float p,
                       uint64_t key, const int64_t* row_ids) {
  DropoutRun r{std::vector<float>(x.size()), std::vector<uint8_t>(x.size())};
  kernels::dropout(Device::cpu, ConstMatView(x.data(), rows, cols, cols), p, key, row_ids,
                   {r.y.data(), rows, cols, cols}, r.mask.data());
  return r;
}

}  // namespace

TEST_CASE("dropout mask is a pure function of key, row id and column", "[kernels][dropout]") {
  const int64_t rows = 300, cols = 40;
  const float p = 0.3f;
  std::vector<float> x(size_t(rows * cols));
  std::iota(x.begin(), x.end(), 1.f);

  const DropoutRun a = run_dropout(x, rows, cols, p, 1234, nullptr);
  const DropoutRun b = run_dropout(x, rows, cols, p, 1234, nullptr);
  CHECK(a.y == b.y);
  CHECK(a.mask == b.mask);
  CHECK(run_dropout(x, rows, cols, p, 1235, nullptr).mask != a.mask);

  // Kept values scale by 1/(1-p); dropped are zero; the kept fraction is near 1-p.
  int64_t kept = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    REQUIRE(a.y[i] == Approx(a.mask[i] ? x[i] / (1 - p) : 0.f));
    REQUIRE(bool(a.mask[i]) ==
            kernels::dropout_keep(kernels::dropout_row_key(1234, int64_t(i) / cols),
                                  int64_t(i) % cols, kernels::dropout_threshold(p)));
    kept += a.mask[i];
  }
  CHECK(double(kept) / double(x.size()) == Approx(1 - p).margin(0.02));

  // p = 0 keeps everything unchanged.
  const DropoutRun none = run_dropout(x, rows, cols, 0.f, 1234, nullptr);
  CHECK(none.y == x);
}

TEST_CASE("dropout mask follows the row id, not the row position", "[kernels][dropout]") {
  // The same global rows held in reverse order and at an offset (as another rank would) draw
  // the same masks row by row.
  const int64_t rows = 64, cols = 16;
  std::vector<float> x(size_t(rows * cols), 1.f);
  std::vector<int64_t> ids(static_cast<size_t>(rows)), reversed(ids);
  for (int64_t r = 0; r < rows; ++r) {
    ids[size_t(r)] = 1000 + r;
    reversed[size_t(r)] = 1000 + rows - 1 - r;
  }
  const DropoutRun fwd = run_dropout(x, rows, cols, 0.5f, 99, ids.data());
  const DropoutRun rev = run_dropout(x, rows, cols, 0.5f, 99, reversed.data());
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c)
      REQUIRE(fwd.mask[size_t(r * cols + c)] == rev.mask[size_t((rows - 1 - r) * cols + c)]);
  // A sub-block of rows 10..19 alone draws the same as within the whole.
  const DropoutRun part =
      run_dropout(std::vector<float>(size_t(10 * cols), 1.f), 10, cols, 0.5f, 99, ids.data() + 10);
  for (int64_t i = 0; i < 10 * cols; ++i)
    REQUIRE(part.mask[size_t(i)] == fwd.mask[size_t(10 * cols + i)]);
  // Without ids the row index is the id, so it differs from ids offset by 1000.
  CHECK(run_dropout(x, rows, cols, 0.5f, 99, nullptr).mask != fwd.mask);
}

TEST_CASE("dropout backward applies the mask and scale", "[kernels][dropout]") {
  const std::vector<float> dy = {1, 2, 3, 4};
  const std::vector<uint8_t> mask = {1, 0, 0, 1};
  std::vector<float> dx = {10, 10, 10, 10};
  kernels::dropout_backward(Device::cpu, ConstMatView(dy.data(), 2, 2, 2), mask.data(), 0.5f,
                            {dx.data(), 2, 2, 2}, true);
  CHECK(dx == std::vector<float>{12, 10, 10, 18});
  kernels::dropout_backward(Device::cpu, ConstMatView(dy.data(), 2, 2, 2), mask.data(), 0.5f,
                            {dx.data(), 2, 2, 2}, false);
  CHECK(dx == std::vector<float>{2, 0, 0, 8});
  std::vector<float> y(4);
  std::vector<uint8_t> m(4);
  CHECK_THROWS_AS(kernels::dropout(Device::cpu, ConstMatView(dy.data(), 2, 2, 2), 1.f, 0, nullptr,
                                   {y.data(), 2, 2, 2}, m.data()),
                  OptionError);
}
