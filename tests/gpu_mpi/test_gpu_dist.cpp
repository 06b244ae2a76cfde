// Multi-rank GPU training's communication against the CPU path, on the transport main() was
// given (staged through MPI, or NCCL): the halo exchange and the all-reduce on seeded inputs,
// then whole trainings on the GPU against one CPU process. Assertions are CHECKs after the first
// collective, so that a failing rank still joins every later collective.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "../small_evolving.hpp"
#include "../small_sbm.hpp"
#include "dgnn/comm/communicator.hpp"
#include "dgnn/comm/device_comm.hpp"
#include "dgnn/comm/halo.hpp"
#include "dgnn/common/hash_rng.hpp"
#include "dgnn/datasets/evolving_sbm.hpp"
#include "dgnn/datasets/sbm.hpp"
#include "dgnn/gnn/models/layers.hpp"
#include "dgnn/gnn/temporal/temporal_dist.hpp"
#include "dgnn/gnn/temporal/temporal_trainer.hpp"
#include "dgnn/gnn/train/dist_sampler.hpp"
#include "dgnn/gnn/train/distributed.hpp"
#include "dgnn/gnn/train/minibatch.hpp"
#include "dgnn/kernels/buffer.hpp"
#include "dgnn/kernels/kernels.hpp"
#include "gpu_mpi_util.hpp"

using namespace dgnn;

namespace {

const Dataset& dataset() {
  static const Dataset d = test::small_sbm(600, 21);
  return d;
}

// The device communicator under test, attached to `comm` while it lives.
std::unique_ptr<DeviceComm> attach(Communicator& comm) {
  std::string why;
  auto dc = attach_device_comm(comm, Device::cuda, gpu_mpi_test::requested_transport(), &why);
  REQUIRE(dc != nullptr);
  REQUIRE(std::string(transport_name(dc->transport())) == gpu_mpi_test::requested_transport());
  return dc;
}

std::vector<float> random_floats(size_t n, uint64_t seed) {
  Rng rng(seed);
  std::vector<float> v(n);
  for (float& x : v) x = rng.uniform() * 200.f - 100.f;  // rounding makes the order visible
  return v;
}

std::vector<float> download(const kernels::Buffer& b, size_t n) {
  std::vector<float> h(n);
  if (n) kernels::copy(Device::cpu, h.data(), Device::cuda, b.as<float>(), n * sizeof(float));
  return h;
}

size_t bit_mismatches(const std::vector<float>& a, const std::vector<float>& b) {
  if (a.size() != b.size()) return std::max(a.size(), b.size());
  size_t bad = 0;
  for (size_t i = 0; i < a.size(); ++i) bad += std::memcmp(&a[i], &b[i], sizeof(float)) != 0;
  return bad;
}

}  // namespace

TEST_CASE("GPU halo exchange equals the CPU host exchange bit for bit", "[gpu_mpi]") {
  Communicator& comm = world();
  PartitionOptions popt;
  popt.seed = 3;
  const LocalPart part = partition_and_extract(dataset(), popt, comm);
  const int64_t n_all = part.local_in.cols, f = 5;
  auto dc = attach(comm);
  auto host = make_halo_exchange(part.plan, comm, Device::cpu);  // dc carries GPU memory only
  auto device = make_halo_exchange(part.plan, comm, Device::cuda);

  // Owned rows seeded by rank; halo rows garbage that the forward pass must overwrite.
  std::vector<float> x = random_floats(size_t(n_all * f), 100 + uint64_t(comm.rank()));
  kernels::Buffer dx = kernels::Buffer::upload(Device::cuda, x);
  const MatView hx{x.data(), n_all, f, f}, gx{dx.as<float>(), n_all, f, f};
  comm.stats().reset();
  host->forward_begin(hx);
  host->forward_end(hx);
  const CommStats host_stats = comm.stats();
  comm.stats().reset();
  device->forward_begin(gx);
  device->forward_end(gx);
  CHECK(comm.stats().bytes_sent == host_stats.bytes_sent);
  CHECK(bit_mismatches(download(dx, x.size()), x) == 0);

  // Gradients: the halo rows' go home and are summed into the owners in peer order.
  std::vector<float> g = random_floats(size_t(n_all * f), 200 + uint64_t(comm.rank()));
  kernels::Buffer dg = kernels::Buffer::upload(Device::cuda, g);
  const MatView hg{g.data(), n_all, f, f}, gg{dg.as<float>(), n_all, f, f};
  host->backward_begin(hg);
  host->backward_end(hg);
  device->backward_begin(gg);
  device->backward_end(gg);
  CHECK(bit_mismatches(download(dg, g.size()), g) == 0);
  // The exchange moved something on this partition (else the test would prove nothing).
  int64_t moved = part.plan.rows_sent();
  comm.allreduce_sum(&moved, 1);
  CHECK(moved > 0);
}

TEST_CASE("GPU all-reduce and all-to-all equal the host communicator's", "[gpu_mpi]") {
  Communicator& comm = world();
  const int p = comm.size(), r = comm.rank();
  auto dc = attach(comm);
  const size_t n = 1000;
  std::vector<float> h = random_floats(n, 300 + uint64_t(r));
  kernels::Buffer d = kernels::Buffer::upload(Device::cuda, h);
  comm.allreduce_sum(h.data(), int64_t(n));
  comm.stats().reset();
  dc->allreduce_sum(d.as<float>(), int64_t(n));
  CHECK(comm.stats().bytes_sent == int64_t(n * 4));
  const std::vector<float> got = download(d, n);
  size_t far = 0;  // the summation order may differ between MPI and NCCL: rounding only
  for (size_t i = 0; i < n; ++i) far += std::fabs(got[i] - h[i]) > 1e-4f * (1.f + std::fabs(h[i]));
  CHECK(far == 0);

  // Uneven blocks, empty ones included, rank q's bytes to rank s tagged with both.
  auto count = [](int s, int q) { return int64_t((s + 2 * q) % 3) * 4; };
  const size_t np = static_cast<size_t>(p);
  std::vector<int64_t> sc(np), sd(np), rc(np), rd(np);
  int64_t s_end = 0, r_end = 0;
  for (int q = 0; q < p; ++q) {
    sc[size_t(q)] = count(r, q);
    sd[size_t(q)] = s_end;
    s_end += sc[size_t(q)];
    rc[size_t(q)] = count(q, r);
    rd[size_t(q)] = r_end;
    r_end += rc[size_t(q)];
  }
  std::vector<float> send(size_t(s_end / 4));
  for (int q = 0; q < p; ++q)
    for (int64_t k = 0; k < sc[size_t(q)] / 4; ++k)
      send[size_t(sd[size_t(q)] / 4 + k)] = float(1000 * r + 10 * q + k);
  kernels::Buffer ds = kernels::Buffer::upload(Device::cuda, send);
  kernels::Buffer dr(Device::cuda, size_t(std::max<int64_t>(r_end, 4)));
  dc->alltoallv(ds.as<float>(), sc, sd, dr.as<float>(), rc, rd);
  const std::vector<float> recv = download(dr, size_t(r_end / 4));
  for (int q = 0; q < p; ++q)
    for (int64_t k = 0; k < rc[size_t(q)] / 4; ++k)
      CHECK(recv[size_t(rd[size_t(q)] / 4 + k)] == float(1000 * q + 10 * r + k));
}

namespace {

std::vector<double> train_gcn(Communicator& comm, Device dev, int epochs) {
  PartitionOptions popt;
  popt.seed = 3;
  auto setup = make_rank_setup(partition_and_extract(dataset(), popt, comm), comm, dev);
  const LocalPart& p = setup->part;
  StackModel model(builtin_layer(ModelKind::gcn), {p.feature_dim, 16, p.num_classes}, 0.5f);
  model.reset_parameters(7);
  model.to(dev);
  TrainOptions opt;
  opt.epochs = epochs;
  opt.seed = 11;
  opt.weight_decay = 5e-4f;
  Trainer trainer(model, *setup->graph, setup->task, comm, opt);
  std::vector<double> losses;
  trainer.run([&](const EpochRecord& s) { losses.push_back(s.loss); });
  return losses;
}

// Mini-batch training over `comm`'s ranks: blocks sampled on the CPU through the owners (as
// dgnn train does under mpirun), trained on `dev`.
std::vector<double> train_minibatch(Communicator& comm, Device dev, ModelKind kind) {
  PartitionOptions popt;
  popt.seed = 3;
  auto setup = make_rank_setup(partition_and_extract(dataset(), popt, comm), comm, dev);
  const LocalPart& p = setup->part;
  StackModel model(builtin_layer(kind, 0.5f), {p.feature_dim, 16, p.num_classes}, 0.5f);
  model.reset_parameters(7);
  model.to(dev);
  TrainOptions opt;
  opt.epochs = 3;
  opt.seed = 11;
  Trainer trainer(model, *setup->graph, setup->task, comm, opt);
  MiniBatchOptions mo;
  mo.batch_size = 32;
  mo.sampler.fanouts = {4, 4};
  mo.sampler.seed = 5;
  mo.norms = {kind == ModelKind::sage ? Norm::mean : Norm::gcn};
  mo.attention = kind == ModelKind::gat;
  mo.device = dev;
  mo.prefetch = comm.concurrent_duplicates();
  const Var host = dev == Device::cpu ? setup->task.features
                                      : Var(setup->task.features.value().to(Device::cpu));
  auto sample_comm = comm.duplicate();
  auto store = make_dist_store(*setup->graph, p.global_vertices, host, *sample_comm);
  std::vector<int64_t> ids;
  std::vector<int32_t> labels;
  for (int32_t r : setup->task.train) {
    ids.push_back(p.global_ids[size_t(r)]);
    labels.push_back(setup->task.labels[size_t(r)]);
  }
  MiniBatchLoader loader(*store, ids, labels, mo, comm, sample_comm.get());
  trainer.set_minibatch(&loader);
  std::vector<double> losses;
  trainer.run([&](const EpochRecord& s) { losses.push_back(s.loss); });
  return losses;
}

void check_losses(const std::vector<double>& got, const std::vector<double>& want) {
  REQUIRE(got.size() == want.size());
  for (size_t e = 0; e < want.size(); ++e) {
    INFO("epoch " << e + 1 << ": " << got[e] << " vs " << want[e]);
    CHECK(std::abs(got[e] - want[e]) <= 1e-4 * std::abs(want[e]));
  }
}

const EvolvingSbm& evolving() { return test::small_evolving(); }

// Temporal link prediction (GCRN, --bptt 3): one process on the CPU, or the vertex or snapshot
// strategy on `comm`'s ranks on `dev`.
std::vector<double> train_temporal(Communicator& comm, Device dev, const std::string& strategy) {
  const TemporalGraph g = evolving().to_temporal();
  int64_t dim = 0;
  std::vector<Var> features =
      snapshot_features(g, evolving().features, evolving().config.feature_dim, &dim);
  TemporalOptions opt;
  opt.epochs = 4;
  opt.bptt = 3;
  opt.neg_eval = 10;
  std::vector<std::unique_ptr<GraphView>> views;
  std::unique_ptr<TemporalRank> tr;
  std::unique_ptr<SnapshotRank> sr;
  const std::vector<Var>* x = &features;
  if (strategy == "snapshot") {
    sr = make_snapshot_rank(g, features, opt, comm.size(), comm.rank());
    for (Var& f : sr->features)
      if (f.defined()) f = Var(f.value().to(dev));
    x = &sr->features;
  } else if (comm.size() > 1) {
    PartitionOptions popt;
    popt.parts = comm.size();
    popt.seed = 1;
    std::vector<int32_t> part = partition_temporal(g, popt);
    comm.broadcast(part.data(), int64_t(part.size()) * 4, 0);
    tr = make_temporal_rank(g, features, part, comm, dev);
    x = &tr->features;
  } else {
    for (int t = 0; t < g.num_snapshots(); ++t)
      views.push_back(std::make_unique<GraphView>(g.snapshot(t)));
  }
  auto model = make_temporal_model(TemporalKind::gcrn, {dim, 8, 8});
  PairClassifier head(model->out_dim(), 8, 1);
  model->reset_parameters(3);
  head.reset_parameters(4);
  model->to(dev);
  head.to(dev);
  LinkPredictionTrainer trainer(*model, head, g, sr ? sr->graphs : tr ? tr->graphs : views, *x,
                                comm, opt, tr ? &tr->dir : nullptr, sr ? &sr->plan : nullptr);
  std::vector<double> losses;
  trainer.run([&](const EpochRecord& e) { losses.push_back(e.loss); });
  return losses;
}

}  // namespace

TEST_CASE("GCN on the GPU over several ranks equals one CPU process", "[gpu_mpi]") {
  Communicator& comm = world();
  SelfCommunicator self;
  const std::vector<double> ref = train_gcn(self, Device::cpu, 15);
  auto dc = attach(comm);
  const std::vector<double> got = train_gcn(comm, Device::cuda, 15);
  check_losses(got, ref);
}

TEST_CASE("temporal GCRN on the GPU under both strategies equals one CPU process", "[gpu_mpi]") {
  Communicator& comm = world();
  SelfCommunicator self;
  const std::vector<double> ref = train_temporal(self, Device::cpu, "vertex");
  auto dc = attach(comm);
  for (const char* strategy : {"vertex", "snapshot"}) {
    INFO("--strategy " << strategy);
    check_losses(train_temporal(comm, Device::cuda, strategy), ref);
  }
}

TEST_CASE("distributed mini-batches trained on the GPU equal the same ranks on the CPU",
          "[gpu_mpi]") {
  Communicator& comm = world();
  const std::vector<double> sage = train_minibatch(comm, Device::cpu, ModelKind::sage);
  const std::vector<double> gat = train_minibatch(comm, Device::cpu, ModelKind::gat);
  auto dc = attach(comm);
  INFO("GraphSAGE");
  check_losses(train_minibatch(comm, Device::cuda, ModelKind::sage), sage);
  INFO("GAT");
  check_losses(train_minibatch(comm, Device::cuda, ModelKind::gat), gat);
}
