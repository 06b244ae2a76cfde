#pragma once
// Differentiable ops: the vocabulary a layer's forward is written in. Each op computes its
// value through kernels/ (so it runs on the tensor's device) and records its backward.
// Graph ops (aggregate) live in gnn/core/graph_view.hpp; losses in gnn/core/loss.hpp.
#include <cstdint>
#include <optional>
#include <vector>

#include "dgnn/gnn/core/autograd.hpp"

namespace dgnn {

// a (n x k) * b (k x m)
Var matmul(const Var& a, const Var& b);
// Element-wise, same shapes.
Var add(const Var& a, const Var& b);
Var sub(const Var& a, const Var& b);
Var mul(const Var& a, const Var& b);
// s * x
Var scale(const Var& x, float s);
// s * x for a 1 x 1 Var s: a learnable scalar (GIN's 1 + eps, a gate, a temperature). Its
// gradient is sum(x * dy), summed over every rank by the usual all-reduce. On a GPU the scalar
// is read back once per call.
Var scale_by(const Var& x, const Var& s);
// x + bias, bias is 1 x cols broadcast over rows.
Var add_bias(const Var& x, const Var& bias);
Var relu(const Var& x);
Var leaky_relu(const Var& x, float slope = 0.01f);
Var sigmoid(const Var& x);
Var tanh(const Var& x);
// Columns side by side (all inputs have the same row count).
Var concat_cols(const std::vector<Var>& xs);
// Columns [begin, end).
Var slice_cols(const Var& x, int64_t begin, int64_t end);
// Rows [begin, end): a contiguous block, so a copy without an index list; backward adds the
// gradient into those rows.
Var slice_rows(const Var& x, int64_t begin, int64_t end);
// Rows idx[i] of x (n = idx.size() rows); backward scatter-adds.
Var gather_rows(const Var& x, std::vector<int32_t> idx);
// Sum of all elements (1 x 1).
Var sum(const Var& x);
// Mean of all elements (1 x 1).
Var mean(const Var& x);
// A loss term whose gradient with respect to x is already known: a 1 x 1 zero whose backward
// adds g (times the incoming scalar) into x's gradient. A part of a loss back-propagated early
// (down to a leaf holding x's value, see backward_to) is put back on x's tape this way, so the
// rest of the backward sees the gradient it would have reached x with. g empty: adds nothing,
// but x stays reachable (its collective ops still run on this rank).
Var gradient_from(const Var& x, Tensor g);
// Back-propagates `loss_of(leaf)` (a 1 x 1 loss of x's value held by a fresh leaf) times
// `factor` at once, into every parameter it reaches, and returns the gradient term for x
// (gradient_from(x, d loss / d x)): the loss's own tape is freed here instead of living until the
// whole loss's backward. `value` gets the loss's value. The same gradient as adding the loss to
// a loss that is back-propagated later (summed in another order).
template <class LossOf>
Var backward_to(const Var& x, float factor, double& value, LossOf&& loss_of);
// The same for a loss that is a sum of `parts` terms, each made (`loss_of(leaf, k)`, k in
// order) and back-propagated before the next is made, so that only one term's tape is alive at
// a time; `value` gets the terms' sum. A term may be undefined (nothing to add).
template <class LossOf>
Var backward_to_parts(const Var& x, float factor, int parts, double& value, LossOf&& loss_of);

// Inverted dropout with a mask keyed by (key, row_ids[r], column); identity when !training
// or p == 0. row_ids (may be null = row index) must outlive the backward pass.
struct DropoutKey {
  uint64_t seed = 0;
  uint64_t step = 0;
  uint64_t site = 0;  // which dropout in the model (layer index * k + position)
  uint64_t hash() const;
};
// row_ids (one per row of x, or null for the row index) live on x's device: GraphView::
// global_ids_on gives a graph's there.
Var dropout(const Var& x, float p, const DropoutKey& key, const int64_t* row_ids, bool training);

// ---- small generic ops for temporal models and link prediction ----------------------------
// Row sums: N x F -> N x 1.
Var row_sum(const Var& x);
// Row-wise dot product of two N x F matrices -> N x 1 (the score of each candidate pair).
Var dot_rows(const Var& a, const Var& b);
// x + s element-wise.
Var add_scalar(const Var& x, float s);
// 1 - x element-wise (a gate's complement).
Var one_minus(const Var& x);
// One end of every scored pair: rows `index[i]` of `table`, or, with no index, row i itself
// (a table of one row per pair, e.g. rows fetched from other ranks).
struct PairEnd {
  Var table;
  std::optional<std::vector<int32_t>> index;
};
// The link-prediction head as one op: for pair i with end rows h_u, h_v,
// relu([h_u | h_v | h_u * h_v] w1 + b1) w2 + b2 (pairs x w2.cols()), the same numbers as those
// ops one after another (up to rounding) without materialising any pair-sized intermediate on
// the CPU (kernels::pair_mlp_forward). u and v may share one table.
Var pair_mlp(const PairEnd& u, const PairEnd& v, const Var& w1, const Var& b1, const Var& w2,
             const Var& b2);
// The row indices of the k largest entries of an N x 1 score column, largest first; equal
// scores keep the lower row first and NaN ranks below everything. Not differentiable (an index
// helper, e.g. for EvolveGCN-H's top-k summary: gather_rows with these indices is).
std::vector<int32_t> topk_rows(const Tensor& scores, int64_t k);

template <class LossOf>
Var backward_to_parts(const Var& x, float factor, int parts, double& value, LossOf&& loss_of) {
  Var leaf(x.value().clone(), true);  // one step's rows, freed on return
  value = 0;
  for (int k = 0; k < parts; ++k) {
    Var l = loss_of(leaf, k);
    if (!l.defined()) continue;
    value += double(l.value().item());
    Var seeded = factor == 1.f ? l : scale(l, factor);
    seeded.backward();
  }
  return gradient_from(x, std::move(leaf.grad()));
}

template <class LossOf>
Var backward_to(const Var& x, float factor, double& value, LossOf&& loss_of) {
  return backward_to_parts(x, factor, 1, value,
                           [&](const Var& leaf, int) { return loss_of(leaf); });
}

}  // namespace dgnn
