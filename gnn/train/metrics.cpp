// Ranking and classification metrics, with the tie rules of gnn/train/metrics.hpp.
#include "dgnn/gnn/train/metrics.hpp"

#include "dgnn/gnn/train/metrics_detail.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <string>

#include "dgnn/common/error.hpp"
#include "dgnn/common/radix_sort.hpp"
#include "dgnn/kernels/kernels.hpp"

namespace dgnn {

using metrics_detail::check_tie;
using metrics_detail::from_order_key;
using metrics_detail::order_key;

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

// Ascending copies as doubles, where the tie intervals are computed.
std::vector<double> sorted_doubles(const std::vector<float>& scores,
                                   const std::vector<uint8_t>& labels,
                                   int want) {  // want: 1 positives, 0 negatives, -1 all
  std::vector<double> v;
  for (size_t i = 0; i < scores.size(); ++i)
    if (want < 0 || (labels[i] != 0) == (want == 1)) v.push_back(double(scores[i]));
  std::sort(v.begin(), v.end());
  return v;
}

// How many of the ascending `v` are < x, and how many are <= x.
double count_below(const std::vector<double>& v, double x) {
  return double(std::lower_bound(v.begin(), v.end(), x) - v.begin());
}
double count_at_most(const std::vector<double>& v, double x) {
  return double(std::upper_bound(v.begin(), v.end(), x) - v.begin());
}

}  // namespace

// Each metric looks up, for every positive, the candidates below, within and above its tie
// interval [s - d, s + d] in sorted copies of the scores: with d = 0 that is the block of equal
// scores. Counts are integers, exact in double.

double roc_auc(const std::vector<float>& scores, const std::vector<uint8_t>& labels, double tie) {
  check_sizes("roc_auc", "scores", scores, "labels", labels);
  check_scores("roc_auc", scores);
  check_tie("roc_auc", tie);
  const std::vector<double> neg = sorted_doubles(scores, labels, 0);
  // Each positive beats the negatives below its interval and splits those within it.
  double wins = 0, pos = 0;
  for (size_t i = 0; i < scores.size(); ++i) {
    if (!labels[i]) continue;
    const double s = scores[i], d = tie_radius(scores[i], tie);
    const double below = count_below(neg, s - d);
    wins += below + 0.5 * (count_at_most(neg, s + d) - below);
    pos += 1;
  }
  if (pos == 0 || neg.empty()) return kNaN;
  return wins / (pos * double(neg.size()));
}

double average_precision(const std::vector<float>& scores, const std::vector<uint8_t>& labels,
                         double tie) {
  check_sizes("average_precision", "scores", scores, "labels", labels);
  check_scores("average_precision", scores);
  check_tie("average_precision", tie);
  const std::vector<double> all = sorted_doubles(scores, labels, -1);
  const std::vector<double> pos = sorted_doubles(scores, labels, 1);
  if (pos.empty()) return kNaN;
  // A positive's share of recall comes at the precision of everything scoring >= its interval's
  // lower end (with d = 0: its tied block and all above, scikit-learn's step).
  double ap = 0;
  const double n = double(all.size()), p = double(pos.size());
  for (size_t i = 0; i < scores.size(); ++i) {
    if (!labels[i]) continue;
    const double lo = double(scores[i]) - tie_radius(scores[i], tie);
    ap += (p - count_below(pos, lo)) / (n - count_below(all, lo));
  }
  return ap / p;
}

double mean_reciprocal_rank(const std::vector<float>& scores, const std::vector<uint8_t>& labels,
                            const std::vector<int32_t>& group, double tie) {
  check_sizes("mean_reciprocal_rank", "scores", scores, "labels", labels);
  check_sizes("mean_reciprocal_rank", "scores", scores, "group ids", group);
  check_scores("mean_reciprocal_rank", scores);
  check_tie("mean_reciprocal_rank", tie);
  // One sort by (group, score) puts each group's candidates in a contiguous ascending run.
  std::vector<size_t> order(scores.size());
  std::iota(order.begin(), order.end(), size_t(0));
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return group[a] != group[b] ? group[a] < group[b] : scores[a] < scores[b];
  });
  double sum = 0;
  int64_t groups = 0;
  std::vector<double> run;
  for (size_t gb = 0, n = scores.size(); gb < n;) {
    size_t ge = gb + 1;
    while (ge < n && group[order[ge]] == group[order[gb]]) ++ge;
    run.clear();
    for (size_t k = gb; k < ge; ++k) run.push_back(double(scores[order[k]]));
    double rr = 0, positives = 0;
    for (size_t k = gb; k < ge; ++k) {
      const size_t i = order[k];
      if (!labels[i]) continue;
      const double s = scores[i], d = tie_radius(scores[i], tie);
      const double at_most = count_at_most(run, s + d);
      const double above = double(run.size()) - at_most;
      const double tied = at_most - count_below(run, s - d);  // itself included
      rr += 1.0 / (above + (tied + 1.0) / 2.0);
      positives += 1;
    }
    if (positives > 0) {
      sum += rr / positives;
      ++groups;
    }
    gb = ge;
  }
  return groups > 0 ? sum / double(groups) : kNaN;
}

namespace {

// `v` ascending, by a radix sort of its order keys; a and b: scratch.
void radix_sort(std::vector<float>& v, std::vector<uint32_t>& a, std::vector<uint32_t>& b) {
  a.resize(v.size());
  for (size_t i = 0; i < v.size(); ++i) a[i] = order_key(v[i]);
  radix_sort_bits(a, b, 0, 32);
  for (size_t i = 0; i < v.size(); ++i) v[i] = from_order_key(a[i]);
}

}  // namespace

double one_vs_many_reciprocal_rank(float pos, const float* neg, int64_t k, double tie) {
  DGNN_CHECK(!std::isnan(pos), Error, "one_vs_many_reciprocal_rank: the positive's score is NaN");
  const double s = pos, d = tie_radius(pos, tie);
  int64_t above = 0, at_or_above = 0;
  for (int64_t j = 0; j < k; ++j) {
    DGNN_CHECK(!std::isnan(neg[j]), Error,
               "one_vs_many_reciprocal_rank: negative " + std::to_string(j) + " is NaN");
    above += double(neg[j]) > s + d;
    at_or_above += double(neg[j]) >= s - d;
  }
  return 1.0 / (0.5 * double(above + at_or_above) + 1.0);
}

namespace {

// rank_metrics over n candidates read in place (a label is positive when non-zero).
template <class Label>
RankMetrics rank_metrics_of(const float* scores, const Label* labels, const int32_t* group,
                            size_t n, double tie, RankScratch& sc) {
  for (size_t i = 0; i < n; ++i)
    if (std::isnan(scores[i])) throw Error("rank_metrics: score " + std::to_string(i) + " is NaN");
  check_tie("rank_metrics", tie);
  std::vector<float>&neg = sc.neg, &pos = sc.pos;
  size_t n_pos = 0;
  for (size_t i = 0; i < n; ++i) n_pos += labels[i] != 0;
  neg.resize(n - n_pos);
  pos.resize(n_pos);
  for (size_t i = 0, a = 0, b = 0; i < n; ++i) (labels[i] ? pos[a++] : neg[b++]) = scores[i];
  radix_sort(neg, sc.keys, sc.keys2);
  radix_sort(pos, sc.keys, sc.keys2);
  RankMetrics m{kNaN, kNaN, kNaN};
  // AUC and AP: each positive's counts (negatives below its interval and at most its top,
  // positives below it) by one merge of the sorted lists, in score order (an interval's ends
  // rise with the score: s - tie max(1, |s|) and s + tie max(1, |s|) are monotone for tie <= 1),
  // then summed per positive in index order, as roc_auc and average_precision add them up.
  if (!pos.empty()) {
    std::vector<std::pair<float, uint32_t>>& order = sc.order;
    order.clear();
    for (size_t i = 0; i < n; ++i)
      if (labels[i]) order.emplace_back(scores[i], uint32_t(order.size()));
    std::sort(order.begin(), order.end(),
              [](const auto& x, const auto& y) { return x.first < y.first; });
    sc.counts.resize(3 * pos.size());
    double* c = sc.counts.data();
    size_t below = 0, at_most = 0, pos_below = 0;
    for (const auto& [score, j] : order) {
      const double s = score, d = tie_radius(score, tie), lo = s - d, hi = s + d;
      while (below < neg.size() && double(neg[below]) < lo) ++below;
      if (at_most < below) at_most = below;
      while (at_most < neg.size() && double(neg[at_most]) <= hi) ++at_most;
      while (pos_below < pos.size() && double(pos[pos_below]) < lo) ++pos_below;
      c[3 * j] = double(below), c[3 * j + 1] = double(at_most), c[3 * j + 2] = double(pos_below);
    }
    double wins = 0, ap = 0;
    const double all = double(n), p = double(pos.size());
    for (size_t j = 0; j < pos.size(); ++j) {
      const double bl = c[3 * j], am = c[3 * j + 1], pb = c[3 * j + 2];
      wins += bl + 0.5 * (am - bl);
      ap += (p - pb) / (all - (bl + pb));
    }
    if (!neg.empty()) m.auc = wins / (p * double(neg.size()));
    m.map = ap / p;
  }
  // MRR: candidates into their groups (a counting sort, stable). Within a group only the
  // positives are sorted (a group holds a source's few edges and their many negatives): each
  // candidate x is placed among the positives' interval ends by binary search (lo and hi rise
  // with the score), which counts, for every positive, the candidates at most its hi and those
  // below its lo: the counts mean_reciprocal_rank takes from its sorted run.
  int32_t top = -1;
  for (size_t i = 0; i < n; ++i) {
    const int32_t g = group[i];
    DGNN_CHECK(g >= 0, Error, "rank_metrics: group ids must be >= 0, got " + std::to_string(g));
    top = std::max(top, g);
  }
  std::vector<int64_t>& start = sc.start;
  start.assign(size_t(top) + 2, 0);
  for (size_t i = 0; i < n; ++i) ++start[size_t(group[i]) + 1];
  for (size_t g = 1; g < start.size(); ++g) start[g] += start[g - 1];
  std::vector<std::pair<float, uint8_t>>& by_group = sc.by_group;
  by_group.resize(n);
  {
    std::vector<int64_t>& at = sc.at;
    at.assign(start.begin(), start.end() - 1);
    for (size_t i = 0; i < n; ++i)
      by_group[size_t(at[size_t(group[i])]++)] = {scores[i], uint8_t(labels[i] != 0)};
  }
  const int64_t groups = top + 1;
  std::vector<double>& value = sc.value;
  value.assign(size_t(std::max<int64_t>(groups, 0)), kNaN);
#pragma omp parallel
  {
    std::vector<float> ps, ns;
    GroupRankScratch gs;
#pragma omp for schedule(dynamic, 64)
    for (int64_t g = 0; g < groups; ++g) {
      const auto* b = by_group.data() + start[size_t(g)];
      const auto* e = by_group.data() + start[size_t(g) + 1];
      ps.clear();
      ns.clear();
      for (const auto* c = b; c != e; ++c) (c->second ? ps : ns).push_back(c->first);
      if (ps.empty()) continue;
      value[size_t(g)] = group_reciprocal_rank(ps.data(), ps.size(), ns.data(), ns.size(), tie, gs);
    }
  }
  double sum = 0;
  int64_t counted = 0;
  for (double v : value)
    if (!std::isnan(v)) sum += v, ++counted;
  if (counted > 0) m.mrr = sum / double(counted);
  return m;
}

}  // namespace

double group_reciprocal_rank(float* pos, size_t k, const float* neg, size_t m, double tie,
                             GroupRankScratch& s) {
  if (k == 0) return kNaN;
  std::sort(pos, pos + k);
  s.lo.resize(k);
  s.hi.resize(k);
  for (size_t j = 0; j < k; ++j) {
    const double sc = pos[j], d = tie_radius(pos[j], tie);
    s.lo[j] = sc - d;
    s.hi[j] = sc + d;
  }
  // For positive j (ascending): the candidates (the positives too) at most hi[j], and those
  // below lo[j]. The counts mean_reciprocal_rank takes from its sorted run.
  if (k <= 8) {
    // A source's few positives: every candidate against each interval, without branches.
    s.at_most.resize(k);
    s.below.resize(k);
    for (size_t j = 0; j < k; ++j) {
      // As floats: x <= hi exactly when x is at most the largest float <= hi, and x < lo when
      // x is below the smallest float >= lo (16 lanes a compare where doubles took 8).
      float hi = float(s.hi[j]), lo = float(s.lo[j]);
      if (double(hi) > s.hi[j]) hi = std::nextafter(hi, -std::numeric_limits<float>::infinity());
      if (double(lo) < s.lo[j]) lo = std::nextafter(lo, std::numeric_limits<float>::infinity());
      int64_t am = 0, bl = 0;
      kernels::count_below_at_most(Device::cpu, pos, int64_t(k), lo, hi, &bl, &am);
      kernels::count_below_at_most(Device::cpu, neg, int64_t(m), lo, hi, &bl, &am);
      s.at_most[j] = am;
      s.below[j] = bl;
    }
  } else {
    // Each candidate placed among the interval ends by binary search (lo and hi rise with the
    // score): x <= hi[j] for j from the first hi >= x on, x < lo[j] from the first lo > x on;
    // counted per place (k + 1 of them), then summed up in place.
    s.at_most.assign(k + 1, 0);
    s.below.assign(k + 1, 0);
    auto place = [&](double x) {
      ++s.at_most[size_t(std::lower_bound(s.hi.begin(), s.hi.end(), x) - s.hi.begin())];
      ++s.below[size_t(std::upper_bound(s.lo.begin(), s.lo.end(), x) - s.lo.begin())];
    };
    for (size_t j = 0; j < k; ++j) place(pos[j]);
    for (size_t j = 0; j < m; ++j) place(neg[j]);
    for (size_t j = 1; j < k; ++j) s.at_most[j] += s.at_most[j - 1], s.below[j] += s.below[j - 1];
  }
  const double size = double(k + m);
  double rr = 0;
  for (size_t j = 0; j < k; ++j) {
    const double above = size - double(s.at_most[j]);
    const double tied = double(s.at_most[j]) - double(s.below[j]);  // itself included
    rr += 1.0 / (above + (tied + 1.0) / 2.0);
  }
  return rr / double(k);
}

RankMetrics rank_metrics(const std::vector<float>& scores, const std::vector<uint8_t>& labels,
                         const std::vector<int32_t>& group, double tie) {
  check_sizes("rank_metrics", "scores", scores, "labels", labels);
  check_sizes("rank_metrics", "scores", scores, "group ids", group);
  RankScratch scratch;
  return rank_metrics_of(scores.data(), labels.data(), group.data(), scores.size(), tie, scratch);
}

RankMetrics rank_metrics(const float* scores, const float* labels, const int32_t* group, size_t n,
                         double tie, RankScratch* scratch) {
  RankScratch own;
  return rank_metrics_of(scores, labels, group, n, tie, scratch ? *scratch : own);
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
