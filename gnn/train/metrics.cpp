// Ranking and classification metrics, with the tie rules of gnn/train/metrics.hpp.
#include "dgnn/gnn/train/metrics.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <string>

#include "dgnn/common/error.hpp"
#include "dgnn/comm/collectives.hpp"
#include "dgnn/comm/communicator.hpp"
#include "dgnn/common/radix_sort.hpp"
#include "dgnn/kernels/kernels.hpp"

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

void check_tie(const char* fn, double tie) {
  if (!(tie >= 0) || tie > 1)
    throw Error(std::string(fn) + ": the tie tolerance must be in [0, 1], got " +
                std::to_string(tie));
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

// Floats as unsigned keys in the same order (-0 just below +0; no NaN here).
inline uint32_t order_key(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u & 0x80000000u ? ~u : u | 0x80000000u;
}
inline float from_order_key(uint32_t k) {
  const uint32_t u = k & 0x80000000u ? k & 0x7fffffffu : ~k;
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

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

RankCounter::RankCounter(const float* pos, size_t p, double tie, int slices, int slice) {
  check_tie("RankCounter", tie);
  DGNN_CHECK(p <= std::numeric_limits<uint32_t>::max(), Error,
             "RankCounter: more than 2^32 - 1 positives");
  DGNN_CHECK(slices >= 1 && slice >= 0 && slice < slices, Error,
             "RankCounter: slice " + std::to_string(slice) + " of " + std::to_string(slices));
  tie_ = tie;
  slices_ = slices;
  slice_ = slice;
  order_.resize(p);
  for (size_t i = 0; i < p; ++i)
    DGNN_CHECK(!std::isnan(pos[i]), Error,
               "RankCounter: positive " + std::to_string(i) + " scores NaN");
  {
    // By ascending score, equal scores (-0 and +0 too) by index: (key, index) pairs radix-sorted
    // by key, stably, from index order.
    std::vector<uint64_t> by(p), tmp;
    for (size_t i = 0; i < p; ++i) by[i] = uint64_t(order_key(pos[i] + 0.f)) << 32 | i;
    radix_sort_bits(by, tmp, 32, 64);  // by key, stably
    for (size_t r = 0; r < p; ++r) order_[r] = uint32_t(by[r]);
  }
  pos_sorted_.resize(p);
  for (size_t r = 0; r < p; ++r) pos_sorted_[r] = pos[order_[r]];
  std::vector<double> ends;
  {
    std::vector<double> lo(p), hi(p);
    for (size_t r = 0; r < p; ++r) {
      const double x = pos_sorted_[r], d = tie_radius(pos_sorted_[r], tie);
      lo[r] = x - d;
      hi[r] = x + d;
    }
    // The ends rise with the score (tie <= 1), so in score order both lists are sorted already:
    // one merge. (Checked: a list rounding put out of order is sorted first.)
    if (!std::is_sorted(lo.begin(), lo.end())) std::sort(lo.begin(), lo.end());
    if (!std::is_sorted(hi.begin(), hi.end())) std::sort(hi.begin(), hi.end());
    ends.resize(2 * p);
    std::merge(lo.begin(), lo.end(), hi.begin(), hi.end(), ends.begin());
  }
  for (double& e : ends) e += 0.0;  // -0 as +0 (equal; unique() then keeps one)
  ends.erase(std::unique(ends.begin(), ends.end()), ends.end());
  // A candidate x and an end e compare as their keys do: e < x exactly when the largest float
  // at or below e is below x, and x == e only when e is a float. (add() keys -0 as +0, and the
  // ends are never -0, so the keys' order is the values' order.)
  const size_t m = ends.size();
  m_ = m;
  floor_key_.resize(m);
  exact_.resize(m);
  for (size_t j = 0; j < m; ++j) {
    float f = float(ends[j]);
    if (double(f) > ends[j]) f = std::nextafter(f, -std::numeric_limits<float>::infinity());
    floor_key_[j] = order_key(f + 0.f);
    exact_[j] = double(f) == ends[j];
  }
  // This slice's ends' values (finish() reads them; placing a candidate needs only the keys).
  j0_ = size_t(uint64_t(slice) * m / uint64_t(slices));
  j1_ = size_t(uint64_t(slice + 1) * m / uint64_t(slices));
  prev_end_ = j0_ > 0 ? ends[j0_ - 1] : 0.0;
  if (slices == 1) {
    ends_ = std::move(ends);
  } else {
    ends_.assign(ends.begin() + std::ptrdiff_t(j0_), ends.begin() + std::ptrdiff_t(j1_));
  }
  at_.assign(2 * m + 1, 0);
}

bool RankCounter::add(const float* x, size_t n, Part& part) const {
  for (size_t i = 0; i < n; ++i)
    if (std::isnan(x[i])) return false;
  const size_t m = m_;
  DGNN_CHECK(part.counter == nullptr || part.counter == this, ShapeError,
             "RankCounter::add: a part of another counter (clear() it first)");
  DGNN_CHECK(at_.size() == 2 * m + 1, Error, "RankCounter::add: the counter is spent (finish())");
  part.counter = this;
  const uint64_t before = std::atomic_ref<uint64_t>(added_).fetch_add(n, std::memory_order_relaxed);
  DGNN_CHECK(before + n <= std::numeric_limits<uint32_t>::max(), Error,
             "RankCounter::add: more than 2^32 - 1 candidates for one counter");
  // Each flush walks the ends it passes: a chunk of twice their count keeps that walk below
  // a step a key, up to 4 kChunk keys (16 MB with the sort's buffer); past that the walk skips
  // ahead (flush()).
  const size_t chunk = std::clamp(2 * m, kChunk, 4 * kChunk);
  static_assert(radix_passes(0, 32) == 4);
  for (size_t done = 0; done < n;) {
    const size_t len = std::min(n - done, chunk - std::min(chunk, part.keys.size()));
    const size_t at = part.keys.size();
    part.keys.resize(at + len);
    part.hist.resize(4 * (size_t(kRadixMask) + 1), 0);
    uint32_t* h = part.hist.data();
    for (size_t i = 0; i < len; ++i) {
      const uint32_t k = order_key(x[done + i] + 0.f);  // -0 as +0: equal values, one key
      part.keys[at + i] = k;
      ++h[k & kRadixMask];
      ++h[(kRadixMask + 1) + ((k >> kRadixBits) & kRadixMask)];
      ++h[2 * (kRadixMask + 1) + ((k >> (2 * kRadixBits)) & kRadixMask)];
      ++h[3 * (kRadixMask + 1) + (k >> (3 * kRadixBits))];
    }
    done += len;
    if (part.keys.size() >= chunk) flush(part);
  }
  return true;
}

void RankCounter::flush(Part& part) const {
  if (part.keys.empty()) return;
  radix_sort_bits(part.keys, part.tmp, 0, 32, part.hist.data());
  const size_t m = m_;
  const uint32_t* fk = floor_key_.data();
  // Sorted keys fall on few places in runs: one atomic add a run into the shared counts.
  size_t slot = 0;
  uint32_t run = 0;
  auto put = [this](size_t at, uint32_t count) {
    if (count) std::atomic_ref<uint32_t>(at_[at]).fetch_add(count, std::memory_order_relaxed);
  };
  size_t j = 0;  // the first end at or above the current candidate
  for (uint32_t k : part.keys) {
    if (j < m && fk[j] < k) {
      // Ahead by doubling steps, then a binary search between the last two: a chunk's keys
      // may be fewer than the ends.
      size_t below = j, step = 1;  // fk[below] < k
      while (below + step < m && fk[below + step] < k) below += step, step *= 2;
      j = size_t(std::lower_bound(fk + below + 1, fk + std::min(m, below + step), k) - fk);
    }
    const size_t s = 2 * j + size_t(j < m && exact_[j] && fk[j] == k);
    if (s != slot) put(slot, run), slot = s, run = 0;
    ++run;
  }
  put(slot, run);
  part.keys.clear();
  part.hist.clear();
}

std::vector<int64_t> RankCounter::tally(std::vector<Part>& parts) const {
  DGNN_CHECK(slices_ == 1, Error, "RankCounter::tally: a counter of one slice of several");
  DGNN_CHECK(at_.size() == 2 * m_ + 1, Error, "RankCounter::tally: the counter is spent");
  for (const Part& part : parts)
    DGNN_CHECK(part.counter == nullptr || part.counter == this, ShapeError,
               "RankCounter::tally: a part of another counter");
#pragma omp parallel for schedule(dynamic, 1)
  for (int64_t r = 0; r < int64_t(parts.size()); ++r) flush(parts[size_t(r)]);
  for (Part& part : parts) part = Part{};  // its buffers freed, not only emptied
  std::vector<int64_t> all(at_.begin(), at_.end());
  std::fill(at_.begin(), at_.end(), 0u);
  added_ = 0;
  return all;
}

std::pair<double, double> RankCounter::finish(std::vector<int64_t> tally) const {
  DGNN_CHECK(slices_ == 1, Error, "RankCounter::finish: a counter of one slice of several");
  const size_t m = m_, p = pos_sorted_.size();
  DGNN_CHECK(tally.size() == 2 * m + 1, ShapeError,
             "RankCounter::finish: a tally of another counter");
  if (p == 0) return {kNaN, kNaN};
  // The tally is counted in place (no copy per end). tally[2j]: candidates strictly between
  // ends j - 1 and j, then, once below is made, those strictly below end j; tally[2j + 1]:
  // those at end j.
  // The positives are candidates too: each at the end its interval's middle equals (its own
  // score, exactly at the end when tie is 0) or in the gap holding it.
  for (size_t r = 0, j = 0; r < p; ++r) {
    const double x = pos_sorted_[r];
    while (j < m && ends_[j] < x) ++j;
    ++tally[2 * j + size_t(j < m && ends_[j] == x)];
  }
  int64_t acc = 0;
  for (size_t j = 0; j < m; ++j) {
    tally[2 * j] += acc;
    acc = tally[2 * j] + tally[2 * j + 1];
  }
  const int64_t total = acc + tally[2 * m];
  const auto below = [&tally](size_t j) { return tally[2 * j]; };
  const auto at_end = [&tally](size_t j) { return tally[2 * j + 1]; };
  // Each positive's counts, found in score order by pointers that move with it (and back, should
  // rounding make an end fall where the score rose); its terms are then summed in index order.
  const double np = double(p), neg = double(total) - np;
  std::vector<double> win_term(p), ap_term(p);
  size_t l = 0, h = 0, pb = 0, pa = 0;
  auto seek = [](const auto& v, size_t& at, auto before) {
    while (at > 0 && !before(double(v[at - 1]))) --at;
    while (at < v.size() && before(double(v[at]))) ++at;
  };
  for (size_t r = 0; r < p; ++r) {
    // Its tie interval, from its score (as the constructor made the ends: the same bits).
    const size_t i = order_[r];
    const double x = pos_sorted_[r], d = tie_radius(pos_sorted_[r], tie_);
    const double lo = x - d, hi = x + d;
    seek(ends_, l, [lo](double e) { return e < lo; });        // l: the end equal to lo
    seek(ends_, h, [hi](double e) { return e < hi; });        // h: the end equal to hi
    seek(pos_sorted_, pb, [lo](double y) { return y < lo; });  // positives below lo
    seek(pos_sorted_, pa, [hi](double y) { return y <= hi; }); // positives at most hi
    const double c_below = double(below(l)), c_at_most = double(below(h) + at_end(h));
    const double bl = c_below - double(pb), am = c_at_most - double(pa);  // negatives
    win_term[i] = bl + 0.5 * (am - bl);
    ap_term[i] = (np - double(pb)) / (double(total) - c_below);
  }
  double wins = 0, ap = 0;
  for (size_t i = 0; i < p; ++i) wins += win_term[i], ap += ap_term[i];
  return {neg > 0 ? wins / (np * neg) : kNaN, ap / np};
}

std::pair<double, double> RankCounter::finish(std::vector<Part>& parts, Communicator& comm) const {
  DGNN_CHECK(comm.size() == slices_ && comm.rank() == slice_, Error,
             "RankCounter::finish: the counter of slice " + std::to_string(slice_) + " of " +
                 std::to_string(slices_) + " on rank " + std::to_string(comm.rank()) + " of " +
                 std::to_string(comm.size()));
  const size_t m = m_, p = pos_sorted_.size(), ranks = size_t(slices_), me = size_t(slice_);
  DGNN_CHECK(at_.size() == 2 * m + 1, Error, "RankCounter::finish: the counter is spent");
  for (const Part& part : parts)
    DGNN_CHECK(part.counter == nullptr || part.counter == this, ShapeError,
               "RankCounter::finish: a part of another counter");
#pragma omp parallel for schedule(dynamic, 1)
  for (int64_t r = 0; r < int64_t(parts.size()); ++r) flush(parts[size_t(r)]);
  for (Part& part : parts) part = Part{};
  // Each slice's counts summed over ranks, kept by its rank: entries [2 j0, 2 j1) of the whole
  // tally (see tally()), and on the last slice also entry 2m (above every end). One slice at a
  // time: no rank holds more than a slice of the sums.
  const bool last = me + 1 == ranks;
  const size_t len_e = j1_ - j0_;
  std::vector<int64_t> tally;
  for (size_t s = 0; s < ranks; ++s) {
    const size_t a = size_t(uint64_t(s) * m / ranks), b = size_t(uint64_t(s + 1) * m / ranks);
    const size_t len = 2 * (b - a) + size_t(s + 1 == ranks);
    std::vector<int64_t> buf(len, 0);
    for (size_t k = 0; k < 2 * (b - a); ++k) buf[k] = at_[2 * a + k];
    if (s + 1 == ranks) buf[len - 1] = at_[2 * m];
    if (len > 0) comm.allreduce_sum(buf.data(), int64_t(len));
    if (s == me) tally = std::move(buf);
  }
  std::vector<uint32_t>().swap(at_);
  if (p == 0) return {kNaN, kNaN};
  // The positives whose first end at or above their score is this slice's (or none is, on the
  // last slice): at that end, or in the gap below it. Ascending scores: one run of them.
  const auto count_below = [this](auto before) {  // positives with before(score)
    return size_t(std::partition_point(pos_sorted_.begin(), pos_sorted_.end(),
                                       [&](float y) { return before(double(y)); }) -
                  pos_sorted_.begin());
  };
  if (len_e > 0 || last) {
    const size_t r0 = j0_ == 0 ? 0 : count_below([this](double y) { return y <= prev_end_; });
    const size_t r1 =
        last ? p : count_below([e = ends_.back()](double y) { return y <= e; });
    for (size_t r = r0; r < r1; ++r) {
      const double x = pos_sorted_[r];
      const size_t j = size_t(std::lower_bound(ends_.begin(), ends_.end(), x) - ends_.begin());
      ++tally[2 * j + size_t(j < len_e && ends_[j] == x)];
    }
  }
  // Cumulative counts, from the slices below this one: tally[2j] becomes the candidates
  // strictly below end j0 + j.
  std::vector<int64_t> sums(ranks, 0);
  for (int64_t v : tally) sums[me] += v;
  comm.allreduce_sum(sums.data(), int64_t(ranks));
  int64_t acc = 0, total = 0;
  for (size_t s = 0; s < ranks; ++s) {
    if (s < me) acc += sums[s];
    total += sums[s];
  }
  for (size_t j = 0; j < len_e; ++j) {
    tally[2 * j] += acc;
    acc = tally[2 * j] + tally[2 * j + 1];
  }
  // Each positive's terms, from the rank holding its interval's low end (the negatives below
  // it, its precision) and the one holding its high end (those at most it), sent to the rank
  // summing its index's range, as finish(tally) computes them (the same bits).
  const double np = double(p), neg = double(total) - np;
  struct Term {
    uint32_t i, has;  // has: 1, bl and ap are set; 2, am is
    double bl, ap, am;
  };
  std::vector<std::vector<Term>> out(1);
  if (len_e > 0) {
    const double first = ends_.front(), top = ends_.back();
    for (size_t r = 0; r < p; ++r) {
      const double x = pos_sorted_[r], d = tie_radius(pos_sorted_[r], tie_);
      const double lo = x - d, hi = x + d;
      const bool has_l = lo >= first && lo <= top, has_h = hi >= first && hi <= top;
      if (!has_l && !has_h) continue;
      Term t{order_[r], uint32_t(has_l) | uint32_t(has_h) << 1, 0, 0, 0};
      if (has_l) {
        const size_t l = size_t(std::lower_bound(ends_.begin(), ends_.end(), lo) - ends_.begin());
        const size_t pb = count_below([lo](double y) { return y < lo; });
        const double c_below = double(tally[2 * l]);
        t.bl = c_below - double(pb);
        t.ap = (np - double(pb)) / (double(total) - c_below);
      }
      if (has_h) {
        const size_t h = size_t(std::lower_bound(ends_.begin(), ends_.end(), hi) - ends_.begin());
        const size_t pa = count_below([hi](double y) { return y <= hi; });
        t.am = double(tally[2 * h] + tally[2 * h + 1]) - double(pa);
      }
      out[0].push_back(t);
    }
  }
  std::vector<int64_t>().swap(tally);
  const std::vector<Term> in = route_to_owners(comm, out, [&](const Term& t) {
    return index_range_owner(t.i, p, ranks);
  });
  const size_t i0 = index_range_begin(me, p, ranks),
               n_mine = index_range_begin(me + 1, p, ranks) - i0;
  std::vector<double> bl(n_mine), ap(n_mine), am(n_mine);
  std::vector<uint8_t> got(n_mine, 0);
  for (const Term& t : in) {
    const size_t k = t.i - i0;
    if (t.has & 1) bl[k] = t.bl, ap[k] = t.ap;
    if (t.has & 2) am[k] = t.am;
    got[k] |= uint8_t(t.has);
  }
  for (size_t k = 0; k < n_mine; ++k)
    DGNN_CHECK(got[k] == 3, Error,
               "RankCounter::finish: positive " + std::to_string(i0 + k) +
                   " has no count for an end of its interval (the ranks' positives differ?)");
  // Summed in index order along the ranks: rank q goes on from rank q - 1's sums.
  double sum[2];
  fold_along_ranks(comm, sum, 2, [&](double* s) {
    for (size_t k = 0; k < n_mine; ++k) {
      const double win_term = bl[k] + 0.5 * (am[k] - bl[k]);
      s[0] += win_term, s[1] += ap[k];
    }
  });
  return {neg > 0 ? sum[0] / (np * neg) : kNaN, sum[1] / np};
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
