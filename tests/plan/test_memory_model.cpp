// The per-rank memory model of `dgnn plan` (plan/memory_model.hpp) against what dgnn builds: a
// rank's part cut by extract_part and its GraphView's normalised adjacency (every vector's size),
// a real model's parameters and Adam's state; the tape's floats on hand-counted ops; and the
// --device-memory sizes.
#include <catch2/catch.hpp>
#include <cmath>
#include <numeric>

#include "dgnn/common/error.hpp"
#include "dgnn/comm/halo.hpp"
#include "dgnn/gnn/core/graph_view.hpp"
#include "dgnn/gnn/models/layers.hpp"
#include "dgnn/gnn/train/optimizer.hpp"
#include "dgnn/partition/partition.hpp"
#include "dgnn/plan/memory_model.hpp"
#include "../small_sbm.hpp"

using namespace dgnn;
using namespace dgnn::perf;
using Catch::Matchers::Contains;

namespace {

// A GraphView needs an exchange for its halo rows; building the adjacency sends nothing.
struct NoExchange final : HaloExchange {
  void forward_begin(ConstMatView) override {}
  void forward_end(MatView) override {}
  void backward_begin(ConstMatView) override {}
  void backward_end(MatView) override {}
};

template <class T>
int64_t bytes(const std::vector<T>& v) {
  return int64_t(v.size() * sizeof(T));
}
int64_t bytes(const Csr& c) { return bytes(c.offsets) + bytes(c.indices) + bytes(c.values); }

}  // namespace

TEST_CASE("memory model: a rank's graph, halo plan, features and labels are what dgnn builds",
          "[memory]") {
  const Dataset d = test::small_sbm(600, 3);
  for (int parts : {1, 3}) {
    PartitionOptions po;
    po.parts = parts;
    const std::vector<int32_t> part = partition_vertices(d.graph.in, po);
    const PartitionCounts counts = partition_counts(d.graph.in, part, parts);
    for (int r = 0; r < parts; ++r) {
      const LocalPart lp = extract_part(d, part, parts, r);
      const PartCounts& c = counts.per_part[size_t(r)];
      // The plan's counts are the part's.
      CHECK(c.rows == lp.n_owned);
      CHECK(c.edges == lp.local_in.nnz());
      CHECK(c.halo_rows == int64_t(lp.global_ids.size()) - lp.n_owned);
      CHECK(c.send_rows == lp.plan.rows_sent());
      NoExchange none;
      GraphView view(lp.local_in, lp.n_owned, lp.global_ids, lp.halo_in_degree, &none);
      const GraphView::Adjacency& adj = view.adjacency(Norm::gcn);
      CHECK(adj.symmetric == (parts == 1));
      const int64_t held = bytes(lp.local_in) + bytes(adj.forward) + bytes(adj.transposed) +
                           bytes(lp.global_ids) + bytes(lp.original_ids);
      CHECK(adj.owned_symmetric == (parts > 1 && c.halo_rows > 0));
      CHECK(local_graph_bytes(c, false, true, true) == held);
      if (parts > 1) {
        int64_t plan = bytes(lp.halo_in_degree);
        for (const auto& v : lp.plan.send_rows) plan += bytes(v);
        for (const auto& v : lp.plan.recv_rows) plan += bytes(v);
        CHECK(halo_plan_bytes(c) == plan);
      }
      StaticMemoryInput in;
      in.layers = model_layers(ModelKind::gcn, d.feature_dim, 16, d.num_classes, 2);
      in.features = d.feature_dim;
      in.ranks = parts;
      const MemoryBreakdown m = static_rank_memory(in, c);
      CHECK(m.features == bytes(lp.features));
      // A label per row, and a split id per row at most (here 70% of the rows are in a split).
      CHECK(m.labels == 2 * bytes(lp.labels));
      CHECK(m.labels >= bytes(lp.labels) + bytes(lp.train) + bytes(lp.val) + bytes(lp.test));
      CHECK(m.graph == held);
      CHECK(m.halo == (parts > 1 ? halo_plan_bytes(c) : 0));
    }
  }
}

TEST_CASE("memory model: the model is a real model's parameters and Adam's state, five times",
          "[memory]") {
  const std::vector<int64_t> dims = {12, 32, 32, 4};
  StackModel model(builtin_layer(ModelKind::gcn), dims, 0.5f);
  const auto params = model.named_parameters();
  int64_t floats = 0;
  for (auto& [name, p] : params) floats += p->var.value().numel();
  const auto layers = model_layers(ModelKind::gcn, 12, 32, 4, 3);
  CHECK(parameter_count(layers) == floats);
  int64_t tensors = 0;
  for (const LayerShape& l : layers) tensors += l.tensors;
  CHECK(tensors == int64_t(params.size()));
  Adam adam(params, AdamConfig{});
  int64_t state = 0;
  for (auto& [name, t] : adam.state()) state += t->numel();
  CHECK(state == 2 * floats);  // m and v
  // value + gradient + m + v + the best copy, and the all-reduce buffer with its flags and loss.
  CHECK(model_bytes(floats, tensors) == 4 * (5 * floats + floats + tensors + 1));
}

TEST_CASE("memory model: the tape, every static op's output per row, temporal models' as measured", "[memory]") {
  // GCN 16 -> 8 -> 3: both layers multiply first (it narrows what they aggregate).
  const auto layers = model_layers(ModelKind::gcn, 16, 8, 3, 2);
  // dropout 16, the product 8, the aggregation's copy 8, bias 8, ReLU 8
  CHECK(tape_floats_per_row(layers[0]) == 16 + 8 + 8 + 8 + 8);
  // GCN 8 -> 16: aggregates first. dropout 8, the aggregation's copy 8, the product 16, bias 16,
  // ReLU 16.
  CHECK(tape_floats_per_row(model_layers(ModelKind::gcn, 8, 16, 3, 2)[0]) == 8 + 8 + 16 + 16 + 16);
  // dropout 8, the product 3, the aggregation's copy 3, bias 3
  CHECK(tape_floats_per_row(layers[1]) == 8 + 3 + 3 + 3);
  // Temporal models: what bench_temporal_memory.sh measured per hidden unit and step.
  CHECK(tape_floats_per_row(temporal_shape(TModel::tgcn, {4, 8}, 8)) == 8 * 8);
  CHECK(tape_floats_per_row(temporal_shape(TModel::gcrn, {4, 16, 16}, 16)) == 10 * 16);
  CHECK(tape_floats_per_row(temporal_shape(TModel::evolvegcn_o, {4, 32, 32}, 16)) == 3 * 32);
}

TEST_CASE("memory model: shares fall as 1 / P, the model does not", "[memory]") {
  StaticMemoryInput in;
  in.layers = model_layers(ModelKind::gcn, 128, 128, 8, 2);
  in.features = 128;
  const MemoryBreakdown one = static_rank_memory(in, balanced_share(1'000'000, 20'000'000, 1));
  in.ranks = 4;
  PartCounts four = balanced_share(1'000'000, 20'000'000, 4);
  CHECK(four.rows == 250'000);
  CHECK(four.edges == 5'000'000);
  CHECK(four.halo_rows == 750'000);  // min(n - n / P, m / P): every other vertex
  four.halo_rows = four.send_rows = 0;  // no halo: exactly a quarter of every row's bytes
  const MemoryBreakdown m = static_rank_memory(in, four);
  CHECK(m.features * 4 == one.features);
  CHECK(m.labels * 4 == one.labels);
  CHECK(m.model == one.model);
  CHECK(m.activations * 4 == one.activations);

  TemporalMemoryInput t;
  t.shape = temporal_shape(TModel::gcrn, {16, 16, 16}, 16);
  t.features = 16, t.hidden = 16, t.bptt = 5, t.snapshots = 30;
  t.largest_entries = 400'000, t.step_pairs = 1'200'000;
  t.events = 6'000'000, t.neg_eval = 100;
  const MemoryBreakdown t1 = temporal_rank_memory(t, balanced_share(100'000, 400'000, 1), 100'000);
  t.ranks = 4;
  PartCounts q = balanced_share(100'000, 400'000, 4);
  q.halo_rows = q.send_rows = 0;
  const MemoryBreakdown t4 = temporal_rank_memory(t, q, 100'000);
  CHECK(t4.state * 4 == t1.state);
  CHECK(t1.state == 2 * 100'000 * 16 * 4);  // the LSTM's h and c
  CHECK(t4.features * 4 == t1.features);
  CHECK(t4.model == t1.model);
  // What does not fall with the ranks: what every rank needs of evaluation's positives of a
  // step (50 bytes each, 200k), the chunk of negatives' keys it counts at a time (twice the
  // 400k interval ends: one process 800k of its 20M, 4 ranks 800k of 5M), and the rows a rank
  // fetches: to train, a round's ends (at most the 25k rows of one owner); to evaluate, every
  // vertex's, with one peer's rows served and got beside them, the larger.
  const int64_t step_positives = 6'000'000 / 30, chunk = 4 * step_positives;
  CHECK((t4.pairs - step_positives * 50 - chunk * 8) * 4 ==
        t1.pairs - step_positives * 50 - chunk * 8);
  CHECK(t1.halo == 0);
  CHECK(t4.halo == 30 * 0 + (100'000 + 2 * 25'000) * 16 * 4);
  // Events: one process 8 bytes each; a rank those with an end it owns (twice its share), 8
  // bytes and a bit each, and the first ordinal (4 bytes) of each of its sources with events
  // in a step (at most its 25k vertices in each of the 30 steps, at most its share of events).
  // Every vertex: its input id and its row (one process), its input id and owner (a rank).
  // A snapshot's view keeps no ids of its owned rows (q has no halo): the rank keeps them once,
  // twice over (its vertices, the views' shared list); one process not at all.
  CHECK(t1.graph - 30 * (local_graph_bytes(balanced_share(100'000, 400'000, 1), false, true, true) -
                         2 * 100'000 * 8) ==
        6'000'000 * 8 + 100'000 * 16);
  CHECK(t4.graph - 30 * (local_graph_bytes(q, false, true, true) - 2 * 25'000 * 8) ==
        3'000'000 * 8 + 3'000'000 / 8 + 750'000 * 4 + 100'000 * 12 + 2 * 25'000 * 8);
  // A directed graph's rank keeps only the events its sources send.
  t.directed = true;
  const MemoryBreakdown d4 = temporal_rank_memory(t, q, 100'000);
  CHECK(d4.graph - 30 * (local_graph_bytes(q, false, true, false) - 2 * 25'000 * 8) ==
        1'500'000 * 8 + 1'500'000 / 8 + 750'000 * 4 + 100'000 * 12 + 2 * 25'000 * 8);
  CHECK(t4.total() * 2 < t1.total());
}

TEST_CASE("memory model: --device-memory sizes", "[memory]") {
  CHECK(parse_memory_size("80GB", "--device-memory") == 80'000'000'000);
  CHECK(parse_memory_size("80G", "--device-memory") == 80'000'000'000);
  CHECK(parse_memory_size("512MiB", "--device-memory") == 512LL << 20);
  CHECK(parse_memory_size("1.5tb", "--device-memory") == 1'500'000'000'000);
  CHECK(parse_memory_size("4096", "--device-memory") == 4096);
  CHECK(parse_memory_size("16 GiB", "--device-memory") == 16LL << 30);
  for (const char* bad : {"", "GB", "80XB", "-1GB", "0", "0GB", "nan", "1e40", "80GBs", "inf"})
    CHECK_THROWS_WITH(parse_memory_size(bad, "--device-memory"), Contains("--device-memory"));
}

TEST_CASE("memory model: a streamed halo holds four pieces instead of the halo rows", "[memory]") {
  StaticMemoryInput in;
  in.layers = model_layers(ModelKind::gcn, 128, 128, 8, 2);
  in.features = 128;
  in.ranks = 4;
  const PartCounts four = balanced_share(1'000'000, 20'000'000, 4);  // halo 3x the owned rows
  in.halo_memory = 0;
  const MemoryBreakdown whole = static_rank_memory(in, four);
  in.halo_memory = -1;  // auto: streams here, in pieces of a quarter of the owned rows
  const MemoryBreakdown streamed = static_rank_memory(in, four);
  // Whole: each layer's [owned | halo] input (its aggregation's width) and the backward's
  // gradient over owned and halo rows; streamed: four pieces of 62,500 rows at the widest width.
  int64_t agg = 0;
  for (const LayerShape& l : in.layers) agg += l.agg_width;
  CHECK(whole.activations - streamed.activations ==
        4 * (750'000 * agg + 750'000 * 128 - 4 * 62'500 * 128));
  in.halo_memory = 64'000'000;  // four pieces of 128 floats in 64 MB: 31,250 rows
  CHECK(static_rank_memory(in, four).activations ==
        streamed.activations - 4 * 4 * (62'500 - 31'250) * 128);
  // Auto with a small halo: whole, as train does.
  PartCounts small = four;
  small.halo_rows = small.send_rows = 1000;
  in.halo_memory = -1;
  const MemoryBreakdown a = static_rank_memory(in, small);
  in.halo_memory = 0;
  CHECK(static_rank_memory(in, small).activations == a.activations);
}
