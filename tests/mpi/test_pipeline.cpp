// The pipeline strategy (gnn/train/pipeline.hpp) on P ranks against one process: in exact mode
// (one chunk) every epoch's loss, the step-0 gradients and the predictions equal a one-process
// StaticRun; with chunks (stale out-of-chunk rows) the model trains to one process's accuracy.
#include <catch2/catch.hpp>
#include <cmath>
#include <map>

#include "../small_sbm.hpp"
#include "dgnn/comm/communicator.hpp"
#include "dgnn/gnn/train/pipeline.hpp"
#include "dgnn/graph/dataset.hpp"
#include "dgnn/gnn/train/static_run.hpp"
#include "dgnn/partition/partition.hpp"
#include "dgnn/plan/perf_model.hpp"

using namespace dgnn;

namespace {

// The dataset with only the edges between vertices below `keep` (the others isolated; 0: no
// edge at all, so every chunk is edgeless).
Dataset keep_edges_below(Dataset d, int64_t keep) {
  Csr& in = d.graph.in;
  Csr out;
  out.rows = in.rows;
  out.cols = in.cols;
  out.offsets.assign(size_t(in.rows) + 1, 0);
  for (int64_t v = 0; v < in.rows; ++v) {
    for (int64_t e = in.offsets[size_t(v)]; e < in.offsets[size_t(v) + 1]; ++e)
      if (v < keep && in.indices[size_t(e)] < keep) {
        out.indices.push_back(in.indices[size_t(e)]);
        if (!in.values.empty()) out.values.push_back(in.values[size_t(e)]);
      }
    out.offsets[size_t(v) + 1] = int64_t(out.indices.size());
  }
  in = std::move(out);
  return d;
}

const Dataset& sbm() {
  static const Dataset d = test::small_sbm(400, 5);
  return d;
}
// A planted partition one process learns in 60 epochs (8 classes, homophily 0.8).
const Dataset& larger_sbm() {
  static const Dataset d = [] {
    SbmConfig cfg;
    cfg.vertices = 3000;
    cfg.seed = 8;
    return generate_sbm(cfg).to_dataset();
  }();
  return d;
}
const Dataset& half_isolated() {
  static const Dataset d = keep_edges_below(test::small_sbm(300, 6), 150);
  return d;
}
// The shipped Cora (a real graph: 2708 vertices, 1433 features, its Planetoid split).
const Dataset& cora() {
  static const Dataset d = [] {
    DatasetOptions opt;
    opt.graph = std::string(DGNN_SOURCE_DIR) + "/datasets/cora";
    return load_dataset(opt);
  }();
  return d;
}
const Dataset& edgeless() {
  static const Dataset d = keep_edges_below(test::small_sbm(120, 7), 0);
  return d;
}

StaticRunConfig config(DeepKind kind, int layers, int epochs, float dropout = 0.5f,
                       float lr = 0.01f) {
  StaticRunConfig cfg;
  DeepModelOptions o;
  o.kind = kind;
  o.layers = layers;
  o.hidden = 16;
  o.dropout = dropout;
  o.conv_weight_decay = 0.01f;
  cfg.deep = o;
  cfg.model = deep_kind_name(kind);
  cfg.partition.method = Partitioner::metis;
  cfg.partition.seed = 3;
  cfg.train.epochs = epochs;
  cfg.train.seed = 11;
  cfg.train.weight_decay = 5e-4f;
  cfg.train.select = "loss";
  cfg.train.lr = lr;
  return cfg;
}

struct Curve {
  std::vector<double> losses;
  std::vector<std::vector<float>> grads0;
  double test_acc = 0;
  std::map<int64_t, std::vector<float>> logits;  // by input id (the last stage's, or all)
};

template <class Run>
void read_logits(Run& run, Tensor logits, Curve& c) {
  const std::vector<int64_t> ids = run.row_ids();
  REQUIRE(int64_t(ids.size()) == logits.rows());
  for (size_t i = 0; i < ids.size(); ++i)
    c.logits[ids[i]].assign(logits.data() + int64_t(i) * logits.cols(),
                            logits.data() + int64_t(i + 1) * logits.cols());
}

// Training long enough to learn the SBM (the exact checks use the defaults: few epochs).
struct Schedule {
  float dropout = 0.5f, lr = 0.01f;
};

Curve one_process(const Dataset& d, DeepKind kind, int layers, int epochs, Schedule s = {}) {
  SelfCommunicator self;
  StaticRun run([&] { return d; }, config(kind, layers, epochs, s.dropout, s.lr), self);
  Curve c;
  run.trainer().forward_backward(0);
  for (auto* p : run.model().parameters())
    c.grads0.emplace_back(p->var.grad().data(), p->var.grad().data() + p->var.grad().numel());
  c.test_acc = run.train([&](const EpochRecord& r) { c.losses.push_back(r.loss); }).test_acc;
  read_logits(run, run.trainer().predict(), c);
  return c;
}

Curve pipelined(Communicator& comm, const Dataset& d, DeepKind kind, int layers, int epochs,
                int chunks, Schedule s = {}, int stages = 0) {
  PipelineOptions po;
  po.chunks = chunks;
  po.stages = stages;
  PipelineRun run([&] { return d; }, config(kind, layers, epochs, s.dropout, s.lr), po, comm);
  Curve c;
  run.forward_backward(0);
  for (auto* p : run.model().parameters()) {
    const Tensor& g = p->var.grad();
    c.grads0.emplace_back(g.data(), g.data() + g.numel());
  }
  c.test_acc = run.train([&](const EpochRecord& r) { c.losses.push_back(r.loss); }).test_acc;
  read_logits(run, run.predict(), c);
  return c;
}

}  // namespace

TEST_CASE("pipeline and its hybrids, exact mode: every epoch, the gradients and the predictions "
          "equal one process",
          "[pipeline]") {
  Communicator& comm = world();
  const int p = comm.size();
  struct Input {
    const char* name;
    const Dataset& d;
  };
  for (const Input& in : {Input{"cora", cora()}, Input{"sbm", sbm()},
                          Input{"half isolated", half_isolated()}, Input{"edgeless", edgeless()}})
    for (DeepKind kind : {DeepKind::gcnii, DeepKind::resgcn})
      for (int layers : {p, 7})  // one layer per stage; uneven groups
      for (int stages = 1; stages <= p; ++stages) {
        if (p % stages != 0) continue;  // stages x parts: p stages, the hybrids, one stage
        INFO(in.name << ", " << deep_kind_name(kind) << ", " << layers << " layers on "
                     << stages << " stages x " << p / stages << " parts");
        const Curve ref = one_process(in.d, kind, layers, 6);
        const Curve got = pipelined(comm, in.d, kind, layers, 6, 1, {}, stages);
        REQUIRE(got.losses.size() == ref.losses.size());
        for (size_t e = 0; e < ref.losses.size(); ++e) {
          INFO("epoch " << e + 1 << ": " << got.losses[e] << " vs " << ref.losses[e]);
          CHECK(std::abs(got.losses[e] - ref.losses[e]) <= 1e-5 * std::abs(ref.losses[e]));
        }
        REQUIRE(got.grads0.size() == ref.grads0.size());
        for (size_t i = 0; i < ref.grads0.size(); ++i) {
          REQUIRE(got.grads0[i].size() == ref.grads0[i].size());
          for (size_t k = 0; k < ref.grads0[i].size(); ++k)
            CHECK(got.grads0[i][k] == Approx(ref.grads0[i][k]).epsilon(1e-4).margin(1e-6));
        }
        CHECK(got.test_acc == Approx(ref.test_acc).margin(1e-12));
        // The last stage's ranks predict every vertex between them; the others none.
        const bool last = comm.rank() >= p - p / stages;
        std::vector<int64_t> count{int64_t(got.logits.size())};
        comm.allreduce_sum(count.data(), 1);
        CHECK(count[0] == int64_t(ref.logits.size()));
        if (!last) CHECK(got.logits.empty());
        for (const auto& [id, row] : got.logits) {
          const std::vector<float>& want = ref.logits.at(id);
          for (size_t k = 0; k < row.size(); ++k)
            CHECK(row[k] == Approx(want[k]).epsilon(1e-4).margin(1e-5));
        }
      }
}

TEST_CASE("pipeline, stale out-of-chunk rows: trains to one process's accuracy", "[pipeline]") {
  Communicator& comm = world();
  for (DeepKind kind : {DeepKind::gcnii, DeepKind::resgcn}) {
    const Schedule learn{0.2f, 0.05f};
    const Curve ref = one_process(larger_sbm(), kind, 8, 60, learn);
    for (int chunks : {comm.size(), 3 * comm.size()}) {
      INFO(deep_kind_name(kind) << ", " << chunks << " chunks on " << comm.size() << " stages");
      const Curve got = pipelined(comm, larger_sbm(), kind, 8, 60, chunks, learn);
      // Out-of-chunk rows without a gradient change the numbers, not what is learnt. At 60
      // epochs on 3000 vertices (one process: GCNII about 0.75, the residual GCN 0.87) one
      // chunk per stage is no worse than one process by more than 3 points; with three per
      // stage (250 vertices a chunk, most neighbours in other chunks) it may lose more
      // (measured down to 0.72), far above chance (1/8). Cora and the 200k SBM, whose chunks
      // keep most edges inside, are measured in docs/pipeline.md.
      CHECK(got.losses.back() < 0.75 * got.losses.front());
      if (chunks == comm.size()) CHECK(got.test_acc >= ref.test_acc - 0.03);
      CHECK(got.test_acc > 0.6);
    }
  }
  // A graph whose chunks are mostly isolated vertices, and one with no edge at all.
  for (const Dataset* d : {&half_isolated(), &edgeless()}) {
    const Curve got = pipelined(comm, *d, DeepKind::gcnii, 4, 5, 4 * comm.size());
    for (double l : got.losses) CHECK(std::isfinite(l));
  }
}

TEST_CASE("pipeline and hybrid bytes: what dgnn plan predicts is what training sends",
          "[pipeline]") {
  Communicator& comm = world();
  const int p = comm.size();
  const Dataset& d = sbm();
  for (DeepKind kind : {DeepKind::gcnii, DeepKind::resgcn})
    for (int stages = 1; stages <= p; ++stages) {
      if (p % stages != 0 || (stages == 1 && p == 1)) continue;
      const int q = p / stages;
      INFO(deep_kind_name(kind) << ", " << stages << " stages x " << q << " parts");
      const int chunks = q > 1 ? 1 : 3;
      PipelineOptions po;
      po.chunks = chunks;
      po.stages = stages;
      PipelineRun run([&] { return d; }, config(kind, 5, 2), po, comm);
      const TrainResult r = run.train();
      // The plan's side, from the graph alone.
      const StaticRunConfig cfg = config(kind, 5, 2);
      const auto layers = perf::deep_model_layers(*cfg.deep, d.feature_dim, d.num_classes);
      std::vector<int32_t> part(size_t(d.num_vertices()), 0);
      if (q > 1) {
        PartitionOptions popt = cfg.partition;
        popt.parts = q;
        part = partition_vertices(d.graph.in, popt, d.train);
      }
      const perf::PartitionCounts counts = perf::partition_counts(d.graph.in, part, q);
      const bool everywhere = kind == DeepKind::gcnii;
      const std::vector<int> first =
          pipeline_stages(d.num_vertices(), d.graph.in.nnz() + d.num_vertices(), d.feature_dim,
                          16, d.num_classes, 5, everywhere, stages);
      CHECK(first == run.stage_bounds());
      perf::Rates rates;
      rates.spmm[16] = 1e9;
      const perf::Prediction pr = perf::predict_pipeline(counts, layers, first, chunks, everywhere,
                                                         rates, perf::named_network("shm"));
      CHECK(pr.bytes_per_epoch == r.bytes_per_epoch);
    }
}
