#include "dgnn/gnn/train/optimizer.hpp"

#include <cmath>

#include "dgnn/common/error.hpp"
#include "dgnn/kernels/kernels.hpp"

namespace dgnn {

namespace {
// The parameter's own weight decay, else the optimiser's; none for biases.
float decay_of(const Parameter& p, float optimiser) {
  return !p.decay ? 0.f : p.weight_decay >= 0.f ? p.weight_decay : optimiser;
}
}  // namespace

void Optimizer::zero_grad() {
  for (auto& [name, p] : params_) p->var.zero_grad();
}

namespace {
// Each update is one fused kernel on the parameter's device. A parameter no gradient reached
// is left unchanged (as PyTorch does).
bool has_grad(const Parameter& p) { return !p.var.grad().empty(); }
}  // namespace

Adam::Adam(std::vector<std::pair<std::string, Parameter*>> params, AdamConfig cfg)
    : Optimizer(std::move(params)), cfg_(cfg) {
  for (auto& [name, p] : params_) {
    m_.emplace_back(p->var.rows(), p->var.cols(), p->var.device());
    v_.emplace_back(p->var.rows(), p->var.cols(), p->var.device());
  }
}

void Adam::step() {
  ++steps_;
  const double bc1 = 1.0 - std::pow(double(cfg_.beta1), double(steps_));
  const double bc2 = 1.0 - std::pow(double(cfg_.beta2), double(steps_));
  const float step_size = float(cfg_.lr / bc1);
  const float inv_sqrt_bc2 = float(1.0 / std::sqrt(bc2));
  for (size_t i = 0; i < params_.size(); ++i) {
    Parameter& p = *params_[i].second;
    if (!has_grad(p)) continue;
    const float wd = decay_of(p, cfg_.weight_decay);
    kernels::adam_step(p.var.device(), p.var.value().numel(), p.var.value().data(),
                       p.var.grad().data(), m_[i].data(), v_[i].data(), step_size, cfg_.beta1,
                       cfg_.beta2, cfg_.eps, inv_sqrt_bc2, wd);
  }
}

std::vector<std::pair<std::string, Tensor*>> Adam::state() {
  std::vector<std::pair<std::string, Tensor*>> out;
  for (size_t i = 0; i < params_.size(); ++i) {
    out.emplace_back(params_[i].first + ".adam_m", &m_[i]);
    out.emplace_back(params_[i].first + ".adam_v", &v_[i]);
  }
  return out;
}

Sgd::Sgd(std::vector<std::pair<std::string, Parameter*>> params, SgdConfig cfg)
    : Optimizer(std::move(params)), cfg_(cfg) {
  for (auto& [name, p] : params_)
    velocity_.emplace_back(p->var.rows(), p->var.cols(), p->var.device());
}

void Sgd::step() {
  ++steps_;
  for (size_t i = 0; i < params_.size(); ++i) {
    Parameter& p = *params_[i].second;
    if (!has_grad(p)) continue;
    const float wd = decay_of(p, cfg_.weight_decay);
    kernels::sgd_step(p.var.device(), p.var.value().numel(), p.var.value().data(),
                      p.var.grad().data(), velocity_[i].data(), cfg_.lr, cfg_.momentum, wd);
  }
}

std::vector<std::pair<std::string, Tensor*>> Sgd::state() {
  std::vector<std::pair<std::string, Tensor*>> out;
  for (size_t i = 0; i < params_.size(); ++i)
    out.emplace_back(params_[i].first + ".sgd_velocity", &velocity_[i]);
  return out;
}

}  // namespace dgnn
