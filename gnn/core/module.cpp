#include "dgnn/gnn/core/module.hpp"

#include <cmath>
#include <string>

#include "dgnn/common/error.hpp"
#include "dgnn/common/hash_rng.hpp"

namespace dgnn {

uint64_t stable_hash(const std::string& s, uint64_t seed) {
  uint64_t h = mix64(seed);
  for (unsigned char c : s) h = hash_combine(h, c);
  return h;
}

void init_tensor(Tensor& t, Init init, uint64_t seed) {
  Tensor host(t.rows(), t.cols());
  if (init == Init::ones) {
    for (int64_t i = 0; i < host.numel(); ++i) host.data()[i] = 1.f;
  } else if (init == Init::glorot) {
    // Glorot / Xavier uniform, as GCN, GraphSAGE and PyG use.
    const float a = std::sqrt(6.0f / float(t.rows() + t.cols()));
    Rng rng(seed);
    for (int64_t i = 0; i < host.numel(); ++i) host.data()[i] = (2.f * rng.uniform() - 1.f) * a;
  }
  t = host.to(t.device());
}

void Module::check_new_name(const char* fn, const std::string& name, bool null_child) const {
  const std::string where = std::string("Module::") + fn + "('" + name + "')";
  if (null_child) throw Error(where + ": a null module");
  if (name.empty()) throw Error(where + ": an empty name (names form keys like 'child.weight')");
  for (const auto& p : params_)
    if (p->name == name) throw Error(where + ": this module already has a parameter of that name");
  for (const auto& [n, child] : children_)
    if (n == name) throw Error(where + ": this module already has a child of that name");
}

Var& Module::add_parameter(const std::string& name, int64_t rows, int64_t cols, Init init,
                           bool decay) {
  check_new_name("add_parameter", name, false);
  if (rows < 1 || cols < 1)
    throw ShapeError("Module::add_parameter('" + name + "'): shape " + std::to_string(rows) +
                     " x " + std::to_string(cols) + " (both must be >= 1)");
  auto p = std::make_unique<Parameter>();
  p->name = name;
  p->init = init;
  p->decay = decay;
  Tensor t(rows, cols);
  init_tensor(t, init, stable_hash(name));
  p->var = Var(std::move(t), true);
  params_.push_back(std::move(p));
  return params_.back()->var;
}

void Module::collect(const std::string& prefix,
                     std::vector<std::pair<std::string, Parameter*>>& out) {
  for (auto& p : params_) out.emplace_back(prefix + p->name, p.get());
  for (auto& [name, child] : children_) child->collect(prefix + name + ".", out);
}

std::vector<std::pair<std::string, Parameter*>> Module::named_parameters() {
  std::vector<std::pair<std::string, Parameter*>> out;
  collect("", out);
  return out;
}

std::vector<Parameter*> Module::parameters() {
  std::vector<Parameter*> out;
  for (auto& [name, p] : named_parameters()) out.push_back(p);
  return out;
}

void Module::to(Device dev) {
  for (auto& [name, p] : named_parameters())
    if (p->var.device() != dev) p->var = Var(p->var.value().to(dev), true);
}

void Module::reset_parameters(uint64_t seed) {
  for (auto& [name, p] : named_parameters())
    init_tensor(p->var.value(), p->init, stable_hash(name, seed));
}

int64_t Module::num_parameters() {
  int64_t n = 0;
  for (auto* p : parameters()) n += p->var.value().numel();
  return n;
}

}  // namespace dgnn
