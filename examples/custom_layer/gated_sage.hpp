#pragma once
// GatedSAGE, a custom GNN layer written against the installed dgnn: only the forward pass, from
// ops. Backward, halo exchange, gradient averaging and sampled mini-batches come from the engine.
//
// y = sigmoid(x W_gate + b) * mean_{u in N(v)} x_u W_neigh + x W_self
// The self terms read dst_rows(ctx.graph, x): x itself on the whole graph, the destination rows
// on a sampled block, so the same layer trains full-batch and mini-batch.
#include <dgnn/dgnn.hpp>

class GatedSage : public dgnn::Module {
 public:
  GatedSage(int64_t in, int64_t out)
      : w_gate_(add_parameter("gate_weight", in, out)),
        b_gate_(add_parameter("gate_bias", 1, out, dgnn::Init::zeros, /*decay=*/false)),
        w_neigh_(add_parameter("neigh_weight", in, out)),
        w_self_(add_parameter("self_weight", in, out)) {}

  dgnn::Var forward(dgnn::ForwardContext& ctx, const dgnn::Var& x) override {
    using namespace dgnn;
    Var self = dst_rows(ctx.graph, x);
    Var gate = sigmoid(add_bias(matmul(self, w_gate_), b_gate_));
    Var neigh = matmul(aggregate(ctx.graph, x, Norm::mean), w_neigh_);
    return add(mul(gate, neigh), matmul(self, w_self_));
  }

 private:
  dgnn::Var& w_gate_;
  dgnn::Var& b_gate_;
  dgnn::Var& w_neigh_;
  dgnn::Var& w_self_;
};
