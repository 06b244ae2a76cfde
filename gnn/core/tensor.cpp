// Tensor storage goes through kernels::alloc/free so a tensor lives on any device the kernels
// support, with no device code here.
#include "dgnn/gnn/core/tensor.hpp"

#include "dgnn/common/error.hpp"
#include "dgnn/kernels/kernels.hpp"

namespace dgnn {

void Tensor::Free::operator()(float* p) const noexcept { kernels::free(dev, p); }

Tensor::Tensor(int64_t rows, int64_t cols, Device dev) : Tensor(uninitialized(rows, cols, dev)) {
  kernels::fill(dev, data(), numel(), 0.f);
}

Tensor Tensor::uninitialized(int64_t rows, int64_t cols, Device dev) {
  if (rows < 0 || cols < 0)
    throw ShapeError("Tensor: negative shape [" + std::to_string(rows) + " x " +
                     std::to_string(cols) + "]");
  Tensor t;
  t.rows_ = rows;
  t.cols_ = cols;
  t.dev_ = dev;
  // An empty tensor holds no memory; kernels early-out on zero sizes, so null data is safe.
  if (t.numel() == 0) return t;
  const size_t bytes = size_t(t.numel()) * sizeof(float);
  t.data_ =
      std::unique_ptr<float, Free>(static_cast<float*>(kernels::alloc(dev, bytes)), Free{dev});
  return t;
}

Tensor Tensor::filled(int64_t rows, int64_t cols, float value, Device dev) {
  Tensor t = uninitialized(rows, cols, dev);
  kernels::fill(dev, t.data(), t.numel(), value);
  return t;
}

Tensor Tensor::from_host(const float* data, int64_t rows, int64_t cols, Device dev) {
  Tensor t = uninitialized(rows, cols, dev);
  kernels::copy(dev, t.data(), Device::cpu, data, size_t(t.numel()) * sizeof(float));
  return t;
}

Tensor Tensor::clone() const { return to(dev_); }

Tensor Tensor::to(Device dev) const {
  Tensor t = uninitialized(rows_, cols_, dev);
  kernels::copy(dev, t.data(), dev_, data(), size_t(numel()) * sizeof(float));
  return t;
}

void Tensor::at_error(int64_t r, int64_t c) const {
  std::string where = "Tensor::at(";
  where += std::to_string(r);
  where += ", ";
  where += std::to_string(c);
  where += ") of a ";
  where += shape_str();
  if (dev_ != Device::cpu)
    throw DeviceError(where + " tensor on " + device_name(dev_) +
                      ": at() reads host memory (copy it with to(Device::cpu))");
  throw ShapeError(where + " tensor: out of range");
}

std::string Tensor::shape_str() const {
  // Appended piecewise: GCC 12 warns falsely (-Wrestrict) on "literal" + std::string&&.
  std::string s = "[";
  s += std::to_string(rows_);
  s += " x ";
  s += std::to_string(cols_);
  s += "]";
  return s;
}

float Tensor::item() const {
  if (numel() == 0) throw ShapeError("Tensor::item: the tensor is empty");
  float v = 0;
  kernels::copy(Device::cpu, &v, dev_, data(), sizeof(float));
  return v;
}

void Tensor::zero() { kernels::fill(dev_, data(), numel(), 0.f); }

}  // namespace dgnn
