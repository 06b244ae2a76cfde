#include "gnn/optimizer.hpp"

#include <cmath>

#include "common/error.hpp"

namespace dgnn {

void Optimizer::zero_grad() {
  for (auto& [name, p] : params_) p->var.zero_grad();
}

namespace {
// Parameters live on the host for the CPU backend; the CUDA backend will run these loops as a
// fused kernel. A parameter no gradient reached is left unchanged (as PyTorch does).
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
    float* w = p.var.value().data();
    const float* g = p.var.grad().data();
    float* m = m_[i].data();
    float* v = v_[i].data();
    const float wd = p.decay ? cfg_.weight_decay : 0.f;
    const int64_t n = p.var.value().numel();
    for (int64_t k = 0; k < n; ++k) {
      const float gk = g[k] + wd * w[k];
      m[k] = cfg_.beta1 * m[k] + (1.f - cfg_.beta1) * gk;
      v[k] = cfg_.beta2 * v[k] + (1.f - cfg_.beta2) * gk * gk;
      w[k] -= step_size * m[k] / (std::sqrt(v[k]) * inv_sqrt_bc2 + cfg_.eps);
    }
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
  for (auto& [name, p] : params_) velocity_.emplace_back(p->var.rows(), p->var.cols());
}

void Sgd::step() {
  ++steps_;
  for (size_t i = 0; i < params_.size(); ++i) {
    Parameter& p = *params_[i].second;
    if (!has_grad(p)) continue;
    float* w = p.var.value().data();
    const float* g = p.var.grad().data();
    float* vel = velocity_[i].data();
    const float wd = p.decay ? cfg_.weight_decay : 0.f;
    for (int64_t k = 0; k < p.var.value().numel(); ++k) {
      float gk = g[k] + wd * w[k];
      if (cfg_.momentum != 0.f) gk = vel[k] = cfg_.momentum * vel[k] + gk;
      w[k] -= cfg_.lr * gk;
    }
  }
}

std::vector<std::pair<std::string, Tensor*>> Sgd::state() {
  std::vector<std::pair<std::string, Tensor*>> out;
  for (size_t i = 0; i < params_.size(); ++i)
    out.emplace_back(params_[i].first + ".sgd_velocity", &velocity_[i]);
  return out;
}

}  // namespace dgnn
