// The pair-scoring MLP from the other kernels, every intermediate materialised for all pairs:
// simple enough to read as the definition.
#include "dgnn/kernels/pair_mlp_composed.hpp"

#include "dgnn/kernels/buffer.hpp"

namespace dgnn::kernels {

namespace {

// A contiguous pairs x cols matrix on `dev`.
struct Mat {
  Buffer buf;
  MatView view;
  Mat(Device dev, int64_t rows, int64_t cols)
      : buf(dev, size_t(rows * cols) * sizeof(float)), view{buf.as<float>(), rows, cols, cols} {}
};

// Rows [k d, (k + 1) d) of W1: the block that multiplies hu (k = 0), hv (1) or hu * hv (2).
ConstMatView w1_block(ConstMatView w1, int64_t k, int64_t d) {
  return {w1.data + k * d * w1.ld, d, w1.cols, w1.ld};
}
MatView w1_block(MatView w1, int64_t k, int64_t d) {
  return {w1.data + k * d * w1.ld, d, w1.cols, w1.ld};
}

// Everything the forward computes per pair: both endpoints' rows, their product and the hidden
// activations.
struct Pairs {
  Mat hu, hv, hh, a;
  Pairs(Device dev, const PairMlp& p)
      : hu(dev, p.pairs, p.hu.cols),
        hv(dev, p.pairs, p.hu.cols),
        hh(dev, p.pairs, p.hu.cols),
        a(dev, p.pairs, p.w1.cols) {
    const int64_t m = p.pairs, d = p.hu.cols;
    if (p.u)
      gather_rows(dev, p.hu, p.u, m, hu.view);
    else
      copy_view(dev, p.hu, hu.view);
    if (p.v)
      gather_rows(dev, p.hv, p.v, m, hv.view);
    else
      copy_view(dev, p.hv, hv.view);
    mul(dev, m * d, hu.view.data, hv.view.data, hh.view.data);
    // a = relu([hu | hv | hu * hv] W1 + b1), the concatenation as three products.
    gemm(dev, false, false, 1.f, hu.view, w1_block(p.w1, 0, d), 0.f, a.view);
    gemm(dev, false, false, 1.f, hv.view, w1_block(p.w1, 1, d), 1.f, a.view);
    gemm(dev, false, false, 1.f, hh.view, w1_block(p.w1, 2, d), 1.f, a.view);
    add_row_vector(dev, a.view, p.b1);
    unary(dev, Unary::relu, a.view.data, a.view.data, m * p.w1.cols);
  }
};

}  // namespace

void pair_mlp_forward_composed(Device dev, const PairMlp& p, MatView logits) {
  if (p.pairs == 0) return;
  const Pairs x(dev, p);
  gemm(dev, false, false, 1.f, x.a.view, p.w2, 0.f, logits);
  add_row_vector(dev, logits, p.b2);
}

void pair_mlp_backward_composed(Device dev, const PairMlp& p, ConstMatView dlogits, MatView dhu,
                                MatView dhv, MatView dw1, float* db1, MatView dw2, float* db2) {
  if (p.pairs == 0) return;
  const int64_t m = p.pairs, d = p.hu.cols, h = p.w1.cols;
  const Pairs x(dev, p);
  if (dw2.data) gemm(dev, true, false, 1.f, x.a.view, dlogits, 1.f, dw2);
  if (db2) column_sum(dev, dlogits, db2, true);
  // dz = dlogits W2^T where the unit was active (a > 0 exactly where its input was).
  Mat dz(dev, m, h);
  gemm(dev, false, true, 1.f, dlogits, p.w2, 0.f, dz.view);
  unary_backward(dev, Unary::relu, x.a.view.data, x.a.view.data, dz.view.data, dz.view.data, m * h,
                 0.f, false);
  if (dw1.data) {
    gemm(dev, true, false, 1.f, x.hu.view, dz.view, 1.f, w1_block(dw1, 0, d));
    gemm(dev, true, false, 1.f, x.hv.view, dz.view, 1.f, w1_block(dw1, 1, d));
    gemm(dev, true, false, 1.f, x.hh.view, dz.view, 1.f, w1_block(dw1, 2, d));
  }
  if (db1) column_sum(dev, dz.view, db1, true);
  if (!dhu.data && !dhv.data) return;
  // d(hu * hv) = dz W1c^T reaches hu times hv and hv times hu.
  Mat dhh(dev, m, d), g(dev, m, d);
  gemm(dev, false, true, 1.f, dz.view, w1_block(p.w1, 2, d), 0.f, dhh.view);
  auto endpoint = [&](int k, const Mat& other, const int32_t* idx, MatView out) {
    if (!out.data) return;
    gemm(dev, false, true, 1.f, dz.view, w1_block(p.w1, k, d), 0.f, g.view);
    mul(dev, m * d, dhh.view.data, other.view.data, g.view.data, true);
    if (idx)
      scatter_add_rows(dev, g.view, idx, m, out);
    else
      copy_view(dev, g.view, out, true);
  };
  endpoint(0, x.hv, p.u, dhu);
  endpoint(1, x.hu, p.v, dhv);
}

}  // namespace dgnn::kernels
