// The host side of device snapshots: uploads, and the dispatch to the CUDA implementation
// (kernels/cuda/snapshot.cu); without CUDA every entry point is a DeviceError.
#include "dgnn/kernels/device_snapshot.hpp"

#include <string>
#include <utility>

#include "dgnn/common/error.hpp"
#include "dgnn/kernels/backend.hpp"

namespace dgnn::kernels {

namespace {
void need_gpu(Device dev, const char* fn) {
  if (dev == Device::cpu)
    throw DeviceError(std::string("kernels::") + fn + ": snapshots by difference are for a GPU");
  if (!kHaveCuda) no_backend(dev, fn);
}
}  // namespace

DeviceStructure upload_structure(Device dev, const CsrView& host) {
  need_gpu(dev, "upload_structure");
  DGNN_CHECK(host.rows == 0 || host.offsets[0] == 0, ShapeError,
             "upload_structure: a whole matrix (offsets from 0)");
  DeviceStructure s;
  s.dev = dev;
  s.rows = host.rows;
  s.cols = host.cols;
  s.nnz = host.nnz();
  s.offsets = Buffer::upload(dev, host.offsets, size_t(host.rows + 1));
  s.indices = Buffer::upload(dev, host.indices, size_t(s.nnz));
  return s;
}

DeviceStructure apply_structure_diff(const DeviceStructure& prev, const std::vector<int32_t>& add_src,
                                     const std::vector<int32_t>& add_dst,
                                     const std::vector<int32_t>& del_src,
                                     const std::vector<int32_t>& del_dst, int64_t* uploaded_bytes) {
  need_gpu(prev.dev, "apply_structure_diff");
  DGNN_CHECK(add_src.size() == add_dst.size() && del_src.size() == del_dst.size(), ShapeError,
             "apply_structure_diff: source and destination lists differ in length");
  const int64_t nnz = prev.nnz + int64_t(add_src.size()) - int64_t(del_src.size());
  DGNN_CHECK(nnz >= 0, ShapeError, "apply_structure_diff: deletes more edges than there are");
  const Buffer as = Buffer::upload(prev.dev, add_src), ad = Buffer::upload(prev.dev, add_dst);
  const Buffer ds = Buffer::upload(prev.dev, del_src), dd = Buffer::upload(prev.dev, del_dst);
  if (uploaded_bytes) *uploaded_bytes += int64_t(as.bytes() + ad.bytes() + ds.bytes() + dd.bytes());
  DeviceStructure next;
  next.dev = prev.dev;
  next.rows = prev.rows;
  next.cols = prev.cols;
  next.nnz = nnz;
  next.offsets = Buffer(prev.dev, size_t(prev.rows + 1) * sizeof(int64_t));
  next.indices = Buffer(prev.dev, size_t(nnz) * sizeof(int32_t));
  DGNN_IF_CUDA(cuda::apply_structure_diff(
                   prev.rows, prev.offsets.as<const int64_t>(), prev.indices.as<const int32_t>(),
                   as.as<const int32_t>(), ad.as<const int32_t>(), int64_t(add_src.size()),
                   ds.as<const int32_t>(), dd.as<const int32_t>(), int64_t(del_src.size()),
                   next.offsets.as<int64_t>(), next.indices.as<int32_t>());)
  return next;
}

DeviceCsr gcn_adjacency_on_device(const DeviceStructure& s, std::vector<int64_t> host_offsets) {
  need_gpu(s.dev, "gcn_adjacency_on_device");
  DGNN_CHECK(s.rows == s.cols && int64_t(host_offsets.size()) == s.rows + 1, ShapeError,
             "gcn_adjacency_on_device: a square structure and rows + 1 offsets");
  const int64_t nnz = host_offsets.back();
  Buffer offsets(s.dev, size_t(s.rows + 1) * sizeof(int64_t));  // computed on the device
  Buffer offsets32;
  if (nnz < (int64_t(1) << 31)) offsets32 = Buffer(s.dev, size_t(s.rows + 1) * sizeof(int32_t));
  Buffer indices(s.dev, size_t(nnz) * sizeof(int32_t)), values(s.dev, size_t(nnz) * sizeof(float));
  DGNN_IF_CUDA(cuda::gcn_adjacency(s.rows, s.offsets.as<const int64_t>(),
                                   s.indices.as<const int32_t>(), offsets.as<int64_t>(),
                                   indices.as<int32_t>(), values.as<float>(),
                                   offsets32.bytes() ? offsets32.as<int32_t>() : nullptr);)
  return DeviceCsr(s.dev, s.rows, s.cols, std::move(host_offsets), std::move(offsets),
                   std::move(offsets32), std::move(indices), std::move(values));
}

DeviceCsr transpose_on_device(const DeviceCsr& a, std::vector<int64_t> host_offsets) {
  need_gpu(a.device(), "transpose_on_device");
  (void)host_offsets;
  DGNN_CUDA_ONLY("transpose_on_device",
                 return cuda::transpose_with_offsets(a.view(), std::move(host_offsets)));
}

}  // namespace dgnn::kernels
