#pragma once
// Link prediction scored against every vertex pair: EvolveGCN's validation and test protocol
// (Pareja et al., AAAI 2020; IBM/EvolveGCN's get_all_non_existing_edges and logger). For one
// step every ordered pair (u, v) of the n vertices is a candidate, self-pairs included (the
// IBM code's meshgrid holds the diagonal); the step's target edges are the positives, every
// other pair a negative. Per step:
//   AP  = average_precision over the n^2 candidates (scikit-learn's definition, ties as one
//         threshold), AUC = roc_auc over them (ties count one half);
//   MRR = over source rows u that hold a positive, the mean over u's positives of 1 / rank
//         among u's n candidates (mid-rank ties, as mean_reciprocal_rank), averaged over rows.
// These equal the functions of gnn/train/metrics.hpp applied to the n^2 materialised scores
// (grouped by source for MRR), without ever holding them: rows are scored one at a time, in
// parallel. AP and AUC need, for each positive, only how many candidates score below, within and
// above its tie interval (gnn/train/metrics.hpp; with tie = 0, the candidates equal to its score).
// A first pass scores the rows that hold positives, whose scores give the intervals (and gives MRR,
// which is per row); a second pass scores every row and counts its candidates into the gaps between
// the intervals' ends. Memory: O(positives + threads x n), plus the first pass's rows, kept for the
// second when they fit (128 MB by default).
#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include "dgnn/comm/communicator.hpp"

namespace dgnn {

// The positives of one step by source vertex: the targets of u are
// dst[offsets[u] .. offsets[u + 1]), sorted and distinct.
struct PairTargets {
  int64_t n = 0;  // vertices: the candidates of a row are 0 .. n-1
  std::vector<int64_t> offsets;
  std::vector<int32_t> dst;
  // From (u, v) pairs in any order, repeats allowed; ShapeError for an id outside [0, n).
  static PairTargets from_pairs(int64_t n, std::vector<std::pair<int32_t, int32_t>> pairs);
  int64_t count(int32_t u) const { return offsets[size_t(u) + 1] - offsets[size_t(u)]; }
  int64_t size() const { return int64_t(dst.size()); }
};

// Scores row u: out[v] for every candidate v < n. Called concurrently from OpenMP threads, each
// with its own scratch vector (to resize as it needs). The same row must always get the same
// scores (the two passes score rows independently).
using RowScoreFn = std::function<void(int32_t u, float* out, std::vector<float>& scratch)>;

struct AllPairsMetrics {
  double auc = 0, map = 0, mrr = 0;  // NaN where undefined (no positive, or no negative)
  int64_t positives = 0, candidates = 0;
};

// The metrics of one step over all n^2 candidates. Each rank scores the source rows `rows`
// (global ids); over the ranks of `comm` the rows must cover 0 .. n-1 once each (one process:
// every row, with a SelfCommunicator). Collective; every rank returns the same numbers. Error
// (on every rank) when a score is NaN. `tie`: the tie tolerance of gnn/train/metrics.hpp. The first
// pass's rows are kept for the second while they take at most `keep_bytes`, else scored again.
AllPairsMetrics all_pairs_metrics(const PairTargets& targets, const std::vector<int32_t>& rows,
                                  const RowScoreFn& score, Communicator& comm, double tie = 0,
                                  int64_t keep_bytes = int64_t(128) << 20);

}  // namespace dgnn
