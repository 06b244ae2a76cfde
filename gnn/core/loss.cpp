// Softmax cross-entropy and accuracy for node classification; binary cross-entropy for links.
#include "dgnn/gnn/core/loss.hpp"

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <utility>

#include "dgnn/common/error.hpp"
#include "dgnn/kernels/kernels.hpp"

namespace dgnn {

namespace {

// Indices are checked on the host before any kernel sees them: a label past the class count
// or a row past the matrix would otherwise be an out-of-bounds read, not an error message.
void check_labels(const char* fn, int64_t rows, int64_t cols, const std::vector<int32_t>& idx,
                  const std::vector<int32_t>& labels, bool distinct) {
  if (idx.size() != labels.size())
    throw ShapeError(std::string(fn) + ": " + std::to_string(idx.size()) + " rows but " +
                     std::to_string(labels.size()) + " labels");
  std::vector<bool> seen(distinct ? size_t(rows) : 0, false);
  for (size_t i = 0; i < idx.size(); ++i) {
    if (idx[i] < 0 || idx[i] >= rows)
      throw ShapeError(std::string(fn) + ": row " + std::to_string(idx[i]) + " out of range for " +
                       std::to_string(rows) + " rows");
    if (labels[i] < 0 || labels[i] >= cols)
      throw ShapeError(std::string(fn) + ": label " + std::to_string(labels[i]) + " of row " +
                       std::to_string(idx[i]) + " out of range for " + std::to_string(cols) +
                       " classes");
    // The gradient of a row is written, not added, so a repeated row would count once.
    if (distinct) {
      if (seen[size_t(idx[i])])
        throw ShapeError(std::string(fn) + ": row " + std::to_string(idx[i]) + " listed twice");
      seen[size_t(idx[i])] = true;
    }
  }
}

// Host index arrays, copied where the kernels run when that is not the host.
class DeviceInts {
 public:
  DeviceInts(const std::vector<int32_t>& host, Device dev) : dev_(dev), host_(host.data()) {
    if (dev_ != Device::cpu && !host.empty()) {
      const size_t bytes = host.size() * sizeof(int32_t);
      copy_ = kernels::alloc(dev_, bytes);
      kernels::copy(dev_, copy_, Device::cpu, host.data(), bytes);
    }
  }
  ~DeviceInts() { kernels::free(dev_, copy_); }
  DeviceInts(const DeviceInts&) = delete;
  DeviceInts& operator=(const DeviceInts&) = delete;
  const int32_t* data() const { return copy_ ? static_cast<const int32_t*>(copy_) : host_; }

 private:
  Device dev_;
  const int32_t* host_;
  void* copy_ = nullptr;
};

// A scalar loss whose gradient was computed with it: backward scales the saved d(loss)/d(input)
// by the incoming gradient (read from the device) and adds it to the input's gradient.
Var scalar_loss_op(Tensor loss, const Var& input, Tensor grad, const char* name) {
  const Device dev = input.device();
  auto saved = std::make_shared<Tensor>(std::move(grad));
  return make_op(
      std::move(loss), {input},
      [dev, saved](Node& n) {
        float g = 0.f;
        kernels::copy(Device::cpu, &g, dev, n.grad.data(), sizeof(float));
        kernels::axpby(dev, saved->numel(), g, saved->data(), 1.f,
                       n.inputs[0]->grad_buffer().data());
      },
      name);
}

}  // namespace

Var cross_entropy(const Var& logits, const std::vector<int32_t>& rows,
                  const std::vector<int32_t>& labels, double normaliser) {
  if (!logits.defined()) throw Error("cross_entropy: undefined logits");
  check_labels("cross_entropy", logits.rows(), logits.cols(), rows, labels, true);
  if (!(normaliser > 0.0))
    throw OptionError(
        "cross_entropy: normaliser must be positive (the global number of "
        "labelled rows), got " +
        std::to_string(normaliser));
  const Device dev = logits.device();
  const DeviceInts d_rows(rows, dev), d_labels(labels, dev);
  const float scale = float(1.0 / normaliser);
  // The gradient falls out of the same pass as the loss, so it is computed now and kept for
  // backward when it will be needed.
  const bool record = grad_enabled() && logits.requires_grad();
  Tensor dlogits = record ? Tensor(logits.rows(), logits.cols(), dev) : Tensor();
  const double total =
      kernels::softmax_xent(dev, logits.value().view(), d_rows.data(), d_labels.data(),
                            int64_t(rows.size()), scale, record ? dlogits.view() : MatView{});
  Tensor loss = Tensor::filled(1, 1, float(total / normaliser), dev);
  if (!record) return Var(std::move(loss));
  return scalar_loss_op(std::move(loss), logits, std::move(dlogits), "cross_entropy");
}

double cross_entropy_sum(const Tensor& logits, const std::vector<int32_t>& rows,
                         const std::vector<int32_t>& labels) {
  check_labels("cross_entropy_sum", logits.rows(), logits.cols(), rows, labels, false);
  if (rows.empty()) return 0;
  const DeviceInts d_rows(rows, logits.device()), d_labels(labels, logits.device());
  return kernels::softmax_xent(logits.device(), logits.view(), d_rows.data(), d_labels.data(),
                               int64_t(rows.size()), 1.f, MatView{});
}

int64_t count_correct(const Tensor& logits, const std::vector<int32_t>& rows,
                      const std::vector<int32_t>& labels) {
  check_labels("count_correct", logits.rows(), logits.cols(), rows, labels, false);
  const DeviceInts d_rows(rows, logits.device()), d_labels(labels, logits.device());
  return kernels::count_correct(logits.device(), logits.view(), d_rows.data(), d_labels.data(),
                                int64_t(rows.size()));
}

Var bce_with_logits(const Var& logits, const std::vector<float>& targets, double normaliser,
                    const std::vector<float>& weights) {
  if (!logits.defined()) throw Error("bce_with_logits: undefined logits");
  if (logits.cols() != 1)
    throw ShapeError("bce_with_logits: logits " + logits.value().shape_str() +
                     " must be one column");
  const size_t n = size_t(logits.rows());
  if (targets.size() != n)
    throw ShapeError("bce_with_logits: " + std::to_string(n) + " logits but " +
                     std::to_string(targets.size()) + " targets");
  if (!weights.empty() && weights.size() != n)
    throw ShapeError("bce_with_logits: " + std::to_string(n) + " logits but " +
                     std::to_string(weights.size()) + " weights");
  for (size_t i = 0; i < n; ++i)
    if (!(targets[i] >= 0.f && targets[i] <= 1.f))
      throw OptionError("bce_with_logits: target " + std::to_string(targets[i]) + " of item " +
                        std::to_string(i) + " is outside [0, 1]");
  if (!(normaliser > 0.0))
    throw OptionError("bce_with_logits: normaliser must be positive, got " +
                      std::to_string(normaliser));
  // One column of scored pairs is small next to the model that produced it, so the loss is
  // computed on the host in double: one copy each way, and no kernel per backend.
  const Device dev = logits.device();
  std::vector<float> x(n);
  kernels::copy(Device::cpu, x.data(), dev, logits.value().data(), n * sizeof(float));
  const bool record = grad_enabled() && logits.requires_grad();
  std::vector<float> dx(record ? n : 0);
  double total = 0.0;
  for (size_t i = 0; i < n; ++i) {
    const double xi = x[i], yi = targets[i], wi = weights.empty() ? 1.0 : weights[i];
    const double e = std::exp(-std::fabs(xi));
    total += wi * (std::max(xi, 0.0) - xi * yi + std::log1p(e));
    if (record) {
      const double sig = xi >= 0 ? 1.0 / (1.0 + e) : e / (1.0 + e);
      dx[i] = float(wi * (sig - yi) / normaliser);
    }
  }
  Tensor loss = Tensor::filled(1, 1, float(total / normaliser), dev);
  if (!record) return Var(std::move(loss));
  return scalar_loss_op(std::move(loss), logits, Tensor::from_host(dx.data(), int64_t(n), 1, dev),
                        "bce_with_logits");
}

}  // namespace dgnn
