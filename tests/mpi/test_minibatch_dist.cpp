// Distributed mini-batch training: a rank's sampled blocks and input rows, drawn through the
// owners of other ranks' vertices, equal what one process draws for the same seeds; with every
// neighbour taken, the step's gradients (summed over ranks) equal the single-process full-graph
// gradients over the union of the ranks' seeds; ranks with fewer (or no) training vertices take
// empty steps in step with the others, and the job learns.
#include <catch2/catch.hpp>
#include <cmath>

#include "../small_sbm.hpp"
#include "dgnn/comm/communicator.hpp"
#include "dgnn/datasets/sbm.hpp"
#include "dgnn/gnn/models/layers.hpp"
#include "dgnn/gnn/train/dist_sampler.hpp"
#include "dgnn/gnn/train/distributed.hpp"

using namespace dgnn;

namespace {

// The generator's defaults (as the single-process learning tests use): learnable in a few epochs.
const Dataset& learnable() {
  static const Dataset d = [] {
    SbmConfig cfg;
    cfg.vertices = 1200;
    cfg.classes = 4;
    cfg.seed = 3;
    return generate_sbm(cfg).to_dataset();
  }();
  return d;
}

const Dataset& dataset() {
  static const Dataset d = test::small_sbm(600, 13);
  return d;
}

// One rank's mini-batch pipeline over its part.
struct DistRun {
  std::unique_ptr<RankSetup> setup;
  std::unique_ptr<Communicator> sample_comm;
  std::unique_ptr<GraphStore> store;
  std::unique_ptr<MiniBatchLoader> loader;

  DistRun(Communicator& comm, const std::vector<int32_t>& part, MiniBatchOptions mo,
          const Dataset& d = dataset()) {
    setup = make_rank_setup(extract_part(d, part, comm.size(), comm.rank()), comm);
    sample_comm = comm.duplicate();
    store = make_dist_store(*setup->graph, d.num_vertices(), setup->task.features, *sample_comm);
    std::vector<int64_t> ids;
    std::vector<int32_t> labels;
    for (int32_t r : setup->task.train) {
      ids.push_back(setup->part.global_ids[size_t(r)]);
      labels.push_back(setup->task.labels[size_t(r)]);
    }
    loader = std::make_unique<MiniBatchLoader>(*store, ids, labels, mo, comm, sample_comm.get());
  }
};

std::vector<int32_t> metis_part(Communicator& comm) {
  PartitionOptions popt;
  popt.parts = comm.size();
  popt.seed = 3;
  return partition_vertices(dataset().graph.in, popt, dataset().train);
}

// dataset() with edge weights and a self loop on every third vertex.
const Dataset& weighted_with_loops() {
  static const Dataset d = [] {
    Dataset w = dataset();
    const Csr& g = w.graph.in;
    std::vector<int32_t> rows, cols;
    std::vector<float> vals;
    for (int32_t v = 0; v < int32_t(g.rows); ++v) {
      for (int64_t e = g.offsets[v]; e < g.offsets[v + 1]; ++e) {
        rows.push_back(v);
        cols.push_back(g.indices[e]);
        vals.push_back(float(1 + (v + g.indices[e]) % 5));
      }
      if (v % 3 == 0) {
        rows.push_back(v);
        cols.push_back(v);
        vals.push_back(0.5f);
      }
    }
    w.graph.in = csr_from_coo(g.rows, g.cols, rows, cols, vals);
    return w;
  }();
  return d;
}

}  // namespace

TEST_CASE("blocks sampled through the owners equal one process's for the same seeds", "[mbdist]") {
  Communicator& comm = world();
  for (int variant = 0; variant < 3; ++variant) {
    const Dataset& d = variant == 0 ? dataset() : weighted_with_loops();
    INFO((variant == 0   ? "plain"
          : variant == 1 ? "weighted, self loops"
                         : "weighted, self loops, with replacement"));
    MiniBatchOptions mo;
    mo.batch_size = 8;
    mo.sampler.fanouts = {3, 5};
    mo.sampler.seed = 4;
    mo.sampler.replace = variant == 2;
    PartitionOptions popt;
    popt.parts = comm.size();
    popt.seed = 3;
    DistRun run(comm, partition_vertices(d.graph.in, popt, d.train), mo, d);
    // Every rank asks for the same seeds, most of them owned elsewhere.
    const std::vector<int64_t> seeds = {5, 77, 300, 12, 599, 421, 250, 3, 6};
    NeighborSampler dist(*run.store, run.loader->options().sampler);
    SampledBatch got = dist.sample(seeds, 3);
    LocalNeighborSource local(d.graph.in);
    NeighborSampler one(local, mo.sampler);
    SampledBatch want = one.sample(seeds, 3);
    for (size_t l = 0; l < 2; ++l) {
      INFO("layer " << l);
      CHECK(got.blocks[l].src == want.blocks[l].src);
      CHECK(got.blocks[l].src_degree == want.blocks[l].src_degree);
      CHECK(got.blocks[l].adj.offsets == want.blocks[l].adj.offsets);
      CHECK(got.blocks[l].adj.indices == want.blocks[l].adj.indices);
      CHECK(got.blocks[l].adj.values == want.blocks[l].adj.values);
    }
    if (variant > 0) CHECK(!got.blocks[1].adj.values.empty());
    Tensor rows = run.store->gather_features(got.blocks[0].src);
    const int64_t f = d.feature_dim;
    REQUIRE(rows.cols() == f);
    for (int64_t i = 0; i < rows.rows(); ++i)
      for (int64_t c = 0; c < f; ++c)
        CHECK(rows.at(i, c) == d.features[size_t(got.blocks[0].src[size_t(i)] * f + c)]);
  }
}

TEST_CASE("with every neighbour, a distributed step's gradients equal the full graph's",
          "[mbdist]") {
  Communicator& comm = world();
  for (ModelKind kind : {ModelKind::gcn, ModelKind::sage, ModelKind::gin}) {
    INFO(model_kind_name(kind) << " on " << comm.size() << " ranks");
    MiniBatchOptions mo;
    mo.batch_size = 11;
    mo.sampler.fanouts = {-1, -1};
    mo.sampler.seed = 2;
    DistRun run(comm, metis_part(comm), mo);
    StackModel model(builtin_layer(kind), {dataset().feature_dim, 16, dataset().num_classes}, 0.5f);
    model.reset_parameters(6);
    TrainOptions opt;
    opt.seed = 9;
    Trainer dist(model, *run.setup->graph, run.setup->task, comm, opt);
    MiniBatch batch = run.loader->make(1, 2);
    const double dist_loss = dist.forward_backward(batch, 4);
    std::vector<std::vector<float>> got;
    for (auto* p : model.parameters())
      got.emplace_back(p->var.grad().data(), p->var.grad().data() + p->var.grad().numel());

    // The union of every rank's seeds, trained on the whole graph in this process.
    std::vector<int64_t> in_batch(size_t(dataset().num_vertices()), 0);
    for (int64_t v : batch.seeds) in_batch[size_t(v)] = 1;
    comm.allreduce_sum(in_batch.data(), int64_t(in_batch.size()));
    NodeTask task = make_node_task(dataset());
    task.train.clear();
    for (size_t v = 0; v < in_batch.size(); ++v)
      if (in_batch[v]) task.train.push_back(int32_t(v));
    task.global_train = int64_t(task.train.size());
    REQUIRE(task.global_train == batch.global_seeds);
    SelfCommunicator self;
    GraphView whole(dataset().graph.in);
    Trainer ref(model, whole, task, self, opt);
    CHECK(dist_loss == Approx(ref.forward_backward(4)).epsilon(1e-5));
    size_t i = 0;
    for (auto* p : model.parameters()) {
      const Tensor& g = p->var.grad();
      for (int64_t k = 0; k < g.numel(); ++k)
        CHECK(got[i][size_t(k)] == Approx(g.data()[k]).epsilon(1e-5).margin(1e-6));
      ++i;
    }
  }
}

TEST_CASE("ranks with fewer or no seeds take empty steps in step, and the job learns", "[mbdist]") {
  Communicator& comm = world();
  const int p = comm.size();
  // Round-robin parts, training vertices on every rank but the last, which owns none (the
  // generator's classes are contiguous id ranges: every rank still sees every class).
  const int64_t n = learnable().num_vertices();
  std::vector<int32_t> part(static_cast<size_t>(n));
  for (int64_t v = 0; v < n; ++v) part[size_t(v)] = int32_t(v % p);
  MiniBatchOptions mo;
  mo.batch_size = 32;
  mo.sampler.fanouts = {5, 5};
  mo.sampler.seed = 1;
  DistRun run(comm, part, mo, learnable());
  NodeTask& task = run.setup->task;
  std::vector<int32_t> kept;
  for (int32_t r : task.train)
    if (p == 1 || run.setup->part.global_ids[size_t(r)] % p != p - 1) kept.push_back(r);
  task.train = kept;
  int64_t mine = int64_t(kept.size()), total = mine;
  comm.allreduce_sum(&total, 1);
  task.global_train = total;
  std::vector<int64_t> ids;
  std::vector<int32_t> labels;
  for (int32_t r : kept) {
    ids.push_back(run.setup->part.global_ids[size_t(r)]);
    labels.push_back(task.labels[size_t(r)]);
  }
  MiniBatchLoader loader(*run.store, ids, labels, mo, comm, run.sample_comm.get());
  std::vector<double> per_rank(size_t(p), 0);
  per_rank[size_t(comm.rank())] = double(mine);
  comm.allreduce_sum(per_rank.data(), p);
  const int64_t most = int64_t(*std::max_element(per_rank.begin(), per_rank.end()));
  CHECK(loader.steps_per_epoch() == (most + 31) / 32);
  if (p > 1) CHECK((comm.rank() < p - 1) == (mine > 0));

  StackModel model(builtin_layer(ModelKind::sage),
                   {learnable().feature_dim, 16, learnable().num_classes}, 0.5f);
  model.reset_parameters(2);
  TrainOptions opt;
  opt.epochs = 12;
  opt.seed = 3;
  opt.weight_decay = 5e-4f;
  Trainer trainer(model, *run.setup->graph, task, comm, opt);
  trainer.set_minibatch(&loader);
  std::vector<double> losses;
  TrainResult res = trainer.run([&](const EpochRecord& s) {
    losses.push_back(s.loss);
    CHECK(s.figure("steps") == loader.steps_per_epoch());
  });
  CHECK(losses.front() > losses.back());
  CHECK(res.test_acc > 0.7);
}
