#pragma once
// Snapshots moved to a GPU as differences (the graph-difference technique, Chakaravarthy et
// al., SC'21): the device keeps the raw structure of the current snapshot, applies the next
// snapshot's difference there, and builds the GCN adjacency (A + I, 1/sqrt(deg_u deg_v)) on the
// device, so only the difference crosses the bus. Plain C++: CPU-only builds see no CUDA header;
// the functions throw DeviceError there.
#include <cstdint>
#include <vector>

#include "dgnn/common/views.hpp"
#include "dgnn/kernels/buffer.hpp"
#include "dgnn/kernels/device_csr.hpp"

namespace dgnn::kernels {

// A snapshot's in-CSR structure on a device (offsets from 0, indices sorted within rows, no
// duplicates, no values: the GCN adjacency does not use edge weights).
struct DeviceStructure {
  Device dev = Device::cpu;
  int64_t rows = 0, cols = 0, nnz = 0;
  Buffer offsets;  // int64_t, rows + 1
  Buffer indices;  // int32_t, nnz
  int64_t bytes() const { return int64_t(offsets.bytes() + indices.bytes()); }
};

// The host structure, uploaded whole.
DeviceStructure upload_structure(Device dev, const CsrView& host);

// `prev` changed by a difference: edges (src -> dst) removed, then added; both lists sorted by
// (dst, src), as SnapshotDiff keeps them. Only the lists are uploaded (*uploaded_bytes adds
// their size). Removing a missing edge or adding a present one is a caller error (the host's
// apply_diff checks the same difference).
DeviceStructure apply_structure_diff(const DeviceStructure& prev, const std::vector<int32_t>& add_src,
                                     const std::vector<int32_t>& add_dst,
                                     const std::vector<int32_t>& del_src,
                                     const std::vector<int32_t>& del_dst, int64_t* uploaded_bytes);

// The GCN adjacency of a whole graph's structure, built on the device, with exactly the host's
// entries and values (gnn/core/graph_view.cpp: one self loop per row in column order, an existing
// one replaced; values 1/sqrt(deg_u + 1)/sqrt(deg_v + 1) in double, deg = non-self entries).
// `host_offsets` are its offsets (the host knows them without the values: row v has its
// non-self entries + 1); the result is what DeviceCsr(dev, adjacency) would have uploaded.
DeviceCsr gcn_adjacency_on_device(const DeviceStructure& s, std::vector<int64_t> host_offsets);

// The transpose of `a` (a whole matrix on a device) built there: each row's entries in ascending
// column order with their values, what uploading the host's Csr::transpose gives, bit for bit.
// `host_offsets` are the transpose's offsets (the host knows them from the structure alone).
// A directed snapshot's backward adjacency, so that it never crosses the bus.
DeviceCsr transpose_on_device(const DeviceCsr& a, std::vector<int64_t> host_offsets);

}  // namespace dgnn::kernels
