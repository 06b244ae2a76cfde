#pragma once
// A performance model of distributed full-graph training (`dgnn plan`): from a partition's
// per-rank counts, a model's layer shapes, measured kernel rates and a network's latency and
// bandwidth, the predicted time of one training step and its compute / comm / wait split.
// Pure arithmetic (no timing, no MPI), so it is tested with hand-computed numbers.
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "dgnn/gnn/models/deep.hpp"
#include "dgnn/gnn/models/layers.hpp"
#include "dgnn/graph/csr.hpp"

namespace dgnn::perf {

// One rank's share of the graph, as the halo exchange and the aggregation see it.
struct PartCounts {
  int64_t rows = 0;            // owned vertices
  int64_t edges = 0;           // in-edges of owned vertices (SpMM entries, without GCN self loops)
  int64_t interior_edges = 0;  // in-edges of owned vertices whose in-neighbours are all owned
  int64_t cut_edges = 0;       // in-edges from a halo vertex (the backward's halo-row entries)
  int64_t halo_rows = 0;       // distinct remote in-neighbours: rows received per exchange
  int64_t send_rows = 0;       // owned rows sent per exchange, summed over peers
  int peers = 0;               // ranks exchanged with (sent to or received from)
};
struct PartitionCounts {
  int parts = 1;
  std::vector<PartCounts> per_part;
  bool extrapolated = false;  // made by extrapolate_counts, not from a computed partition
};
// Counts for `part` (every vertex in [0, parts)) of the in-edge CSR `in`.
PartitionCounts partition_counts(const Csr& in, const std::vector<int32_t>& part, int parts);

// Counts for `parts` ranks from counts computed at smaller rank counts (at least two, ascending):
// per-rank rows and edges are total / P times the largest computed partition's balance (max /
// mean); the summed halo rows, cut edges and boundary fraction follow a power law a P^b fitted
// through the two largest computed P (clamped to what a graph of n vertices can have); peers of
// the busiest rank likewise, at most P - 1. Every rank gets the busiest rank's counts, so the
// wait (imbalance) shows only through rows / edges.
PartitionCounts extrapolate_counts(const std::vector<PartitionCounts>& computed, int parts,
                                   int64_t vertices, int64_t edges);

// The work of one layer, forward and backward.
struct Gemm {
  int64_t k = 0, n = 0;    // rows x k times k x n, for every owned row
  bool input_grad = true;  // backward computes dX as well as dW
};
struct LayerShape {
  int64_t in = 0, out = 0;
  int64_t agg_width = 0;     // columns aggregated (and exchanged)
  bool self_loops = false;   // GCN's A + I: one more SpMM entry per row
  bool agg_backward = true;  // the aggregated input needs a gradient (not the raw features)
  std::vector<Gemm> gemms;
  int64_t biases = 0;   // bias parameters (with the weights: what is all-reduced)
  int64_t tensors = 0;  // parameter tensors: each adds a flag to the all-reduce (did a rank's
                        // backward reach it)
  int64_t elementwise_per_row = 0;  // floats touched per owned row by the forward's element-wise
                                    // ops (dropout, bias, ReLU, adds, copies); backward: twice
  // What the tape keeps per owned row for the backward, in floats, when measured rather than
  // counted from the ops (< 0: elementwise_per_row plus the products' outputs), and whether it
  // keeps the aggregation's halo rows (the deep models' aggregations read nothing back).
  int64_t tape_floats = -1;
  bool keeps_halo = true;
  // Attention (GAT): `heads` > 0. The aggregation is then the attention's edge work, costed per
  // entry (Rates::attention_*), after an exchange of agg_width columns that nothing overlaps
  // (with_halo), forward and backward.
  int64_t heads = 0;
};
// The layers `make_model` builds for dims {in, hidden x (layers - 1), classes}, following
// gnn/models/layers.cpp (GCN multiplies first when that narrows the aggregation; GIN's MLP width).
std::vector<LayerShape> model_layers(ModelKind kind, int64_t in, int64_t hidden, int64_t classes,
                                     int layers);
// The layers of a deep model (gnn/models/deep.hpp): the input linear layer (no aggregation),
// `o.layers` graph layers of o.hidden columns, the output linear layer.
std::vector<LayerShape> deep_model_layers(const DeepModelOptions& o, int64_t in, int64_t classes);
int64_t parameter_count(const std::vector<LayerShape>& layers);
// Floats the gradient all-reduce sums: the parameters, a flag per parameter tensor, the loss.
int64_t allreduce_floats(const std::vector<LayerShape>& layers);

// Measured per-rank compute rates.
struct Rates {
  std::map<int64_t, double> spmm;  // aggregated width -> SpMM entries x width per second
  std::map<std::pair<int64_t, int64_t>, double> gemm_fwd, gemm_bwd;  // (k, n) -> flop/s
  double elementwise = 1e9;  // floats per second (read + write each)
  // What one synchronisation of the ranks (an exchange, the all-reduce) costs beyond the data:
  // the wait for the slowest, as the ranks' threads are scheduled on a shared node.
  double sync_s = 0;
  int threads = 1;
  // Temporal models' fused ops, timed by `dgnn plan` on a temporal graph (0: not timed, then
  // estimated from the element-wise rate): LSTM and GRU cells in rows x hidden per second, the
  // pair scorer (gnn/core/ops.hpp pair_mlp) in pairs per second at the model's widths.
  double lstm_fwd = 0, lstm_bwd = 0, gru_fwd = 0, gru_bwd = 0, pair_fwd = 0, pair_bwd = 0;
  // Rows gathered or scattered by index (fetching pair ends), in floats per second.
  double gather = 0;
  // Attention layers: seconds per entry (of the GCN structure, self loops included) of a layer's
  // edge work, by (heads, width): forward (edge_add, LeakyReLU, edge_softmax, dropout,
  // spmm_heads) and backward (their gradients: sddmm, spmm_heads on the transpose,
  // edge_softmax_backward, two edge_row_sums and the transposed-order gather).
  std::map<std::pair<int64_t, int64_t>, double> attention_fwd, attention_bwd;
  double attention_fwd_s(int64_t heads, int64_t width) const;
  double attention_bwd_s(int64_t heads, int64_t width) const;
  double spmm_rate(int64_t width) const;  // the nearest measured width when not measured
  double gemm_fwd_rate(int64_t k, int64_t n) const;
  double gemm_bwd_rate(int64_t k, int64_t n) const;
};

struct Network {
  std::string name;
  double latency_s = 0;      // per message
  double bandwidth_Bps = 0;  // bytes per second, each direction of a rank's link
};
// shm, ethernet-10g, ethernet-100g, infiniband-hdr, nvlink; OptionError for other names.
Network named_network(const std::string& name);
const std::vector<Network>& named_networks();

struct PlanOptions {
  bool overlap = true;         // interior rows aggregate while the halo travels (dgnn's default)
  double compute_scale = 1.0;  // < 1: ranks share cores (oversubscribed), rates shrink by it
  // Temporal plans: a measured step's time over the sum of its kernels' (tensor allocation,
  // copies and the tape, which the kernels leave out); every kernel's time is multiplied by it.
  double overhead = 1.0;
};

struct Prediction {
  int ranks = 1;
  double epoch_ms = 0;
  double compute_ms = 0;  // mean over ranks
  double comm_ms = 0;     // halo exchange not hidden by the overlap, plus the all-reduce
  double wait_ms = 0;     // load imbalance: slowest rank's compute minus the mean, per phase
  double halo_ms = 0, allreduce_ms = 0;  // comm_ms = halo_ms + allreduce_ms
  double pack_ms = 0;  // of halo_ms: packing and placing the rows exchanged (the slowest rank's)
  int64_t bytes_per_epoch = 0;  // sent, summed over ranks (as `dgnn train --log-json` counts)
  int64_t max_rank_bytes = 0;   // sent by the busiest rank
  int64_t halo_rows_total = 0;  // rows received per exchange, summed over ranks
  int max_peers = 0;
  bool extrapolated = false;
};

// One row of a plan's table: a prediction, and the ranks' threads it was made for.
template <class P>
struct PlanRowOf {
  std::string partitioner;
  P p;
  int threads = 1, copies = 1;  // threads per rank; copies timed at once for its rates
  double compute_scale = 1;     // PlanOptions::compute_scale
  PartitionCounts counts;       // static rows: every rank's counts (the memory plan reads them)
};
using PlanRow = PlanRowOf<Prediction>;

// One training step: per layer forward then backward, each phase a barrier (the halo exchange),
// phase time = max over ranks (compute + packing and unpacking the halo rows + exchange not
// hidden by the overlap) + the cost of a synchronisation; then the gradient all-reduce
// (Rabenseifner: 2 (P-1)/P x bytes / bandwidth + 2 ceil(log2 P) latencies, and a
// synchronisation) and the optimizer step.
Prediction predict(const PartitionCounts& counts, const std::vector<LayerShape>& layers,
                   const Rates& rates, const Network& net, const PlanOptions& opt = {});

// The pipeline strategy (gnn/train/pipeline.hpp) on (first.size() - 1) x parts.parts ranks:
// stage s runs the graph layers [first[s], first[s + 1]) (from 1, as balance_stages) of a deep
// model's `layers` (the input layer, the graph layers, the output layer: deep_model_layers) for
// every vertex, in `chunks` chunks. `parts`: one part (the pipeline: every stage holds the whole
// graph), or the hybrid's parts, each stage's ranks running its layers graph-parallel on them
// (predict()'s halo exchanges among them; one chunk per part). Stage 0 runs the input layer,
// every stage too when `stem_everywhere` (GCNII recomputes h0); the last stage runs the output
// layer. The chunks flow as GPipe's schedule (every forward, then every backward): (sum of the
// stages' times + (chunks - 1) x the slowest stage's) / chunks, each chunk's hop between stages
// (its rows, one message) on the first chunk's path and, where it is slower than a stage, on
// every chunk's; wait_ms is the bubble (and the stages' own imbalance). Bytes: every boundary
// moves n x hidden floats each way, the hybrid's stages their halos, and every rank all-reduces
// the whole gradient (parameters are replicated), exactly as `dgnn train --strategy pipeline`
// counts them.
Prediction predict_pipeline(const PartitionCounts& parts, const std::vector<LayerShape>& layers,
                            const std::vector<int>& first, int chunks, bool stem_everywhere,
                            const Rates& rates, const Network& net, const PlanOptions& opt = {});

}  // namespace dgnn::perf
