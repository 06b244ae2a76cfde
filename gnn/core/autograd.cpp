// The tape: nodes link to their inputs; backward walks them in reverse topological order.
#include "dgnn/gnn/core/autograd.hpp"

#include <cstring>
#include <unordered_set>
#include <utility>

#include "dgnn/common/error.hpp"
#include "dgnn/kernels/kernels.hpp"

namespace dgnn {

namespace {
thread_local bool g_grad_enabled = true;

bool is_leaf(const Node& n) { return std::strcmp(n.op, "leaf") == 0; }
}  // namespace

Tensor& Node::grad_buffer() {
  if (grad.rows() != value.rows() || grad.cols() != value.cols() ||
      grad.device() != value.device() || (grad.numel() > 0 && !grad.data()))
    grad = Tensor(value.rows(), value.cols(), value.device());
  return grad;
}

Node::~Node() {
  std::vector<std::shared_ptr<Node>> pending = std::move(inputs);
  while (!pending.empty()) {
    std::shared_ptr<Node> n = std::move(pending.back());
    pending.pop_back();
    // Only when this is the last reference would destroying n cascade into its inputs; take
    // them over first so that n dies with an empty input list.
    if (n && n.use_count() == 1) {
      for (auto& in : n->inputs) pending.push_back(std::move(in));
      n->inputs.clear();
    }
  }
}

void Var::undefined() {
  throw Error("an undefined Var (Var(), e.g. a layer's forward that returned nothing) was used");
}

Var::Var(Tensor value, bool requires_grad) : node_(std::make_shared<Node>()) {
  node_->value = std::move(value);
  node_->requires_grad = requires_grad;
  hold();
}

void Var::let_go() noexcept {
  if (!node_) return;
  Node& n = *node_;
  if (n.handles.fetch_sub(1, std::memory_order_acq_rel) == 1 && n.backward && !n.value_read)
    n.value.drop_storage();
  node_.reset();
}

void Var::backward() {
  if (!node_) throw Error("backward() on an undefined Var");
  if (rows() != 1 || cols() != 1)
    throw ShapeError("backward() needs a 1 x 1 Var (a loss), got " + value().shape_str());
  if (!node_->requires_grad)
    throw Error(
        "backward(): nothing to differentiate; no input of this Var requires a grad "
        "(or it was computed under NoGradGuard)");

  // Post-order DFS with an explicit stack: a recursive walk would overflow on deep tapes
  // (long unrolled recurrences over many snapshots). Holding shared_ptrs keeps every node
  // alive while links are being released below.
  std::vector<std::shared_ptr<Node>> order;
  std::unordered_set<const Node*> seen{node_.get()};
  std::vector<std::pair<std::shared_ptr<Node>, size_t>> stack{{node_, 0}};
  while (!stack.empty()) {
    auto& top = stack.back();
    if (top.second < top.first->inputs.size()) {
      const std::shared_ptr<Node>& in = top.first->inputs[top.second++];
      if (in && in->requires_grad && seen.insert(in.get()).second) stack.emplace_back(in, 0);
    } else {
      Node& n = *top.first;
      if (!is_leaf(n) && !n.backward)
        throw Error(std::string("backward(): the tape through op '") + n.op +
                    "' was already released by an earlier backward(); recompute the forward");
      order.push_back(std::move(top.first));
      stack.pop_back();
    }
  }

  const Tensor one = Tensor::filled(1, 1, 1.f, device());
  kernels::axpby(device(), 1, 1.f, one.data(), 1.f, node_->grad_buffer().data());

  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    Node& n = **it;
    if (is_leaf(n)) continue;
    // A node no gradient reached (e.g. a branch that does not feed the loss) has nothing to
    // push; its buffer would be all zeros.
    if (n.backward && n.collective) n.grad_buffer();  // zeros where nothing reached it
    if (n.backward && (n.grad.numel() > 0 || n.collective)) n.backward(n);
    n.backward = nullptr;
    n.inputs.clear();
    n.grad = Tensor();
  }
}

void Var::zero_grad() {
  if (node_) node_->grad = Tensor();
}

Var make_op(Tensor value, std::vector<Var> inputs, std::function<void(Node&)> backward,
            const char* op, Reads reads) {
  Var out;
  out.node_ = std::make_shared<Node>();
  out.hold();
  out.node_->value = std::move(value);
  out.node_->op = op;
  bool any = false;
  for (const Var& v : inputs) any = any || v.requires_grad();
  // A constant result keeps requires_grad false, so backward() never walks into it.
  if (!g_grad_enabled || !any || !backward) return out;
  out.node_->requires_grad = true;
  out.node_->backward = std::move(backward);
  out.node_->value_read = reads.output;
  out.node_->inputs.reserve(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    Var& v = inputs[i];
    if (v.node_ && (i >= 64 || (reads.inputs >> i & 1))) v.node_->value_read = true;
    out.node_->inputs.push_back(v.node_);
  }
  return out;
}

bool grad_enabled() { return g_grad_enabled; }

NoGradGuard::NoGradGuard() : prev_(g_grad_enabled) { g_grad_enabled = false; }
NoGradGuard::~NoGradGuard() { g_grad_enabled = prev_; }

}  // namespace dgnn
