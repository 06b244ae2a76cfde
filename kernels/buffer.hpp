#pragma once
// Buffer: move-only owner of `bytes` of memory on one device (kernels::alloc / kernels::free),
// for index lists, masks and sparse structure that live beside Tensors. On the CPU it is plain
// host memory.
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "dgnn/kernels/kernels.hpp"

namespace dgnn::kernels {

class Buffer {
 public:
  Buffer() = default;
  Buffer(Device dev, size_t bytes) : dev_(dev), bytes_(bytes) {
    if (bytes_ > 0) p_ = alloc(dev_, bytes_);
  }
  // A device copy of host data.
  template <typename T>
  static Buffer upload(Device dev, const T* host, size_t count) {
    Buffer b(dev, count * sizeof(T));
    if (count > 0) copy(dev, b.p_, Device::cpu, host, count * sizeof(T));
    return b;
  }
  template <typename T>
  static Buffer upload(Device dev, const std::vector<T>& host) {
    return upload(dev, host.data(), host.size());
  }
  ~Buffer() { free(dev_, p_); }
  Buffer(Buffer&& o) noexcept
      : dev_(o.dev_), p_(std::exchange(o.p_, nullptr)), bytes_(std::exchange(o.bytes_, 0)) {}
  Buffer& operator=(Buffer&& o) noexcept {
    if (this != &o) {
      free(dev_, p_);
      dev_ = o.dev_;
      p_ = std::exchange(o.p_, nullptr);
      bytes_ = std::exchange(o.bytes_, 0);
    }
    return *this;
  }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  template <typename T = void>
  T* as() const {
    return static_cast<T*>(p_);
  }
  size_t bytes() const { return bytes_; }
  Device device() const { return dev_; }

 private:
  Device dev_ = Device::cpu;
  void* p_ = nullptr;
  size_t bytes_ = 0;
};

}  // namespace dgnn::kernels
