// Differentiable ops. Each computes its value with kernels/ on the inputs' device and records a
// backward that accumulates (+=) into the grads of only those inputs that require one.
#include "dgnn/gnn/core/ops.hpp"

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <utility>

#include "dgnn/common/error.hpp"
#include "dgnn/common/hash_rng.hpp"
#include "dgnn/kernels/kernels.hpp"

namespace dgnn {

namespace {

std::string shape(const Var& v) { return v.value().shape_str(); }

void check_defined(const char* op, const Var& v) {
  if (!v.defined()) throw Error(std::string(op) + ": undefined input Var");
}

void check_pair(const char* op, const Var& a, const Var& b) {
  check_defined(op, a);
  check_defined(op, b);
  if (a.device() != b.device())
    throw DeviceError(std::string(op) + ": inputs on " + device_name(a.device()) + " and " +
                      device_name(b.device()));
}

void check_same_shape(const char* op, const Var& a, const Var& b) {
  check_pair(op, a, b);
  if (a.rows() != b.rows() || a.cols() != b.cols())
    throw ShapeError(std::string(op) + ": shapes " + shape(a) + " and " + shape(b) +
                     " must be equal");
}

bool wants(const Node& n, size_t i) { return n.inputs[i] && n.inputs[i]->requires_grad; }
Tensor& grad_of(Node& n, size_t i) { return n.inputs[i]->grad_buffer(); }
const Tensor& value_of(const Node& n, size_t i) { return n.inputs[i]->value; }

// The 1 x 1 upstream gradient of a reduction, read back to the host to scale its broadcast.
float host_scalar(const Tensor& t) {
  float v = 0.f;
  kernels::copy(Device::cpu, &v, t.device(), t.data(), sizeof(float));
  return v;
}

// Column block [begin, begin + width) of t as a strided view.
MatView cols_of(Tensor& t, int64_t begin, int64_t width) {
  return {t.numel() ? t.data() + begin : nullptr, t.rows(), width, t.cols()};
}
ConstMatView cols_of(const Tensor& t, int64_t begin, int64_t width) {
  return {t.numel() ? t.data() + begin : nullptr, t.rows(), width, t.cols()};
}

// An index list kept for backward. On a device other than the host it also holds a device copy,
// since kernels read indices where they run.
class IndexList {
 public:
  IndexList(std::vector<int32_t> host, Device dev) : host_(std::move(host)), dev_(dev) {
    if (dev_ != Device::cpu && !host_.empty()) {
      const size_t bytes = host_.size() * sizeof(int32_t);
      on_device_ = kernels::alloc(dev_, bytes);
      kernels::copy(dev_, on_device_, Device::cpu, host_.data(), bytes);
    }
  }
  ~IndexList() { kernels::free(dev_, on_device_); }
  IndexList(const IndexList&) = delete;
  IndexList& operator=(const IndexList&) = delete;

  const int32_t* data() const {
    return on_device_ ? static_cast<const int32_t*>(on_device_) : host_.data();
  }
  int64_t size() const { return int64_t(host_.size()); }

 private:
  std::vector<int32_t> host_;
  Device dev_;
  void* on_device_ = nullptr;
};

Var unary_op(const char* name, kernels::Unary op, const Var& x, float alpha) {
  check_defined(name, x);
  const Device dev = x.device();
  Tensor y = Tensor::uninitialized(x.rows(), x.cols(), dev);
  kernels::unary(dev, op, x.value().data(), y.data(), y.numel(), alpha);
  // The derivative reads x (leaky_relu), y (sigmoid, tanh, exp; relu's x > 0 is its y > 0, so
  // relu reads y in x's place) or neither (neg): the tape keeps only that.
  const bool reads_x = op == kernels::Unary::leaky_relu;
  const bool reads_y = op != kernels::Unary::leaky_relu && op != kernels::Unary::neg;
  return make_op(
      std::move(y), {x},
      [op, alpha](Node& n) {
        const float* xv = op == kernels::Unary::relu           ? n.value.data()
                          : op == kernels::Unary::leaky_relu ? value_of(n, 0).data()
                                                             : nullptr;
        const float* yv = op == kernels::Unary::relu ? nullptr : n.value.data();
        kernels::unary_backward(n.value.device(), op, xv, yv, n.grad.data(), grad_of(n, 0).data(),
                                n.value.numel(), alpha, true);
      },
      name, Reads{reads_y, reads_x ? 1u : 0u});
}

// Adds the scalar g to every element of t (the backward of sum and mean).
void add_scalar(Tensor& t, float g) {
  const Tensor row = Tensor::filled(1, t.cols(), g, t.device());
  kernels::add_row_vector(t.device(), t.view(), row.data());
}

}  // namespace

Var matmul(const Var& a, const Var& b) {
  check_pair("matmul", a, b);
  if (a.cols() != b.rows())
    throw ShapeError("matmul: " + shape(a) + " * " + shape(b) + ": inner sizes differ");
  const Device dev = a.device();
  Tensor c = Tensor::uninitialized(a.rows(), b.cols(), dev);
  kernels::gemm(dev, false, false, 1.f, a.value().view(), b.value().view(), 0.f, c.view());
  return make_op(
      std::move(c), {a, b},
      [dev](Node& n) {
        const ConstMatView g = std::as_const(n.grad).view();
        if (wants(n, 0))  // dA += dC B^T
          kernels::gemm(dev, false, true, 1.f, g, value_of(n, 1).view(), 1.f, grad_of(n, 0).view());
        if (wants(n, 1))  // dB += A^T dC
          kernels::gemm(dev, true, false, 1.f, value_of(n, 0).view(), g, 1.f, grad_of(n, 1).view());
      },
      "matmul", Reads::inputs_only((b.requires_grad() ? 1u : 0u) | (a.requires_grad() ? 2u : 0u)));
}

Var add(const Var& a, const Var& b) {
  check_same_shape("add", a, b);
  const Device dev = a.device();
  Tensor c = a.value().clone();
  kernels::axpby(dev, c.numel(), 1.f, b.value().data(), 1.f, c.data());
  return make_op(
      std::move(c), {a, b},
      [dev](Node& n) {
        for (size_t i = 0; i < 2; ++i)
          if (wants(n, i))
            kernels::axpby(dev, n.grad.numel(), 1.f, n.grad.data(), 1.f, grad_of(n, i).data());
      },
      "add", Reads::nothing());
}

Var sub(const Var& a, const Var& b) {
  check_same_shape("sub", a, b);
  const Device dev = a.device();
  Tensor c = a.value().clone();
  kernels::axpby(dev, c.numel(), -1.f, b.value().data(), 1.f, c.data());
  return make_op(
      std::move(c), {a, b},
      [dev](Node& n) {
        for (size_t i = 0; i < 2; ++i)
          if (wants(n, i))
            kernels::axpby(dev, n.grad.numel(), i == 0 ? 1.f : -1.f, n.grad.data(), 1.f,
                           grad_of(n, i).data());
      },
      "sub", Reads::nothing());
}

Var mul(const Var& a, const Var& b) {
  check_same_shape("mul", a, b);
  const Device dev = a.device();
  Tensor c = Tensor::uninitialized(a.rows(), a.cols(), dev);
  kernels::mul(dev, c.numel(), a.value().data(), b.value().data(), c.data());
  return make_op(
      std::move(c), {a, b},
      [dev](Node& n) {
        for (size_t i = 0; i < 2; ++i)  // d(a*b)/da = b and vice versa
          if (wants(n, i))
            kernels::mul(dev, n.grad.numel(), n.grad.data(), value_of(n, 1 - i).data(),
                         grad_of(n, i).data(), true);
      },
      "mul");
}

Var scale(const Var& x, float s) {
  check_defined("scale", x);
  const Device dev = x.device();
  Tensor y = Tensor::uninitialized(x.rows(), x.cols(), dev);
  kernels::axpby(dev, y.numel(), s, x.value().data(), 0.f, y.data());
  return make_op(
      std::move(y), {x},
      [dev, s](Node& n) {
        kernels::axpby(dev, n.grad.numel(), s, n.grad.data(), 1.f, grad_of(n, 0).data());
      },
      "scale", Reads::nothing());
}

Var scale_by(const Var& x, const Var& s) {
  check_pair("scale_by", x, s);
  if (s.rows() != 1 || s.cols() != 1)
    throw ShapeError("scale_by: the scalar " + shape(s) + " must be [1 x 1]");
  const Device dev = x.device();
  // The value used forward is the one the backward scales by, whatever happens to s between.
  const float sv = s.value().item();
  Tensor y = Tensor::uninitialized(x.rows(), x.cols(), dev);
  kernels::axpby(dev, y.numel(), sv, x.value().data(), 0.f, y.data());
  return make_op(
      std::move(y), {x, s},
      [dev, sv](Node& n) {
        const int64_t count = n.grad.numel();
        if (wants(n, 0)) kernels::axpby(dev, count, sv, n.grad.data(), 1.f, grad_of(n, 0).data());
        if (wants(n, 1)) {
          Tensor prod = Tensor::uninitialized(n.grad.rows(), n.grad.cols(), dev);
          kernels::mul(dev, count, value_of(n, 0).data(), n.grad.data(), prod.data());
          const Tensor ds = Tensor::filled(1, 1, float(kernels::sum(dev, prod.data(), count)), dev);
          kernels::axpby(dev, 1, 1.f, ds.data(), 1.f, grad_of(n, 1).data());
        }
      },
      "scale_by", Reads::inputs_only(s.requires_grad() ? 1u : 0u));  // x, for ds only
}

Var add_bias(const Var& x, const Var& bias) {
  check_pair("add_bias", x, bias);
  if (bias.rows() != 1 || bias.cols() != x.cols())
    throw ShapeError("add_bias: bias " + shape(bias) + " must be [1 x " + std::to_string(x.cols()) +
                     "] for x " + shape(x));
  const Device dev = x.device();
  Tensor y = x.value().clone();
  kernels::add_row_vector(dev, y.view(), bias.value().data());
  return make_op(
      std::move(y), {x, bias},
      [dev](Node& n) {
        if (wants(n, 0))
          kernels::axpby(dev, n.grad.numel(), 1.f, n.grad.data(), 1.f, grad_of(n, 0).data());
        if (wants(n, 1))
          kernels::column_sum(dev, std::as_const(n.grad).view(), grad_of(n, 1).data(), true);
      },
      "add_bias", Reads::nothing());
}

Var relu(const Var& x) { return unary_op("relu", kernels::Unary::relu, x, 0.f); }
Var leaky_relu(const Var& x, float slope) {
  return unary_op("leaky_relu", kernels::Unary::leaky_relu, x, slope);
}
Var sigmoid(const Var& x) { return unary_op("sigmoid", kernels::Unary::sigmoid, x, 0.f); }
Var tanh(const Var& x) { return unary_op("tanh", kernels::Unary::tanh, x, 0.f); }

Var concat_cols(const std::vector<Var>& xs) {
  if (xs.empty()) throw ShapeError("concat_cols: no inputs");
  int64_t width = 0;
  for (const Var& x : xs) {
    check_pair("concat_cols", xs[0], x);
    if (x.rows() != xs[0].rows())
      throw ShapeError("concat_cols: row counts differ, " + shape(xs[0]) + " and " + shape(x));
    width += x.cols();
  }
  const Device dev = xs[0].device();
  Tensor y = Tensor::uninitialized(xs[0].rows(), width, dev);
  int64_t begin = 0;
  for (const Var& x : xs) {
    kernels::copy_view(dev, x.value().view(), cols_of(y, begin, x.cols()));
    begin += x.cols();
  }
  return make_op(
      std::move(y), xs,
      [dev](Node& n) {
        int64_t begin = 0;
        for (size_t i = 0; i < n.inputs.size(); ++i) {
          const int64_t w = value_of(n, i).cols();
          if (wants(n, i))
            kernels::copy_view(dev, cols_of(std::as_const(n.grad), begin, w), grad_of(n, i).view(),
                               true);
          begin += w;
        }
      },
      "concat_cols", Reads::nothing());  // (input shapes only)
}

Var slice_cols(const Var& x, int64_t begin, int64_t end) {
  check_defined("slice_cols", x);
  if (begin < 0 || end < begin || end > x.cols())
    throw ShapeError("slice_cols: columns [" + std::to_string(begin) + ", " + std::to_string(end) +
                     ") out of range for " + shape(x));
  const Device dev = x.device();
  Tensor y = Tensor::uninitialized(x.rows(), end - begin, dev);
  kernels::copy_view(dev, cols_of(x.value(), begin, end - begin), y.view());
  return make_op(
      std::move(y), {x},
      [dev, begin](Node& n) {
        Tensor& gx = grad_of(n, 0);
        kernels::copy_view(dev, std::as_const(n.grad).view(), cols_of(gx, begin, n.grad.cols()),
                           true);
      },
      "slice_cols", Reads::nothing());
}

Var slice_rows(const Var& x, int64_t begin, int64_t end) {
  check_defined("slice_rows", x);
  if (begin < 0 || end < begin || end > x.rows())
    throw ShapeError("slice_rows: rows [" + std::to_string(begin) + ", " + std::to_string(end) +
                     ") out of range for " + shape(x));
  const Device dev = x.device();
  const int64_t f = x.cols();
  Tensor y = Tensor::uninitialized(end - begin, f, dev);
  if (y.numel() > 0)
    kernels::copy(dev, y.data(), dev, x.value().data() + begin * f, size_t(y.numel()) * 4);
  return make_op(
      std::move(y), {x},
      [dev, begin, f](Node& n) {
        if (n.grad.numel() == 0) return;
        float* gx = grad_of(n, 0).data() + begin * f;
        kernels::axpby(dev, n.grad.numel(), 1.f, n.grad.data(), 1.f, gx);
      },
      "slice_rows", Reads::nothing());
}

Var gather_rows(const Var& x, std::vector<int32_t> idx) {
  check_defined("gather_rows", x);
  for (size_t i = 0; i < idx.size(); ++i)
    if (idx[i] < 0 || idx[i] >= x.rows())
      throw ShapeError("gather_rows: index " + std::to_string(idx[i]) + " at position " +
                       std::to_string(i) + " is out of range for x " + shape(x));
  const Device dev = x.device();
  auto list = std::make_shared<IndexList>(std::move(idx), dev);
  Tensor y = Tensor::uninitialized(list->size(), x.cols(), dev);
  kernels::gather_rows(dev, x.value().view(), list->data(), list->size(), y.view());
  return make_op(
      std::move(y), {x},
      [dev, list](Node& n) {
        kernels::scatter_add_rows(dev, std::as_const(n.grad).view(), list->data(), list->size(),
                                  grad_of(n, 0).view());
      },
      "gather_rows");
}

Var sum(const Var& x) {
  check_defined("sum", x);
  const Device dev = x.device();
  const double s = kernels::sum(dev, x.value().data(), x.value().numel());
  return make_op(
      Tensor::filled(1, 1, float(s), dev), {x},
      [](Node& n) { add_scalar(grad_of(n, 0), host_scalar(n.grad)); }, "sum");
}

Var gradient_from(const Var& x, Tensor g) {
  check_defined("gradient_from", x);
  if (g.numel() > 0 && (g.rows() != x.rows() || g.cols() != x.cols() || g.device() != x.device()))
    throw ShapeError("gradient_from: the gradient " + g.shape_str() + " does not match " + shape(x));
  const Device dev = x.device();
  auto grad = std::make_shared<Tensor>(std::move(g));
  return make_op(
      Tensor::filled(1, 1, 0.f, dev), {x},
      [dev, grad](Node& n) {
        if (grad->numel() == 0) return;
        kernels::axpby(dev, grad->numel(), host_scalar(n.grad), grad->data(), 1.f,
                       grad_of(n, 0).data());
      },
      "gradient_from", Reads::nothing());
}

Var mean(const Var& x) {
  check_defined("mean", x);
  const int64_t count = x.value().numel();
  if (count == 0) throw ShapeError("mean: of an empty tensor " + shape(x));
  const Device dev = x.device();
  const double s = kernels::sum(dev, x.value().data(), count);
  return make_op(
      Tensor::filled(1, 1, float(s / double(count)), dev), {x},
      [count](Node& n) {
        add_scalar(grad_of(n, 0), float(double(host_scalar(n.grad)) / double(count)));
      },
      "mean");
}

// Nested, not XOR-ed: hash_combine(mix64(a), b) would be symmetric in a and b, so seed 1 step 2
// would share a mask with seed 2 step 1.
uint64_t DropoutKey::hash() const { return hash_combine(hash_combine(seed, step), site); }

Var dropout(const Var& x, float p, const DropoutKey& key, const int64_t* row_ids, bool training) {
  check_defined("dropout", x);
  if (!(p >= 0.f && p < 1.f))
    throw OptionError("dropout: p must be in [0, 1), got " + std::to_string(p));
  if (!training || p == 0.f) return x;
  const Device dev = x.device();
  const int64_t n = x.value().numel();
  Tensor y = Tensor::uninitialized(x.rows(), x.cols(), dev);
  // Dropout on the input features needs no mask: nothing flows back to them.
  if (!x.requires_grad() || !grad_enabled()) {
    kernels::dropout(dev, x.value().view(), p, key.hash(), row_ids, y.view(), nullptr);
    return Var(std::move(y));
  }
  // The mask is kept (one byte per element) rather than re-hashed in backward: the caller's
  // row_ids need not survive until then, and a byte read is cheaper than a hash.
  std::shared_ptr<uint8_t> mask(static_cast<uint8_t*>(kernels::alloc(dev, size_t(n))),
                                [dev](uint8_t* m) { kernels::free(dev, m); });
  kernels::dropout(dev, x.value().view(), p, key.hash(), row_ids, y.view(), mask.get());
  return make_op(
      std::move(y), {x},
      [dev, p, mask](Node& n) {
        kernels::dropout_backward(dev, std::as_const(n.grad).view(), mask.get(), p,
                                  grad_of(n, 0).view(), true);
      },
      "dropout", Reads::nothing());  // the mask says it all
}

// ---- small generic ops for temporal models and link prediction ----------------------------

Var row_sum(const Var& x) {
  check_defined("row_sum", x);
  const Device dev = x.device();
  // A product with a ones column: BLAS does the reduction, and the same product transposed
  // broadcasts the gradient back, so no reduction kernel of its own is needed.
  auto ones = std::make_shared<Tensor>(Tensor::filled(x.cols(), 1, 1.f, dev));
  Tensor y = Tensor::uninitialized(x.rows(), 1, dev);
  kernels::gemm(dev, false, false, 1.f, x.value().view(), std::as_const(*ones).view(), 0.f,
                y.view());
  return make_op(
      std::move(y), {x},
      [dev, ones](Node& n) {  // dX += dy 1^T
        kernels::gemm(dev, false, true, 1.f, std::as_const(n.grad).view(),
                      std::as_const(*ones).view(), 1.f, grad_of(n, 0).view());
      },
      "row_sum");
}

Var dot_rows(const Var& a, const Var& b) {
  check_same_shape("dot_rows", a, b);
  const Device dev = a.device();
  const int64_t rows = a.rows(), cols = a.cols();
  auto ones = std::make_shared<Tensor>(Tensor::filled(cols, 1, 1.f, dev));
  Tensor prod = Tensor::uninitialized(rows, cols, dev);
  kernels::mul(dev, prod.numel(), a.value().data(), b.value().data(), prod.data());
  Tensor y = Tensor::uninitialized(rows, 1, dev);
  kernels::gemm(dev, false, false, 1.f, std::as_const(prod).view(), std::as_const(*ones).view(),
                0.f, y.view());
  return make_op(
      std::move(y), {a, b},
      [dev, ones](Node& n) {
        // Each row's upstream scalar broadcast over its columns, then times the other factor.
        const Tensor& x0 = value_of(n, 0);
        Tensor g = Tensor::uninitialized(x0.rows(), x0.cols(), dev);
        kernels::gemm(dev, false, true, 1.f, std::as_const(n.grad).view(),
                      std::as_const(*ones).view(), 0.f, g.view());
        for (size_t i = 0; i < 2; ++i)
          if (wants(n, i))
            kernels::mul(dev, g.numel(), g.data(), value_of(n, 1 - i).data(), grad_of(n, i).data(),
                         true);
      },
      "dot_rows");
}

Var add_scalar(const Var& x, float s) {
  check_defined("add_scalar", x);
  const Device dev = x.device();
  Tensor y = x.value().clone();
  add_scalar(y, s);
  return make_op(
      std::move(y), {x},
      [dev](Node& n) {
        kernels::axpby(dev, n.grad.numel(), 1.f, n.grad.data(), 1.f, grad_of(n, 0).data());
      },
      "add_scalar");
}

Var one_minus(const Var& x) {
  check_defined("one_minus", x);
  const Device dev = x.device();
  Tensor y = Tensor::uninitialized(x.rows(), x.cols(), dev);
  kernels::axpby(dev, y.numel(), -1.f, x.value().data(), 0.f, y.data());
  add_scalar(y, 1.f);
  return make_op(
      std::move(y), {x},
      [dev](Node& n) {
        kernels::axpby(dev, n.grad.numel(), -1.f, n.grad.data(), 1.f, grad_of(n, 0).data());
      },
      "one_minus");
}

Var pair_mlp(const PairEnd& u, const PairEnd& v, const Var& w1, const Var& b1, const Var& w2,
             const Var& b2) {
  for (const Var* x : {&v.table, &w1, &b1, &w2, &b2}) check_pair("pair_mlp", u.table, *x);
  const int64_t d = u.table.cols(), h = w1.cols(), c = w2.cols();
  if (v.table.cols() != d || w1.rows() != 3 * d || b1.rows() != 1 || b1.cols() != h ||
      w2.rows() != h || b2.rows() != 1 || b2.cols() != c)
    throw ShapeError(std::string("pair_mlp: ends ") + shape(u.table) + " and " + shape(v.table) +
                     ", w1 " + shape(w1) + ", b1 " + shape(b1) + ", w2 " + shape(w2) + ", b2 " +
                     shape(b2) +
                     " (expected ends of one width D, w1 3D x H, b1 1 x H, w2 H x C, "
                     "b2 1 x C)");
  auto count = [](const PairEnd& e) { return e.index ? int64_t(e.index->size()) : e.table.rows(); };
  const int64_t pairs = count(u);
  if (count(v) != pairs)
    throw ShapeError(std::string("pair_mlp: ") + std::to_string(pairs) + " first ends but " +
                     std::to_string(count(v)) + " second ends");
  const Device dev = u.table.device();
  auto index = [dev](const PairEnd& e, const char* name) -> std::shared_ptr<IndexList> {
    if (!e.index) return nullptr;
    for (size_t i = 0; i < e.index->size(); ++i)
      if ((*e.index)[i] < 0 || (*e.index)[i] >= e.table.rows())
        throw ShapeError(std::string("pair_mlp: ") + name + " index " +
                         std::to_string((*e.index)[i]) + " at position " + std::to_string(i) +
                         " is out of range for " + shape(e.table));
    return std::make_shared<IndexList>(*e.index, dev);
  };
  const auto ui = index(u, "first end"), vi = index(v, "second end");
  // The kernels' description of the op from the node's inputs: tables, weights, indices.
  auto describe = [ui, vi, pairs](const Tensor& hu, const Tensor& hv, const Tensor& tw1,
                                  const Tensor& tb1, const Tensor& tw2, const Tensor& tb2) {
    kernels::PairMlp p;
    p.hu = hu.view();
    p.u = ui ? ui->data() : nullptr;
    p.hv = hv.view();
    p.v = vi ? vi->data() : nullptr;
    p.pairs = pairs;
    p.w1 = tw1.view();
    p.b1 = tb1.data();
    p.w2 = tw2.view();
    p.b2 = tb2.data();
    return p;
  };
  Tensor out = Tensor::uninitialized(pairs, c, dev);
  kernels::pair_mlp_forward(
      dev,
      describe(u.table.value(), v.table.value(), w1.value(), b1.value(), w2.value(), b2.value()),
      out.view());
  return make_op(
      std::move(out), {u.table, v.table, w1, b1, w2, b2},
      [dev, describe](Node& n) {
        const kernels::PairMlp p = describe(value_of(n, 0), value_of(n, 1), value_of(n, 2),
                                            value_of(n, 3), value_of(n, 4), value_of(n, 5));
        auto grad = [&n](size_t i) { return wants(n, i) ? grad_of(n, i).view() : MatView{}; };
        // u and v may be one table: both gradients then land in its one buffer.
        const MatView dhu = grad(0), dhv = grad(1), dw1 = grad(2), dw2 = grad(4);
        float* db1 = wants(n, 3) ? grad_of(n, 3).data() : nullptr;
        float* db2 = wants(n, 5) ? grad_of(n, 5).data() : nullptr;
        kernels::pair_mlp_backward(dev, p, std::as_const(n.grad).view(), dhu, dhv, dw1, db1, dw2,
                                   db2);
      },
      "pair_mlp");
}

std::vector<int32_t> topk_rows(const Tensor& scores, int64_t k) {
  if (scores.cols() != 1)
    throw ShapeError("topk_rows: scores " + scores.shape_str() + " must be one column");
  if (k < 0 || k > scores.rows())
    throw ShapeError("topk_rows: k = " + std::to_string(k) + " out of range for " +
                     scores.shape_str());
  std::vector<float> s(size_t(scores.rows()));
  kernels::copy(Device::cpu, s.data(), scores.device(), scores.data(), s.size() * sizeof(float));
  std::vector<int32_t> idx(s.size());
  for (size_t i = 0; i < idx.size(); ++i) idx[i] = int32_t(i);
  // NaN ranks below everything, which also keeps the order a strict weak ordering.
  std::partial_sort(idx.begin(), idx.begin() + k, idx.end(), [&](int32_t a, int32_t b) {
    const float sa = s[size_t(a)], sb = s[size_t(b)];
    const bool na = std::isnan(sa), nb = std::isnan(sb);
    if (na != nb) return nb;
    if (!na && sa != sb) return sa > sb;
    return a < b;
  });
  idx.resize(size_t(k));
  return idx;
}

}  // namespace dgnn
