// Mini-batch training on the GPU against the CPU mini-batch path: the same seeds and key give the
// same blocks bit for bit (the sampler's own test), so a step's loss and gradients differ only by
// the kernels' summation order; then whole epochs through the prefetching loader, and the block
// adjacencies built on the device against the host's.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <memory>
#include <vector>

#include "../small_sbm.hpp"
#include "dgnn/comm/communicator.hpp"
#include "dgnn/datasets/sbm.hpp"
#include "dgnn/gnn/models/layers.hpp"
#include "dgnn/gnn/train/device_minibatch.hpp"
#include "dgnn/gnn/train/minibatch.hpp"
#include "dgnn/gnn/train/trainer.hpp"
#include "dgnn/kernels/minibatch_kernels.hpp"
#include "dgnn/sampler/device_sampler.hpp"
#include "gpu_util.hpp"

using namespace dgnn;

namespace {

// One device's side: its model, features and loader (CPU: the local store; GPU: the device
// sampler), the trainer on the whole graph for evaluation.
struct Side {
  SelfCommunicator comm;  // first: the loader and trainer hold it
  NodeTask task;
  GraphView graph;
  StackModel model;
  Var host_features;  // host sampling: the store's features (outlive the store)
  std::unique_ptr<GraphStore> store;
  std::unique_ptr<MiniBatchLoader> loader;
  std::unique_ptr<Trainer> trainer;

  // host_sampling: on a GPU, blocks sampled on the CPU and moved there (mo.device), as under
  // mpirun and for GAT.
  Side(const Dataset& data, ModelKind kind, Device dev, MiniBatchOptions mo, TrainOptions opt,
       bool host_sampling = false)
      : task(make_node_task(data)),
        graph(data.graph.in),
        model(builtin_layer(kind), {data.feature_dim, 16, data.num_classes}, 0.5f) {
    model.reset_parameters(3);
    model.to(dev);
    task.features = Var(task.features.value().to(dev));
    std::vector<int64_t> ids;
    std::vector<int32_t> labels;
    for (int32_t r : task.train) {
      ids.push_back(r);
      labels.push_back(task.labels[size_t(r)]);
    }
    mo.device = dev;
    if (dev == Device::cpu) {
      store = make_local_store(data.graph.in, task.features.value());
      loader = std::make_unique<MiniBatchLoader>(*store, ids, labels, mo, comm);
    } else if (host_sampling) {
      host_features = Var(task.features.value().to(Device::cpu));
      store = make_local_store(data.graph.in, host_features.value());
      loader = std::make_unique<MiniBatchLoader>(*store, ids, labels, mo, comm);
    } else {
      loader = std::make_unique<MiniBatchLoader>(
          make_device_sampler(data.graph.in, task.features.value(), mo.sampler), ids, labels, mo,
          comm);
    }
    trainer = std::make_unique<Trainer>(model, graph, task, comm, opt);
    trainer->set_minibatch(loader.get());
  }

  std::vector<float> grads() {
    std::vector<float> out;
    for (auto* p : model.parameters()) {
      const Tensor g = p->var.grad().to(Device::cpu);
      out.insert(out.end(), g.data(), g.data() + g.numel());
    }
    return out;
  }
};

MiniBatchOptions options(std::vector<int> fanouts, bool replace) {
  MiniBatchOptions mo;
  mo.batch_size = 48;
  mo.sampler.fanouts = std::move(fanouts);
  mo.sampler.replace = replace;
  mo.sampler.seed = 12;
  return mo;
}

// One training step on each side's batch: the same loss and gradients up to summation order.
void check_same_step(Side& cpu, const MiniBatch& a, Side& gpu, const MiniBatch& b) {
  const double la = cpu.trainer->forward_backward(a, 7);
  const double lb = gpu.trainer->forward_backward(b, 7);
  CHECK(lb == Approx(la).epsilon(1e-5));
  const auto ga = cpu.grads(), gb = gpu.grads();
  REQUIRE(ga.size() == gb.size());
  for (size_t i = 0; i < ga.size(); ++i) {
    INFO("gradient element " << i);
    CHECK(std::abs(gb[i] - ga[i]) <= 1e-4f * std::max(1.f, std::abs(ga[i])));
  }
}

}  // namespace

TEST_CASE("a GPU mini-batch step gives the CPU's loss and gradients (GraphSAGE, GCN, GIN)",
          "[gpu]") {
  const Dataset data = test::small_sbm(600, 4);
  TrainOptions opt;
  opt.seed = 5;
  for (ModelKind kind : {ModelKind::sage, ModelKind::gcn, ModelKind::gin})
    for (bool replace : {false, true}) {
      INFO(model_kind_name(kind) << ", replace " << replace);
      MiniBatchOptions mo = options({4, 3}, replace);
      mo.norms = {kind == ModelKind::gcn    ? Norm::gcn
                  : kind == ModelKind::sage ? Norm::mean
                                            : Norm::sum};
      Side cpu(data, kind, Device::cpu, mo, opt);
      Side gpu(data, kind, Device::cuda, mo, opt);
      for (int64_t step : {0, 3}) {
        INFO("step " << step);
        const MiniBatch a = cpu.loader->make(2, step);
        const MiniBatch b = gpu.loader->make(2, step);
        REQUIRE(a.seeds == b.seeds);
        REQUIRE(a.edges == b.edges);
        REQUIRE(b.inputs.device() == Device::cuda);
        REQUIRE(a.inputs.rows() == b.inputs.rows());
        // The gathered input rows are the CPU's exactly (a copy, no arithmetic).
        const Tensor xb = b.inputs.value().to(Device::cpu);
        REQUIRE(std::memcmp(a.inputs.value().data(), xb.data(),
                            size_t(xb.numel()) * sizeof(float)) == 0);
        check_same_step(cpu, a, gpu, b);
      }
    }
}

TEST_CASE("blocks sampled on the CPU and moved to the GPU give the CPU's step (SAGE, GAT)",
          "[gpu]") {
  const Dataset data = test::small_sbm(600, 4);
  TrainOptions opt;
  opt.seed = 5;
  for (ModelKind kind : {ModelKind::sage, ModelKind::gat}) {
    INFO(model_kind_name(kind));
    MiniBatchOptions mo = options({4, 3}, false);
    mo.norms = {kind == ModelKind::sage ? Norm::mean : Norm::gcn};
    mo.attention = kind == ModelKind::gat;
    Side cpu(data, kind, Device::cpu, mo, opt);
    Side gpu(data, kind, Device::cuda, mo, opt, true);
    for (int64_t step : {0, 3}) {
      INFO("step " << step);
      const MiniBatch a = cpu.loader->make(2, step);
      const MiniBatch b = gpu.loader->make(2, step);
      REQUIRE(a.seeds == b.seeds);
      REQUIRE(b.inputs.device() == Device::cuda);
      REQUIRE(b.views.front()->device() == Device::cuda);
      check_same_step(cpu, a, gpu, b);
    }
  }
}

TEST_CASE("GPU mini-batch epochs (prefetching) follow the CPU's losses", "[gpu]") {
  const Dataset data = test::small_sbm(800, 2);
  TrainOptions opt;
  opt.seed = 1;
  opt.epochs = 3;
  opt.weight_decay = 5e-4f;
  for (ModelKind kind : {ModelKind::sage, ModelKind::gcn}) {
    INFO(model_kind_name(kind));
    MiniBatchOptions mo = options({5, 5}, false);
    mo.prefetch = true;
    mo.norms = {kind == ModelKind::gcn ? Norm::gcn : Norm::mean};
    std::vector<double> lc, lg;
    Side cpu(data, kind, Device::cpu, mo, opt);
    Side gpu(data, kind, Device::cuda, mo, opt);
    const TrainResult rc = cpu.trainer->run([&](const EpochRecord& s) { lc.push_back(s.loss); });
    const TrainResult rg = gpu.trainer->run([&](const EpochRecord& s) {
      lg.push_back(s.loss);
      CHECK(s.figure("sampled_edges") > 0);
    });
    REQUIRE(lc.size() == lg.size());
    for (size_t e = 0; e < lc.size(); ++e) {
      INFO("epoch " << e + 1);
      CHECK(lg[e] == Approx(lc[e]).epsilon(1e-4));
    }
    CHECK(std::abs(rg.test_acc - rc.test_acc) <= 0.02);
  }
}

TEST_CASE("block adjacencies built on the GPU are the host's, bit for bit", "[gpu]") {
  const Dataset data = test::small_sbm(400, 7);
  for (bool replace : {false, true}) {
    SamplerOptions so;
    so.fanouts = {-1, 3};
    so.replace = replace;
    so.seed = 4;
    DeviceNeighborSampler sampler(Device::cuda, data.graph.in, so);
    std::vector<int64_t> seeds;
    for (int64_t v = 2; v < 400; v += 9) seeds.push_back(v);
    DeviceSampledBatch db = sampler.sample(seeds, 1);
    const SampledBatch hb = to_host(db);
    for (size_t l = 0; l < db.blocks.size(); ++l) {
      const Block& b = hb.blocks[l];
      GraphView host(GraphView::Bipartite{}, b.adj, b.n_dst, b.src, b.src_degree);
      for (Norm norm : {Norm::sum, Norm::mean, Norm::gcn}) {
        INFO("replace " << replace << ", block " << l << ", norm " << int(norm));
        const auto m =
            kernels::block_adjacency(Device::cuda, db.blocks[l], kernels::BlockNorm(uint8_t(norm)));
        const GraphView::Adjacency& want = host.adjacency(norm);
        const Csr* sides[2] = {&want.forward, &want.backward()};
        const kernels::DeviceCsr* got[2] = {&m.forward, &m.backward};
        for (int k = 0; k < 2; ++k) {
          const CsrView v = got[k]->view();
          const Csr& w = *sides[k];
          REQUIRE(v.rows == w.rows);
          REQUIRE(v.nnz() == w.nnz());
          std::vector<int64_t> off(size_t(v.rows + 1));
          std::vector<int32_t> idx(size_t(v.nnz()));
          std::vector<float> val(size_t(v.nnz()));
          kernels::copy(Device::cpu, off.data(), Device::cuda, v.offsets, off.size() * 8);
          if (!idx.empty()) {
            kernels::copy(Device::cpu, idx.data(), Device::cuda, v.indices, idx.size() * 4);
            kernels::copy(Device::cpu, val.data(), Device::cuda, v.values, val.size() * 4);
          }
          CHECK(off == w.offsets);
          CHECK(idx == w.indices);
          std::vector<float> want_val = w.values;
          if (want_val.empty()) want_val.assign(idx.size(), 1.f);
          CHECK(std::memcmp(val.data(), want_val.data(), val.size() * 4) == 0);
        }
      }
    }
  }
}
