// Recurrent cells as single tape nodes over the fused kernels of kernels/kernels.hpp.
#include "dgnn/gnn/core/rnn.hpp"

#include <initializer_list>
#include <string>
#include <utility>

#include "dgnn/common/error.hpp"
#include "dgnn/gnn/core/ops.hpp"
#include "dgnn/kernels/kernels.hpp"

namespace dgnn {

namespace {

void check_inputs(const char* op, std::initializer_list<const Var*> vars) {
  const Var* first = *vars.begin();
  for (const Var* v : vars) {
    if (!v->defined()) throw Error(std::string(op) + ": undefined input Var");
    if (v->device() != first->device())
      throw DeviceError(std::string(op) + ": inputs on " + device_name(first->device()) + " and " +
                        device_name(v->device()));
  }
}

void check_shape(const char* op, const char* name, const Var& v, int64_t rows, int64_t cols,
                 const char* rule) {
  if (v.rows() != rows || v.cols() != cols)
    throw ShapeError(std::string(op) + ": " + name + " is " + v.value().shape_str() +
                     ", expected [" + std::to_string(rows) + " x " + std::to_string(cols) + "] (" +
                     rule + ")");
}

MatView cols_of(Tensor& t, int64_t begin, int64_t width) {
  return {t.numel() ? t.data() + begin : nullptr, t.rows(), width, t.cols()};
}
ConstMatView cols_of(const Tensor& t, int64_t begin, int64_t width) {
  return {t.numel() ? t.data() + begin : nullptr, t.rows(), width, t.cols()};
}

// The gradient buffer of input i when it wants one; otherwise a null view (not computed).
MatView grad_view(Node& n, size_t i) {
  if (!n.inputs[i] || !n.inputs[i]->requires_grad) return {};
  return n.inputs[i]->grad_buffer().view();
}
ConstMatView value_view(const Node& n, size_t i) { return n.inputs[i]->value.view(); }

}  // namespace

LstmOut lstm_cell(const Var& gates, const Var& c_prev) {
  check_inputs("lstm_cell", {&gates, &c_prev});
  const int64_t n = c_prev.rows(), hid = c_prev.cols();
  check_shape("lstm_cell", "gates", gates, n, 4 * hid, "N x 4H for c_prev N x H");
  const Device dev = gates.device();
  // One node owns [h | c]; h and c are column slices of it. Each slice's backward adds its
  // half into the node's gradient, so the cell's backward runs once, after both, with dh and dc
  // side by side, and neither output's contribution is counted twice.
  Tensor hc = Tensor::uninitialized(n, 2 * hid, dev);
  kernels::lstm_cell_forward(dev, gates.value().view(), c_prev.value().view(), cols_of(hc, 0, hid),
                             cols_of(hc, hid, hid));
  const Var both = make_op(
      std::move(hc), {gates, c_prev},
      [dev, hid](Node& n) {
        const Tensor& g = n.grad;
        kernels::lstm_cell_backward(dev, value_view(n, 0), value_view(n, 1), cols_of(g, 0, hid),
                                    cols_of(g, hid, hid), grad_view(n, 0), grad_view(n, 1), true);
      },
      "lstm_cell", Reads::inputs_only(0b11));
  return {slice_cols(both, 0, hid), slice_cols(both, hid, 2 * hid)};
}

Var gru_cell(const Var& xg, const Var& hg, const Var& h_prev) {
  check_inputs("gru_cell", {&xg, &hg, &h_prev});
  const int64_t n = h_prev.rows(), hid = h_prev.cols();
  const char* rule = "N x 3H for h_prev N x H";
  check_shape("gru_cell", "xg", xg, n, 3 * hid, rule);
  check_shape("gru_cell", "hg", hg, n, 3 * hid, rule);
  const Device dev = xg.device();
  Tensor h = Tensor::uninitialized(n, hid, dev);
  kernels::gru_cell_forward(dev, xg.value().view(), hg.value().view(), h_prev.value().view(),
                            h.view());
  return make_op(
      std::move(h), {xg, hg, h_prev},
      [dev](Node& n) {
        kernels::gru_cell_backward(dev, value_view(n, 0), value_view(n, 1), value_view(n, 2),
                                   std::as_const(n.grad).view(), grad_view(n, 0), grad_view(n, 1),
                                   grad_view(n, 2), true);
      },
      "gru_cell", Reads::inputs_only(0b111));
}

}  // namespace dgnn
