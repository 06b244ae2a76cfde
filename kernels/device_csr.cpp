#include "dgnn/kernels/device_csr.hpp"

#include <climits>
#include <utility>

#include "dgnn/common/error.hpp"

namespace dgnn::kernels {

DeviceCsr::DeviceCsr(Device dev, const CsrView& host)
    : dev_(dev), rows_(host.rows), cols_(host.cols), host_(host) {
  DGNN_CHECK(host.rows == 0 || (host.offsets != nullptr && host.offsets[0] == 0), ShapeError,
             "DeviceCsr: the CSR's offsets must start at 0 (a whole matrix, not a slice)");
  if (dev_ == Device::cpu) return;
  const int64_t nnz = host.nnz();
  if (host.offsets != nullptr)
    host_offsets_.assign(host.offsets, host.offsets + host.rows + 1);
  else  // an empty default Csr (rows 0, no offsets stored)
    host_offsets_.assign(size_t(host.rows) + 1, 0);
  offsets_ = Buffer::upload(dev_, host_offsets_);
  if (nnz < INT_MAX) {
    std::vector<int32_t> o32(host_offsets_.size());
    for (size_t i = 0; i < o32.size(); ++i) o32[i] = int32_t(host_offsets_[i]);
    offsets32_ = Buffer::upload(dev_, o32);
  }
  indices_ = Buffer::upload(dev_, host.indices, size_t(nnz));
  if (host.values) {
    values_ = Buffer::upload(dev_, host.values, size_t(nnz));
  } else {
    const std::vector<float> ones(size_t(nnz), 1.f);
    values_ = Buffer::upload(dev_, ones);
  }
  host_ = {};
}

DeviceCsr::DeviceCsr(Device dev, int64_t rows, int64_t cols, std::vector<int64_t> host_offsets,
                     Buffer offsets, Buffer offsets32, Buffer indices, Buffer values)
    : dev_(dev),
      rows_(rows),
      cols_(cols),
      host_offsets_(std::move(host_offsets)),
      offsets_(std::move(offsets)),
      offsets32_(std::move(offsets32)),
      indices_(std::move(indices)),
      values_(std::move(values)) {
  DGNN_CHECK(dev != Device::cpu && int64_t(host_offsets_.size()) == rows + 1, ShapeError,
             "DeviceCsr: adopted device arrays need a device and rows + 1 host offsets");
}

DeviceCsr::DeviceCsr(Device dev, int64_t rows, int64_t cols, int64_t nnz, Buffer offsets,
                     Buffer indices, Buffer values)
    : dev_(dev),
      rows_(rows),
      cols_(cols),
      offsets_(std::move(offsets)),
      indices_(std::move(indices)),
      values_(std::move(values)) {
  DGNN_CHECK(rows >= 0 && cols >= 0 && nnz >= 0 &&
                 offsets_.bytes() == size_t(rows + 1) * sizeof(int64_t) &&
                 indices_.bytes() == size_t(nnz) * sizeof(int32_t) &&
                 values_.bytes() == size_t(nnz) * sizeof(float) && offsets_.device() == dev &&
                 (nnz == 0 || (indices_.device() == dev && values_.device() == dev)),
             ShapeError, "DeviceCsr: adopted arrays of rows + 1 offsets and nnz entries on one device");
  if (dev_ == Device::cpu) {
    host_ = CsrView{rows_, cols_, offsets_.as<const int64_t>(), indices_.as<const int32_t>(),
                    values_.as<const float>()};
    return;
  }
  whole_only_ = true;
  nnz_ = nnz;
}

CsrView DeviceCsr::rows(int64_t begin, int64_t end) const {
  DGNN_CHECK(0 <= begin && begin <= end && end <= rows_, ShapeError,
             "DeviceCsr::rows: [" + std::to_string(begin) + ", " + std::to_string(end) +
                 ") is not inside " + std::to_string(rows_) + " rows");
  if (whole_only_)
    DGNN_CHECK(begin == end || (begin == 0 && end == rows_), ShapeError,
               "DeviceCsr::rows: a matrix whose offsets stay on the device is viewed whole");
  if (dev_ == Device::cpu && !whole_only_) {
    CsrView v = host_;
    v.offsets += begin;
    v.rows = end - begin;
    return v;
  }
  CsrView v;
  v.rows = end - begin;
  v.cols = cols_;
  v.offsets = offsets_.as<const int64_t>() + begin;
  v.indices = indices_.as<const int32_t>();
  v.values = values_.as<const float>();
  v.device_row_begin = begin;
  if (whole_only_) {
    v.device_nnz = begin == end ? 0 : nnz_;
    return v;
  }
  v.device_nnz = host_offsets_[size_t(end)] - host_offsets_[size_t(begin)];
  // cuSPARSE counts offsets from 0: only a slice starting at row 0 can use the 32-bit copy.
  if (begin == 0 && offsets32_.bytes() > 0) v.offsets32 = offsets32_.as<const int32_t>();
  return v;
}

int64_t DeviceCsr::device_bytes() const {
  return int64_t(offsets_.bytes() + offsets32_.bytes() + indices_.bytes() + values_.bytes());
}

}  // namespace dgnn::kernels
