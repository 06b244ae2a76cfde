#include "dgnn/gnn/core/gradcheck.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <vector>

#include "dgnn/common/error.hpp"
#include "dgnn/common/hash_rng.hpp"
#include "dgnn/gnn/core/ops.hpp"

namespace dgnn {

namespace {

// sum(y * r) in double: the scalar whose gradient the tape computed.
double project(const Tensor& y, const Tensor& r) {
  double s = 0;
  for (int64_t i = 0; i < y.numel(); ++i) s += double(y.data()[i]) * double(r.data()[i]);
  return s;
}

// Up to n distinct entries of [0, numel), ascending: all of them when there are no more.
std::vector<int64_t> sample(int64_t numel, int64_t n, Rng& rng) {
  std::vector<int64_t> all(static_cast<size_t>(numel));
  std::iota(all.begin(), all.end(), int64_t(0));
  if (numel <= n) return all;
  for (int64_t i = 0; i < n; ++i)
    std::swap(all[size_t(i)], all[size_t(i + int64_t(rng.below(uint64_t(numel - i))))]);
  all.resize(size_t(n));
  std::sort(all.begin(), all.end());
  return all;
}

}  // namespace

GradCheckResult check_layer_gradients(Module& layer, const GraphView& g, const Tensor& x,
                                      const GradCheckOptions& opt) {
  if (x.device() != Device::cpu) throw DeviceError("check_layer_gradients: x must be a CPU tensor");
  auto params = layer.named_parameters();
  for (auto& [name, p] : params)
    if (p->var.device() != Device::cpu)
      throw DeviceError("check_layer_gradients: parameter " + name + " is on " +
                        device_name(p->var.device()) + " (finite differences run on the CPU)");
  if (!(opt.eps > 0) || opt.entries_per_tensor < 1)
    throw OptionError("check_layer_gradients: eps must be > 0 and entries_per_tensor >= 1");

  Rng rng(hash_combine(opt.seed, 0x67726164));  // "grad"
  Var input(x.clone(), true);
  auto run = [&](const Var& in) {
    ForwardContext ctx{g, false, opt.seed, 0};
    Var y = layer.forward(ctx, in);
    if (!y.defined()) throw Error("check_layer_gradients: the layer's forward returned nothing");
    return y;
  };

  // The analytic gradients of sum(y * R).
  for (auto& [name, p] : params) p->var.zero_grad();
  const Var y = run(input);
  Tensor r(y.rows(), y.cols());
  for (int64_t i = 0; i < r.numel(); ++i) r.data()[i] = float(2 * rng.uniform() - 1);
  Var loss = sum(mul(y, Var(r.clone())));
  // A forward whose output does not depend on anything the tape saw has zero gradients (the
  // comparison below then says where the output did depend on them).
  if (loss.requires_grad()) loss.backward();

  struct Target {
    std::string name;
    Tensor* value;
    Tensor grad;  // copied: the numeric passes below must not touch it
  };
  std::vector<Target> targets;
  for (auto& [name, p] : params)
    targets.push_back(
        {name, &p->var.value(),
         p->var.grad().numel() ? p->var.grad().clone() : Tensor(p->var.rows(), p->var.cols())});
  if (opt.check_input)
    targets.push_back({"input", &input.value(),
                       input.grad().numel() ? input.grad().clone() : Tensor(x.rows(), x.cols())});

  GradCheckResult res;
  NoGradGuard no_grad;
  for (Target& t : targets) {
    float* v = t.value->data();
    const int64_t cols = t.value->cols();
    for (int64_t j : sample(t.value->numel(), opt.entries_per_tensor, rng)) {
      const float orig = v[j];
      // The step taken in float, not the nominal one, is the denominator.
      const float hi = float(orig + opt.eps), lo = float(orig - opt.eps);
      v[j] = hi;
      const double f_hi = project(run(input).value(), r);
      v[j] = lo;
      const double f_lo = project(run(input).value(), r);
      v[j] = orig;
      const double numeric = (f_hi - f_lo) / (double(hi) - double(lo));
      const double analytic = t.grad.data()[j];
      auto off = [&](double want) {
        return std::fabs(analytic - want) / (opt.abs_tol + opt.rel_tol * std::fabs(want));
      };
      double ratio = off(numeric);
      if (std::isnan(ratio)) ratio = HUGE_VAL;  // a NaN gradient is the worst there is
      ++res.checked;
      if (ratio > 1 && std::isfinite(ratio)) {
        // A kink (a ReLU's zero) inside [lo, hi]: the central difference averages two slopes.
        // The function is not smooth there when the one-sided slopes disagree; the analytic
        // gradient is then the slope of the side that holds the entry's value.
        const double f0 = project(run(input).value(), r);
        const double up = (f_hi - f0) / (double(hi) - double(orig));
        const double down = (f0 - f_lo) / (double(orig) - double(lo));
        const bool kink = std::fabs(up - down) > opt.abs_tol + opt.rel_tol * std::fabs(numeric);
        if (kink && std::min(off(up), off(down)) <= 1) {
          ++res.kinks;
          continue;
        }
      }
      if (ratio > 1) ++res.failed;
      if (ratio > res.worst_ratio || res.worst.empty()) {
        res.worst_ratio = ratio;
        char buf[160];
        std::snprintf(buf, sizeof buf, "%s[%lld, %lld]: analytic %.6g, numeric %.6g",
                      t.name.c_str(), (long long)(j / cols), (long long)(j % cols), analytic,
                      numeric);
        res.worst = buf;
      }
    }
  }
  for (auto& [name, p] : params) p->var.zero_grad();
  return res;
}

}  // namespace dgnn
