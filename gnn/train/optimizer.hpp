#pragma once
// Optimisers over a module's parameters. Weight decay is L2 added to the gradient (the
// PyTorch convention the published GCN numbers use) and applies only to parameters marked
// `decay` (weights, not biases). State is exposed so checkpoints can save and restore it.
#include <cstdint>
#include <string>
#include <vector>

#include "dgnn/gnn/core/module.hpp"

namespace dgnn {

class Optimizer {
 public:
  virtual ~Optimizer() = default;
  // Applies one update from the parameters' current gradients.
  virtual void step() = 0;
  void zero_grad();
  int64_t steps() const { return steps_; }
  // Named state tensors ("<param>.m" ...) for checkpoints, plus the step count.
  virtual std::vector<std::pair<std::string, Tensor*>> state() = 0;
  void set_steps(int64_t s) { steps_ = s; }

 protected:
  explicit Optimizer(std::vector<std::pair<std::string, Parameter*>> params)
      : params_(std::move(params)) {}
  std::vector<std::pair<std::string, Parameter*>> params_;
  int64_t steps_ = 0;
};

struct AdamConfig {
  float lr = 0.01f;
  float beta1 = 0.9f;
  float beta2 = 0.999f;
  float eps = 1e-8f;
  float weight_decay = 0.f;
};

class Adam final : public Optimizer {
 public:
  Adam(std::vector<std::pair<std::string, Parameter*>> params, AdamConfig cfg);
  void step() override;
  std::vector<std::pair<std::string, Tensor*>> state() override;

 private:
  AdamConfig cfg_;
  std::vector<Tensor> m_, v_;
};

struct SgdConfig {
  float lr = 0.01f;
  float momentum = 0.f;
  float weight_decay = 0.f;
};

class Sgd final : public Optimizer {
 public:
  Sgd(std::vector<std::pair<std::string, Parameter*>> params, SgdConfig cfg);
  void step() override;
  std::vector<std::pair<std::string, Tensor*>> state() override;

 private:
  SgdConfig cfg_;
  std::vector<Tensor> velocity_;
};

}  // namespace dgnn
