// Snapshots moved to the GPU as differences: every adjacency built on the device from the
// previous structure plus a difference equals, bit for bit, the host's GCN adjacency of that
// snapshot (what uploading it whole gives), and far fewer bytes cross for cumulative snapshots.
#include <catch2/catch.hpp>

#include "datasets/evolving_sbm.hpp"
#include "gnn/temporal_trainer.hpp"
#include "gpu_test_util.hpp"
#include "graph/temporal.hpp"

using namespace dgnn;
using namespace dgnn::test;

namespace {

template <typename T>
std::vector<T> download(const T* p, int64_t n) {
  std::vector<T> h(static_cast<size_t>(n));
  if (n > 0) kernels::copy(Device::cpu, h.data(), Device::cuda, p, size_t(n) * sizeof(T));
  return h;
}

TemporalGraph graph(SnapshotMode mode) {
  EvolvingSbmConfig cfg;
  cfg.vertices = 3000;
  cfg.snapshots = 8;
  cfg.classes = 4;
  cfg.avg_degree = 6;
  cfg.seed = 5;
  return generate_evolving_sbm(cfg).to_temporal(mode);
}

}  // namespace

TEST_CASE("snapshots built on the GPU from differences equal their host adjacencies", "[gpu]") {
  for (SnapshotMode mode : {SnapshotMode::window, SnapshotMode::cumulative}) {
    const TemporalGraph g = graph(mode);
    std::vector<std::unique_ptr<GraphView>> views;
    for (int t = 0; t < g.num_snapshots(); ++t)
      views.push_back(std::make_unique<GraphView>(g.snapshot(t)));
    const SnapshotUploads up = upload_snapshots_by_difference(g, views, Device::cuda);
    CHECK(up.snapshots == g.num_snapshots());
    CHECK(up.as_difference == g.num_snapshots() - 1);
    if (mode == SnapshotMode::cumulative) CHECK(up.bytes * 3 < up.whole_bytes);
    for (int t = 0; t < g.num_snapshots(); ++t) {
      INFO("snapshot " << t);
      const auto& adj = views[size_t(t)]->adjacency(Norm::gcn);
      const CsrView d = adj.forward_on(Device::cuda).view();  // the adopted copy
      const Csr& h = adj.forward;
      REQUIRE(d.device_nnz == h.nnz());
      check_bits(download(d.offsets, h.rows + 1), h.offsets, "offsets");
      check_bits(download(d.indices, h.nnz()), h.indices, "indices");
      check_bits(download(d.values, h.nnz()), h.values, "values");
      REQUIRE(d.offsets32 != nullptr);
      const std::vector<int32_t> o32 = download(d.offsets32, h.rows + 1);
      for (int64_t r = 0; r <= h.rows; ++r) REQUIRE(int64_t(o32[size_t(r)]) == h.offsets[size_t(r)]);
    }
  }
}
