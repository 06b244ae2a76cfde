// Distributed training equals single-process training: the same model on P ranks (METIS and
// random partitions, dropout on) gives the 1-rank loss at every epoch and the 1-rank gradients
// at step 0. The 1-rank reference is computed in the same binary, on every rank.
#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>

#include "../pool_layer.hpp"
#include "../small_sbm.hpp"
#include "dgnn/comm/communicator.hpp"
#include "dgnn/comm/device_comm.hpp"
#include "dgnn/datasets/sbm.hpp"
#include "dgnn/gnn/models/deep.hpp"
#include "dgnn/gnn/models/layers.hpp"
#include "dgnn/gnn/train/distributed.hpp"

using namespace dgnn;

namespace {

const Dataset& dataset() {
  static const Dataset d = test::small_sbm(500, 21);
  return d;
}

struct Curve {
  std::vector<double> losses;
  std::vector<std::vector<float>> grads0;  // parameter gradients at step 0
  double test_acc = 0;
};

Curve train_on(Communicator& comm, Partitioner method, ModelKind kind, int epochs,
               const std::string& save = "", const std::string& load = "", int total = 0,
               int64_t piece_rows = 0) {
  PartitionOptions popt;
  popt.method = method;
  popt.seed = 3;
  auto setup = make_rank_setup(partition_and_extract(dataset(), popt, comm), comm);
  REQUIRE(agree_piece_rows(*setup->halo, comm, piece_rows) == (comm.size() > 1 ? piece_rows : 0));
  const LocalPart& p = setup->part;
  StackModel model(builtin_layer(kind, 0.5f), {p.feature_dim, 16, p.num_classes}, 0.5f);
  model.reset_parameters(7);
  TrainOptions opt;
  opt.epochs = total ? total : epochs;
  opt.seed = 11;
  opt.weight_decay = 5e-4f;
  opt.save = save;
  opt.load = load;
  Trainer trainer(model, *setup->graph, setup->task, comm, opt);
  Curve c;
  if (load.empty()) {
    trainer.forward_backward(0);
    for (auto* prm : model.parameters()) {
      const Tensor& g = prm->var.grad();
      c.grads0.emplace_back(g.data(), g.data() + g.numel());
    }
  }
  c.test_acc = trainer.run([&](const EpochRecord& s) { c.losses.push_back(s.loss); }).test_acc;
  // An undirected graph's GCN weights are symmetric on the owned columns: a rank keeps none of
  // the transpose, and its backward (checked above against one process) reads the forward rows
  // for all of it, the halo rows turned around as it runs: exactly the whole transpose's.
  const GraphView& g = *setup->graph;
  if (kind == ModelKind::gcn && g.n_halo() > 0) {
    const GraphView::Adjacency& a = g.adjacency(Norm::gcn);
    CHECK(a.owned_symmetric);
    CHECK(a.transposed.rows == 0);
    CHECK(int64_t(a.owned_ends().size()) == g.n_owned());
    const Csr whole = a.forward.transpose(), halo = a.halo_transpose();
    REQUIRE(halo.rows == g.n_halo());
    const int64_t base = whole.offsets[size_t(g.n_owned())];
    CHECK(halo.nnz() == whole.nnz() - base);
    for (int64_t h = 0; h <= halo.rows; ++h)
      CHECK(halo.offsets[size_t(h)] == whole.offsets[size_t(g.n_owned() + h)] - base);
    CHECK(std::equal(halo.indices.begin(), halo.indices.end(), whole.indices.begin() + base));
    CHECK(std::equal(halo.values.begin(), halo.values.end(), whole.values.begin() + base));
  }
  return c;
}

// A user's layer, written with ops only (as examples/custom_layer): gated mean aggregation.
class GatedLayer : public Module {
 public:
  GatedLayer(int64_t in, int64_t out)
      : gate_(add_parameter("gate", in, out)),
        neigh_(add_parameter("neigh", in, out)),
        self_(add_parameter("self", in, out)) {}
  Var forward(ForwardContext& ctx, const Var& x) override {
    Var g = sigmoid(matmul(x, gate_));
    return add(mul(g, matmul(aggregate(ctx.graph, x, Norm::mean), neigh_)), matmul(x, self_));
  }

 private:
  Var& gate_;
  Var& neigh_;
  Var& self_;
};

std::vector<double> train_custom(Communicator& comm, bool pool = false, int64_t piece_rows = 0) {
  PartitionOptions popt;
  popt.seed = 3;
  auto setup = make_rank_setup(partition_and_extract(dataset(), popt, comm), comm);
  agree_piece_rows(*setup->halo, comm, piece_rows);
  auto make = [pool](int64_t in, int64_t out, int) -> std::unique_ptr<Module> {
    if (pool) return std::make_unique<test::PoolLayer>(in, out);
    return std::make_unique<GatedLayer>(in, out);
  };
  StackModel model(make, {setup->part.feature_dim, 16, setup->part.num_classes}, 0.5f);
  model.reset_parameters(5);
  TrainOptions opt;
  opt.epochs = 10;
  opt.seed = 2;
  Trainer trainer(model, *setup->graph, setup->task, comm, opt);
  std::vector<double> losses;
  trainer.run([&](const EpochRecord& s) { losses.push_back(s.loss); });
  return losses;
}

void check_close(const std::vector<double>& a, const std::vector<double>& b) {
  REQUIRE(a.size() == b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    INFO("epoch " << i + 1 << ": " << a[i] << " vs " << b[i]);
    CHECK(std::abs(a[i] - b[i]) <= 1e-4 * std::abs(b[i]));
  }
}

// P ranks against one process: every epoch's loss, the step-0 gradients, the test accuracy.
void check_same_curve(const Curve& got, const Curve& ref) {
  check_close(got.losses, ref.losses);
  REQUIRE(got.grads0.size() == ref.grads0.size());
  for (size_t i = 0; i < ref.grads0.size(); ++i)
    for (size_t k = 0; k < ref.grads0[i].size(); ++k)
      CHECK(got.grads0[i][k] == Approx(ref.grads0[i][k]).epsilon(1e-4).margin(1e-6));
  CHECK(got.test_acc == Approx(ref.test_acc).margin(0.02));
}

}  // namespace

namespace {

// A deep model (GCNII, residual GCN) of `layers` graph layers, dropout on, on this
// communicator's ranks: every epoch's loss and the step-0 gradients.
Curve train_deep(Communicator& comm, DeepKind kind, int layers, Partitioner method) {
  PartitionOptions popt;
  popt.method = method;
  popt.seed = 3;
  auto setup = make_rank_setup(partition_and_extract(dataset(), popt, comm), comm);
  const LocalPart& p = setup->part;
  DeepModelOptions o;
  o.kind = kind;
  o.layers = layers;
  o.hidden = 16;
  o.dropout = 0.5f;
  o.conv_weight_decay = 0.01f;
  std::unique_ptr<NodeModel> model = make_deep_model(p.feature_dim, p.num_classes, o);
  model->reset_parameters(7);
  TrainOptions opt;
  opt.epochs = 12;
  opt.seed = 11;
  opt.weight_decay = 5e-4f;
  opt.select = "loss";
  Trainer trainer(*model, *setup->graph, setup->task, comm, opt);
  Curve c;
  trainer.forward_backward(0);
  for (auto* prm : model->parameters()) {
    const Tensor& g = prm->var.grad();
    c.grads0.emplace_back(g.data(), g.data() + g.numel());
  }
  c.test_acc = trainer.run([&](const EpochRecord& s) { c.losses.push_back(s.loss); }).test_acc;
  return c;
}

}  // namespace

TEST_CASE("deep models (GCNII, residual GCN) on P ranks equal one process", "[dist]") {
  Communicator& comm = world();
  SelfCommunicator self;
  for (DeepKind kind : {DeepKind::gcnii, DeepKind::resgcn})
    for (int layers : {1, 8}) {
      const Curve ref = train_deep(self, kind, layers, Partitioner::metis);
      for (Partitioner method : {Partitioner::metis, Partitioner::random}) {
        INFO(deep_kind_name(kind) << ", " << layers << " layers, " << partitioner_name(method)
                                  << " on " << comm.size() << " ranks");
        const Curve got = train_deep(comm, kind, layers, method);
        check_same_curve(got, ref);
      }
    }
}

TEST_CASE("distributed loss and step-0 gradients equal one process", "[dist]") {
  Communicator& comm = world();
  SelfCommunicator self;
  for (ModelKind kind : {ModelKind::gcn, ModelKind::sage, ModelKind::gin, ModelKind::gat}) {
    const Curve ref = train_on(self, Partitioner::metis, kind, 20);
    // Whole exchanges, and the halo streamed in pieces of 7 rows (--halo-memory): many rounds,
    // pieces of unequal count on the two sides of a stage.
    for (Partitioner method : {Partitioner::metis, Partitioner::random})
      for (int64_t pieces : {0, 7}) {
        INFO(model_kind_name(kind) << " / " << partitioner_name(method) << " on " << comm.size()
                                   << " ranks, pieces of " << pieces << " rows");
        const Curve got = train_on(comm, method, kind, 20, "", "", 0, pieces);
        check_same_curve(got, ref);
      }
  }
}

// The GPU path's communication (device halo exchange, one-buffer gradient all-reduce) through
// the staged device communicator, on CPU memory: what `--device cuda --comm mpi` runs, minus
// the GPU.
TEST_CASE("training through the staged device communicator equals one process", "[dist]") {
  Communicator& comm = world();
  SelfCommunicator self;
  const Curve ref = train_on(self, Partitioner::metis, ModelKind::gcn, 15);
  auto dc = make_staged_comm(comm, Device::cpu);
  comm.set_device_comm(dc.get());
  const Curve got = train_on(comm, Partitioner::metis, ModelKind::gcn, 15);
  dc.reset();
  check_close(got.losses, ref.losses);
  REQUIRE(got.grads0.size() == ref.grads0.size());
  for (size_t i = 0; i < ref.grads0.size(); ++i)
    for (size_t k = 0; k < ref.grads0[i].size(); ++k)
      CHECK(got.grads0[i][k] == Approx(ref.grads0[i][k]).epsilon(1e-4).margin(1e-6));
}

TEST_CASE("a checkpoint written on P ranks resumes on one rank", "[dist]") {
  Communicator& comm = world();
  SelfCommunicator self;
  const auto dir = std::filesystem::temp_directory_path() / "dgnn_test_dist_ckpt";
  const std::string path = (dir / ("p" + std::to_string(comm.size()) + ".ckpt")).string();
  if (comm.rank() == 0) std::filesystem::create_directories(dir);
  comm.barrier();
  const Curve full = train_on(self, Partitioner::metis, ModelKind::gcn, 10);
  const Curve first = train_on(comm, Partitioner::metis, ModelKind::gcn, 4, path);
  comm.barrier();  // rank 0 has written the file
  const Curve rest = train_on(self, Partitioner::metis, ModelKind::gcn, 0, "", path, 10);
  std::vector<double> joined = first.losses;
  joined.insert(joined.end(), rest.losses.begin(), rest.losses.end());
  check_close(joined, full.losses);
}

TEST_CASE("parts sent from rank 0 equal parts each rank cuts itself", "[dist]") {
  Communicator& comm = world();
  PartitionOptions popt;
  popt.seed = 3;
  const LocalPart local = partition_and_extract(dataset(), popt, comm);
  const LocalPart sent = partition_and_scatter(comm.rank() == 0 ? &dataset() : nullptr, popt, comm);
  CHECK(encode_part(sent) == encode_part(local));
  CHECK(sent.rank == comm.rank());
}

TEST_CASE("a rank that owns no vertex still trains in step with the others", "[dist]") {
  Communicator& comm = world();
  SelfCommunicator self;
  const int p = comm.size();
  const Curve ref = train_on(self, Partitioner::metis, ModelKind::sage, 6);
  // Every vertex on ranks 0..p-2; the last rank owns nothing (with one rank: the plain case).
  std::vector<int32_t> part(size_t(dataset().num_vertices()));
  for (size_t v = 0; v < part.size(); ++v) part[v] = p > 1 ? int32_t(v % size_t(p - 1)) : 0;
  auto setup = make_rank_setup(extract_part(dataset(), part, p, comm.rank()), comm);
  // Streamed too: the empty rank has pieces to send and none to receive.
  agree_piece_rows(*setup->halo, comm, GENERATE(int64_t(0), int64_t(9)));
  StackModel model(builtin_layer(ModelKind::sage),
                   {setup->part.feature_dim, 16, setup->part.num_classes}, 0.5f);
  model.reset_parameters(7);
  TrainOptions opt;
  opt.epochs = 6;
  opt.seed = 11;
  opt.weight_decay = 5e-4f;
  Trainer trainer(model, *setup->graph, setup->task, comm, opt);
  std::vector<double> losses;
  trainer.run([&](const EpochRecord& s) { losses.push_back(s.loss); });
  check_close(losses, ref.losses);
}

TEST_CASE("a custom layer written with ops trains distributed like on one process", "[dist]") {
  SelfCommunicator self;
  check_close(train_custom(world()), train_custom(self));
  SECTION("max / min aggregation (the pooled rows come over the halo, gradients go back)") {
    check_close(train_custom(world(), true), train_custom(self, true));
  }
  SECTION("with the halo streamed (max / min still exchange whole beside it)") {
    check_close(train_custom(world(), false, 5), train_custom(self));
    check_close(train_custom(world(), true, 5), train_custom(self, true));
  }
}
