#pragma once
// Losses for node classification and link prediction, and accuracy (ranking metrics are in
// gnn/train/metrics.hpp).
#include <cstdint>
#include <vector>

#include "dgnn/gnn/core/autograd.hpp"

namespace dgnn {

// Softmax cross-entropy summed over `rows` (local row indices with labels[i] their classes),
// divided by `normaliser` (the global number of labelled rows, so P ranks sum to the mean).
// Returns a 1 x 1 Var.
Var cross_entropy(const Var& logits, const std::vector<int32_t>& rows,
                  const std::vector<int32_t>& labels, double normaliser);

// The same loss's sum over `rows` in double precision, no tape (evaluation: validation loss).
double cross_entropy_sum(const Tensor& logits, const std::vector<int32_t>& rows,
                         const std::vector<int32_t>& labels);

// Number of `rows` whose argmax matches the label.
int64_t count_correct(const Tensor& logits, const std::vector<int32_t>& rows,
                      const std::vector<int32_t>& labels);

// Binary cross-entropy on logits (n x 1) for link prediction: sum over i of
// w_i * (max(x_i, 0) - x_i y_i + log1p(exp(-|x_i|))), divided by `normaliser` (the global number
// of scored items, as for cross_entropy). Stable for any logit: nothing is exponentiated that
// could overflow. targets y_i lie in [0, 1]; weights (empty: all 1) balance positives against
// sampled negatives. Returns a 1 x 1 Var.
Var bce_with_logits(const Var& logits, const std::vector<float>& targets, double normaliser,
                    const std::vector<float>& weights = {});

}  // namespace dgnn
