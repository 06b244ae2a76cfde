#pragma once
// The autograd tape. A Var is a handle to a node that holds a value, its gradient and how to
// push that gradient to its inputs. Ops (gnn/core/ops.hpp) build nodes; Var::backward() runs the
// recorded backward functions in reverse topological order. Layers never write a backward.
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "dgnn/gnn/core/tensor.hpp"

namespace dgnn {

struct Node {
  Tensor value;
  Tensor grad;  // allocated (zeros) on first accumulation
  bool requires_grad = false;
  // The backward talks to other ranks collectively: it must run on every rank, even where no
  // gradient (or an empty one) reached this node, or the other ranks would wait forever.
  bool collective = false;
  const char* op = "leaf";
  std::vector<std::shared_ptr<Node>> inputs;
  // Reads this->grad and accumulates into inputs' grads (via grad_of()).
  std::function<void(Node&)> backward;
  // The Vars that hold this node (the tape's links are not Vars), and whether a backward reads
  // its value: a recorded op's value nobody reads is dropped when its last Var goes (no Var can
  // reach it then, and the backward does not need it), so a tape holds what backward reads.
  std::atomic<int> handles{0};
  bool value_read = false;

  // The gradient buffer, zero-allocated on first use (same shape and device as value).
  Tensor& grad_buffer();

  Node() = default;
  // Unlinks a chain of inputs iteratively: dropping a tape thousands of ops deep must not
  // recurse once per node through shared_ptr destructors and overflow the stack.
  ~Node();
};

// The values an op's backward reads: its own output, and its inputs (bit i: input i).
struct Reads {
  bool output = true;
  uint64_t inputs = ~uint64_t(0);
  static Reads nothing() { return {false, 0}; }
  static Reads inputs_only(uint64_t mask) { return {false, mask}; }
};

class Var {
 public:
  Var() = default;
  Var(const Var& o) : node_(o.node_) { hold(); }
  Var(Var&& o) noexcept : node_(std::move(o.node_)) {}
  Var& operator=(const Var& o) {
    if (this != &o) {
      Var keep(o);
      *this = std::move(keep);
    }
    return *this;
  }
  Var& operator=(Var&& o) noexcept {
    if (this != &o) {
      let_go();
      node_ = std::move(o.node_);
    }
    return *this;
  }
  ~Var() { let_go(); }
  // A leaf: a constant input (requires_grad false) or a parameter (true).
  explicit Var(Tensor value, bool requires_grad = false);

  bool defined() const { return node_ != nullptr; }
  // The accessors below throw Error on an undefined Var (Var()), never dereference null.
  const Tensor& value() const { return live().value; }
  Tensor& value() { return live().value; }
  // The gradient after backward(); an empty tensor if none reached this node.
  const Tensor& grad() const { return live().grad; }
  Tensor& grad() { return live().grad; }
  bool requires_grad() const { return node_ && node_->requires_grad; }
  int64_t rows() const { return live().value.rows(); }
  int64_t cols() const { return live().value.cols(); }
  Device device() const { return live().value.device(); }
  const std::shared_ptr<Node>& node() const { return node_; }

  // Back-propagates from this scalar (1 x 1) Var, seeding d(this) = 1. Frees the graph of
  // intermediate nodes' closures afterwards (leaves keep their grads; intermediate nodes'
  // grads are released too). A second backward through a released graph throws.
  void backward();
  // Clears this node's gradient (parameters, between steps): grad() is empty afterwards.
  void zero_grad();

 private:
  friend Var make_op(Tensor, std::vector<Var>, std::function<void(Node&)>, const char*, Reads);
  [[noreturn]] static void undefined();
  void hold() {
    if (node_) node_->handles.fetch_add(1, std::memory_order_relaxed);
  }
  void let_go() noexcept;
  Node& live() const {
    if (!node_) undefined();
    return *node_;
  }
  std::shared_ptr<Node> node_;
};

// Builds an op node. If gradients are disabled (NoGradGuard) or no input requires one, the
// node records nothing and `backward` is dropped. `reads`: the values its backward reads (all,
// unless the op says otherwise); the others may be dropped from the tape (Node::value_read).
Var make_op(Tensor value, std::vector<Var> inputs, std::function<void(Node&)> backward,
            const char* op, Reads reads = Reads{});

// Whether ops record the tape on this thread.
bool grad_enabled();

// Disables recording in a scope (evaluation).
class NoGradGuard {
 public:
  NoGradGuard();
  ~NoGradGuard();
  NoGradGuard(const NoGradGuard&) = delete;
  NoGradGuard& operator=(const NoGradGuard&) = delete;

 private:
  bool prev_;
};

}  // namespace dgnn
