#pragma once
// GraphSAGE with its pooling aggregator (Hamilton et al.; PyG's SAGEConv(aggr="max") after a
// projection, DGL's SAGEConv("pool")): each neighbour's row goes through a ReLU layer, the
// element-wise maximum over the neighbours is taken, and a self term is added.
//
// y = max_{u in N(v)} relu(x_u W_pool + b_pool) W_neigh + x_v W_self
#include <dgnn/dgnn.hpp>

class SagePool : public dgnn::Module {
 public:
  SagePool(int64_t in, int64_t out)
      : w_pool_(add_parameter("pool_weight", in, in)),
        b_pool_(add_parameter("pool_bias", 1, in, dgnn::Init::zeros, /*decay=*/false)),
        w_neigh_(add_parameter("neigh_weight", in, out)),
        w_self_(add_parameter("self_weight", in, out)) {}

  dgnn::Var forward(dgnn::ForwardContext& ctx, const dgnn::Var& x) override {
    using namespace dgnn;
    Var pooled = aggregate_max(ctx.graph, relu(add_bias(matmul(x, w_pool_), b_pool_)));
    return add(matmul(pooled, w_neigh_), matmul(dst_rows(ctx.graph, x), w_self_));
  }

 private:
  dgnn::Var& w_pool_;
  dgnn::Var& b_pool_;
  dgnn::Var& w_neigh_;
  dgnn::Var& w_self_;
};
