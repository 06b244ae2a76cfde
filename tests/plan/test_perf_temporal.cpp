// The temporal plan's arithmetic (plan/perf_temporal.hpp) on hand-computed numbers: the shapes'
// parameter counts against the models dgnn trains, one rank's epoch as a sum of kernel times,
// and the bytes each strategy moves on two ranks.
#include <catch2/catch.hpp>

#include "dgnn/gnn/temporal/temporal_models.hpp"
#include "dgnn/plan/perf_temporal.hpp"

using namespace dgnn;
using namespace dgnn::perf;

namespace {

int64_t real_parameters(TemporalKind k, const std::vector<int64_t>& dims, int64_t hidden,
                        int64_t* tensors) {
  auto model = make_temporal_model(k, dims);
  PairClassifier head(model->out_dim(), hidden, 1);
  int64_t n = 0;
  *tensors = 0;
  for (Module* m : {static_cast<Module*>(model.get()), static_cast<Module*>(&head)})
    for (auto& [name, p] : m->named_parameters()) n += p->var.value().numel(), ++*tensors;
  return n;
}

Rates unit_rates() {
  Rates r;
  r.spmm[4] = 1e6;  // entries x width per second
  r.gemm_fwd[{4, 4}] = 1e6;
  r.gemm_bwd[{4, 4}] = 1e6;
  r.elementwise = 1e6;
  return r;
}

}  // namespace

TEST_CASE("temporal plan: the shapes hold the models' parameters", "[perf]") {
  const std::pair<TemporalKind, TModel> kinds[] = {{TemporalKind::evolvegcn_o, TModel::evolvegcn_o},
                                                   {TemporalKind::evolvegcn_h, TModel::evolvegcn_h},
                                                   {TemporalKind::gcrn, TModel::gcrn},
                                                   {TemporalKind::tgcn, TModel::tgcn}};
  for (const std::vector<int64_t>& dims :
       {std::vector<int64_t>{16, 8, 8}, std::vector<int64_t>{5, 4},
        std::vector<int64_t>{7, 6, 6, 6}})
    for (auto [k, m] : kinds) {
      INFO(temporal_kind_name(k) << " with " << dims.size() << " widths");
      int64_t tensors = 0;
      const int64_t params = real_parameters(k, dims, 12, &tensors);
      const TemporalShape s = temporal_shape(m, dims, 12);
      CHECK(s.parameters == params);
      CHECK(s.tensors == tensors);
      CHECK(s.embedding == dims.back());
    }
}

TEST_CASE("temporal plan: one rank is the sum of its kernels, with no bytes", "[perf]") {
  // A hand-made shape: one aggregation and one GEMM per step, one scorer GEMM per pair.
  TemporalShape s;
  s.model = TModel::gcrn;
  s.graph = {t_aggregate(4, true), t_gemm(4, 4, true)};
  s.score = {t_gemm(4, 4, true)};
  s.score[0].pairs = true;
  s.parameters = 32;
  s.tensors = 2;
  TemporalSteps st;
  st.vertices = 10;
  st.windows = {0, 2};
  st.entries = {20, 30};
  st.pairs = {5, 0};  // the second step scores nothing
  SnapshotAssignment one{{0, 0}, {10}};
  const Rates r = unit_rates();
  const Network net = named_network("shm");
  // Forward: aggregation (20 + 10 self loops) x 4, GEMM 2 x 10 x 4 x 4 = 320 flops, scorer
  // 2 x 5 x 16 = 160; backward the aggregation again, the GEMMs twice; Adam 8 x 32 floats.
  const double step0 = 120 + 320 + 160 + (120 + 640 + 320);
  const double step1 = 160 + 320 + (160 + 640);
  const double adam = 256;
  const TemporalPrediction p = predict_snapshot(s, st, one, r, net);
  CHECK(p.epoch_ms == Approx((step0 + step1 + adam) / 1e6 * 1e3));
  CHECK(p.compute_ms == Approx(p.epoch_ms));
  CHECK(p.comm_ms == 0);
  CHECK(p.wait_ms == 0);
  CHECK(p.bytes_per_epoch == 0);
  // The vertex strategy on one rank runs the same kernels.
  VertexStep v0, v1;
  for (auto* v : {&v0, &v1}) {
    v->graph.parts = 1;
    v->graph.per_part.resize(1);
    v->graph.per_part[0].rows = 10;
    v->fetched = v->served = v->ends = {0.0};
  }
  v0.graph.per_part[0].edges = 20, v0.pairs = {5};
  v1.graph.per_part[0].edges = 30, v1.pairs = {0};
  const TemporalPrediction q = predict_vertex(s, st, {v0, v1}, r, net);
  CHECK(q.epoch_ms == Approx(p.epoch_ms));
  CHECK(q.bytes_per_epoch == 0);
}

TEST_CASE("temporal plan: bytes of GCRN's re-shards and of the vertex strategy's halo", "[perf]") {
  const TemporalShape s = temporal_shape(TModel::gcrn, {16, 8, 8}, 8);  // GCN 16 -> 8, LSTM 8
  TemporalSteps st;
  st.vertices = 10;
  st.windows = {0, 2};
  st.entries = {20, 20};
  st.pairs = {6, 6};
  const Rates r = unit_rates();
  const Network net = named_network("shm");
  const int64_t allreduces = 2 * (8 + (s.parameters + s.tensors) * 4);  // per rank, one window
  // Snapshot strategy: rank 0 owns step 0, rank 1 step 1; vertex blocks of 4 and 6.
  const TemporalPrediction p = predict_snapshot(s, st, {{0, 1}, {4, 6}}, r, net);
  // to_vertex: rank 0 sends its step's 6 rows of rank 1's block, rank 1 its 4 rows of rank 0's;
  // to_snapshot the same rows back; backward both again. 8 columns, 4 bytes each.
  const int64_t reshard = (6 + 4) * 8 * 4;
  CHECK(p.bytes_per_epoch == 4 * reshard + allreduces);
  CHECK(p.comm_ms > 0);
  // Vertex strategy: per step 3 halo rows each way at width 8 (the GCN multiplies 16 -> 8 first,
  // so its aggregation exchanges forward and backward), and the fetch of 2 rows per rank.
  VertexStep v;
  v.graph.parts = 2;
  v.graph.per_part.resize(2);
  for (PartCounts& c : v.graph.per_part) {
    c.rows = 5, c.edges = 10, c.interior_edges = 4, c.cut_edges = 3, c.halo_rows = 3,
    c.send_rows = 3, c.peers = 1;
  }
  v.pairs = {3, 3};
  v.ends = {3, 3};
  v.fetched = {2, 2};
  v.served = {2, 2};
  const TemporalPrediction q = predict_vertex(s, st, {v, v}, r, net);
  const int64_t halo = 2 * 2 * 3 * 8 * 4;  // per step: both ranks, forward and backward
  // Per rank: one round (the other rank's ends), its request count (8 bytes to the one other
  // rank), ids, rows and gradients.
  const int64_t fetch = 2 * (8 + 2 * 4 + 2 * 8 * 4 + 2 * 8 * 4);
  CHECK(q.bytes_per_epoch == 2 * (halo + fetch) + allreduces);
}
