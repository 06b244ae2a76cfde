#pragma once
// Per-rank memory of distributed training in the sharded design (issue 32: no rank holds the
// whole graph), for `dgnn plan`: what one rank holds when it keeps only its owned vertices' share
// of the graph (their in-edges, as dgnn's local CSR and its normalised adjacencies), its halo
// plan, its feature and label rows, the replicated model with its optimiser state, and what the
// backward keeps: every op's output over its rows (the tape), and for temporal models the
// recurrent state and a BPTT window's tape, with its share of every snapshot stored as a base
// plus differences. Pure arithmetic over counts, so it is tested against the sizes of the
// structures dgnn builds. Bytes of the graph, features, labels and model are exact for the
// counts given; the tape follows the ops of perf_model / perf_temporal (one float per output
// element), a floor that allocator slack and transient buffers add to.
#include <cstdint>
#include <string>
#include <vector>

#include "dgnn/plan/perf_model.hpp"
#include "dgnn/plan/perf_temporal.hpp"

namespace dgnn::perf {

// One rank's share, in the counts of perf_model.hpp (PartCounts: rows, edges, halo_rows,
// send_rows).
struct MemoryBreakdown {
  int64_t graph = 0;     // local CSR, normalised adjacency and its transpose, vertex ids
  int64_t halo = 0;      // the halo plan (rows sent and received), the halo rows' degrees
  int64_t features = 0;  // the rank's feature rows (float32)
  int64_t labels = 0;    // labels and split ids of its rows
  int64_t model = 0;     // parameters, gradients, Adam's two moments, the best copy, the
                         // all-reduce buffer: replicated on every rank
  int64_t activations = 0;  // the tape of one step (static) or one BPTT window (temporal), halo
                            // receive buffers, the backward's widest gradients
  int64_t state = 0;        // temporal: recurrent state (h, c) of its rows
  int64_t pairs = 0;        // temporal link tasks: one window's pairs and their scorer's tape
  int64_t total() const {
    return graph + halo + features + labels + model + activations + state + pairs;
  }
};

// What every rank holds whatever its share: the parameters (`parameters` floats in `tensors`
// tensors) as value, gradient, Adam's m and v and the best-validation copy, and the gradient
// all-reduce's buffer (parameters, one flag per tensor, the loss).
int64_t model_bytes(int64_t parameters, int64_t tensors);

// The local graph of a rank with `c.rows` owned vertices, `c.edges` in-edges and `c.halo_rows`
// halo vertices: the structure (int64 offsets, int32 columns, float32 values when `weighted`),
// the normalised adjacency (one self loop per row when `self_loops`) and its transpose (none
// on one process of an `undirected` graph; a rank's part of one keeps the halo rows only), the
// int64 global ids of owned and halo rows and the input-file ids of owned rows.
int64_t local_graph_bytes(const PartCounts& c, bool weighted, bool self_loops, bool undirected);
// The halo plan: int32 local ids of the rows sent and received; the halo rows' int64 degrees.
int64_t halo_plan_bytes(const PartCounts& c);

// Static full-graph training of `layers` on one rank's share.
struct StaticMemoryInput {
  std::vector<LayerShape> layers;
  int64_t features = 0;
  bool weighted = false, directed = false;
  int ranks = 1;
  // `dgnn train --halo-memory` in bytes: < 0 auto, 0 whole (comm/halo.hpp, halo_piece_rows).
  int64_t halo_memory = -1;
};
MemoryBreakdown static_rank_memory(const StaticMemoryInput& in, const PartCounts& c);

// Temporal training under the vertex strategy: one rank's share of every snapshot.
struct TemporalMemoryInput {
  TemporalShape shape;
  int64_t features = 0;
  int64_t hidden = 0;
  int bptt = 1;       // steps per BPTT window (the tape holds one window)
  int snapshots = 1;  // a halo plan each
  bool weighted = false, directed = false;
  int ranks = 1;
  // Of the whole graph: the largest snapshot's entries; the most pairs a training step scores.
  // (The snapshots' base + differences are dropped once the views are made: not in the peak.)
  int64_t largest_entries = 0, step_pairs = 0;
  // Every event of every snapshot (their shares are held), and the sampled non-edges per
  // positive an evaluation step scores (--neg-eval).
  int64_t events = 0;
  int neg_eval = 100;
};
// `c`: the rank's counts in the largest snapshot: rows, in-edges, halo rows (an upper bound for
// the other snapshots) and rows sent. Its share of every entry count above is c.edges /
// largest_entries (a partition that balances every snapshot), or rows / vertices when c.edges is 0.
MemoryBreakdown temporal_rank_memory(const TemporalMemoryInput& in, const PartCounts& c,
                                     int64_t vertices);

// Floats per owned row one step keeps for the backward: of a static layer, its ops' outputs (its
// element-wise ops, the aggregation's copy among them, and each GEMM's output); of a temporal
// model, what bench/bench_temporal_memory.sh measured per hidden unit (GCRN 10, T-GCN 8,
// EvolveGCN 3: the tape frees what no backward reads).
int64_t tape_floats_per_row(const LayerShape& l);
int64_t tape_floats_per_row(const TemporalShape& s);

// The counts of a rank when only the graph's size is known (no partition): rows and edges are
// n / P and m / P rounded up; the halo is its upper bound, min(n - rows, edges) distinct remote
// in-neighbours (every in-edge from another rank), and as many rows sent.
PartCounts balanced_share(int64_t vertices, int64_t edges, int ranks);

// "80GB", "512MiB", "1.5 TB", "1000000000": bytes (k/M/G/T are powers of 1000, Ki/Mi/Gi/Ti of
// 1024, a trailing B optional, case-insensitive). OptionError naming `option` for anything else,
// zero or negative sizes.
int64_t parse_memory_size(const std::string& text, const std::string& option);

}  // namespace dgnn::perf
