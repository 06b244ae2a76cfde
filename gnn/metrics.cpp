// Ranking and classification metrics. Each ranking metric sorts once and walks blocks of tied
// scores, which is where the tie rules of gnn/metrics.hpp are applied.
#include "dgnn/gnn/metrics.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <string>

#include "dgnn/common/error.hpp"

namespace dgnn {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

template <typename A, typename B>
void check_sizes(const char* fn, const char* na, const std::vector<A>& a, const char* nb,
                 const std::vector<B>& b) {
  if (a.size() != b.size())
    throw ShapeError(std::string(fn) + ": " + std::to_string(a.size()) + " " + na + " but " +
                     std::to_string(b.size()) + " " + nb);
}

// NaN would break the sort's ordering and every tie rule, so it is an input error.
void check_scores(const char* fn, const std::vector<float>& scores) {
  for (size_t i = 0; i < scores.size(); ++i)
    if (std::isnan(scores[i]))
      throw Error(std::string(fn) + ": score " + std::to_string(i) + " is NaN");
}

// Indices ordered by descending score (stable, so equal scores keep input order).
std::vector<size_t> by_score_desc(const std::vector<float>& scores) {
  std::vector<size_t> order(scores.size());
  std::iota(order.begin(), order.end(), size_t(0));
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return scores[a] > scores[b]; });
  return order;
}

// End of the block of scores equal to scores[order[begin]], within [begin, end).
size_t tie_end(const std::vector<float>& scores, const std::vector<size_t>& order, size_t begin,
               size_t end) {
  size_t e = begin + 1;
  while (e < end && scores[order[e]] == scores[order[begin]]) ++e;
  return e;
}

}  // namespace

double roc_auc(const std::vector<float>& scores, const std::vector<uint8_t>& labels) {
  check_sizes("roc_auc", "scores", scores, "labels", labels);
  check_scores("roc_auc", scores);
  double total_neg = 0;
  for (uint8_t l : labels) total_neg += l == 0;
  const std::vector<size_t> order = by_score_desc(scores);
  // Walking down from the top score: each positive beats every negative below its tied block
  // and splits the pairs within the block half and half. Counts are exact in double.
  double wins = 0, pos = 0, neg_seen = 0;
  for (size_t b = 0, n = scores.size(); b < n;) {
    const size_t e = tie_end(scores, order, b, n);
    double p = 0;
    for (size_t k = b; k < e; ++k) p += labels[order[k]] != 0;
    const double q = double(e - b) - p;
    neg_seen += q;
    wins += p * (total_neg - neg_seen) + 0.5 * p * q;
    pos += p;
    b = e;
  }
  if (pos == 0 || total_neg == 0) return kNaN;
  return wins / (pos * total_neg);
}

double average_precision(const std::vector<float>& scores, const std::vector<uint8_t>& labels) {
  check_sizes("average_precision", "scores", scores, "labels", labels);
  check_scores("average_precision", scores);
  double total_pos = 0;
  for (uint8_t l : labels) total_pos += l != 0;
  if (total_pos == 0) return kNaN;
  const std::vector<size_t> order = by_score_desc(scores);
  double ap = 0, tp = 0, fp = 0;
  for (size_t b = 0, n = scores.size(); b < n;) {
    const size_t e = tie_end(scores, order, b, n);
    double p = 0;
    for (size_t k = b; k < e; ++k) p += labels[order[k]] != 0;
    tp += p;
    fp += double(e - b) - p;
    // Recall rises by p / P at this threshold, at the precision of everything above it.
    ap += (p / total_pos) * (tp / (tp + fp));
    b = e;
  }
  return ap;
}

double mean_reciprocal_rank(const std::vector<float>& scores, const std::vector<uint8_t>& labels,
                            const std::vector<int32_t>& group) {
  check_sizes("mean_reciprocal_rank", "scores", scores, "labels", labels);
  check_sizes("mean_reciprocal_rank", "scores", scores, "group ids", group);
  check_scores("mean_reciprocal_rank", scores);
  // One sort by (group, descending score) puts each group's ranking in a contiguous run.
  std::vector<size_t> order = by_score_desc(scores);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return group[a] < group[b]; });
  double sum = 0;
  int64_t groups = 0;
  for (size_t gb = 0, n = scores.size(); gb < n;) {
    size_t ge = gb + 1;
    while (ge < n && group[order[ge]] == group[order[gb]]) ++ge;
    double rr = 0, positives = 0;
    for (size_t b = gb; b < ge;) {
      const size_t e = tie_end(scores, order, b, ge);
      const double rank = double(b - gb) + double(e - b + 1) / 2.0;
      for (size_t k = b; k < e; ++k)
        if (labels[order[k]]) {
          rr += 1.0 / rank;
          positives += 1;
        }
      b = e;
    }
    if (positives > 0) {
      sum += rr / positives;
      ++groups;
    }
    gb = ge;
  }
  return groups > 0 ? sum / double(groups) : kNaN;
}

F1 binary_f1(const std::vector<uint8_t>& pred, const std::vector<uint8_t>& labels) {
  check_sizes("binary_f1", "predictions", pred, "labels", labels);
  double tp = 0, fp = 0, fn = 0;
  for (size_t i = 0; i < pred.size(); ++i) {
    const bool p = pred[i] != 0, l = labels[i] != 0;
    tp += p && l;
    fp += p && !l;
    fn += !p && l;
  }
  F1 r;
  r.precision = tp + fp > 0 ? tp / (tp + fp) : 0.0;
  r.recall = tp + fn > 0 ? tp / (tp + fn) : 0.0;
  r.f1 = r.precision + r.recall > 0 ? 2 * r.precision * r.recall / (r.precision + r.recall) : 0.0;
  return r;
}

double macro_f1(const std::vector<int32_t>& pred, const std::vector<int32_t>& labels) {
  check_sizes("macro_f1", "predictions", pred, "labels", labels);
  std::vector<int32_t> classes(pred);
  classes.insert(classes.end(), labels.begin(), labels.end());
  std::sort(classes.begin(), classes.end());
  classes.erase(std::unique(classes.begin(), classes.end()), classes.end());
  if (classes.empty()) return kNaN;
  auto slot = [&](int32_t c) {
    return size_t(std::lower_bound(classes.begin(), classes.end(), c) - classes.begin());
  };
  // Per class: true positives, predicted count, actual count.
  std::vector<double> tp(classes.size()), predicted(classes.size()), actual(classes.size());
  for (size_t i = 0; i < pred.size(); ++i) {
    const size_t p = slot(pred[i]), l = slot(labels[i]);
    predicted[p] += 1;
    actual[l] += 1;
    if (p == l) tp[p] += 1;
  }
  double sum = 0;
  for (size_t c = 0; c < classes.size(); ++c)
    // F1 = 2 TP / (predicted + actual): the harmonic mean of precision and recall, and 0 when
    // TP is 0 (the zero-division convention of binary_f1).
    sum += 2 * tp[c] / (predicted[c] + actual[c]);
  return sum / double(classes.size());
}

}  // namespace dgnn
