#pragma once
// Evaluation metrics for link prediction and classification, computed on the host from scores
// and labels (no tape): ROC-AUC, average precision, mean reciprocal rank, F1.
//
// Labels are 0 (negative) or non-zero (positive). Scores must not be NaN (Error); lengths must
// agree (ShapeError). A metric that is undefined for its input (AUC with one class present, AP
// or MRR with no positive) is NaN rather than an exception, so that one empty evaluation batch
// shows up in the log instead of stopping a training run.
#include <cstdint>
#include <vector>

namespace dgnn {

// Area under the ROC curve: the probability that a random positive scores above a random
// negative, tied pairs counting one half (the Mann-Whitney U statistic from mid-ranks).
// O(n log n).
double roc_auc(const std::vector<float>& scores, const std::vector<uint8_t>& labels);

// Average precision as scikit-learn defines it: sum over thresholds t (the distinct scores,
// highest first) of (R_t - R_{t-1}) P_t, where P_t and R_t are the precision and recall of
// predicting "positive" for every score >= t. Tied scores therefore form one threshold: a
// positive tied with negatives gets the precision of the whole tied block.
double average_precision(const std::vector<float>& scores, const std::vector<uint8_t>& labels);

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
                            const std::vector<int32_t>& group);

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
