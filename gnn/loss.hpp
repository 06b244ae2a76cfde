#pragma once
// Losses and metrics for node classification.
#include <cstdint>
#include <vector>

#include "gnn/autograd.hpp"

namespace dgnn {

// Softmax cross-entropy summed over `rows` (local row indices with labels[i] their classes),
// divided by `normaliser` (the global number of labelled rows, so P ranks sum to the mean).
// Returns a 1 x 1 Var.
Var cross_entropy(const Var& logits, const std::vector<int32_t>& rows,
                  const std::vector<int32_t>& labels, double normaliser);

// Number of `rows` whose argmax matches the label.
int64_t count_correct(const Tensor& logits, const std::vector<int32_t>& rows,
                      const std::vector<int32_t>& labels);

}  // namespace dgnn
