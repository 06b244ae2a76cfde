// The CUDA element-wise, row, dropout, loss and recurrent-cell kernels against the CPU ones:
// the same seeded inputs through kernels::xxx(Device::cpu, ...) and kernels::xxx(Device::cuda,
// ...), compared to rounding (transcendentals differ in their last bits), bit for bit where
// the GPU does the CPU's exact operations (dropout, copies, gather, scatter-add, the blocked
// reductions, argmax counts).
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <iterator>
#include <limits>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include "dgnn/common/hash_rng.hpp"
#include "gpu_test_util.hpp"
#include "dgnn/kernels/kernels.hpp"

using namespace dgnn;
using kernels::Unary;
using dgnn::test::check_bits;
using dgnn::test::check_close;
using dgnn::test::DeviceBuf;
using dgnn::test::HostMat;
using dgnn::test::uniform_vector;

namespace {

constexpr double kRel = 1e-5;     // element-wise
constexpr double kAbs = 1e-6;     // floor for values near zero (and denormal exp results)
constexpr double kRelSum = 1e-4;  // reductions

const Unary kOps[] = {Unary::relu, Unary::leaky_relu, Unary::sigmoid,
                      Unary::tanh, Unary::exp,        Unary::neg};

const char* op_name(Unary op) {
  switch (op) {
    case Unary::relu: return "relu";
    case Unary::leaky_relu: return "leaky_relu";
    case Unary::sigmoid: return "sigmoid";
    case Unary::tanh: return "tanh";
    case Unary::exp: return "exp";
    case Unary::neg: return "neg";
  }
  return "?";
}

// Inputs over [-6, 6) plus the awkward values: signed zeros, saturating magnitudes.
std::vector<float> unary_inputs(Rng& rng, size_t n) {
  std::vector<float> x = uniform_vector(rng, n, -6.f, 6.f);
  const float special[] = {0.f, -0.f, 50.f, -50.f, -100.f, 100.f, 1e-3f, -1e-3f};
  for (size_t i = 0; i < n && i < std::size(special); ++i) x[i] = special[i];
  return x;
}

bool uses_x(Unary op) { return op == Unary::relu || op == Unary::leaky_relu; }
bool uses_y(Unary op) { return op == Unary::sigmoid || op == Unary::tanh || op == Unary::exp; }

}  // namespace

// ---- element-wise --------------------------------------------------------------------------

TEST_CASE("gpu unary matches the cpu", "[gpu][kernels]") {
  Rng rng(11);
  const float alpha = 0.1f;
  for (int64_t n : {int64_t(1), int64_t(7), int64_t(1000), int64_t(65537)}) {
    const std::vector<float> x = unary_inputs(rng, size_t(n));
    for (Unary op : kOps) {
      const std::string what = std::string(op_name(op)) + " n=" + std::to_string(n);
      std::vector<float> want(static_cast<size_t>(n));
      kernels::unary(Device::cpu, op, x.data(), want.data(), n, alpha);
      DeviceBuf<float> dx(x), dy(std::vector<float>(size_t(n), -1.f));
      kernels::unary(Device::cuda, op, dx.data(), dy.data(), n, alpha);
      const std::vector<float> got = dy.download();
      if (op == Unary::relu || op == Unary::leaky_relu || op == Unary::neg)
        check_bits(got, want, what);  // no transcendental: the same single operation
      else
        check_close(got, want, kRel, kAbs, what);
    }
  }
}

TEST_CASE("gpu unary_backward matches the cpu, reading only the operand it needs",
          "[gpu][kernels]") {
  Rng rng(12);
  const float alpha = 0.2f;
  for (int64_t n : {int64_t(1), int64_t(9), int64_t(40000)}) {
    const std::vector<float> x = unary_inputs(rng, size_t(n));
    const std::vector<float> g = uniform_vector(rng, size_t(n), -2.f, 2.f);
    const std::vector<float> dx0 = uniform_vector(rng, size_t(n), -1.f, 1.f);
    for (Unary op : kOps) {
      std::vector<float> y(static_cast<size_t>(n));
      kernels::unary(Device::cpu, op, x.data(), y.data(), n, alpha);
      DeviceBuf<float> d_x(x), d_y(y), d_g(g);
      for (bool accumulate : {false, true}) {
        const std::string what = std::string(op_name(op)) + " n=" + std::to_string(n) +
                                 (accumulate ? " accumulate" : "");
        // The operand the op does not need is passed as null on both backends.
        std::vector<float> want = dx0;
        kernels::unary_backward(Device::cpu, op, uses_x(op) ? x.data() : nullptr,
                                uses_y(op) ? y.data() : nullptr, g.data(), want.data(), n, alpha,
                                accumulate);
        DeviceBuf<float> d_dx(dx0);
        kernels::unary_backward(Device::cuda, op, uses_x(op) ? d_x.data() : nullptr,
                                uses_y(op) ? d_y.data() : nullptr, d_g.data(), d_dx.data(), n,
                                alpha, accumulate);
        check_close(d_dx.download(), want, kRel, kAbs, what);
      }
    }
  }
}

TEST_CASE("gpu axpby and mul match the cpu", "[gpu][kernels]") {
  Rng rng(13);
  for (int64_t n : {int64_t(1), int64_t(13), int64_t(100003)}) {
    const std::vector<float> x = uniform_vector(rng, size_t(n), -3.f, 3.f);
    const std::vector<float> y0 = uniform_vector(rng, size_t(n), -3.f, 3.f);
    DeviceBuf<float> d_x(x);
    for (float b : {0.f, 1.f, -0.75f}) {
      // b == 0 must overwrite: a NaN y may not leak through.
      const std::vector<float> start =
          b == 0.f ? std::vector<float>(size_t(n), std::numeric_limits<float>::quiet_NaN()) : y0;
      std::vector<float> want = start;
      kernels::axpby(Device::cpu, n, 1.5f, x.data(), b, want.data());
      DeviceBuf<float> d_y(start);
      kernels::axpby(Device::cuda, n, 1.5f, d_x.data(), b, d_y.data());
      check_close(d_y.download(), want, kRel, kAbs,
                  "axpby b=" + std::to_string(b) + " n=" + std::to_string(n));
    }
    DeviceBuf<float> d_y(y0);
    for (bool accumulate : {false, true}) {
      const std::vector<float> z0 = uniform_vector(rng, size_t(n), -1.f, 1.f);
      std::vector<float> want = z0;
      kernels::mul(Device::cpu, n, x.data(), y0.data(), want.data(), accumulate);
      DeviceBuf<float> d_z(z0);
      kernels::mul(Device::cuda, n, d_x.data(), d_y.data(), d_z.data(), accumulate);
      check_close(d_z.download(), want, kRel, kAbs,
                  std::string("mul") + (accumulate ? " accumulate" : "") + " n=" +
                      std::to_string(n));
    }
  }
}

TEST_CASE("gpu fill and copy_view match the cpu on strided views", "[gpu][kernels]") {
  Rng rng(14);
  for (int64_t n : {int64_t(1), int64_t(1001)}) {
    DeviceBuf<float> d(std::vector<float>(size_t(n) + 1, -1.f));
    kernels::fill(Device::cuda, d.data(), n, 2.5f);
    std::vector<float> want(size_t(n), 2.5f);
    want.push_back(-1.f);  // one past the end stays
    check_bits(d.download(), want, "fill n=" + std::to_string(n));
  }
  struct Shape {
    int64_t rows, cols;
  };
  for (Shape s : {Shape{1, 1}, Shape{5, 7}, Shape{300, 33}, Shape{1, 9}}) {
    HostMat src(s.rows, s.cols, s.cols + 3);
    src.uniform(rng, -4.f, 4.f);
    DeviceBuf<float> d_src(src.v);
    for (bool accumulate : {false, true}) {
      HostMat dst(s.rows, s.cols, s.cols + 1);
      dst.uniform(rng, -1.f, 1.f);
      HostMat want = dst;
      kernels::copy_view(Device::cpu, src.cview(), want.view(), accumulate);
      DeviceBuf<float> d_dst(dst.v);
      kernels::copy_view(Device::cuda, src.cview(d_src), dst.view(d_dst), accumulate);
      check_bits(d_dst.download(), want.v,
                 "copy_view " + std::to_string(s.rows) + "x" + std::to_string(s.cols) +
                     (accumulate ? " accumulate" : ""));
    }
  }
}

TEST_CASE("gpu add_row_vector matches the cpu on strided views", "[gpu][kernels]") {
  Rng rng(15);
  struct Shape {
    int64_t rows, cols, ld;
  };
  for (Shape s : {Shape{1, 1, 1}, Shape{5, 7, 11}, Shape{1, 6, 6}, Shape{1000, 33, 35}}) {
    HostMat y(s.rows, s.cols, s.ld);
    y.uniform(rng, -2.f, 2.f);
    const std::vector<float> bias = uniform_vector(rng, size_t(s.cols), -1.f, 1.f);
    HostMat want = y;
    kernels::add_row_vector(Device::cpu, want.view(), bias.data());
    DeviceBuf<float> d_y(y.v), d_bias(bias);
    kernels::add_row_vector(Device::cuda, y.view(d_y), d_bias.data());
    check_bits(d_y.download(), want.v,
               "add_row_vector " + std::to_string(s.rows) + "x" + std::to_string(s.cols));
  }
}

TEST_CASE("gpu column_sum matches the cpu, bit for bit with its blocking", "[gpu][kernels]") {
  Rng rng(16);
  struct Shape {
    int64_t rows, cols, ld;
  };
  for (Shape s : {Shape{1, 5, 5}, Shape{7, 3, 8}, Shape{513, 1, 1}, Shape{1500, 13, 16},
                  Shape{2000, 70, 70}}) {
    HostMat x(s.rows, s.cols, s.ld);
    x.uniform(rng, -100.f, 100.f);
    DeviceBuf<float> d_x(x.v);
    for (bool accumulate : {false, true}) {
      const std::string what = "column_sum " + std::to_string(s.rows) + "x" +
                               std::to_string(s.cols) + (accumulate ? " accumulate" : "");
      const std::vector<float> out0 = uniform_vector(rng, size_t(s.cols), -10.f, 10.f);
      std::vector<float> want = out0;
      kernels::column_sum(Device::cpu, x.cview(), want.data(), accumulate);
      DeviceBuf<float> d_out(out0);
      kernels::column_sum(Device::cuda, x.cview(d_x), d_out.data(), accumulate);
      const std::vector<float> got = d_out.download();
      check_close(got, want, kRelSum, kAbs, what);
      // The same double additions in the same order: identical.
      check_bits(got, want, what + " (bits)");
    }
  }
}

TEST_CASE("gpu sum matches the cpu, bit for bit with its blocking", "[gpu][kernels]") {
  Rng rng(17);
  for (int64_t n : {int64_t(1), int64_t(5), int64_t(4096), int64_t(4097), int64_t(1000003)}) {
    const std::vector<float> x = uniform_vector(rng, size_t(n), -1000.f, 1000.f);
    const double want = kernels::sum(Device::cpu, x.data(), n);
    DeviceBuf<float> d_x(x);
    const double got = kernels::sum(Device::cuda, d_x.data(), n);
    INFO("sum n=" << n << ": gpu " << got << ", cpu " << want);
    CHECK(std::fabs(got - want) <= kRelSum * std::fabs(want) + 1e-6);
    CHECK(got == want);
  }
}

// ---- dropout -------------------------------------------------------------------------------

TEST_CASE("gpu dropout draws the cpu's mask and outputs bit for bit", "[gpu][kernels][dropout]") {
  Rng rng(18);
  struct Case {
    int64_t rows, cols, x_ld, y_ld;
    float p;
    bool ids, mask;
  };
  const Case cases[] = {
      {1, 1, 1, 1, 0.5f, false, true},      {3, 7, 10, 9, 0.3f, false, true},
      {1000, 130, 131, 133, 0.5f, true, true}, {5, 4, 4, 4, 0.9f, false, true},
      {2, 5, 5, 6, 0.f, true, true},        {64, 3, 3, 3, 0.25f, true, false},
      {1, 13, 13, 13, 0.6f, true, true},    {257, 6, 6, 7, 0.1f, false, false},
  };
  const uint64_t key = 0x5eedf00dULL;
  for (const Case& k : cases) {
    const std::string what = "dropout " + std::to_string(k.rows) + "x" + std::to_string(k.cols) +
                             " p=" + std::to_string(k.p) + (k.ids ? " ids" : "") +
                             (k.mask ? " mask" : "");
    HostMat x(k.rows, k.cols, k.x_ld);
    x.uniform(rng, -3.f, 3.f);
    std::vector<int64_t> ids(static_cast<size_t>(k.rows));
    for (int64_t& id : ids) id = int64_t(rng.next() >> 1) * (rng.below(4) == 0 ? -1 : 1);
    HostMat y(k.rows, k.cols, k.y_ld);
    HostMat want_y = y;
    std::vector<uint8_t> want_mask(size_t(k.rows * k.cols), 7);
    kernels::dropout(Device::cpu, x.cview(), k.p, key, k.ids ? ids.data() : nullptr, want_y.view(),
                     k.mask ? want_mask.data() : nullptr);

    DeviceBuf<float> d_x(x.v), d_y(y.v);
    DeviceBuf<int64_t> d_ids(ids);
    DeviceBuf<uint8_t> d_mask(std::vector<uint8_t>(size_t(k.rows * k.cols), 7));
    kernels::dropout(Device::cuda, x.cview(d_x), k.p, key, k.ids ? d_ids.data() : nullptr,
                     y.view(d_y), k.mask ? d_mask.data() : nullptr);
    check_bits(d_y.download(), want_y.v, what + " y");
    check_bits(d_mask.download(), want_mask, what + " mask");

    // In place (y == x), as a layer may do.
    DeviceBuf<float> d_inplace(x.v);
    kernels::dropout(Device::cuda, x.cview(d_inplace), k.p, key, k.ids ? d_ids.data() : nullptr,
                     x.view(d_inplace), nullptr);
    HostMat want_inplace = x;
    kernels::dropout(Device::cpu, x.cview(), k.p, key, k.ids ? ids.data() : nullptr,
                     want_inplace.view(), nullptr);
    // Padding of x keeps its sentinel on both sides.
    check_bits(d_inplace.download(), want_inplace.v, what + " in place");
  }
}

TEST_CASE("gpu dropout_backward matches the cpu bit for bit", "[gpu][kernels][dropout]") {
  Rng rng(19);
  struct Case {
    int64_t rows, cols, g_ld, d_ld;
    float p;
  };
  for (const Case& k : {Case{1, 1, 1, 1, 0.5f}, Case{3, 7, 8, 10, 0.3f},
                        Case{700, 45, 47, 45, 0.8f}, Case{9, 4, 4, 4, 0.f}}) {
    std::vector<uint8_t> mask(static_cast<size_t>(k.rows * k.cols));
    for (uint8_t& m : mask) m = rng.below(3) != 0;
    HostMat g(k.rows, k.cols, k.g_ld);
    g.uniform(rng, -2.f, 2.f);
    DeviceBuf<float> d_g(g.v);
    DeviceBuf<uint8_t> d_mask(mask);
    for (bool accumulate : {false, true}) {
      HostMat dx(k.rows, k.cols, k.d_ld);
      dx.uniform(rng, -1.f, 1.f);
      HostMat want = dx;
      kernels::dropout_backward(Device::cpu, g.cview(), mask.data(), k.p, want.view(), accumulate);
      DeviceBuf<float> d_dx(dx.v);
      kernels::dropout_backward(Device::cuda, g.cview(d_g), d_mask.data(), k.p, dx.view(d_dx),
                                accumulate);
      check_bits(d_dx.download(), want.v,
                 "dropout_backward " + std::to_string(k.rows) + "x" + std::to_string(k.cols) +
                     (accumulate ? " accumulate" : ""));
    }
  }
}

// ---- rows ----------------------------------------------------------------------------------

TEST_CASE("gpu gather_rows matches the cpu on strided views", "[gpu][kernels][rows]") {
  Rng rng(20);
  struct Case {
    int64_t src_rows, cols, src_ld, n, dst_ld;
  };
  for (const Case& k : {Case{1, 1, 1, 1, 1}, Case{50, 9, 12, 123, 10}, Case{3, 40, 40, 1, 41},
                        Case{4000, 17, 17, 9000, 20}}) {
    HostMat src(k.src_rows, k.cols, k.src_ld);
    src.uniform(rng, -5.f, 5.f);
    std::vector<int32_t> idx(static_cast<size_t>(k.n));
    for (int32_t& i : idx) i = int32_t(rng.below(uint64_t(k.src_rows)));
    HostMat dst(k.n, k.cols, k.dst_ld);
    HostMat want = dst;
    kernels::gather_rows(Device::cpu, src.cview(), idx.data(), k.n, want.view());
    DeviceBuf<float> d_src(src.v), d_dst(dst.v);
    DeviceBuf<int32_t> d_idx(idx);
    kernels::gather_rows(Device::cuda, src.cview(d_src), d_idx.data(), k.n, dst.view(d_dst));
    check_bits(d_dst.download(), want.v, "gather_rows n=" + std::to_string(k.n));
  }
}

TEST_CASE("gpu scatter_rows matches the cpu on strided views", "[gpu][kernels][rows]") {
  Rng rng(21);
  struct Case {
    int64_t n, cols, src_ld, dst_rows, dst_ld;
  };
  for (const Case& k : {Case{1, 1, 1, 1, 1}, Case{40, 9, 12, 123, 10}, Case{3, 40, 40, 5, 41},
                        Case{4000, 17, 17, 9000, 20}}) {
    HostMat src(k.n, k.cols, k.src_ld);
    src.uniform(rng, -5.f, 5.f);
    // Distinct targets: a shuffled prefix of [0, dst_rows).
    std::vector<int32_t> all(static_cast<size_t>(k.dst_rows));
    for (size_t i = 0; i < all.size(); ++i) all[i] = int32_t(i);
    for (size_t i = all.size(); i > 1; --i) std::swap(all[i - 1], all[size_t(rng.below(i))]);
    const std::vector<int32_t> idx(all.begin(), all.begin() + k.n);
    HostMat dst(k.dst_rows, k.cols, k.dst_ld);
    dst.uniform(rng, -1.f, 1.f);
    HostMat want = dst;
    kernels::scatter_rows(Device::cpu, src.cview(), idx.data(), k.n, want.view());
    DeviceBuf<float> d_src(src.v), d_dst(dst.v);
    DeviceBuf<int32_t> d_idx(idx);
    kernels::scatter_rows(Device::cuda, src.cview(d_src), d_idx.data(), k.n, dst.view(d_dst));
    check_bits(d_dst.download(), want.v, "scatter_rows n=" + std::to_string(k.n));
  }
}

TEST_CASE("gpu scatter_add_rows is bit-identical to the cpu's sequential order",
          "[gpu][kernels][rows]") {
  Rng rng(21);
  struct Case {
    const char* name;
    int64_t n, cols, src_ld, targets, dst_ld;
    int kind;  // 0 random targets, 1 all onto one target, 2 a permutation (no duplicates)
  };
  const Case cases[] = {
      {"many duplicates", 20000, 8, 8, 50, 8, 0},
      {"one target", 5000, 37, 40, 3, 41, 1},
      {"single element", 1, 1, 1, 1, 1, 0},
      {"single row", 1, 19, 19, 4, 21, 0},
      {"sparse targets", 300, 5, 7, 100000, 5, 0},
      {"one column", 70000, 1, 1, 1000, 2, 0},
      {"permutation", 777, 33, 33, 777, 35, 2},
      {"wide rows", 600, 300, 301, 40, 300, 0},
  };
  for (const Case& k : cases) {
    const std::string what = std::string("scatter_add_rows ") + k.name;
    HostMat src(k.n, k.cols, k.src_ld);
    src.uniform(rng, -500.f, 500.f);  // large spread: a different order rounds differently
    std::vector<int32_t> idx(static_cast<size_t>(k.n));
    if (k.kind == 0) {
      for (int32_t& i : idx) i = int32_t(rng.below(uint64_t(k.targets)));
    } else if (k.kind == 1) {
      for (int32_t& i : idx) i = int32_t(k.targets / 2);
    } else {
      std::iota(idx.begin(), idx.end(), 0);
      for (size_t i = idx.size(); i > 1; --i) std::swap(idx[i - 1], idx[size_t(rng.below(i))]);
    }
    HostMat dst(k.targets, k.cols, k.dst_ld);
    dst.uniform(rng, -50.f, 50.f);
    HostMat want = dst;
    kernels::scatter_add_rows(Device::cpu, src.cview(), idx.data(), k.n, want.view());

    DeviceBuf<float> d_src(src.v);
    DeviceBuf<int32_t> d_idx(idx);
    DeviceBuf<float> d_dst(dst.v);
    kernels::scatter_add_rows(Device::cuda, src.cview(d_src), d_idx.data(), k.n, dst.view(d_dst));
    const std::vector<float> got = d_dst.download();
    check_close(got, want.v, kRelSum, kAbs, what);
    check_bits(got, want.v, what + " (bits)");

    // A second run from the same start gives the same bits.
    d_dst.upload(dst.v);
    kernels::scatter_add_rows(Device::cuda, src.cview(d_src), d_idx.data(), k.n, dst.view(d_dst));
    check_bits(d_dst.download(), got, what + " (second gpu run)");
  }
}

// ---- losses --------------------------------------------------------------------------------

TEST_CASE("gpu softmax_xent matches the cpu", "[gpu][kernels][loss]") {
  Rng rng(22);
  const int64_t logit_rows = 60;
  for (int64_t cols : {int64_t(1), int64_t(3), int64_t(10), int64_t(45), int64_t(100)}) {
    HostMat logits(logit_rows, cols, cols + 2);
    logits.normal(rng, 5.f);
    logits.at(3, 0) = 80.f;  // far from the rest: the shift by the maximum matters
    logits.at(4, cols - 1) = -80.f;
    DeviceBuf<float> d_logits(logits.v);
    for (int64_t n : {int64_t(1), int64_t(40)}) {
      const std::string what = "softmax_xent cols=" + std::to_string(cols) + " n=" +
                               std::to_string(n);
      // n distinct listed rows in random order, rows 3 and 4 (the extreme ones) first when
      // n > 1.
      std::vector<int32_t> all(static_cast<size_t>(logit_rows));
      std::iota(all.begin(), all.end(), 0);
      for (size_t i = all.size(); i > 1; --i) std::swap(all[i - 1], all[size_t(rng.below(i))]);
      std::vector<int32_t> rows;
      if (n > 1) rows = {3, 4};
      for (int32_t r : all)
        if (int64_t(rows.size()) < n && (n == 1 || (r != 3 && r != 4))) rows.push_back(r);
      REQUIRE(int64_t(rows.size()) == n);
      std::vector<int32_t> labels(static_cast<size_t>(n));
      for (int32_t& l : labels) l = int32_t(rng.below(uint64_t(cols)));
      const float scale = 1.f / float(n);

      HostMat dl(logit_rows, cols, cols + 1);  // sentinel padding and unlisted rows
      HostMat want_dl = dl;
      const double want = kernels::softmax_xent(Device::cpu, logits.cview(), rows.data(),
                                                labels.data(), n, scale, want_dl.view());
      DeviceBuf<int32_t> d_rows(rows), d_labels(labels);
      DeviceBuf<float> d_dl(dl.v);
      const double got = kernels::softmax_xent(Device::cuda, logits.cview(d_logits), d_rows.data(),
                                               d_labels.data(), n, scale, dl.view(d_dl));
      INFO(what << ": loss gpu " << got << ", cpu " << want);
      CHECK(std::fabs(got - want) <= kRelSum * std::fabs(want) + 1e-6);
      check_close(d_dl.download(), want_dl.v, kRel, kAbs, what + " dlogits");

      // Without dlogits: the same loss, nothing written.
      const double got_nograd =
          kernels::softmax_xent(Device::cuda, logits.cview(d_logits), d_rows.data(),
                                d_labels.data(), n, scale, MatView{});
      CHECK(got_nograd == got);
      // Deterministic: a second run gives the same bits.
      const double again = kernels::softmax_xent(Device::cuda, logits.cview(d_logits),
                                                 d_rows.data(), d_labels.data(), n, scale,
                                                 dl.view(d_dl));
      CHECK(again == got);
    }
  }
}

TEST_CASE("gpu count_correct matches the cpu, ties to the lowest index", "[gpu][kernels][loss]") {
  Rng rng(23);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  for (int64_t cols : {int64_t(1), int64_t(7), int64_t(100)}) {
    const int64_t logit_rows = 200;
    HostMat logits(logit_rows, cols, cols + 2);
    // Three values only: ties everywhere.
    for (int64_t r = 0; r < logit_rows; ++r)
      for (int64_t c = 0; c < cols; ++c) logits.at(r, c) = float(rng.below(3));
    logits.at(0, 0) = nan;  // a NaN first element is never beaten
    if (cols > 2) {
      logits.at(1, 1) = nan;  // a later NaN is never chosen
      logits.at(2, cols - 1) = inf;
      for (int64_t c = 0; c < cols; ++c) logits.at(5, c) = -inf;  // all equal: index 0
      logits.at(6, cols - 2) = -0.f;
      for (int64_t c = 0; c < cols; ++c) logits.at(7, c) = c == 0 ? -1.f : nan;
    }
    DeviceBuf<float> d_logits(logits.v);
    for (int64_t n : {int64_t(1), int64_t(150), int64_t(5000)}) {
      std::vector<int32_t> rows(static_cast<size_t>(n)), labels(static_cast<size_t>(n));
      for (int64_t i = 0; i < n; ++i) {
        rows[size_t(i)] = i < 8 ? int32_t(i) : int32_t(rng.below(uint64_t(logit_rows)));
        labels[size_t(i)] = int32_t(rng.below(uint64_t(cols < 3 ? cols : 3)));
      }
      const int64_t want =
          kernels::count_correct(Device::cpu, logits.cview(), rows.data(), labels.data(), n);
      DeviceBuf<int32_t> d_rows(rows), d_labels(labels);
      const int64_t got = kernels::count_correct(Device::cuda, logits.cview(d_logits),
                                                 d_rows.data(), d_labels.data(), n);
      INFO("count_correct cols=" << cols << " n=" << n);
      CHECK(got == want);
    }
  }
}

// ---- recurrent cells -----------------------------------------------------------------------

namespace {

// Pre-activations: mostly moderate, with a few saturating values.
void gate_values(HostMat& m, Rng& rng) {
  m.normal(rng, 2.f);
  if (m.rows * m.cols >= 3) {
    m.at(0, 0) = 30.f;
    m.at(m.rows - 1, m.cols - 1) = -30.f;
  }
}

constexpr double kRnnAbs = 1e-5;  // gradients are O(1); 1 - tanh^2 near saturation cancels

}  // namespace

TEST_CASE("gpu lstm cell matches the cpu", "[gpu][kernels][rnn]") {
  Rng rng(24);
  struct Shape {
    int64_t n, hid;
  };
  for (Shape s : {Shape{1, 1}, Shape{1, 5}, Shape{37, 40}, Shape{300, 3}}) {
    const std::string shape = std::to_string(s.n) + "x" + std::to_string(s.hid);
    HostMat gates(s.n, 4 * s.hid, 4 * s.hid + 3);
    gate_values(gates, rng);
    HostMat c_prev(s.n, s.hid, s.hid + 1);
    c_prev.normal(rng, 1.f);
    DeviceBuf<float> d_gates(gates.v), d_cp(c_prev.v);

    // forward
    HostMat h(s.n, s.hid, s.hid + 2), c(s.n, s.hid, s.hid + 1);
    HostMat want_h = h, want_c = c;
    kernels::lstm_cell_forward(Device::cpu, gates.cview(), c_prev.cview(), want_h.view(),
                               want_c.view());
    DeviceBuf<float> d_h(h.v), d_c(c.v);
    kernels::lstm_cell_forward(Device::cuda, gates.cview(d_gates), c_prev.cview(d_cp),
                               h.view(d_h), c.view(d_c));
    check_close(d_h.download(), want_h.v, kRel, kAbs, "lstm forward h " + shape);
    check_close(d_c.download(), want_c.v, kRel, kAbs, "lstm forward c " + shape);

    // backward, with each optional operand absent in turn
    HostMat dh(s.n, s.hid, s.hid + 3), dc(s.n, s.hid, s.hid);
    dh.normal(rng, 1.f);
    dc.normal(rng, 1.f);
    DeviceBuf<float> d_dh(dh.v), d_dc(dc.v);
    struct Variant {
      bool dh, dc, dgates, dc_prev;
    };
    for (Variant v : {Variant{true, true, true, true}, Variant{false, true, true, true},
                      Variant{true, false, true, true}, Variant{true, true, false, true},
                      Variant{true, true, true, false}}) {
      for (bool accumulate : {false, true}) {
        const std::string what = "lstm backward " + shape + (v.dh ? "" : " no-dh") +
                                  (v.dc ? "" : " no-dc") + (v.dgates ? "" : " no-dgates") +
                                  (v.dc_prev ? "" : " no-dc_prev") +
                                  (accumulate ? " accumulate" : "");
        HostMat dg(s.n, 4 * s.hid, 4 * s.hid + 1), dcp(s.n, s.hid, s.hid + 2);
        dg.uniform(rng, -1.f, 1.f);
        dcp.uniform(rng, -1.f, 1.f);
        HostMat want_dg = dg, want_dcp = dcp;
        kernels::lstm_cell_backward(
            Device::cpu, gates.cview(), c_prev.cview(), v.dh ? dh.cview() : ConstMatView{},
            v.dc ? dc.cview() : ConstMatView{}, v.dgates ? want_dg.view() : MatView{},
            v.dc_prev ? want_dcp.view() : MatView{}, accumulate);
        DeviceBuf<float> d_dg(dg.v), d_dcp(dcp.v);
        kernels::lstm_cell_backward(
            Device::cuda, gates.cview(d_gates), c_prev.cview(d_cp),
            v.dh ? dh.cview(d_dh) : ConstMatView{}, v.dc ? dc.cview(d_dc) : ConstMatView{},
            v.dgates ? dg.view(d_dg) : MatView{}, v.dc_prev ? dcp.view(d_dcp) : MatView{},
            accumulate);
        // An absent output stays as it was on both sides.
        check_close(d_dg.download(), want_dg.v, kRel, kRnnAbs, what + " dgates");
        check_close(d_dcp.download(), want_dcp.v, kRel, kRnnAbs, what + " dc_prev");
      }
    }
  }
}

TEST_CASE("gpu gru cell matches the cpu", "[gpu][kernels][rnn]") {
  Rng rng(25);
  struct Shape {
    int64_t n, hid;
  };
  for (Shape s : {Shape{1, 1}, Shape{1, 6}, Shape{29, 33}, Shape{400, 2}}) {
    const std::string shape = std::to_string(s.n) + "x" + std::to_string(s.hid);
    HostMat xg(s.n, 3 * s.hid, 3 * s.hid + 2), hg(s.n, 3 * s.hid, 3 * s.hid + 1);
    gate_values(xg, rng);
    gate_values(hg, rng);
    HostMat h_prev(s.n, s.hid, s.hid + 1);
    h_prev.uniform(rng, -1.f, 1.f);
    DeviceBuf<float> d_xg(xg.v), d_hg(hg.v), d_hp(h_prev.v);

    HostMat h(s.n, s.hid, s.hid + 2);
    HostMat want_h = h;
    kernels::gru_cell_forward(Device::cpu, xg.cview(), hg.cview(), h_prev.cview(), want_h.view());
    DeviceBuf<float> d_h(h.v);
    kernels::gru_cell_forward(Device::cuda, xg.cview(d_xg), hg.cview(d_hg), h_prev.cview(d_hp),
                              h.view(d_h));
    check_close(d_h.download(), want_h.v, kRel, kAbs, "gru forward " + shape);

    HostMat dh(s.n, s.hid, s.hid + 1);
    dh.normal(rng, 1.f);
    DeviceBuf<float> d_dh(dh.v);
    struct Variant {
      bool dxg, dhg, dh_prev;
    };
    for (Variant v : {Variant{true, true, true}, Variant{false, true, true},
                      Variant{true, false, true}, Variant{true, true, false}}) {
      for (bool accumulate : {false, true}) {
        const std::string what = "gru backward " + shape + (v.dxg ? "" : " no-dxg") +
                                  (v.dhg ? "" : " no-dhg") + (v.dh_prev ? "" : " no-dh_prev") +
                                  (accumulate ? " accumulate" : "");
        HostMat dxg(s.n, 3 * s.hid, 3 * s.hid + 3), dhg(s.n, 3 * s.hid, 3 * s.hid);
        HostMat dhp(s.n, s.hid, s.hid + 1);
        dxg.uniform(rng, -1.f, 1.f);
        dhg.uniform(rng, -1.f, 1.f);
        dhp.uniform(rng, -1.f, 1.f);
        HostMat want_dxg = dxg, want_dhg = dhg, want_dhp = dhp;
        kernels::gru_cell_backward(Device::cpu, xg.cview(), hg.cview(), h_prev.cview(),
                                   dh.cview(), v.dxg ? want_dxg.view() : MatView{},
                                   v.dhg ? want_dhg.view() : MatView{},
                                   v.dh_prev ? want_dhp.view() : MatView{}, accumulate);
        DeviceBuf<float> d_dxg(dxg.v), d_dhg(dhg.v), d_dhp(dhp.v);
        kernels::gru_cell_backward(Device::cuda, xg.cview(d_xg), hg.cview(d_hg),
                                   h_prev.cview(d_hp), dh.cview(d_dh),
                                   v.dxg ? dxg.view(d_dxg) : MatView{},
                                   v.dhg ? dhg.view(d_dhg) : MatView{},
                                   v.dh_prev ? dhp.view(d_dhp) : MatView{}, accumulate);
        check_close(d_dxg.download(), want_dxg.v, kRel, kRnnAbs, what + " dxg");
        check_close(d_dhg.download(), want_dhg.v, kRel, kRnnAbs, what + " dhg");
        check_close(d_dhp.download(), want_dhp.v, kRel, kRnnAbs, what + " dh_prev");
      }
    }
  }
}
