// Per-rank memory of the sharded design (plan/memory_model.hpp).
#include "dgnn/plan/memory_model.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>

#include "dgnn/common/error.hpp"

namespace dgnn::perf {

namespace {

constexpr int64_t kF = 4;  // float32, int32
constexpr int64_t kI = 8;  // int64 offsets and ids

// A CSR of `rows` rows and `nnz` entries with float values.
int64_t csr_size(int64_t rows, int64_t nnz, bool values) {
  return (rows + 1) * kI + nnz * kF + (values ? nnz * kF : 0);
}

}  // namespace

int64_t model_bytes(int64_t parameters, int64_t tensors) {
  // value, gradient, Adam's m and v, the best-validation copy; the all-reduce's flat buffer.
  return 5 * parameters * kF + (parameters + tensors + 1) * kF;
}

int64_t local_graph_bytes(const PartCounts& c, bool weighted, bool self_loops, bool undirected) {
  const int64_t cols = c.rows + c.halo_rows;
  const int64_t adj = c.edges + (self_loops ? c.rows : 0);
  int64_t b = csr_size(c.rows, c.edges, weighted);  // the structure, as loaded
  b += csr_size(c.rows, adj, true);                 // the normalised adjacency
  // Its transpose, for the backward: none when the matrix is symmetric (undirected, no halo) or
  // a rank's part of an undirected graph (GraphView::Adjacency::owned_symmetric: the backward
  // reads the forward rows and makes the halo rows as it runs); a directed graph all of it.
  if (!undirected) b += csr_size(cols, adj, true);
  return b + cols * kI + c.rows * kI;  // global ids of owned and halo rows, input ids of owned
}

int64_t halo_plan_bytes(const PartCounts& c) {
  return (c.send_rows + c.halo_rows) * kF + c.halo_rows * kI;
}

int64_t tape_floats_per_row(const LayerShape& l) {
  if (l.tape_floats >= 0) return l.tape_floats;
  // elementwise_per_row already has the aggregation's copy of its input (the [owned | halo]
  // buffer, the aggregate's output in one process).
  int64_t f = l.elementwise_per_row;
  for (const Gemm& g : l.gemms) f += g.n;
  return f;
}

int64_t tape_floats_per_row(const TemporalShape& s) {
  // Measured, not counted from the ops: the tape keeps only what some backward reads, and frees
  // an op's output nothing differentiates through by value (bench/bench_temporal_memory.sh, per
  // step and vertex, in floats per hidden unit; docs/temporal.md).
  switch (s.model) {
    case TModel::gcrn: return 10 * s.embedding;
    case TModel::tgcn: return 8 * s.embedding;
    case TModel::evolvegcn_o:
    case TModel::evolvegcn_h: return 3 * s.embedding;
  }
  return 10 * s.embedding;
}

MemoryBreakdown static_rank_memory(const StaticMemoryInput& in, const PartCounts& c) {
  MemoryBreakdown m;
  bool self_loops = false;
  int64_t params = 0, tensors = 0, tape = 0, widest = in.features;
  for (const LayerShape& l : in.layers) widest = std::max({widest, l.in, l.out, l.agg_width});
  // A streamed halo (--halo-memory; halo_piece_rows's rule) holds four pieces instead of the
  // halo rows beside the owned ones.
  int64_t pieces = 0;
  if (in.ranks > 1 && c.halo_rows > 0 && in.halo_memory != 0) {
    if (in.halo_memory > 0)
      pieces = std::max<int64_t>(256, in.halo_memory / (4 * widest * kF));
    else if (2 * c.halo_rows + c.send_rows > c.rows)
      pieces = std::max<int64_t>(256, c.rows / 4);
  }
  const int64_t halo_held = pieces > 0 ? 0 : c.halo_rows;
  for (const LayerShape& l : in.layers) {
    self_loops = self_loops || l.self_loops;
    for (const Gemm& g : l.gemms) params += g.k * g.n;
    params += l.biases;
    tensors += l.tensors;
    tape += c.rows * tape_floats_per_row(l) + (l.keeps_halo ? halo_held * l.agg_width : 0);
    if (l.heads > 0) tape += 3 * (c.edges + c.rows) * l.heads;  // scores, softmax, dropout
  }
  m.graph = local_graph_bytes(c, in.weighted, self_loops, !in.directed);
  m.halo = in.ranks > 1 ? halo_plan_bytes(c) : 0;
  m.features = c.rows * in.features * kF;
  m.labels = 2 * c.rows * kF;  // the label, and the row in its split's id list
  m.model = model_bytes(params, tensors);
  // The backward holds a gradient beside the tape: one of the widest, over owned and halo rows
  // (owned rows and the four pieces when streamed).
  m.activations = (tape + (c.rows + (pieces > 0 ? 4 * pieces : c.halo_rows)) * widest) * kF;
  return m;
}

MemoryBreakdown temporal_rank_memory(const TemporalMemoryInput& in, const PartCounts& c,
                                     int64_t vertices) {
  MemoryBreakdown m;
  // Its share of every entry count: of the largest snapshot's in-edges where known (a
  // partition balances every snapshot alike), else of the vertices.
  const double share = in.largest_entries > 0 && c.edges > 0
                           ? std::min(1.0, double(c.edges) / double(in.largest_entries))
                       : vertices > 0 ? double(c.rows) / double(vertices)
                                      : 1.0;
  auto part = [&](int64_t whole) { return int64_t(std::ceil(double(whole) * share)); };
  const int64_t window = std::max(1, in.bptt);
  const int64_t snapshots = std::max(1, in.snapshots);
  // Every snapshot's local graph (structure, then its adjacency and transpose on first use) is
  // kept for the whole run: all of them, not a window's. The stored base + differences they were
  // cut from are dropped once they are made (TemporalRun), so they are not at the peak.
  PartCounts snap = c;
  snap.edges = part(in.largest_entries);
  // The entries from halo columns, as the union graph's share of them.
  if (c.edges > 0)
    snap.cut_edges = int64_t(std::ceil(double(c.cut_edges) * double(snap.edges) / double(c.edges)));
  // A snapshot's view names its halo rows as a subset of one list of every snapshot's halo
  // vertices (IdSubset: a bit an entry of the list, or 4 bytes a row when fewer); the owned
  // rows' ids are one list for every snapshot (and the rank's list of its vertices beside it),
  // a whole graph's are its dense ids.
  const int64_t ids = (snap.rows + snap.halo_rows) * kI + snap.rows * kI;
  const int64_t halo_list = std::min(std::max<int64_t>(vertices - c.rows, 0),
                                     snapshots * snap.halo_rows);
  m.graph = snapshots * (local_graph_bytes(snap, in.weighted, true, !in.directed) - ids +
                         std::min(snap.halo_rows * kF, (halo_list + 63) / 64 * 8)) +
            (in.ranks > 1 ? 2 * c.rows * kI + halo_list * kI : 0);
  // The rank's share of the events: those whose source it owns, and on an undirected graph
  // also those into its vertices (an event has two ends there); src and dst (8 bytes), a bit
  // and, per owned source with events in a step, its first ordinal (SnapshotEvents::Ordinals).
  // All of them on one process (8 bytes).
  const double ends = in.directed ? 1.0 : 2.0;
  if (in.ranks > 1) {
    const double kept = double(in.events) * std::min(1.0, ends * share);
    const int64_t sourced = int64_t(std::ceil(double(in.events) * std::min(1.0, share)));
    m.graph += int64_t(std::ceil(kept * 8 + kept / 8)) +
               std::min(c.rows * snapshots, sourced) * kF;
  } else {
    m.graph += in.events * 8;
  }
  // What every rank keeps of every vertex: its id in the input (8 bytes) and its owner (4); one
  // process its row (4) instead. At 100M vertices that is 1.2 GB a rank, whatever P.
  m.graph += vertices * (kI + (in.ranks > 1 ? kF : 2 * kF));
  // The halo: a plan per snapshot; and the rows a rank fetches from their owners: training
  // scores a step's pairs in P rounds, one owner of second ends a round, each back-propagated
  // before the next (at most the owner's rows, or the round's share of the pairs); to evaluate,
  // the embedding of every vertex its candidates may name (each positive names 1 + neg_eval; a
  // rank whose candidates are more than a quarter of the vertices fetches every vertex's:
  // LinkPredictionTrainer::fetch_candidates), moved one peer a round (that peer's rows served
  // and got beside them).
  const int64_t step_positives = (in.events + snapshots - 1) / snapshots;
  m.halo = 0;
  if (in.ranks > 1) {
    const int64_t round_ends =
        std::min(c.rows, (part(in.step_pairs) + in.ranks - 1) / int64_t(in.ranks));
    const int64_t named = part(step_positives) * (1 + int64_t(std::max(0, in.neg_eval)));
    const int64_t eval_rows = named * 4 <= vertices ? named : vertices;
    // A snapshot's exchange keeps each peer's halo rows as one run and its send list as a bit
    // per owned row when that is smaller; the halo in-degrees go once the adjacency is built.
    const int64_t send = std::min(c.send_rows * kF, int64_t(in.ranks - 1) * ((c.rows + 63) / 64) * 8);
    m.halo = snapshots * send +
             std::max(round_ends, eval_rows + 2 * c.rows) * in.hidden * kF;
  }
  m.features = c.rows * in.features * kF;
  m.labels = 0;  // link tasks: the labels are the pairs
  m.model = model_bytes(in.shape.parameters, in.shape.tensors);
  // One window's tape over owned rows and the halo rows its aggregations receive.
  int64_t halo_floats = 0;
  for (const TOp& o : in.shape.graph)
    if (o.kind == TOp::aggregate) halo_floats += o.width;
  for (const TOp& o : in.shape.recurrent)
    if (o.kind == TOp::aggregate) halo_floats += o.width;
  m.activations =
      window * (c.rows * tape_floats_per_row(in.shape) + c.halo_rows * halo_floats) * kF;
  // Recurrent state: h (and an LSTM's c) per layer.
  // Recurrent state per owned row: GCRN's LSTM h and c, T-GCN's GRU h; EvolveGCN evolves
  // weights (in the model's shape), nothing per vertex.
  const int64_t per_row = in.shape.model == TModel::gcrn ? 2 : in.shape.model == TModel::tgcn ? 1 : 0;
  m.state = per_row * c.rows * in.hidden * kF;
  // Pairs of one step (its scores are back-propagated before the next step): both ends and a
  // label (int32, int32, float), and what the fused scorer keeps for its backward: its hidden
  // layer and the logit. (The ends' embeddings are read in place; under the vertex strategy a
  // rank fetches the remote ones, counted in the halo.) Each step of a window then keeps the
  // gradient of its embeddings for the window's backward.
  m.pairs = part(in.step_pairs) * (3 * kF + (in.shape.scorer_hidden + 1) * kF) +
            window * c.rows * in.hidden * kF;
  // Evaluating a step: its sources' negatives as 4-byte keys and the radix sort's buffer, in
  // chunks of twice the interval ends (2 a positive), from 2^18 to 2^20 keys (AUC and AP count
  // them among the positives: RankCounter::add); on every rank,
  // what placing its negatives needs of the step's positives (their scores, the sorted scores,
  // order and interval ends' keys of RankCounter, its counts per end: about 40 bytes each,
  // counted as 50); and its slice of the rest (the ends' values, the summed counts, the terms:
  // about 80 bytes a positive over the ranks).
  const int64_t negatives = part(step_positives) * int64_t(std::max(1, in.neg_eval));
  const int64_t chunk = std::clamp<int64_t>(4 * step_positives, int64_t(1) << 18, int64_t(1) << 20);
  m.pairs += std::min(negatives, chunk) * 8 + step_positives * 50 +
             part(step_positives) * 80;
  return m;
}

PartCounts balanced_share(int64_t vertices, int64_t edges, int ranks) {
  PartCounts c;
  const int64_t p = std::max(1, ranks);
  c.rows = (vertices + p - 1) / p;
  c.edges = (edges + p - 1) / p;
  c.halo_rows = p > 1 ? std::min(vertices - c.rows, c.edges) : 0;
  c.send_rows = c.halo_rows;
  c.peers = int(std::min<int64_t>(p - 1, c.halo_rows));
  return c;
}

int64_t parse_memory_size(const std::string& text, const std::string& option) {
  auto bad = [&] {
    return OptionError(option + " " + (text.empty() ? "''" : text) +
                       ": expected a size such as 80GB, 512MiB or 1.5TB (k, M, G, T: powers of "
                       "1000; Ki, Mi, Gi, Ti: of 1024)");
  };
  const char* s = text.c_str();
  char* end = nullptr;
  if (text.empty() || !(std::isdigit(static_cast<unsigned char>(s[0])) || s[0] == '.') ||
      text.find_first_of("xXpP") != std::string::npos)  // strtod would read hex
    throw bad();
  const double v = std::strtod(s, &end);
  std::string unit(end);
  while (!unit.empty() && unit.front() == ' ') unit.erase(0, 1);
  for (char& ch : unit) ch = char(std::tolower(static_cast<unsigned char>(ch)));
  if (!unit.empty() && unit.back() == 'b') unit.pop_back();
  double scale = 0;
  if (unit.empty()) scale = 1;
  const char* prefixes = "kmgt";
  for (int i = 0; i < 4; ++i) {
    if (unit == std::string(1, prefixes[i])) scale = std::pow(1000.0, i + 1);
    if (unit == std::string(1, prefixes[i]) + "i") scale = std::pow(1024.0, i + 1);
  }
  if (scale == 0 || !std::isfinite(v) || !(v > 0)) throw bad();
  const double bytes = v * scale;
  if (bytes < 1 || bytes > 9.2e18) throw bad();
  return int64_t(std::llround(bytes));
}

}  // namespace dgnn::perf
