#pragma once
// DeviceCsr: a CSR matrix made usable by the kernels of one device. On the CPU it is the host
// view itself (no copy; the host CSR must outlive it). On the GPU it owns device copies of the
// offsets (64-bit, plus a 32-bit copy from 0 for cuSPARSE when the entries fit), the indices
// and the values (all ones materialised when the host has none, since cuSPARSE needs them),
// and keeps the host offsets so that row slices know their entry counts.
#include <cstdint>
#include <vector>

#include "dgnn/common/views.hpp"
#include "dgnn/kernels/buffer.hpp"

namespace dgnn::kernels {

class DeviceCsr {
 public:
  DeviceCsr() = default;
  DeviceCsr(Device dev, const CsrView& host);
  // Adopts arrays already on `dev` (built there): offsets (int64, rows + 1), offsets32 (int32,
  // or empty), indices, values; `host_offsets` are the same offsets on the host (row slices).
  DeviceCsr(Device dev, int64_t rows, int64_t cols, std::vector<int64_t> host_offsets,
            Buffer offsets, Buffer offsets32, Buffer indices, Buffer values);
  // Adopts arrays whose offsets the host never reads (a sampled block's adjacency, built on the
  // device and used whole): only its entry count is known here, so only the whole matrix (or an
  // empty slice) can be viewed, and there is no 32-bit copy. On the CPU the buffers are host
  // memory and the matrix is an ordinary one.
  DeviceCsr(Device dev, int64_t rows, int64_t cols, int64_t nnz, Buffer offsets, Buffer indices,
            Buffer values);

  Device device() const { return dev_; }
  // The whole matrix.
  CsrView view() const { return rows(0, rows_); }
  // Rows [begin, end): offsets stay absolute, so a slice is a pointer shift.
  CsrView rows(int64_t begin, int64_t end) const;
  // Bytes this copy occupies on the device (0 on the CPU).
  int64_t device_bytes() const;

 private:
  Device dev_ = Device::cpu;
  int64_t rows_ = 0, cols_ = 0;
  CsrView host_;
  std::vector<int64_t> host_offsets_;  // GPU only; empty when whole_only_
  bool whole_only_ = false;            // GPU offsets the host does not know: nnz_ entries
  int64_t nnz_ = 0;
  Buffer offsets_, offsets32_, indices_, values_;
};

}  // namespace dgnn::kernels
