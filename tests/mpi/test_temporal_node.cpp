// Node classification over snapshots with the vertex strategy equals one process: the loss at
// every epoch and the test accuracy, for a per-vertex-memory model and an EvolveGCN.
#include <catch2/catch.hpp>
#include <cmath>

#include "dgnn/comm/communicator.hpp"
#include "dgnn/datasets/evolving_sbm.hpp"
#include "dgnn/gnn/temporal/temporal_dist.hpp"
#include "dgnn/gnn/temporal/temporal_node.hpp"
#include "dgnn/gnn/temporal/temporal_trainer.hpp"

using namespace dgnn;

namespace {

const EvolvingSbm& sbm() {
  static const EvolvingSbm s = [] {
    EvolvingSbmConfig cfg;
    cfg.vertices = 300;
    cfg.snapshots = 8;
    cfg.classes = 3;
    cfg.avg_degree = 6;
    cfg.drift = 0.05;
    cfg.feature_dim = 6;
    cfg.seed = 7;
    return generate_evolving_sbm(cfg);
  }();
  return s;
}

struct Run {
  std::vector<double> losses;
  NodeSequenceResult result;
};

Run train(Communicator& comm, TemporalKind kind) {
  const TemporalGraph g = sbm().to_temporal();
  int64_t dim = 0;
  std::vector<Var> features = snapshot_features(g, sbm().features, sbm().config.feature_dim, &dim);
  std::vector<std::unique_ptr<GraphView>> views;
  std::unique_ptr<TemporalRank> tr;
  std::vector<int64_t> owned;
  if (comm.size() == 1) {
    for (int t = 0; t < g.num_snapshots(); ++t)
      views.push_back(std::make_unique<GraphView>(g.snapshot(t)));
    for (int64_t v = 0; v < g.num_vertices; ++v) owned.push_back(v);
  } else {
    PartitionOptions popt;
    popt.parts = comm.size();
    popt.seed = 1;
    std::vector<int32_t> part = partition_temporal(g, popt);
    comm.broadcast(part.data(), int64_t(part.size()) * 4, 0);
    tr = make_temporal_rank(g, features, part, comm);
    owned = tr->owned;
  }
  // Every third vertex validation, every third + 1 test, the rest training: by global id, so
  // every rank count splits alike.
  NodeSequenceTask task;
  task.num_classes = sbm().config.classes;
  for (size_t i = 0; i < owned.size(); ++i) {
    const int64_t v = owned[i];
    task.labels.push_back(sbm().labels[size_t(v)]);
    (v % 3 == 0 ? task.val : v % 3 == 1 ? task.test : task.train).push_back(int32_t(i));
  }
  for (int64_t v = 0; v < g.num_vertices; ++v)
    ++(v % 3 == 0 ? task.global_val : v % 3 == 1 ? task.global_test : task.global_train);
  auto model = make_temporal_model(kind, {dim, 8, 8});
  model->reset_parameters(3);
  NodeSequenceOptions opt;
  opt.epochs = 6;
  opt.bptt = 4;
  NodeSequenceTrainer trainer(*model, tr ? tr->graphs : views, tr ? tr->features : features, task,
                              comm, opt);
  Run r;
  r.result = trainer.run([&](const EpochRecord& e) { r.losses.push_back(e.loss); });
  return r;
}

}  // namespace

TEST_CASE("vertex-partitioned node classification over snapshots equals one process", "[tnode]") {
  Communicator& comm = world();
  SelfCommunicator self;
  for (TemporalKind kind : {TemporalKind::gcrn, TemporalKind::evolvegcn_o}) {
    INFO(temporal_kind_name(kind) << " on " << comm.size() << " ranks");
    const Run ref = train(self, kind);
    const Run got = train(comm, kind);
    REQUIRE(got.losses.size() == ref.losses.size());
    for (size_t e = 0; e < ref.losses.size(); ++e) {
      INFO("epoch " << e + 1);
      CHECK(std::abs(got.losses[e] - ref.losses[e]) <= 1e-4 * std::abs(ref.losses[e]));
    }
    CHECK(got.result.best_epoch == ref.result.best_epoch);
    CHECK(got.result.test_acc == Approx(ref.result.test_acc).margin(1e-9));
  }
}
