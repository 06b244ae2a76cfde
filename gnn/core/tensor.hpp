#pragma once
// Tensor: a dense row-major float32 matrix that owns its memory on one device; move-only
// (copies are explicit with clone()), so passing one around never duplicates data by accident.
#include <cstdint>
#include <memory>
#include <string>

#include "dgnn/common/views.hpp"

namespace dgnn {

class Tensor {
 public:
  Tensor() = default;
  // rows x cols, zero-filled.
  Tensor(int64_t rows, int64_t cols, Device dev = Device::cpu);
  static Tensor zeros(int64_t rows, int64_t cols, Device dev = Device::cpu) {
    return Tensor(rows, cols, dev);
  }
  // rows x cols with unspecified contents, for outputs a kernel overwrites entirely.
  static Tensor uninitialized(int64_t rows, int64_t cols, Device dev = Device::cpu);
  static Tensor filled(int64_t rows, int64_t cols, float value, Device dev = Device::cpu);
  // Copies rows*cols floats from host memory.
  static Tensor from_host(const float* data, int64_t rows, int64_t cols, Device dev = Device::cpu);

  Tensor(Tensor&&) noexcept = default;
  Tensor& operator=(Tensor&&) noexcept = default;
  Tensor(const Tensor&) = delete;
  Tensor& operator=(const Tensor&) = delete;

  Tensor clone() const;
  Tensor to(Device dev) const;

  int64_t rows() const { return rows_; }
  int64_t cols() const { return cols_; }
  int64_t numel() const { return rows_ * cols_; }
  Device device() const { return dev_; }
  bool empty() const { return numel() == 0; }
  std::string shape_str() const;

  float* data() { return data_.get(); }
  const float* data() const { return data_.get(); }
  MatView view() { return {data(), rows_, cols_, cols_}; }
  ConstMatView view() const { return {data(), rows_, cols_, cols_}; }
  // Host access, checked: an entry outside the shape or of a tensor on a GPU throws (ShapeError,
  // DeviceError) instead of reading past the end or dereferencing device memory. data() and
  // view() are the unchecked ways in.
  float& at(int64_t r, int64_t c) {
    check_at(r, c);
    return data_.get()[r * cols_ + c];
  }
  float at(int64_t r, int64_t c) const {
    check_at(r, c);
    return data_.get()[r * cols_ + c];
  }

  void zero();
  // Frees the storage and keeps the shape and device (data() is null afterwards): the tape drops
  // a value nothing will read again this way, and its gradient still knows its shape.
  void drop_storage() { data_.reset(); }
  // Element 0 read on the host, wherever the tensor lives (a loss, a count).
  float item() const;

 private:
  void check_at(int64_t r, int64_t c) const {
    if (r < 0 || r >= rows_ || c < 0 || c >= cols_ || dev_ != Device::cpu) [[unlikely]]
      at_error(r, c);
  }
  [[noreturn]] void at_error(int64_t r, int64_t c) const;
  struct Free {
    Device dev;  // no initializer: keeps Free default-constructible inside Tensor
    void operator()(float* p) const noexcept;
  };
  std::unique_ptr<float, Free> data_;
  int64_t rows_ = 0;
  int64_t cols_ = 0;
  Device dev_ = Device::cpu;
};

}  // namespace dgnn
