#pragma once
// Non-owning views that kernels take: pointers plus extents, nothing about graphs or ranks.
// (In common/: the graph module hands them out and depends on nothing else.)
#include <cstdint>

namespace dgnn {

enum class Device : uint8_t { cpu, cuda };

inline const char* device_name(Device d) { return d == Device::cpu ? "cpu" : "cuda"; }

// Compressed sparse rows: row r's entries are indices[offsets[r] .. offsets[r+1]).
// 64-bit offsets (graphs past 2^31 edges), 32-bit column indices (local numbering).
// values == nullptr means every entry is 1.
struct CsrView {
  int64_t rows = 0;
  int64_t cols = 0;
  const int64_t* offsets = nullptr;
  const int32_t* indices = nullptr;
  const float* values = nullptr;
  // Set on views of device memory, whose offsets the host cannot read: the entry count, and a
  // 32-bit copy of the offsets counting from 0 (for cuSPARSE; null on a row slice past row 0
  // or past 2^31 entries). See kernels/device_csr.hpp.
  int64_t device_nnz = -1;
  const int32_t* offsets32 = nullptr;
  // Device views: the first row of the matrix this view starts at (DeviceCsr::rows), so that a
  // kernel that needs a whole matrix can refuse a slice (the host reads offsets[0] instead).
  int64_t device_row_begin = 0;
  int64_t nnz() const { return device_nnz >= 0 ? device_nnz : rows > 0 ? offsets[rows] : 0; }
};

// Dense row-major float32 matrix view; ld is the distance between rows (>= cols).
struct MatView {
  float* data = nullptr;
  int64_t rows = 0;
  int64_t cols = 0;
  int64_t ld = 0;
  float* row(int64_t r) const { return data + r * ld; }
};

struct ConstMatView {
  const float* data = nullptr;
  int64_t rows = 0;
  int64_t cols = 0;
  int64_t ld = 0;
  ConstMatView() = default;
  ConstMatView(const float* d, int64_t r, int64_t c, int64_t l)
      : data(d), rows(r), cols(c), ld(l) {}
  ConstMatView(const MatView& m) : data(m.data), rows(m.rows), cols(m.cols), ld(m.ld) {}
  const float* row(int64_t r) const { return data + r * ld; }
};

}  // namespace dgnn
