#pragma once
// Evaluation metrics for link prediction and classification, computed on the host from scores
// and labels (no tape): ROC-AUC, average precision, mean reciprocal rank, F1.
//
// Labels are 0 (negative) or non-zero (positive). Scores must not be NaN (Error); lengths must
// agree (ShapeError). A metric that is undefined for its input (AUC with one class present, AP
// or MRR with no positive) is NaN rather than an exception, so that one empty evaluation batch
// shows up in the log instead of stopping a training run.
#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

namespace dgnn {

class Communicator;

// Ties. A candidate ties with a positive scoring s when its score is within
// tie * max(1, |s|) of s (an interval around each positive; tie = 0: equal scores only). The
// temporal trainer ranks its logits with kLogitTie: float32 rounding moves a logit by a few ulps
// when the rank count, the thread count or the device sums in another order, and a model whose
// scores bunch together (early epochs, vertices with no history, one-hot degree features) has
// thousands of candidates exactly tied in one run and an ulp apart in another, which moved AUC by
// up to 0.016 between 1 and 2 ranks on bitcoin-alpha. Counting logits that agree to about 6e-5
// as tied makes the metrics the same on any rank count; a difference that small is no
// prediction.
constexpr double kLogitTie = 1.0 / 16384;
// The half-width of a positive's tie interval: tie * max(1, |s|); 0 for an infinite score
// (which ties only with an equal one).
inline double tie_radius(float s, double tie) {
  const double a = std::fabs(double(s));
  if (tie == 0 || !std::isfinite(a)) return 0;
  return tie * (a > 1.0 ? a : 1.0);
}

// Area under the ROC curve: the probability that a random positive scores above a random
// negative, tied pairs counting one half (the Mann-Whitney U statistic from mid-ranks).
// O(n log n).
double roc_auc(const std::vector<float>& scores, const std::vector<uint8_t>& labels,
               double tie = 0);

// Average precision as scikit-learn defines it: sum over thresholds t (the distinct scores,
// highest first) of (R_t - R_{t-1}) P_t, where P_t and R_t are the precision and recall of
// predicting "positive" for every score >= t. Tied scores therefore form one threshold: a
// positive tied with negatives gets the precision of the whole tied block. With a tolerance,
// each positive (score s, interval [s - d, s + d]) gets the precision of everything >= s - d.
double average_precision(const std::vector<float>& scores, const std::vector<uint8_t>& labels,
                         double tie = 0);

// Mean reciprocal rank as EvolveGCN computes it (Pareja et al., AAAI'20, logger.get_MRR): the
// candidates are grouped (group[i]: e.g. the source vertex of pair i); within a group each
// positive's rank is its position among all of that group's candidates by descending score
// (other positives included, nothing filtered); a group's value is the mean of 1/rank over its
// positives; the result is the mean over groups that hold at least one positive. Two
// deliberate differences: EvolveGCN scores a dense row of every vertex, so vertices that are
// not candidates (score 0) are ranked too, while here only listed candidates are; and ties,
// which its argsort breaks arbitrarily, take the mid-rank (a positive tied with t - 1 others
// after k higher candidates has rank k + (t + 1) / 2), so constant scores earn no credit.
double mean_reciprocal_rank(const std::vector<float>& scores, const std::vector<uint8_t>& labels,
                            const std::vector<int32_t>& group, double tie = 0);

// The reciprocal rank of one positive scoring `pos` against its `k` negatives, as the Temporal
// Graph Benchmark counts it (tgb.linkproppred.Evaluator's MRR): the mean of the optimistic rank
// (1 + the negatives above the positive) and the pessimistic one (1 + those at or above it), with
// tie intervals: above means above pos + tie_radius, at or above means >= pos - tie_radius.
double one_vs_many_reciprocal_rank(float pos, const float* neg, int64_t k, double tie = 0);

// The three ranking metrics above at once, each equal to its function's value (the same counts,
// summed in the same order: the same bits), at the cost of one linear-time sort instead of three
// comparison sorts: negatives by a radix sort of their bits, candidates into their groups by a
// counting sort, each group's scores sorted on its own, the groups in parallel. What link
// prediction's evaluation computes for every step (millions of pairs). group[i] >= 0.
struct RankMetrics {
  double auc, map, mrr;
};
RankMetrics rank_metrics(const std::vector<float>& scores, const std::vector<uint8_t>& labels,
                         const std::vector<int32_t>& group, double tie = 0);
// Buffers rank_metrics may keep between calls (an evaluation's steps of millions of candidates
// each reuse them instead of clearing fresh pages every step).
struct RankScratch {
  std::vector<float> neg, pos;
  std::vector<uint32_t> keys, keys2;
  std::vector<std::pair<float, uint32_t>> order;
  std::vector<double> counts, value;
  std::vector<int64_t> start, at;
  std::vector<std::pair<float, uint8_t>> by_group;
};
// The same over n candidates read in place (labels: non-zero is positive), no copies.
RankMetrics rank_metrics(const float* scores, const float* labels, const int32_t* group, size_t n,
                         double tie = 0, RankScratch* scratch = nullptr);

// One group's value of mean_reciprocal_rank: the mean over the positives pos[0, k) of 1 / rank
// among the group's candidates, which are those positives and neg[0, m); NaN when k is 0. The
// counts mean_reciprocal_rank takes, summed in its order. Sorts pos in place.
struct GroupRankScratch {
  std::vector<double> lo, hi;
  std::vector<int64_t> at_most, below;
};
double group_reciprocal_rank(float* pos, size_t k, const float* neg, size_t m, double tie,
                             GroupRankScratch& scratch);

// ROC-AUC and average precision of a candidate list too long to hold as (score, label, group)
// rows (link evaluation: millions of sampled negatives a step), counted as it streams by.
// Made from the positives' scores, in the order their terms are to be summed; every other
// candidate is then added once, from any thread, each thread through a Part of its own.
// finish(tally(parts)) gives {roc_auc, average_precision} of the positives and the parts as one
// list, as rank_metrics computes them: the same counts, summed over the positives in order. A
// part buffers its candidates' 4-byte order keys (twice as many as there are ends, from kChunk
// to 4 kChunk), then radix-sorts them and merges them with the positives' tie-interval ends
// into the counter's one count per end and gap, which every part shares (atomic adds, one a run
// of equal places): its memory is that buffer, and the counter's 8 bytes an end (about 2 a
// positive), whatever the number of candidates and threads. NaN where undefined (no positive;
// AUC with no negative).
//
// Over the ranks of a job (each scoring its own candidates against every positive), a counter
// made with (slices, slice) = (ranks, rank) keeps the ends' values of its slice of them only,
// and finish(parts, comm) gives every rank the same two numbers, the same bits as one process:
// each slice's counts are summed onto its rank, which places the positives whose interval ends
// it holds, and the positives' terms are summed in order along the ranks. What every rank still
// holds whole is what placing its candidates needs: about 4 + 4 + 10 bytes a positive (its sorted
// score, its index, its ends' keys) and the counts' 8 bytes an end. It held about 130 bytes a
// positive on every rank before (the ends as doubles, the whole tally twice, the terms), and
// the counts once per thread.
class RankCounter {
 public:
  RankCounter(const float* pos, size_t p, double tie, int slices = 1,
              int slice = 0);  // Error when a positive is NaN
  RankCounter(const RankCounter&) = delete;
  RankCounter& operator=(const RankCounter&) = delete;
  static constexpr size_t kChunk = size_t(1) << 18;
  struct Part {
    std::vector<uint32_t> keys, tmp, hist;  // buffered keys; the radix sort's scratch and counts
    const RankCounter* counter = nullptr;   // whose counts it adds to; null until used
    void clear() { keys.clear(), hist.clear(), counter = nullptr; }
  };
  // False when a score is NaN (nothing of x is counted then). At most 2^32 - 1 candidates in all.
  bool add(const float* x, size_t n, Part& part) const;
  // Where the candidates fall among the ends: at[2j], strictly between ends j - 1 and j
  // (at[2m]: above the last end); at[2j + 1], at end j. Flushes the parts (each on a thread of
  // its own) and clears them, returns the counts of every candidate flushed so far and starts
  // them again from zero. Tallies add up: the sum of the tallies of every rank of a job (or of
  // one counter, tallied twice) is the tally of all their candidates. finish() adds the
  // positives. One slice only.
  std::vector<int64_t> tally(std::vector<Part>& parts) const;
  std::pair<double, double> finish(std::vector<Part>& parts) const {
    return finish(tally(parts));
  }
  std::pair<double, double> finish(std::vector<int64_t> tally) const;  // move it in; one slice
  // {roc_auc, average_precision} of every rank's parts and the positives, on every rank of
  // `comm` (whose size and rank are the counter's slices and slice). Clears the parts; the
  // counter is spent (its counts are freed). Collective.
  std::pair<double, double> finish(std::vector<Part>& parts, Communicator& comm) const;

 private:
  void flush(Part& part) const;  // sorts the buffered keys and adds them to the counts
  double tie_ = 0;
  int slices_ = 1, slice_ = 0;
  size_t m_ = 0;           // the distinct tie-interval ends, over every slice
  size_t j0_ = 0, j1_ = 0;  // this slice's: ends [j0_, j1_)
  double prev_end_ = 0;    // end j0_ - 1 (when j0_ > 0)
  std::vector<double> ends_;       // ends [j0_, j1_), ascending
  std::vector<float> pos_sorted_;  // the positives' scores, ascending
  std::vector<uint32_t> order_;    // the positives by ascending score
  // Per end (all of them): the order key of the largest float at or below it, and whether the
  // end is that float.
  std::vector<uint32_t> floor_key_;
  std::vector<uint8_t> exact_;
  // The counts (see tally()), 2m + 1, shared by the parts: atomic adds. Candidates added.
  mutable std::vector<uint32_t> at_;
  mutable uint64_t added_ = 0;
};

// Precision, recall and F1 of the positive class. A ratio with a zero denominator is 0, as in
// scikit-learn's default (zero_division), so a model that predicts no positives scores 0.
struct F1 {
  double precision, recall, f1;
};
F1 binary_f1(const std::vector<uint8_t>& pred, const std::vector<uint8_t>& labels);

// Unweighted mean of the per-class F1 over the classes present in pred or labels (scikit-learn's
// average="macro" with its default label set).
double macro_f1(const std::vector<int32_t>& pred, const std::vector<int32_t>& labels);

}  // namespace dgnn
