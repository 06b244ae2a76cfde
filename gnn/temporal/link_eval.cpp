// All-pairs link-prediction metrics in two streaming passes over source rows (see the header
// for the protocol). The counting is exact: integer counts of candidates at and between the ends
// of the positives' tie intervals, so the result does not depend on the thread or rank count.
#include "dgnn/gnn/temporal/link_eval.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <exception>
#include <limits>
#include <string>

#include "dgnn/comm/collectives.hpp"
#include "dgnn/common/error.hpp"
#include "dgnn/gnn/train/metrics.hpp"

namespace dgnn {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Adds each score of x[0, n) to the breakpoint it equals (eq[j], b[j] == x) or to the gap it
// falls in (gap[j]: strictly between b[j-1] and b[j]; gap[0] below b[0], gap[m] above b[m-1]).
// b: ascending, distinct. False when a score is NaN (the counts are then incomplete).
bool count_into(const float* x, int64_t n, const std::vector<double>& b, int64_t* eq,
                int64_t* gap) {
  const double* bb = b.data();
  const double* be = bb + b.size();
  for (int64_t i = 0; i < n; ++i) {
    const double s = x[i];
    if (std::isnan(s)) return false;
    const size_t j = size_t(std::upper_bound(bb, be, s) - bb);
    if (j > 0 && bb[j - 1] == s)
      ++eq[j - 1];
    else
      ++gap[j];
  }
  return true;
}

// below[j]: how many counted scores are strictly below b[j] (those at most b[j]: below + eq).
std::vector<int64_t> count_below(const std::vector<int64_t>& eq, const std::vector<int64_t>& gap) {
  std::vector<int64_t> below(eq.size());
  int64_t acc = 0;
  for (size_t j = 0; j < eq.size(); ++j) {
    below[j] = acc + gap[j];
    acc = below[j] + eq[j];
  }
  return below;
}

// Each positive's tie interval [s - d, s + d] (gnn/train/metrics.hpp), and the sorted distinct ends
// of all of them: the breakpoints scores are counted against.
struct Intervals {
  std::vector<double> lo, hi, ends;
  Intervals(const float* s, size_t k, double tie) {
    for (size_t i = 0; i < k; ++i) {
      const double d = tie_radius(s[i], tie);
      lo.push_back(double(s[i]) - d);
      hi.push_back(double(s[i]) + d);
    }
    ends = lo;
    ends.insert(ends.end(), hi.begin(), hi.end());
    std::sort(ends.begin(), ends.end());
    ends.erase(std::unique(ends.begin(), ends.end()), ends.end());
  }
  size_t at(double x) const {
    return size_t(std::lower_bound(ends.begin(), ends.end(), x) - ends.begin());
  }
};

// Mean of 1 / rank over row u's targets d[0, k) among the row's n scores (mid-rank ties within
// each target's tie interval).
bool row_reciprocal_rank(const float* row, int64_t n, const int32_t* d, int64_t k, double tie,
                         double* out) {
  std::vector<float> own(static_cast<size_t>(k));
  for (int64_t i = 0; i < k; ++i) own[size_t(i)] = row[d[i]];
  const Intervals iv(own.data(), own.size(), tie);
  std::vector<int64_t> eq(iv.ends.size(), 0), gap(iv.ends.size() + 1, 0);
  if (!count_into(row, n, iv.ends, eq.data(), gap.data())) return false;
  const std::vector<int64_t> below = count_below(eq, gap);
  double rr = 0;
  for (size_t i = 0; i < own.size(); ++i) {
    const size_t h = iv.at(iv.hi[i]);
    const double at_most = double(below[h] + eq[h]);
    const double tied = at_most - double(below[iv.at(iv.lo[i])]);  // itself included
    rr += 1.0 / ((double(n) - at_most) + (tied + 1.0) / 2.0);
  }
  *out = rr / double(k);
  return true;
}


// Runs body(i) for i in [0, n) on OpenMP threads; the first exception is rethrown afterwards
// (an exception may not leave a parallel region).
template <typename Body>
void parallel_rows(int64_t n, int chunk, Body&& body) {
  std::exception_ptr failure;
#pragma omp parallel for schedule(dynamic, chunk)
  for (int64_t i = 0; i < n; ++i) {
    try {
      body(i);
    } catch (...) {
#pragma omp critical(dgnn_link_eval_failure)
      if (!failure) failure = std::current_exception();
    }
  }
  if (failure) std::rethrow_exception(failure);
}

}  // namespace

PairTargets PairTargets::from_pairs(int64_t n, std::vector<std::pair<int32_t, int32_t>> pairs) {
  for (const auto& [u, v] : pairs)
    if (u < 0 || v < 0 || u >= n || v >= n)
      throw ShapeError("PairTargets: pair (" + std::to_string(u) + ", " + std::to_string(v) +
                       ") outside " + std::to_string(n) + " vertices");
  std::sort(pairs.begin(), pairs.end());
  pairs.erase(std::unique(pairs.begin(), pairs.end()), pairs.end());
  PairTargets t;
  t.n = n;
  t.offsets.assign(size_t(n) + 1, 0);
  for (const auto& [u, v] : pairs) {
    ++t.offsets[size_t(u) + 1];
    t.dst.push_back(v);
  }
  for (int64_t u = 0; u < n; ++u) t.offsets[size_t(u) + 1] += t.offsets[size_t(u)];
  return t;
}

AllPairsMetrics all_pairs_metrics(const PairTargets& targets, const std::vector<int32_t>& rows,
                                  const RowScoreFn& score, Communicator& comm, double tie,
                                  int64_t keep_bytes) {
  const int64_t n = targets.n;
  if (int64_t(targets.offsets.size()) != n + 1)
    throw ShapeError("all_pairs_metrics: targets need n + 1 offsets");
  for (int32_t u : rows)
    if (u < 0 || u >= n)
      throw ShapeError("all_pairs_metrics: row " + std::to_string(u) + " outside " +
                       std::to_string(n) + " vertices");

  // Pass 1: the rows holding positives give the positives' scores and each row's MRR.
  std::vector<int32_t> pos_rows;
  for (int32_t u : rows)
    if (targets.count(u) > 0) pos_rows.push_back(u);
  const int64_t pr = int64_t(pos_rows.size());
  std::vector<int64_t> pos_offset(size_t(pr) + 1, 0);
  for (int64_t i = 0; i < pr; ++i)
    pos_offset[size_t(i) + 1] = pos_offset[size_t(i)] + targets.count(pos_rows[size_t(i)]);
  std::vector<float> pos_scores(size_t(pos_offset.back()));
  std::vector<double> row_rr(size_t(pr), 0.0);
  std::vector<uint8_t> row_nan(size_t(pr), 0);
  const bool keep = pr * n * int64_t(sizeof(float)) <= keep_bytes;
  std::vector<float> kept(keep ? size_t(pr * n) : 0);
  {
    parallel_rows(pr, 1, [&](int64_t i) {
      thread_local std::vector<float> row, scr;
      float* out = keep ? kept.data() + i * n : (row.resize(size_t(n)), row.data());
      const int32_t u = pos_rows[size_t(i)];
      score(u, out, scr);
      const int32_t* d = targets.dst.data() + targets.offsets[size_t(u)];
      const int64_t k = targets.count(u);
      for (int64_t j = 0; j < k; ++j) pos_scores[size_t(pos_offset[size_t(i)] + j)] = out[d[j]];
      row_nan[size_t(i)] = !row_reciprocal_rank(out, n, d, k, tie, &row_rr[size_t(i)]);
    });
  }
  int64_t bad = std::count(row_nan.begin(), row_nan.end(), uint8_t(1));

  // Every rank's positive scores (sorted, so that every rank sums in one order), and the ends of
  // their tie intervals, against which every candidate is counted.
  std::vector<float> all_pos = allgather_records(pos_scores, comm);
  all_pos.erase(
      std::remove_if(all_pos.begin(), all_pos.end(), [](float x) { return std::isnan(x); }),
      all_pos.end());  // reported through `bad`
  std::sort(all_pos.begin(), all_pos.end());
  const Intervals iv(all_pos.data(), all_pos.size(), tie);
  const std::vector<double> pos_sorted(all_pos.begin(), all_pos.end());
  const size_t m = iv.ends.size();

  // Pass 2: every row's candidates, counted per interval end and per gap between them.
  std::vector<int32_t> slot(keep ? size_t(n) : 0, -1);
  if (keep)
    for (int64_t i = 0; i < pr; ++i) slot[size_t(pos_rows[size_t(i)])] = int32_t(i);
  std::vector<int64_t> eq(m, 0), gap(m + 1, 0);
  {
    const int threads = omp_get_max_threads();
    std::vector<std::vector<int64_t>> t_eq(size_t(threads), std::vector<int64_t>(m, 0));
    std::vector<std::vector<int64_t>> t_gap(size_t(threads), std::vector<int64_t>(m + 1, 0));
    std::vector<int64_t> t_bad(size_t(threads), 0);
    parallel_rows(int64_t(rows.size()), 4, [&](int64_t i) {
      thread_local std::vector<float> row, scr;
      const int me = omp_get_thread_num();
      const int32_t u = rows[size_t(i)];
      const float* x;
      if (keep && slot[size_t(u)] >= 0) {
        x = kept.data() + int64_t(slot[size_t(u)]) * n;
      } else {
        row.resize(size_t(n));
        score(u, row.data(), scr);
        x = row.data();
      }
      if (!count_into(x, n, iv.ends, t_eq[size_t(me)].data(), t_gap[size_t(me)].data()))
        ++t_bad[size_t(me)];
    });
    for (int r = 0; r < threads; ++r) {
      for (size_t j = 0; j < m; ++j) eq[j] += t_eq[size_t(r)][j];
      for (size_t j = 0; j <= m; ++j) gap[j] += t_gap[size_t(r)][j];
      bad += t_bad[size_t(r)];
    }
  }

  // Combine over ranks: counts exactly, the MRR as a sum over rows.
  comm.allreduce_sum(&bad, 1);
  if (bad > 0)
    throw Error("all-pairs link evaluation: " + std::to_string(bad) +
                " source rows have a NaN score (the model diverged)");
  if (m > 0) comm.allreduce_sum(eq.data(), int64_t(m));
  comm.allreduce_sum(gap.data(), int64_t(m + 1));
  double mrr_sum[2] = {0.0, double(pr)};
  for (double r : row_rr) mrr_sum[0] += r;
  comm.allreduce_sum(mrr_sum, 2);

  AllPairsMetrics res;
  res.positives = int64_t(all_pos.size());
  for (int64_t c : eq) res.candidates += c;
  for (int64_t c : gap) res.candidates += c;
  if (res.candidates != n * n)
    throw Error("all-pairs link evaluation: the ranks scored " + std::to_string(res.candidates) +
                " candidates instead of " + std::to_string(n) + "^2 (every row exactly once)");
  const double p = double(res.positives), total = double(res.candidates), neg = total - p;
  res.mrr = mrr_sum[1] > 0 ? mrr_sum[0] / mrr_sum[1] : kNaN;
  if (res.positives == 0) {
    res.auc = res.map = kNaN;
    return res;
  }
  // Per positive: the candidates (and positives) below its interval and at most its top. It
  // beats the negatives below, ties with those inside, and its share of recall comes at the
  // precision of everything >= its interval's lower end.
  const std::vector<int64_t> below = count_below(eq, gap);
  auto pos_below = [&](double x) {
    return double(std::lower_bound(pos_sorted.begin(), pos_sorted.end(), x) - pos_sorted.begin());
  };
  auto pos_at_most = [&](double x) {
    return double(std::upper_bound(pos_sorted.begin(), pos_sorted.end(), x) - pos_sorted.begin());
  };
  double ap = 0, wins = 0;
  for (size_t i = 0; i < all_pos.size(); ++i) {
    const size_t l = iv.at(iv.lo[i]), h = iv.at(iv.hi[i]);
    const double c_below = double(below[l]), c_at_most = double(below[h] + eq[h]);
    const double p_below = pos_below(iv.lo[i]), p_at_most = pos_at_most(iv.hi[i]);
    if (c_at_most - c_below < p_at_most - p_below)
      throw Error(
          "all-pairs link evaluation: a row scored differently in its two passes (the row "
          "scorer must be deterministic)");
    const double neg_below = c_below - p_below;
    wins += neg_below + 0.5 * ((c_at_most - p_at_most) - neg_below);
    ap += (p - p_below) / (total - c_below);
  }
  ap /= p;
  res.map = ap;
  res.auc = neg > 0 ? wins / (p * neg) : kNaN;
  return res;
}

}  // namespace dgnn
