// Blocks kept where they were sampled (the GPU mini-batch path), checked on the CPU: the
// adjacencies kernels::block_adjacency builds from a block's arrays (the per-row code the CUDA
// kernels run) equal the host GraphView's bit for bit, transposes included; and a loader whose
// batches are device-block views (built as gnn/device_minibatch does, with the CPU sampler's
// blocks) gives the host views' losses and gradients exactly.
#include <catch2/catch.hpp>
#include <cstring>

#include "../small_sbm.hpp"
#include "dgnn/comm/communicator.hpp"
#include "dgnn/common/hash_rng.hpp"
#include "dgnn/datasets/sbm.hpp"
#include "dgnn/gnn/models/layers.hpp"
#include "dgnn/gnn/train/minibatch.hpp"
#include "dgnn/gnn/train/trainer.hpp"
#include "dgnn/kernels/minibatch_kernels.hpp"
#include "dgnn/sampler/device_sampler.hpp"

using namespace dgnn;

namespace {

// The graph with a self loop on every third vertex and, when asked, random edge weights.
Csr with_loops(const Csr& g, bool weighted) {
  std::vector<int32_t> row, col;
  std::vector<float> w;
  Rng rng(11);
  for (int64_t v = 0; v < g.rows; ++v) {
    for (int64_t e = g.offsets[size_t(v)]; e < g.offsets[size_t(v) + 1]; ++e) {
      row.push_back(int32_t(v));
      col.push_back(g.indices[size_t(e)]);
    }
    if (v % 3 == 0) {
      row.push_back(int32_t(v));
      col.push_back(int32_t(v));
    }
  }
  if (weighted)
    for (size_t i = 0; i < row.size(); ++i) w.push_back(0.25f + float(rng.uniform()));
  return csr_from_coo(g.rows, g.cols, row, col, w);
}

void require_same(const CsrView& got, const Csr& want) {
  REQUIRE(got.rows == want.rows);
  REQUIRE(got.cols == want.cols);
  REQUIRE(got.nnz() == want.nnz());
  for (int64_t r = 0; r <= got.rows; ++r) REQUIRE(got.offsets[r] == want.offsets[size_t(r)]);
  for (int64_t e = 0; e < got.nnz(); ++e) {
    INFO("entry " << e);
    REQUIRE(got.indices[e] == want.indices[size_t(e)]);
    const float w = want.values.empty() ? 1.f : want.values[size_t(e)];
    REQUIRE(std::memcmp(&got.values[e], &w, sizeof(float)) == 0);  // the same bits
  }
}

}  // namespace

TEST_CASE("a device block's adjacencies equal the host block's, bit for bit") {
  const Dataset data = test::small_sbm(300, 5);
  for (bool weighted : {false, true})
    for (bool replace : {false, true})
      for (int fanout : {3, -1}) {
        INFO("weighted " << weighted << ", replace " << replace << ", fanout " << fanout);
        const Csr g = with_loops(data.graph.in, weighted);
        LocalNeighborSource src(g);
        SamplerOptions so;
        so.fanouts = {fanout, 4};
        so.replace = replace;
        so.seed = 3;
        NeighborSampler sampler(src, so);
        std::vector<int64_t> seeds;
        for (int64_t v = 1; v < 300; v += 7) seeds.push_back(v);
        SampledBatch batch = sampler.sample(seeds, 2);
        for (const Block& b : batch.blocks) {
          GraphView host(GraphView::Bipartite{}, b.adj, b.n_dst, b.src, b.src_degree);
          const kernels::DeviceBlock dev = to_device(Device::cpu, b);
          for (Norm norm : {Norm::sum, Norm::mean, Norm::gcn}) {
            INFO("norm " << int(norm));
            const auto m =
                kernels::block_adjacency(Device::cpu, dev, kernels::BlockNorm(uint8_t(norm)));
            const GraphView::Adjacency& want = host.adjacency(norm);
            require_same(m.forward.view(), want.forward);
            require_same(m.backward.view(), want.backward());
          }
        }
      }
}

TEST_CASE("block_adjacency and gather_rows_by_id refuse what they cannot take") {
  kernels::DeviceBlock b;
  b.n_dst = 2;
  b.n_src = 1;  // fewer sources than destinations
  CHECK_THROWS_AS(kernels::block_adjacency(Device::cpu, b, kernels::BlockNorm::gcn), ShapeError);
  Tensor x(3, 2);
  Tensor y(1, 2);
  const int64_t bad = 3;
  CHECK_THROWS_AS(kernels::gather_rows_by_id(Device::cpu, x.view(), &bad, 1, y.view()), ShapeError);
  const int64_t good = 2;
  x.at(2, 1) = 5.f;
  kernels::gather_rows_by_id(Device::cpu, x.view(), &good, 1, y.view());
  CHECK(y.at(0, 1) == 5.f);
}

namespace {

// The CPU sampler's blocks turned into device-block views, the input rows gathered by id: what
// gnn/device_minibatch does with the GPU sampler's, here in host memory.
class DeviceViewSampler final : public BatchSampler {
 public:
  DeviceViewSampler(const Csr& g, const Tensor& features, SamplerOptions opt)
      : source_(g), sampler_(source_, opt), features_(features) {}
  const SamplerOptions& options() const override { return sampler_.options(); }
  void sample(MiniBatch& mb, const MiniBatchOptions& opt) override {
    SampledBatch sb = sampler_.sample(mb.seeds, uint64_t(mb.epoch));
    mb.edges = sb.edges();
    kernels::DeviceBlock first = to_device(Device::cpu, sb.blocks.front());
    Tensor x = Tensor::uninitialized(first.n_src, features_.cols());
    kernels::gather_rows_by_id(Device::cpu, features_.view(), first.src.as<const int64_t>(),
                               first.n_src, x.view());
    mb.inputs = Var(std::move(x));
    for (const Block& b : sb.blocks) {
      mb.views.push_back(
          std::make_unique<GraphView>(GraphView::Bipartite{}, to_device(Device::cpu, b)));
      prepare_view(*mb.views.back(), opt);
    }
  }

 private:
  LocalNeighborSource source_;
  NeighborSampler sampler_;
  const Tensor& features_;
};

std::vector<float> flat_grads(Module& m) {
  std::vector<float> out;
  for (auto* p : m.parameters())
    out.insert(out.end(), p->var.grad().data(), p->var.grad().data() + p->var.grad().numel());
  return out;
}

}  // namespace

TEST_CASE("device-block views train exactly as host-block views (CPU)") {
  const Dataset data = test::small_sbm(500, 3);
  const NodeTask task = make_node_task(data);
  GraphView graph(data.graph.in);
  std::vector<int64_t> ids;
  std::vector<int32_t> labels;
  for (int32_t r : task.train) {
    ids.push_back(r);
    labels.push_back(task.labels[size_t(r)]);
  }
  SelfCommunicator comm;
  auto store = make_local_store(data.graph.in, task.features.value());
  for (ModelKind kind : {ModelKind::gcn, ModelKind::sage, ModelKind::gin}) {
    INFO(model_kind_name(kind));
    StackModel model(builtin_layer(kind), {data.feature_dim, 16, data.num_classes}, 0.5f);
    model.reset_parameters(2);
    MiniBatchOptions mo;
    mo.batch_size = 40;
    mo.sampler.fanouts = {4, 3};
    mo.sampler.seed = 6;
    MiniBatchLoader host(*store, ids, labels, mo, comm);
    MiniBatchLoader dev(
        std::make_unique<DeviceViewSampler>(data.graph.in, task.features.value(), mo.sampler), ids,
        labels, mo, comm);
    REQUIRE(host.steps_per_epoch() == dev.steps_per_epoch());
    TrainOptions opt;
    opt.seed = 9;
    Trainer trainer(model, graph, task, comm, opt);
    for (int64_t step : {0, 2}) {
      const MiniBatch a = host.make(1, step);
      const MiniBatch b = dev.make(1, step);
      REQUIRE(a.seeds == b.seeds);
      REQUIRE(a.edges == b.edges);
      const double la = trainer.forward_backward(a, 4);
      const auto ga = flat_grads(model);
      const double lb = trainer.forward_backward(b, 4);
      CHECK(la == lb);
      CHECK(ga == flat_grads(model));
    }
  }
}

TEST_CASE("a device block has no host structure: structure() and GAT say so") {
  const Dataset data = test::small_sbm(200, 1);
  LocalNeighborSource src(data.graph.in);
  SamplerOptions so;
  so.fanouts = {3};
  NeighborSampler sampler(src, so);
  SampledBatch sb = sampler.sample({1, 2, 3}, 0);
  GraphView view(GraphView::Bipartite{}, to_device(Device::cpu, sb.blocks[0]));
  CHECK(view.bipartite());
  CHECK(view.n_owned() == 3);
  CHECK(view.n_input_rows() == sb.blocks[0].n_src());
  CHECK_THROWS_AS(view.structure(), Error);
  CHECK_THROWS_AS(view.attention(), OptionError);
  CHECK(view.global_ids()[1] == 2);
}
