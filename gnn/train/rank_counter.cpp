// RankCounter (metrics.hpp): AUC and AP of a streamed candidate list, on one process or over the
// ranks of a job.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <string>

#include "dgnn/comm/collectives.hpp"
#include "dgnn/comm/communicator.hpp"
#include "dgnn/common/error.hpp"
#include "dgnn/common/radix_sort.hpp"
#include "dgnn/gnn/train/metrics.hpp"
#include "dgnn/gnn/train/metrics_detail.hpp"

namespace dgnn {

using metrics_detail::check_tie;
using metrics_detail::order_key;

namespace {
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
}  // namespace

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

}  // namespace dgnn
