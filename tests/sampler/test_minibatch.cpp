// Mini-batch training on sampled blocks: with every neighbour taken, a batch's loss and gradients
// equal the full-graph ones over the same seeds (every built-in layer and a custom one, dropout
// on); sampled GCN / sum aggregation is unbiased; mini-batch training learns, is reproducible,
// gives the same numbers with and without the prefetch thread, and resumes from a checkpoint.
#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>

#include "../pool_layer.hpp"
#include "../small_sbm.hpp"
#include "dgnn/comm/communicator.hpp"
#include "dgnn/common/hash_rng.hpp"
#include "dgnn/datasets/sbm.hpp"
#include "dgnn/gnn/models/layers.hpp"
#include "dgnn/gnn/train/minibatch.hpp"
#include "dgnn/gnn/train/trainer.hpp"

using namespace dgnn;

namespace {

// A user's layer written with ops only; dst_rows makes its self term work on blocks too.
class GatedLayer : public Module {
 public:
  GatedLayer(int64_t in, int64_t out)
      : gate_(add_parameter("gate", in, out)),
        neigh_(add_parameter("neigh", in, out)),
        self_(add_parameter("self", in, out)) {}
  Var forward(ForwardContext& ctx, const Var& x) override {
    Var xs = dst_rows(ctx.graph, x);
    Var g = sigmoid(matmul(xs, gate_));
    return add(mul(g, matmul(aggregate(ctx.graph, x, Norm::mean), neigh_)), matmul(xs, self_));
  }

 private:
  Var &gate_, &neigh_, &self_;
};

LayerFactory factory(int which) {
  if (which < 3) return builtin_layer(ModelKind(which));
  if (which == 4)
    return [](int64_t in, int64_t out, int) -> std::unique_ptr<Module> {
      return std::make_unique<test::PoolLayer>(in, out);
    };
  return [](int64_t in, int64_t out, int) -> std::unique_ptr<Module> {
    return std::make_unique<GatedLayer>(in, out);
  };
}

struct Setup {
  Dataset data;
  NodeTask task;
  GraphView graph;
  std::unique_ptr<GraphStore> store;
  std::vector<int64_t> train_ids;
  std::vector<int32_t> train_labels;
  explicit Setup(Dataset d) : data(std::move(d)), task(make_node_task(data)), graph(data.graph.in) {
    store = make_local_store(data.graph.in, task.features.value());
    for (int32_t r : task.train) {
      train_ids.push_back(r);
      train_labels.push_back(task.labels[size_t(r)]);
    }
  }
};

std::vector<std::vector<float>> grads(Module& m) {
  std::vector<std::vector<float>> out;
  for (auto* p : m.parameters())
    out.emplace_back(p->var.grad().data(), p->var.grad().data() + p->var.grad().numel());
  return out;
}

}  // namespace

TEST_CASE("with every neighbour, a mini-batch's gradients equal the full graph's over its seeds") {
  Setup s(test::small_sbm(400, 4));
  SelfCommunicator comm;
  const char* names[] = {"gcn", "sage", "gin", "custom", "max/min pool"};
  for (int which = 0; which < 5; ++which) {
    for (int layers : {1, 2, 3}) {
      INFO(names[which] << ", " << layers << " layers");
      std::vector<int64_t> dims{s.data.feature_dim};
      for (int l = 1; l < layers; ++l) dims.push_back(16);
      dims.push_back(s.data.num_classes);
      StackModel model(factory(which), dims, 0.5f);
      model.reset_parameters(3);
      MiniBatchOptions mo;
      mo.batch_size = 17;
      mo.sampler.fanouts.assign(size_t(layers), -1);
      mo.sampler.seed = 8;
      MiniBatchLoader loader(*s.store, s.train_ids, s.train_labels, mo, comm);
      MiniBatch batch = loader.make(2, 3);
      REQUIRE(batch.seeds.size() == 17);
      REQUIRE(batch.global_seeds == 17);

      // The full graph, with the loss over exactly the batch's seeds.
      NodeTask only = make_node_task(s.data);
      only.train.assign(batch.seeds.begin(), batch.seeds.end());
      only.global_train = int64_t(only.train.size());
      TrainOptions opt;
      opt.seed = 5;
      Trainer full(model, s.graph, only, comm, opt);
      const double full_loss = full.forward_backward(9);
      const auto want = grads(model);

      Trainer mini(model, s.graph, s.task, comm, opt);
      const double mini_loss = mini.forward_backward(batch, 9);
      const auto got = grads(model);
      CHECK(mini_loss == Approx(full_loss).epsilon(1e-5));
      REQUIRE(got.size() == want.size());
      for (size_t i = 0; i < want.size(); ++i)
        for (size_t k = 0; k < want[i].size(); ++k) {
          INFO("parameter " << i << " element " << k);
          CHECK(std::abs(got[i][k] - want[i][k]) <= 1e-5 * std::max(1.f, std::abs(want[i][k])));
        }
    }
  }
}

TEST_CASE("sampled gcn and sum aggregation estimate the full neighbourhood without bias") {
  Setup s(test::small_sbm(300, 6));
  const Csr& g = s.data.graph.in;
  SelfCommunicator comm;
  std::vector<int64_t> seeds;
  for (int64_t v = 0; v < 300; v += 10) seeds.push_back(v);
  Tensor x(300, 3);
  Rng rng(1);
  for (int64_t i = 0; i < x.numel(); ++i) x.data()[i] = rng.uniform();
  for (Norm norm : {Norm::gcn, Norm::sum}) {
    INFO(int(norm));
    Var full = aggregate(s.graph, Var(x.clone()), norm);
    LocalNeighborSource src(g);
    SamplerOptions so;
    so.fanouts = {3};
    NeighborSampler sampler(src, so);
    Tensor mean(int64_t(seeds.size()), 3);
    const int trials = 3000;
    for (int t = 0; t < trials; ++t) {
      SampledBatch b = sampler.sample(seeds, uint64_t(t));
      Block& blk = b.blocks[0];
      std::vector<int32_t> idx(blk.src.begin(), blk.src.end());
      Tensor xin(blk.n_src(), 3);
      for (int64_t r = 0; r < blk.n_src(); ++r)
        for (int c = 0; c < 3; ++c) xin.at(r, c) = x.at(idx[size_t(r)], c);
      GraphView view(GraphView::Bipartite{}, std::move(blk.adj), blk.n_dst, blk.src,
                     blk.src_degree);
      Var y = aggregate(view, Var(std::move(xin)), norm);
      for (int64_t i = 0; i < mean.numel(); ++i) mean.data()[i] += y.value().data()[i] / trials;
    }
    for (size_t i = 0; i < seeds.size(); ++i)
      for (int c = 0; c < 3; ++c) {
        const double want = full.value().at(seeds[i], c);
        CHECK(mean.at(int64_t(i), c) == Approx(want).epsilon(0.05).margin(0.02));
      }
  }
}

namespace {

struct Run {
  std::vector<double> losses;
  TrainResult result;
};

Run train_minibatch(Setup& s, ModelKind kind, int epochs, bool prefetch, uint64_t seed,
                    const std::string& save = "", const std::string& load = "") {
  SelfCommunicator comm;
  StackModel model(builtin_layer(kind), {s.data.feature_dim, 16, s.data.num_classes}, 0.5f);
  model.reset_parameters(seed);
  TrainOptions opt;
  opt.epochs = epochs;
  opt.seed = seed;
  opt.weight_decay = 5e-4f;
  opt.save = save;
  opt.load = load;
  MiniBatchOptions mo;
  mo.batch_size = 64;
  mo.sampler.fanouts = {5, 5};
  mo.sampler.seed = seed;
  mo.prefetch = prefetch;
  mo.norms = {Norm::mean};
  MiniBatchLoader loader(*s.store, s.train_ids, s.train_labels, mo, comm);
  Trainer trainer(model, s.graph, s.task, comm, opt);
  trainer.set_minibatch(&loader);
  Run r;
  r.result = trainer.run([&](const EpochRecord& st) {
    r.losses.push_back(st.loss);
    CHECK(st.figure("steps") == loader.steps_per_epoch());
    CHECK(st.figure("sampled_edges") > 0);
    CHECK(st.figure("sample_ms") > 0);
  });
  return r;
}

}  // namespace

TEST_CASE("mini-batch GraphSAGE learns a planted partition") {
  SbmConfig cfg;  // the generator's defaults, as the full-batch learning test uses
  cfg.vertices = 2000;
  cfg.classes = 4;
  cfg.seed = 3;
  Setup s(generate_sbm(cfg).to_dataset());
  Run r = train_minibatch(s, ModelKind::sage, 15, true, 1);
  CHECK(r.losses.front() > r.losses.back());
  CHECK(r.result.test_acc > 0.7);
}

TEST_CASE("mini-batch training: same seed, same numbers, with or without prefetch") {
  Setup s(test::small_sbm(600, 2));
  Run a = train_minibatch(s, ModelKind::gcn, 4, true, 7);
  Run b = train_minibatch(s, ModelKind::gcn, 4, false, 7);
  Run c = train_minibatch(s, ModelKind::gcn, 4, true, 8);
  CHECK(a.losses == b.losses);
  CHECK(a.result.test_acc == b.result.test_acc);
  CHECK(a.losses != c.losses);
}

TEST_CASE("a mini-batch checkpoint resumes to exactly the uninterrupted run") {
  Setup s(test::small_sbm(600, 2));
  const auto dir = std::filesystem::temp_directory_path() / "dgnn_test_minibatch_ckpt";
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "half.ckpt").string();
  Run full = train_minibatch(s, ModelKind::sage, 6, true, 4);
  Run first = train_minibatch(s, ModelKind::sage, 3, true, 4, path);
  Run rest = train_minibatch(s, ModelKind::sage, 6, true, 4, "", path);
  std::vector<double> joined = first.losses;
  joined.insert(joined.end(), rest.losses.begin(), rest.losses.end());
  CHECK(joined == full.losses);
}
