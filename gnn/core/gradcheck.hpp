#pragma once
// Checking a layer's backward against central finite differences, for authors of custom layers:
// the engine derives backward from the tape of ops, and this says whether it agrees with the
// layer's forward, parameter by parameter and for the input.
#include <cstdint>
#include <string>

#include "dgnn/gnn/core/module.hpp"
#include "dgnn/gnn/core/tensor.hpp"

namespace dgnn {

struct GradCheckOptions {
  int64_t entries_per_tensor = 64;  // checked per parameter (and for the input), sampled
  uint64_t seed = 0;                // the sample, and the random projection of the output
  double eps = 1e-3;                // the finite-difference step
  // An entry passes when |analytic - numeric| <= abs_tol + rel_tol * |numeric|.
  double abs_tol = 1e-3, rel_tol = 1e-2;
  bool check_input = true;  // also d/dx
};

struct GradCheckResult {
  int64_t checked = 0;     // entries compared
  int64_t failed = 0;      // entries beyond the tolerance
  // Entries whose step crossed a kink (a ReLU's zero: the one-sided differences disagree) and
  // whose analytic gradient is one side's slope: not compared (counted in `checked`).
  int64_t kinks = 0;
  double worst_ratio = 0;  // max |analytic - numeric| / (abs_tol + rel_tol * |numeric|)
  std::string worst;       // that entry: "weight[2, 5]: analytic 0.12, numeric 0.31"
  bool ok() const { return failed == 0; }
};

// Runs `layer` on `g` and `x` (CPU tensors; evaluation mode, so no dropout) and compares the
// gradients the tape gives for a fixed random projection of its output, sum(y * R), with
// central differences of the same scalar, for a sample of every parameter's entries and of x's.
// An entry whose step crosses a ReLU's kink is set aside (GradCheckResult::kinks), so that a
// whole model with ReLUs (a deep GNN) can be checked, not only a layer. The layer's parameters are left as they were. DeviceError for a layer on a GPU.
GradCheckResult check_layer_gradients(Module& layer, const GraphView& g, const Tensor& x,
                                      const GradCheckOptions& opt = {});

}  // namespace dgnn
