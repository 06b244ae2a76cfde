#pragma once
// Flat binary encoding for files and messages between ranks: scalars and length-prefixed arrays
// of trivially copyable types, in this machine's byte order. ByteReader checks every length
// against what is left and reports a short or damaged input as an InputError naming its origin.
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "dgnn/common/error.hpp"

namespace dgnn {

class ByteWriter {
 public:
  template <class T>
  void scalar(T v) {
    static_assert(std::is_trivially_copyable_v<T>);
    buf_.append(reinterpret_cast<const char*>(&v), sizeof v);
  }
  template <class T>
  void array(const std::vector<T>& v) {
    static_assert(std::is_trivially_copyable_v<T>);
    scalar(uint64_t(v.size()));
    buf_.append(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
  }
  const std::string& bytes() const { return buf_; }
  std::string take() { return std::move(buf_); }

 private:
  std::string buf_;
};

class ByteReader {
 public:
  // `bytes` must outlive the reader; `origin` names the input in errors (a path, or "the part
  // rank 0 sent to rank 3").
  ByteReader(const std::string& bytes, std::string origin)
      : b_(bytes), origin_(std::move(origin)) {}
  [[noreturn]] void fail(const std::string& what) const { throw InputError(origin_, 0, what); }
  template <class T>
  T scalar() {
    static_assert(std::is_trivially_copyable_v<T>);
    T v;
    if (b_.size() - pos_ < sizeof v) fail("truncated (the data ends inside a value)");
    std::memcpy(&v, b_.data() + pos_, sizeof v);
    pos_ += sizeof v;
    return v;
  }
  template <class T>
  std::vector<T> array() {
    static_assert(std::is_trivially_copyable_v<T>);
    const uint64_t n = scalar<uint64_t>();
    if (n > (b_.size() - pos_) / sizeof(T)) fail("truncated (an array runs past the end)");
    std::vector<T> v(n);
    if (n) std::memcpy(v.data(), b_.data() + pos_, n * sizeof(T));
    pos_ += n * sizeof(T);
    return v;
  }
  bool at_end() const { return pos_ == b_.size(); }
  size_t position() const { return pos_; }

 private:
  const std::string& b_;
  std::string origin_;
  size_t pos_ = 0;
};

}  // namespace dgnn
