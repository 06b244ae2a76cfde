// The arithmetic of `dgnn plan` (plan/perf_model.hpp) on hand-computed numbers: partition counts
// of a small graph, the layer shapes of the built-in models, one predicted step with and without
// overlap and imbalance, and the extrapolation of counts to more ranks.
#include <catch2/catch.hpp>

#include "dgnn/common/error.hpp"
#include "dgnn/plan/perf_model.hpp"

using namespace dgnn;
using namespace dgnn::perf;

TEST_CASE("plan model: counts of a path split in two", "[perf]") {
  // 0 - 1 - 2 - 3, stored both ways; parts {0, 1} and {2, 3}.
  Csr g;
  g.rows = g.cols = 4;
  g.offsets = {0, 1, 3, 5, 6};
  g.indices = {1, 0, 2, 1, 3, 2};
  const PartitionCounts c = partition_counts(g, {0, 0, 1, 1}, 2);
  REQUIRE(c.per_part.size() == 2);
  for (const PartCounts& p : c.per_part) {
    CHECK(p.rows == 2);
    CHECK(p.edges == 3);
    CHECK(p.cut_edges == 1);       // 1 <- 2 (and 2 <- 1)
    CHECK(p.interior_edges == 1);  // vertex 0's (and 3's) one in-edge
    CHECK(p.halo_rows == 1);
    CHECK(p.send_rows == 1);
    CHECK(p.peers == 1);
  }
  const PartitionCounts one = partition_counts(g, {0, 0, 0, 0}, 1);
  CHECK(one.per_part[0].halo_rows == 0);
  CHECK(one.per_part[0].interior_edges == 6);
  CHECK(one.per_part[0].peers == 0);
}

TEST_CASE("plan model: layer shapes follow the built-in layers", "[perf]") {
  const auto gcn = model_layers(ModelKind::gcn, 32, 16, 8, 2);
  REQUIRE(gcn.size() == 2);
  CHECK(gcn[0].agg_width == 16);  // 16 < 32: multiply first, aggregate 16 columns
  CHECK(gcn[0].agg_backward);     // the product needs a gradient
  CHECK(gcn[1].agg_width == 8);
  CHECK(gcn[0].self_loops);
  CHECK(parameter_count(gcn) == 32 * 16 + 16 + 16 * 8 + 8);
  const auto wide = model_layers(ModelKind::gcn, 16, 64, 8, 2);
  CHECK(wide[0].agg_width == 16);     // aggregate the features first
  CHECK_FALSE(wide[0].agg_backward);  // which need no gradient
  CHECK_FALSE(wide[0].gemms[0].input_grad);
  const auto sage = model_layers(ModelKind::sage, 32, 16, 8, 3);
  REQUIRE(sage.size() == 3);
  CHECK(sage[0].agg_width == 32);
  CHECK(sage[1].agg_width == 16);
  CHECK(sage[0].gemms.size() == 2);
  CHECK(parameter_count(sage) == 2 * 32 * 16 + 16 + 2 * 16 * 16 + 16 + 2 * 16 * 8 + 8);
  const auto gin = model_layers(ModelKind::gin, 32, 16, 8, 2);
  CHECK(gin[0].gemms[0].n == 32);  // mid = max(16, min(32, 64))
  CHECK(gin[1].gemms[0].n == 16);  // mid = max(8, min(16, 32))
  CHECK(parameter_count(gin) == (32 * 32 + 32) + (32 * 16 + 16) + (16 * 16 + 16) + (16 * 8 + 8));
}

TEST_CASE("plan model: the deep models' layers are GCNII's and the residual GCN's", "[perf]") {
  for (DeepKind kind : {DeepKind::gcnii, DeepKind::resgcn})
    for (int depth : {1, 16}) {
      INFO(deep_kind_name(kind) << ", " << depth << " layers");
      DeepModelOptions o;
      o.kind = kind;
      o.layers = depth;
      o.hidden = 24;
      const auto layers = deep_model_layers(o, 40, 5);
      REQUIRE(int(layers.size()) == depth + 2);
      // The linear layers aggregate nothing; every graph layer aggregates hidden columns over
      // A + I and needs the aggregation's gradient.
      CHECK(layers.front().agg_width == 0);
      CHECK(layers.back().agg_width == 0);
      CHECK_FALSE(layers.front().gemms[0].input_grad);  // the features are a constant
      for (int l = 1; l <= depth; ++l) {
        CHECK(layers[size_t(l)].agg_width == 24);
        CHECK(layers[size_t(l)].self_loops);
        CHECK(layers[size_t(l)].agg_backward);
        CHECK_FALSE(layers[size_t(l)].keeps_halo);
      }
      // The parameters are the real model's.
      CHECK(parameter_count(layers) == make_deep_model(40, 5, o)->num_parameters());
      // Bytes on the path split in two (one row each way per exchange): every graph layer
      // exchanges forward and backward, the linear layers never; then the all-reduce.
      Csr g;
      g.rows = g.cols = 4;
      g.offsets = {0, 1, 3, 5, 6};
      g.indices = {1, 0, 2, 1, 3, 2};
      const Prediction p =
          predict(partition_counts(g, {0, 0, 1, 1}, 2), layers, Rates{}, named_network("shm"), {});
      CHECK(p.bytes_per_epoch == 2 * (int64_t(depth) * 2 * 24 * 4 + allreduce_floats(layers) * 4));
    }
}

TEST_CASE("plan model: GAT's layers are the built-in GATConv's", "[perf]") {
  const auto gat = model_layers(ModelKind::gat, 32, 16, 8, 2);
  REQUIRE(gat.size() == 2);
  CHECK(gat[0].heads == 4);  // gat_heads(16)
  CHECK(gat[1].heads == 1);  // gat_heads(8)
  CHECK(gat[0].agg_width == 16);
  CHECK(gat[0].agg_backward);  // W's gradient needs z's, halo rows included
  CHECK(gat[0].self_loops);
  CHECK_FALSE(gat[0].gemms[0].input_grad);  // the features need no gradient
}

TEST_CASE("plan model: parameters and all-reduced floats are the real models'", "[perf]") {
  for (ModelKind kind : {ModelKind::gcn, ModelKind::sage, ModelKind::gin, ModelKind::gat}) {
    INFO(model_kind_name(kind));
    const auto shape = model_layers(kind, 32, 16, 8, 3);
    StackModel real(builtin_layer(kind), {32, 16, 16, 8}, 0.5f);
    int64_t n = 0;
    for (auto* p : real.parameters()) n += p->var.value().numel();
    CHECK(parameter_count(shape) == n);
    // The gradients, a flag per parameter tensor (allreduce_gradients), the loss.
    CHECK(allreduce_floats(shape) == n + int64_t(real.parameters().size()) + 1);
  }
}

namespace {

// Two ranks of 100 rows, 1000 in-edges (600 interior, 100 cut), 50 halo rows each way; one layer
// aggregating 10 columns into a 10 x 5 product.
PartitionCounts two_parts() {
  PartCounts p;
  p.rows = 100, p.edges = 1000, p.interior_edges = 600, p.cut_edges = 100;
  p.halo_rows = 50, p.send_rows = 50, p.peers = 1;
  PartitionCounts c;
  c.parts = 2;
  c.per_part = {p, p};
  return c;
}
std::vector<LayerShape> one_layer() {
  LayerShape l;
  l.in = 10, l.out = 5, l.agg_width = 10, l.agg_backward = true, l.biases = 5;
  l.gemms = {{10, 5, true}};
  return {l};
}
Rates unit_rates() {
  Rates r;
  r.spmm[10] = 1e6;           // entries x width per second
  r.gemm_fwd[{10, 5}] = 1e6;  // flop/s
  r.gemm_bwd[{10, 5}] = 1e6;
  r.elementwise = 1e6;  // floats per second
  return r;
}
const Network kNet{"test", 1e-3, 1e6};  // 1 ms per message, 1 MB/s

}  // namespace

TEST_CASE("plan model: one step's time, split and bytes by hand", "[perf]") {
  // Per rank: forward SpMM 1000 x 10 / 1e6 = 10 ms, GEMM 2 x 100 x 10 x 5 / 1e6 = 10 ms;
  // backward SpMM 10 ms, GEMM (dW and dX) 20 ms; Adam 55 x 8 / 1e6 = 0.44 ms. Exchange: 1 ms
  // latency + 50 x 10 x 4 B / 1 MB/s = 3 ms, each way; packing 50 rows and placing 50, 10
  // columns each: 1000 floats / 1e6 per s = 1 ms, each way. All-reduce of 56 floats on 2 ranks
  // (Rabenseifner): 2 (1/2) 224 / 1e6 s + 2 x 1 ms = 2.224 ms.
  const double compute = 20 + 30 + 0.44;
  PlanOptions no_overlap;
  no_overlap.overlap = false;
  const Prediction p = predict(two_parts(), one_layer(), unit_rates(), kNet, no_overlap);
  CHECK(p.compute_ms == Approx(compute));
  CHECK(p.halo_ms == Approx(2 * (3 + 1)));
  CHECK(p.pack_ms == Approx(2));
  CHECK(p.allreduce_ms == Approx(2.224));
  CHECK(p.wait_ms == Approx(0).margin(1e-12));
  CHECK(p.epoch_ms == Approx(compute + 8 + 2.224));
  CHECK(p.bytes_per_epoch == 2 * (2000 + 2000 + 56 * 4));
  CHECK(p.max_rank_bytes == 2000 + 2000 + 56 * 4);

  // Overlapped: 600 interior entries (6 ms) hide the 3 ms forward exchange, 900 owned-row
  // entries of the transpose (9 ms) the backward one; the packing stays exposed.
  const Prediction o = predict(two_parts(), one_layer(), unit_rates(), kNet);
  CHECK(o.halo_ms == Approx(2));
  CHECK(o.epoch_ms == Approx(compute + 2 + 2.224));
  CHECK(o.bytes_per_epoch == p.bytes_per_epoch);

  // A synchronisation of 0.5 ms at each of the two exchanges and at the all-reduce: waiting.
  Rates synced = unit_rates();
  synced.sync_s = 0.5e-3;
  const Prediction w = predict(two_parts(), one_layer(), synced, kNet, no_overlap);
  CHECK(w.wait_ms == Approx(1.5));
  CHECK(w.epoch_ms == Approx(p.epoch_ms + 1.5));

  // Rank 1 with half the edges: mean compute drops, the difference is waiting.
  PartitionCounts uneven = two_parts();
  uneven.per_part[1].edges = 500;
  uneven.per_part[1].interior_edges = 300;
  const Prediction u = predict(uneven, one_layer(), unit_rates(), kNet, no_overlap);
  CHECK(u.compute_ms == Approx(compute - 5));  // (10 + 5) / 2 forward, (10 + 5) / 2 backward
  CHECK(u.wait_ms == Approx(5));
  CHECK(u.epoch_ms == Approx(p.epoch_ms));

  // Ranks sharing cores: half the rate, twice the compute and packing; the wire unchanged.
  no_overlap.compute_scale = 0.5;
  const Prediction s = predict(two_parts(), one_layer(), unit_rates(), kNet, no_overlap);
  CHECK(s.compute_ms == Approx(2 * compute));
  CHECK(s.pack_ms == Approx(2 * p.pack_ms));
  CHECK(s.comm_ms == Approx(p.comm_ms + p.pack_ms));

  // One rank: no exchange, no all-reduce, no synchronisation, no bytes.
  PartitionCounts one;
  one.per_part = {two_parts().per_part[0]};
  one.per_part[0].peers = 0, one.per_part[0].halo_rows = one.per_part[0].send_rows = 0;
  const Prediction single = predict(one, one_layer(), synced, kNet);
  CHECK(single.comm_ms == 0);
  CHECK(single.wait_ms == 0);
  CHECK(single.bytes_per_epoch == 0);
  CHECK(single.epoch_ms == Approx(compute));
}

TEST_CASE("plan model: counts extrapolate along the fitted power law", "[perf]") {
  // 1000 vertices, 10000 edges. Each of 2 parts: 50 halo rows, 1000 boundary edges; each of 4:
  // the same, so the totals double with P (exponent 1) and the peers too.
  auto uniform = [](int parts, int peers) {
    PartCounts p;
    p.rows = 1000 / parts, p.edges = 10000 / parts;
    p.interior_edges = p.edges - 1000, p.cut_edges = 500;
    p.halo_rows = p.send_rows = 50, p.peers = peers;
    PartitionCounts c;
    c.parts = parts;
    c.per_part.assign(size_t(parts), p);
    return c;
  };
  const PartitionCounts c = extrapolate_counts({uniform(2, 1), uniform(4, 2)}, 8, 1000, 10000);
  REQUIRE(c.per_part.size() == 8);
  CHECK(c.extrapolated);
  const PartCounts& p = c.per_part[0];
  CHECK(p.rows == 125);
  CHECK(p.edges == 1250);
  CHECK(p.halo_rows == 50);
  CHECK(p.send_rows == 50);
  CHECK(p.cut_edges == 500);
  CHECK(p.interior_edges == 250);
  CHECK(p.peers == 4);
  // Peers cannot exceed the other ranks.
  const PartitionCounts few = extrapolate_counts({uniform(2, 1), uniform(4, 3)}, 8, 1000, 10000);
  CHECK(few.per_part[0].peers == 7);
}

TEST_CASE("plan model: named networks", "[perf]") {
  CHECK(named_network("ethernet-10g").bandwidth_Bps == 1.25e9);
  CHECK(named_network("infiniband-hdr").latency_s < named_network("ethernet-100g").latency_s);
  CHECK_THROWS_AS(named_network("token-ring"), dgnn::OptionError);
}

TEST_CASE("plan model: attention layers cost their entries and expose their exchange", "[perf]") {
  // One attention layer on the two parts: 1000 edges + 100 self loops per rank at 2 us an
  // entry forward, 3 us backward; GEMM 10 ms forward, 20 ms backward (as above); no element-wise
  // work. No overlap, whatever the option: with_halo fetches the rows before anything runs.
  std::vector<LayerShape> l = one_layer();
  l[0].heads = 2;
  l[0].self_loops = true;
  l[0].elementwise_per_row = 0;
  Rates r = unit_rates();
  r.attention_fwd[{2, 10}] = 2e-6;
  r.attention_bwd[{2, 10}] = 3e-6;
  const Prediction p = predict(two_parts(), l, r, kNet);
  const double adam = 55 * 8 / 1e6 * 1e3;
  CHECK(p.compute_ms == Approx(1100 * 2e-3 + 10 + 1100 * 3e-3 + 20 + adam));
  CHECK(p.halo_ms == Approx(2 * (3 + 1)));  // nothing hides the exchanges: 3 ms + 1 ms packing
  CHECK(p.bytes_per_epoch == 2 * (2000 + 2000 + 56 * 4));
}

TEST_CASE("plan model: the pipeline's bytes, hops and bubble by hand", "[perf]") {
  // A residual GCN of 4 graph layers of 8 columns on 1000 vertices, 3 features, 2 classes.
  DeepModelOptions o;
  o.kind = DeepKind::resgcn;
  o.layers = 4;
  o.hidden = 8;
  const auto layers = deep_model_layers(o, 3, 2);
  PartitionCounts whole;
  whole.per_part.resize(1);
  whole.per_part[0].rows = 1000;
  whole.per_part[0].edges = 4000;
  Rates r;
  r.spmm[8] = 1e6;
  r.gemm_fwd[{8, 8}] = r.gemm_bwd[{8, 8}] = 1e6;
  r.gemm_fwd[{3, 8}] = r.gemm_bwd[{3, 8}] = 1e6;
  r.gemm_fwd[{8, 2}] = r.gemm_bwd[{8, 2}] = 1e6;
  r.elementwise = 1e6;
  const int64_t floats = allreduce_floats(layers);
  // Two stages of two layers: each boundary moves 1000 x 8 floats each way; both ranks
  // all-reduce the whole gradient.
  const Prediction two = predict_pipeline(whole, layers, {1, 3, 5}, 4, false, r, kNet);
  CHECK(two.ranks == 2);
  CHECK(two.bytes_per_epoch == 2 * 1000 * 8 * 4 + 2 * floats * 4);
  CHECK(two.max_rank_bytes == 1000 * 8 * 4 + floats * 4);
  // The first chunk's path: one hop each way, 1 ms + 250 x 8 x 4 B / 1 MB/s = 9 ms.
  CHECK(two.halo_ms == Approx(2 * 9.0));
  // More chunks: a smaller bubble (the stages overlap more), the same bytes.
  const Prediction many = predict_pipeline(whole, layers, {1, 3, 5}, 16, false, r, kNet);
  CHECK(many.bytes_per_epoch == two.bytes_per_epoch);
  CHECK(many.wait_ms < two.wait_ms);
  // One stage: one process's compute, nothing sent, no bubble.
  const Prediction one = predict_pipeline(whole, layers, {1, 5}, 1, false, r, kNet);
  CHECK(one.bytes_per_epoch == 0);
  CHECK(one.comm_ms == 0);
  CHECK(one.wait_ms == Approx(0).margin(1e-9));
  CHECK(one.compute_ms == Approx(predict(whole, layers, r, kNet).compute_ms));
  // Bounds that do not cover the layers.
  CHECK_THROWS_AS(predict_pipeline(whole, layers, {1, 3}, 4, false, r, kNet), OptionError);
}
