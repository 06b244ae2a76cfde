// A sampled block's adjacencies on the CPU (kernels::block_adjacency, kernels/kernel_list.def):
// the reference the GPU's (kernels/cuda/block_adjacency.cu) is checked against, the per-row code
// of kernels/block_norm.hpp over host buffers; and the gather of a block's input rows by id.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "dgnn/common/error.hpp"
#include "dgnn/kernels/block_norm.hpp"
#include "dgnn/kernels/buffer.hpp"
#include "dgnn/kernels/cpu/cpu_kernels.hpp"
#include "dgnn/kernels/device_csr.hpp"
#include "dgnn/kernels/minibatch_kernels.hpp"
#include "dgnn/kernels/sample_block.hpp"

namespace dgnn::kernels::cpu {

namespace {

// A host CSR's transpose, each row's entries in ascending row order (Csr::transpose's).
DeviceCsr transpose_cpu(int64_t rows, int64_t cols, const int64_t* off, const int32_t* idx,
                        const float* val) {
  const int64_t nnz = off[rows];
  Buffer t_off(Device::cpu, size_t(cols + 1) * sizeof(int64_t));
  Buffer t_idx(Device::cpu, size_t(nnz) * sizeof(int32_t));
  Buffer t_val(Device::cpu, size_t(nnz) * sizeof(float));
  int64_t* to = t_off.as<int64_t>();
  for (int64_t c = 0; c <= cols; ++c) to[c] = 0;
  for (int64_t e = 0; e < nnz; ++e) ++to[idx[e] + 1];
  for (int64_t c = 0; c < cols; ++c) to[c + 1] += to[c];
  std::vector<int64_t> next(to, to + cols);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t e = off[r]; e < off[r + 1]; ++e) {
      const int64_t pos = next[size_t(idx[e])]++;
      t_idx.as<int32_t>()[pos] = int32_t(r);
      t_val.as<float>()[pos] = val[e];
    }
  return DeviceCsr(Device::cpu, cols, rows, nnz, std::move(t_off), std::move(t_idx),
                   std::move(t_val));
}

}  // namespace

BlockAdjacency block_adjacency(const DeviceBlock& b, BlockNorm norm) {
  const int64_t rows = b.n_dst;
  const int64_t* off = b.offsets.as<const int64_t>();
  const int32_t* idx = b.indices.as<const int32_t>();
  const float* w = b.values.bytes() ? b.values.as<const float>() : nullptr;
  const int64_t* deg = b.src_degree.as<const int64_t>();
  Buffer f_off(Device::cpu, size_t(rows + 1) * sizeof(int64_t));
  int64_t* fo = f_off.as<int64_t>();
  fo[0] = 0;
  for (int64_t v = 0; v < rows; ++v)
    fo[v + 1] = fo[v] + (norm == BlockNorm::gcn
                             ? block_norm::gcn_row_length(idx + off[v], off[v + 1] - off[v], v)
                             : off[v + 1] - off[v]);
  const int64_t nnz = fo[rows];
  Buffer f_idx(Device::cpu, size_t(nnz) * sizeof(int32_t));
  Buffer f_val(Device::cpu, size_t(nnz) * sizeof(float));
  for (int64_t v = 0; v < rows; ++v) {
    const int64_t len = off[v + 1] - off[v];
    int32_t* oi = f_idx.as<int32_t>() + fo[v];
    float* ov = f_val.as<float>() + fo[v];
    switch (norm) {
      case BlockNorm::gcn:
        block_norm::gcn_row(idx + off[v], len, v, deg, oi, ov);
        break;
      case BlockNorm::sum:
        block_norm::sum_row(idx + off[v], w ? w + off[v] : nullptr, len, v, deg, ov);
        break;
      case BlockNorm::mean:
        block_norm::mean_row(len, ov);
        break;
    }
    if (norm != BlockNorm::gcn)
      for (int64_t e = 0; e < len; ++e) oi[e] = idx[off[v] + e];
  }
  DeviceCsr backward =
      transpose_cpu(rows, b.n_src, fo, f_idx.as<const int32_t>(), f_val.as<const float>());
  return BlockAdjacency{DeviceCsr(Device::cpu, rows, b.n_src, nnz, std::move(f_off),
                                  std::move(f_idx), std::move(f_val)),
                        std::move(backward)};
}

void gather_rows_by_id(ConstMatView src, const int64_t* ids, int64_t n, MatView dst) {
  for (int64_t i = 0; i < n; ++i) {
    DGNN_CHECK(ids[i] >= 0 && ids[i] < src.rows, ShapeError,
               "kernels::gather_rows_by_id: id " + std::to_string(ids[i]) + " outside " +
                   std::to_string(src.rows) + " rows");
    const float* s = src.data + ids[i] * src.ld;
    float* d = dst.data + i * dst.ld;
    for (int64_t c = 0; c < src.cols; ++c) d[c] = s[c];
  }
}

}  // namespace dgnn::kernels::cpu
