// Snapshots moved to the GPU as differences: every adjacency built on the device from the
// previous structure plus a difference equals, bit for bit, the host's GCN adjacency of that
// snapshot (what uploading it whole gives), a directed snapshot's transpose too, and far fewer
// bytes cross for cumulative snapshots.
#include <catch2/catch.hpp>

#include "../small_evolving.hpp"
#include "dgnn/datasets/evolving_sbm.hpp"
#include "dgnn/gnn/temporal/temporal_trainer.hpp"
#include "dgnn/graph/temporal.hpp"
#include "gpu_test_util.hpp"

using namespace dgnn;
using namespace dgnn::test;

namespace {

template <typename T>
std::vector<T> download(const T* p, int64_t n) {
  std::vector<T> h(static_cast<size_t>(n));
  if (n > 0) kernels::copy(Device::cpu, h.data(), Device::cuda, p, size_t(n) * sizeof(T));
  return h;
}

EvolvingSbmConfig config() {
  EvolvingSbmConfig cfg;
  cfg.vertices = 3000;
  cfg.snapshots = 8;
  cfg.classes = 4;
  cfg.avg_degree = 6;
  cfg.seed = 5;
  return cfg;
}

TemporalGraph graph(SnapshotMode mode) { return generate_evolving_sbm(config()).to_temporal(mode); }

// The same edges read as directed (each from its lower to its higher id): the GCN adjacency is
// not symmetric, so its transpose is built on the device too.
TemporalGraph directed_graph(SnapshotMode mode) {
  const EvolvingSbm sbm = generate_evolving_sbm(config());
  const EdgeList e = sbm_edge_list(sbm);
  EdgeListOptions eo;
  eo.time_col = 2;
  eo.directed = true;
  SnapshotOptions so;
  so.seconds = 1;
  so.mode = mode;
  return build_temporal(e, eo, so, "directed", sbm.num_vertices());
}

void check_same(const kernels::DeviceCsr& on_gpu, const Csr& h) {
  const CsrView d = on_gpu.view();
  REQUIRE(d.device_nnz == h.nnz());
  check_bits(download(d.offsets, h.rows + 1), h.offsets, "offsets");
  check_bits(download(d.indices, h.nnz()), h.indices, "indices");
  check_bits(download(d.values, h.nnz()), h.values, "values");
  REQUIRE(d.offsets32 != nullptr);
  const std::vector<int32_t> o32 = download(d.offsets32, h.rows + 1);
  for (int64_t r = 0; r <= h.rows; ++r) REQUIRE(int64_t(o32[size_t(r)]) == h.offsets[size_t(r)]);
}

}  // namespace

TEST_CASE("snapshots built on the GPU from differences equal their host adjacencies", "[gpu]") {
  for (bool directed : {false, true})
  for (SnapshotMode mode : {SnapshotMode::window, SnapshotMode::cumulative}) {
    INFO((directed ? "directed" : "undirected") << ", mode " << int(mode));
    const TemporalGraph g = directed ? directed_graph(mode) : graph(mode);
    REQUIRE(g.directed == directed);
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
      REQUIRE(adj.symmetric == !directed);
      check_same(adj.forward_on(Device::cuda), adj.forward);  // the adopted copies
      if (directed) check_same(adj.backward_on(Device::cuda), adj.transposed);
    }
  }
}

// The snapshot strategy's ranks hold blocks of steps: the first snapshot held goes whole, a later
// one as its difference from the previous one held — g's own difference when that is the
// snapshot just before, else one computed from the two held structures (always so on a rank
// that received only its own snapshots, with no differences in g).
TEST_CASE("snapshots held with gaps go to the GPU as differences from the previous held one",
          "[gpu]") {
  for (bool with_diffs : {true, false})
    for (SnapshotMode mode : {SnapshotMode::window, SnapshotMode::cumulative}) {
      INFO((with_diffs ? "g has its differences" : "g without differences")
           << ", mode " << int(mode));
      TemporalGraph g = graph(mode);
      const std::vector<int> held{1, 2, 5, 6, 7};
      std::vector<std::unique_ptr<GraphView>> views(size_t(g.num_snapshots()));
      for (int t : held) views[size_t(t)] = std::make_unique<GraphView>(g.snapshot(t));
      if (!with_diffs) g.diffs.clear();
      const SnapshotUploads up = upload_snapshots_by_difference(g, views, Device::cuda);
      CHECK(up.snapshots == int(held.size()));
      CHECK(up.as_difference == int(held.size()) - 1);
      if (mode == SnapshotMode::cumulative) CHECK(up.bytes * 2 < up.whole_bytes);
      for (int t : held) {
        INFO("snapshot " << t);
        const auto& adj = views[size_t(t)]->adjacency(Norm::gcn);
        check_same(adj.forward_on(Device::cuda), adj.forward);
      }
    }
}
