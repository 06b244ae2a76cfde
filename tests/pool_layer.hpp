#pragma once
// A user's layer with the extreme aggregators, for the tests that hold every layer kind to the
// same standard (mini-batch = full graph, P ranks = 1 process): GraphSAGE's pooling aggregator
// (max over neighbours of a transformed input) plus its min twin and a self term scaled by a
// learnable scalar (scale_by). tanh rather than ReLU keeps the pooled values free of ties, so
// the maximum's neighbour is unambiguous.
#include "dgnn/gnn/core/module.hpp"

namespace dgnn::test {

class PoolLayer : public Module {
 public:
  PoolLayer(int64_t in, int64_t out)
      : pool_(add_parameter("pool", in, out)),
        max_(add_parameter("max", out, out)),
        min_(add_parameter("min", out, out)),
        self_(add_parameter("self", in, out)),
        gamma_(add_parameter("gamma", 1, 1, Init::ones, /*decay=*/false)) {}
  Var forward(ForwardContext& ctx, const Var& x) override {
    Var h = tanh(matmul(x, pool_));
    return add(
        add(matmul(aggregate_max(ctx.graph, h), max_), matmul(aggregate_min(ctx.graph, h), min_)),
        matmul(scale_by(dst_rows(ctx.graph, x), gamma_), self_));
  }

 private:
  Var &pool_, &max_, &min_, &self_, &gamma_;
};

}  // namespace dgnn::test
