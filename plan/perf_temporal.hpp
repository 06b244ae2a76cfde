#pragma once
// `dgnn plan` for temporal models: the predicted training epoch of link prediction (or edge
// classification) over snapshots on P ranks, under each distributed strategy of dgnn train
// (gnn/temporal/temporal_dist.hpp, gnn/temporal/temporal_snapshot.hpp), from the snapshots' sizes,
// the partition's per-snapshot halo counts (vertex strategy) or the snapshot plan (snapshot
// strategy), the rates perf_model.hpp calibrates, and a network. Pure arithmetic, tested with
// hand-computed numbers.
//
// One training epoch, per BPTT window: every step forward (the model's ops on this rank's rows,
// then the pair scorer), then backward in reverse, then the loss and gradient all-reduce and Adam.
//  - vertex: each rank runs every step on the vertices it owns; every aggregation exchanges the
//    step's halo rows (forward, and backward where a gradient flows), overlapped with the interior
//    rows as for static graphs; weight sequences (EvolveGCN) are evolved whole on every rank;
//    pairs are scored by the owner of their first vertex, which fetches the second vertex's
//    embedding (an all-to-all forward and one backward).
//  - snapshot: each rank runs the whole snapshots of its block of every window, with no halo;
//    GCRN's LSTM runs on a block of vertices between two all-to-alls (and their reverses);
//    EvolveGCN evolves the weights through the whole window on every rank (-H all-gathers the
//    top-k summaries); T-GCN's state goes through the window's blocks in rank order, so the
//    ranks' recurrent work is serial (a pipeline of one window at a time), as is its backward.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "dgnn/plan/perf_model.hpp"

namespace dgnn::perf {

// One kernel of a step. Rows: the vertices a rank runs the step on; for `fixed_rows` > 0 a
// matrix of that many rows independent of the graph (EvolveGCN's evolved weights), run whole by
// every rank; for `pairs`, the pairs scored.
struct TOp {
  enum Kind : uint8_t { aggregate, gemm, elementwise, lstm, gru, pair_mlp };
  Kind kind = elementwise;
  int64_t width = 0;       // aggregate: columns (and halo columns exchanged)
  bool self_loops = true;  // aggregate: GCN's A + I
  bool backward = true;    // aggregate: a gradient flows back through it (SpMM^T and exchange)
  int64_t k = 0, n = 0;    // gemm: rows x k times k x n
  bool input_grad = true;  // gemm: backward computes dX as well as dW
  int64_t floats = 0;      // elementwise: floats written per row forward (backward twice)
                           // lstm, gru: the state's width; pair_mlp: the embedding width
  int64_t fixed_rows = 0;
  bool pairs = false;
};
inline TOp t_aggregate(int64_t w, bool backward, bool self_loops = true) {
  TOp o;
  o.kind = TOp::aggregate, o.width = w, o.backward = backward, o.self_loops = self_loops;
  return o;
}
inline TOp t_gemm(int64_t k, int64_t n, bool input_grad, int64_t fixed_rows = 0) {
  TOp o;
  o.kind = TOp::gemm, o.k = k, o.n = n, o.input_grad = input_grad, o.fixed_rows = fixed_rows;
  return o;
}
inline TOp t_elementwise(int64_t floats, int64_t fixed_rows = 0) {
  TOp o;
  o.kind = TOp::elementwise, o.floats = floats, o.fixed_rows = fixed_rows;
  return o;
}

inline TOp t_cell(TOp::Kind kind, int64_t width, int64_t fixed_rows = 0) {
  TOp o;
  o.kind = kind, o.floats = width, o.fixed_rows = fixed_rows, o.pairs = kind == TOp::pair_mlp;
  return o;
}

enum class TModel : uint8_t { evolvegcn_o, evolvegcn_h, gcrn, tgcn };

// The ops of one step of a temporal model (gnn/temporal/temporal_models.cpp), split by where the
// snapshot strategy runs them.
struct TemporalShape {
  TModel model = TModel::gcrn;
  std::vector<TOp> weights;    // EvolveGCN's weight evolution: every rank, every step of a window
  std::vector<TOp> graph;      // per snapshot, on its owner (vertex strategy: owned rows)
  std::vector<TOp> recurrent;  // GCRN: per vertex (the vertex block); T-GCN: the handed-on state
  std::vector<TOp> score;      // per pair scored
  int64_t embedding = 0;       // width of the embeddings the scorer reads (fetched per pair)
  int64_t scorer_hidden = 1;
  int64_t reshard_in = 0, reshard_out = 0;  // GCRN: widths moved to vertex blocks and back
  int64_t state = 0;                        // T-GCN: width of the state handed between ranks
  // EvolveGCN-H: per layer, the top-k summary of a step (rows x cols) all-gathered.
  std::vector<std::pair<int64_t, int64_t>> summaries;
  int64_t parameters = 0;  // floats all-reduced per window (with one flag per tensor)
  int64_t tensors = 0;
  bool fetches_ends = true;  // the vertex strategy fetches the pairs' second ends (link tasks)
};
// dims = {features, hidden x layers} as `dgnn train` builds them; the pair scorer's hidden width.
TemporalShape temporal_shape(TModel model, const std::vector<int64_t>& dims, int64_t scorer_hidden);
// The same model with forecasting's head in place of the pair scorer: ReLU, a linear layer to
// `channels` outputs and the squared error, per vertex; nothing fetched.
TemporalShape forecast_shape(TModel model, const std::vector<int64_t>& dims, int64_t channels);
// Every SpMM width and GEMM shape of `s`, as LayerShapes, for calibrate().
std::vector<LayerShape> calibration_shapes(const TemporalShape& s);

// The training steps as the trainer runs them.
struct TemporalSteps {
  int64_t vertices = 0;
  std::vector<int> windows;      // BPTT windows of the training steps: 0 = w0 < w1 < ... = train
  std::vector<int64_t> entries;  // per training step: stored entries of its snapshot (in-edges)
  std::vector<int64_t> pairs;    // per training step: pairs scored (0: the step is skipped)
  // Per training step: whether it has a loss; empty: those that score pairs. Forecasting's
  // steps score no pairs (their head is per vertex) and all have one.
  std::vector<uint8_t> loss;
  std::vector<double> batch_s;   // per training step: seconds to draw its pairs (host, 1 thread)
  // The vertex strategy on several ranks: a rank keeps its share of each step's positives after
  // epoch 1 (StepPositives), and draws with them in batch_known_s seconds for the whole batch
  // (empty: batch_s), of which it pays batch_fixed_s whatever its share (reading the step's
  // events), the rest in proportion to the pairs it scores.
  std::vector<double> batch_known_s;
  std::vector<double> batch_fixed_s;
};
// The vertex strategy's counts of one training step under a partition: the snapshot's halo
// (partition_counts of its in-edges) and, per rank, the pairs it scores, the distinct second
// ends among them (fetched once each, local ones too), those it fetches from other ranks, and
// the rows it serves to them.
struct VertexStep {
  PartitionCounts graph;
  std::vector<double> pairs, ends, fetched, served;
};
// The snapshot strategy's assignment: per training step its owner; per rank its vertex block.
struct SnapshotAssignment {
  std::vector<int32_t> owner;
  std::vector<int64_t> block;  // rows of each rank's vertex block
};

struct TemporalPrediction : Prediction {
  std::string strategy;
  bool feasible = true;  // false: the strategy cannot run this (reason in `why`)
  std::string why;
};

TemporalPrediction predict_vertex(const TemporalShape& shape, const TemporalSteps& steps,
                                  const std::vector<VertexStep>& counts, const Rates& rates,
                                  const Network& net, const PlanOptions& opt = {});
TemporalPrediction predict_snapshot(const TemporalShape& shape, const TemporalSteps& steps,
                                    const SnapshotAssignment& plan, const Rates& rates,
                                    const Network& net, const PlanOptions& opt = {});

}  // namespace dgnn::perf
