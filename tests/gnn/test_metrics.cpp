// Ranking and classification metrics against hand computations and brute-force definitions on
// random inputs with many ties; the link-prediction loss's values and the top-k ranking helper.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <vector>

#include <omp.h>

#include "dgnn/comm/communicator.hpp"
#include "dgnn/common/error.hpp"
#include "dgnn/common/hash_rng.hpp"
#include "dgnn/gnn/core/loss.hpp"
#include "dgnn/gnn/core/ops.hpp"
#include "dgnn/gnn/train/metrics.hpp"

using namespace dgnn;

namespace {

// Over all positive-negative pairs: 1 for a win, 1/2 for a tie (within the positive's interval).
double brute_auc(const std::vector<float>& s, const std::vector<uint8_t>& y, double tie = 0) {
  double wins = 0, pairs = 0;
  for (size_t i = 0; i < s.size(); ++i)
    for (size_t j = 0; j < s.size(); ++j)
      if (y[i] && !y[j]) {
        pairs += 1;
        const double d = tie_radius(s[i], tie), diff = double(s[i]) - double(s[j]);
        wins += diff > d ? 1.0 : diff >= -d ? 0.5 : 0.0;
      }
  return wins / pairs;
}

// With a tolerance: each positive's precision over everything >= its interval's lower end.
double brute_ap_tie(const std::vector<float>& s, const std::vector<uint8_t>& y, double tie) {
  double sum = 0, pos = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    if (!y[i]) continue;
    const double lo = double(s[i]) - tie_radius(s[i], tie);
    double tp = 0, predicted = 0;
    for (size_t j = 0; j < s.size(); ++j)
      if (double(s[j]) >= lo) {
        predicted += 1;
        tp += y[j];
      }
    sum += tp / predicted;
    pos += 1;
  }
  return sum / pos;
}

// scikit-learn's step sum, one threshold per distinct score, each counted from scratch.
double brute_ap(const std::vector<float>& s, const std::vector<uint8_t>& y) {
  double total_pos = 0;
  for (uint8_t l : y) total_pos += l;
  std::vector<float> thresholds(s);
  std::sort(thresholds.rbegin(), thresholds.rend());
  thresholds.erase(std::unique(thresholds.begin(), thresholds.end()), thresholds.end());
  double ap = 0, prev_recall = 0;
  for (float t : thresholds) {
    double tp = 0, predicted = 0;
    for (size_t i = 0; i < s.size(); ++i)
      if (s[i] >= t) {
        predicted += 1;
        tp += y[i];
      }
    const double recall = tp / total_pos;
    ap += (recall - prev_recall) * (tp / predicted);
    prev_recall = recall;
  }
  return ap;
}

// Per group, each positive's mid-rank among the group; mean per group, then over groups.
double brute_mrr(const std::vector<float>& s, const std::vector<uint8_t>& y,
                 const std::vector<int32_t>& g, double tie = 0) {
  std::vector<int32_t> groups(g);
  std::sort(groups.begin(), groups.end());
  groups.erase(std::unique(groups.begin(), groups.end()), groups.end());
  double sum = 0, counted = 0;
  for (int32_t grp : groups) {
    double rr = 0, pos = 0;
    for (size_t i = 0; i < s.size(); ++i) {
      if (g[i] != grp || !y[i]) continue;
      double higher = 0, tied = 0;  // tied includes i itself
      const double d = tie_radius(s[i], tie);
      for (size_t j = 0; j < s.size(); ++j)
        if (g[j] == grp) {
          const double diff = double(s[j]) - double(s[i]);
          higher += diff > d;
          tied += diff >= -d && diff <= d;
        }
      rr += 1.0 / (higher + (tied + 1) / 2);
      pos += 1;
    }
    if (pos > 0) {
      sum += rr / pos;
      counted += 1;
    }
  }
  return sum / counted;
}

}  // namespace

TEST_CASE("roc_auc and average_precision on hand-computed cases", "[gnn][metrics]") {
  // scikit-learn's documented example: AUC 0.75, AP 0.8333.
  const std::vector<float> s = {0.1f, 0.4f, 0.35f, 0.8f};
  const std::vector<uint8_t> y = {0, 0, 1, 1};
  CHECK(roc_auc(s, y) == Approx(0.75));
  CHECK(average_precision(s, y) == Approx(0.5 * 1.0 + 0.5 * 2.0 / 3.0));

  // A positive tied with a negative: that pair counts one half, so AUC = 3.5 / 4; AP takes the
  // tied block as one threshold: recall 1/2 at precision 1, then 1 at precision 2/3.
  const std::vector<float> t = {0.9f, 0.5f, 0.5f, 0.1f};
  const std::vector<uint8_t> ty = {1, 1, 0, 0};
  CHECK(roc_auc(t, ty) == Approx(0.875));
  CHECK(average_precision(t, ty) == Approx(0.5 + 0.5 * 2.0 / 3.0));

  // Constant scores: chance for AUC, the positive rate for AP.
  const std::vector<float> flat(6, 0.3f);
  const std::vector<uint8_t> fy = {1, 0, 0, 1, 0, 0};
  CHECK(roc_auc(flat, fy) == Approx(0.5));
  CHECK(average_precision(flat, fy) == Approx(1.0 / 3.0));

  // Perfect and reversed rankings.
  CHECK(roc_auc({3, 2, 1}, {1, 1, 0}) == 1.0);
  CHECK(roc_auc({1, 2, 3}, {1, 1, 0}) == 0.0);
  CHECK(average_precision({3, 2, 1}, {1, 1, 0}) == 1.0);
}

TEST_CASE("roc_auc and average_precision match brute force on random tied scores",
          "[gnn][metrics]") {
  Rng rng(5);
  for (int trial = 0; trial < 20; ++trial) {
    const size_t n = 1 + rng.below(200);
    std::vector<float> s(n);
    std::vector<uint8_t> y(n);
    for (size_t i = 0; i < n; ++i) {
      s[i] = float(rng.below(trial % 2 ? 5 : 50)) * 0.1f;  // few levels: many ties
      y[i] = rng.uniform() < 0.3f;
    }
    y[0] = 1;
    if (n > 1) y[n - 1] = 0;
    INFO("trial " << trial << ", n = " << n);
    if (n > 1) CHECK(roc_auc(s, y) == Approx(brute_auc(s, y)).margin(1e-12));
    CHECK(average_precision(s, y) == Approx(brute_ap(s, y)).margin(1e-12));
  }
}

TEST_CASE("mean_reciprocal_rank per group, with mid-ranks for ties", "[gnn][metrics]") {
  // Group 7: a negative above two positives (ranks 2 and 3): (1/2 + 1/3) / 2 = 5/12.
  // Group 2: the positive third after two negatives: 1/3. Group 9: no positive, not counted.
  // Group 4: a positive tied with two negatives: mid-rank 2, so 1/2.
  // Groups are interleaved: the metric must not rely on the input order.
  const std::vector<float> s = {0.9f, 0.3f, 0.8f, 0.7f, 0.5f, 0.1f, 0.7f, 0.5f, 0.2f, 0.5f, 0.4f};
  const std::vector<uint8_t> y = {0, 1, 1, 0, 1, 1, 0, 0, 0, 0, 0};
  const std::vector<int32_t> g = {7, 2, 7, 2, 4, 7, 2, 4, 2, 4, 9};
  CHECK(mean_reciprocal_rank(s, y, g) == Approx((5.0 / 12 + 1.0 / 3 + 0.5) / 3));
  CHECK(mean_reciprocal_rank(s, y, g) == Approx(brute_mrr(s, y, g)));

  Rng rng(8);
  for (int trial = 0; trial < 10; ++trial) {
    const size_t n = 1 + rng.below(300);
    std::vector<float> rs(n);
    std::vector<uint8_t> ry(n);
    std::vector<int32_t> rg(n);
    for (size_t i = 0; i < n; ++i) {
      rs[i] = float(rng.below(6));
      ry[i] = rng.uniform() < 0.25f;
      rg[i] = int32_t(rng.below(12)) - 3;  // negative ids are ids like any other
    }
    ry[0] = 1;
    INFO("trial " << trial);
    CHECK(mean_reciprocal_rank(rs, ry, rg) == Approx(brute_mrr(rs, ry, rg)).margin(1e-12));
  }
}

TEST_CASE("metrics with a tie tolerance match their pairwise definitions", "[gnn][metrics]") {
  Rng rng(11);
  for (int trial = 0; trial < 24; ++trial) {
    const size_t n = 2 + rng.below(250);
    std::vector<float> s(n);
    std::vector<uint8_t> y(n);
    std::vector<int32_t> g(n);
    for (size_t i = 0; i < n; ++i) {
      // Clusters of nearly equal scores around a few levels, signs and magnitudes above 1 too.
      const float level = float(int(rng.below(7)) - 3) * (trial % 3 == 0 ? 3.f : 0.25f);
      s[i] = level + float(rng.uniform() - 0.5) * (trial % 2 ? 1e-5f : 3e-3f);
      y[i] = rng.uniform() < 0.3f;
      g[i] = int32_t(rng.below(9));
    }
    y[0] = 1;
    y[n - 1] = 0;
    for (double tie : {kLogitTie, 1e-3, 0.05}) {
      INFO("trial " << trial << ", n = " << n << ", tie " << tie);
      CHECK(roc_auc(s, y, tie) == Approx(brute_auc(s, y, tie)).margin(1e-12));
      CHECK(average_precision(s, y, tie) == Approx(brute_ap_tie(s, y, tie)).margin(1e-12));
      CHECK(mean_reciprocal_rank(s, y, g, tie) == Approx(brute_mrr(s, y, g, tie)).margin(1e-12));
    }
  }
}

TEST_CASE("with the logit tolerance, a few ulps of rounding leave the metrics unchanged",
          "[gnn][metrics]") {
  // What a rank count or thread count changes: tied scores come out an ulp or two apart. Exact
  // ties then move every metric; tolerant ones do not.
  Rng rng(3);
  const size_t n = 600;
  std::vector<float> s(n), moved(n);
  std::vector<uint8_t> y(n);
  std::vector<int32_t> g(n);
  for (size_t i = 0; i < n; ++i) {
    s[i] = float(rng.below(5)) * 0.37f - 0.6f;  // five levels: big tied blocks
    y[i] = rng.uniform() < 0.2f;
    g[i] = int32_t(rng.below(20));
    moved[i] = s[i];
    for (int k = int(rng.below(4)); k > 0; --k) moved[i] = std::nextafter(moved[i], 10.f);
  }
  CHECK(roc_auc(moved, y) != roc_auc(s, y));
  CHECK(mean_reciprocal_rank(moved, y, g) != mean_reciprocal_rank(s, y, g));
  CHECK(roc_auc(moved, y, kLogitTie) == roc_auc(s, y, kLogitTie));
  CHECK(average_precision(moved, y, kLogitTie) == average_precision(s, y, kLogitTie));
  CHECK(mean_reciprocal_rank(moved, y, g, kLogitTie) == mean_reciprocal_rank(s, y, g, kLogitTie));
  // The tolerant metrics of tied blocks are the exact ones.
  CHECK(roc_auc(s, y, kLogitTie) == Approx(roc_auc(s, y)).margin(1e-15));
  // Infinite scores tie only with their equal; a tolerance out of [0, 1] is refused.
  CHECK(roc_auc({INFINITY, 1.f, -INFINITY}, {1, 0, 0}, kLogitTie) == 1.0);
  CHECK_THROWS_AS(roc_auc({1.f, 2.f}, {1, 0}, -1.0), Error);
}

// The same bits, or both NaN.
bool same(double a, double b) { return (std::isnan(a) && std::isnan(b)) || a == b; }

// Trial `trial` of a random case: scores of both signs, signed zeros, infinities, few levels
// (ties) or many (ulps apart); no positive, all positive or a fifth; few groups or many.
struct TiedCase {
  std::vector<float> s;
  std::vector<uint8_t> y;
  std::vector<int32_t> g;
};
TiedCase tied_case(Rng& rng, int trial) {
  const float inf = std::numeric_limits<float>::infinity();
  const size_t n = trial == 0 ? 0 : rng.below(trial < 50 ? 300 : 20000);
  TiedCase c{std::vector<float>(n), std::vector<uint8_t>(n), std::vector<int32_t>(n)};
  const int levels = trial % 3 == 0 ? 4 : trial % 3 == 1 ? 60 : 1 << 20;
  for (size_t i = 0; i < n; ++i) {
    c.s[i] = (float(rng.below(uint64_t(levels))) - float(levels / 2)) / float(levels) * 8.f;
    if (rng.uniform() < 0.02f) c.s[i] = rng.uniform() < 0.5f ? -0.0f : 0.0f;
    if (rng.uniform() < 0.01f) c.s[i] = rng.uniform() < 0.5f ? -inf : inf;
    c.y[i] = rng.uniform() < (trial % 7 == 0 ? 0.0f : trial % 7 == 1 ? 1.0f : 0.2f);
    c.g[i] = int32_t(rng.below(trial % 2 ? 5 : 400));
  }
  return c;
}

TEST_CASE("rank_metrics equals roc_auc, average_precision and mean_reciprocal_rank bit for bit",
          "[gnn][metrics]") {
  Rng rng(11);
  for (int trial = 0; trial < 60; ++trial) {
    const auto [s, y, g] = tied_case(rng, trial);
    const size_t n = s.size();
    for (double tie : {0.0, kLogitTie, 0.1}) {
      INFO("trial " << trial << ", n = " << n << ", tie " << tie);
      const RankMetrics r = rank_metrics(s, y, g, tie);
      CHECK(same(r.auc, roc_auc(s, y, tie)));
      CHECK(same(r.map, average_precision(s, y, tie)));
      CHECK(same(r.mrr, mean_reciprocal_rank(s, y, g, tie)));
      // In place, with float labels (a batch's targets).
      const std::vector<float> yf(y.begin(), y.end());
      const RankMetrics p = rank_metrics(s.data(), yf.data(), g.data(), n, tie);
      CHECK(same(p.auc, r.auc));
      CHECK(same(p.map, r.map));
      CHECK(same(p.mrr, r.mrr));
    }
  }
  CHECK_THROWS_AS(rank_metrics({1, 2}, {1, 0}, {0}), ShapeError);
  CHECK_THROWS_AS(rank_metrics({1, NAN}, {1, 0}, {0, 0}), Error);
  CHECK_THROWS_AS(rank_metrics({1, 2}, {1, 0}, {0, -1}), Error);
}

TEST_CASE("RankCounter and group_reciprocal_rank stream what roc_auc, average_precision and "
          "mean_reciprocal_rank compute, bit for bit",
          "[gnn][metrics]") {
  Rng rng(17);
  for (int trial = 0; trial < 60; ++trial) {
    const auto [s, y, g] = tied_case(rng, trial);
    const size_t n = s.size();
    std::vector<float> pos, neg;
    for (size_t i = 0; i < n; ++i) (y[i] ? pos : neg).push_back(s[i]);
    for (double tie : {0.0, kLogitTie, 0.1}) {
      INFO("trial " << trial << ", n = " << n << ", tie " << tie);
      // The negatives over 1 to 3 parts, added in pieces.
      const RankCounter counter(pos.data(), pos.size(), tie);
      std::vector<RankCounter::Part> parts(size_t(1 + trial % 3));
      for (size_t at = 0; at < neg.size();) {
        const size_t len = std::min(neg.size() - at, size_t(1 + rng.below(50)));
        REQUIRE(counter.add(neg.data() + at, len, parts[rng.below(parts.size())]));
        at += len;
      }
      // finish(parts, comm) on one rank, the negatives added to another counter of the same
      // positives: the same bits as finish(tally).
      const RankCounter counter1(pos.data(), pos.size(), tie);
      std::vector<RankCounter::Part> parts1(2);
      REQUIRE(counter1.add(neg.data(), neg.size() / 2, parts1[0]));
      REQUIRE(counter1.add(neg.data() + neg.size() / 2, neg.size() - neg.size() / 2, parts1[1]));
      SelfCommunicator self;
      const auto [auc1, map1] = counter1.finish(parts1, self);
      CHECK(parts1[0].counter == nullptr);
      CHECK_THROWS_AS(counter1.finish(parts1, self), Error);  // spent
      // Tallied as two ranks would, each over its own parts, and summed.
      std::vector<RankCounter::Part> first(parts.begin(), parts.begin() + 1),
          rest(parts.begin() + 1, parts.end());
      std::vector<int64_t> tally = counter.tally(first);
      const std::vector<int64_t> other = counter.tally(rest);
      for (size_t j = 0; j < tally.size(); ++j) tally[j] += other[j];
      const auto [auc2, map2] = counter.finish(tally);
      const auto [auc, map] = counter.finish(counter.tally(parts));
      CHECK(same(auc, roc_auc(s, y, tie)));
      CHECK(same(map, average_precision(s, y, tie)));
      CHECK(same(auc2, auc));
      CHECK(same(map2, map));
      CHECK(same(auc1, auc));
      CHECK(same(map1, map));
      // One group: the positives and the negatives (small and large positive counts).
      const std::vector<int32_t> one(n, 0);
      std::vector<float> p = pos;
      GroupRankScratch gs;
      CHECK(same(group_reciprocal_rank(p.data(), p.size(), neg.data(), neg.size(), tie, gs),
                 mean_reciprocal_rank(s, y, one, tie)));
      if (pos.size() > 3) {
        std::vector<float> few(pos.begin(), pos.begin() + 3), s3 = few;
        std::vector<uint8_t> y3(3, 1);
        s3.insert(s3.end(), neg.begin(), neg.end());
        y3.resize(s3.size(), 0);
        CHECK(same(group_reciprocal_rank(few.data(), 3, neg.data(), neg.size(), tie, gs),
                   mean_reciprocal_rank(s3, y3, std::vector<int32_t>(s3.size(), 0), tie)));
      }
    }
  }
  const float nan = NAN, one = 1.f;
  CHECK_THROWS_AS(RankCounter(&nan, 1, 0.0), Error);
  const RankCounter c(&one, 1, 0.0);
  RankCounter::Part part;
  CHECK_FALSE(c.add(&nan, 1, part));
  // Scores over every magnitude and sign, the largest floats and zeros of both signs: each is
  // found among the ends by its key's top bits, across runs of empty buckets.
  for (int trial = 0; trial < 20; ++trial) {
    std::vector<float> s, pos, neg;
    std::vector<uint8_t> y;
    for (int i = 0; i < 400; ++i) {
      const double mag = std::pow(10.0, rng.uniform() * 60 - 30);
      float v = float(rng.below(2) ? mag : -mag);
      if (i % 97 == 0) v = i % 2 ? 3e38f : -3e38f;
      if (i % 89 == 0) v = i % 2 ? 0.f : -0.f;
      if (i % 13 == 0 && !s.empty()) v = s[rng.below(s.size())];  // ties
      s.push_back(v);
      y.push_back(uint8_t(rng.below(4) == 0));
      (y.back() ? pos : neg).push_back(v);
    }
    for (double tie : {0.0, kLogitTie}) {
      const RankCounter counter(pos.data(), pos.size(), tie);
      std::vector<RankCounter::Part> parts(2);
      REQUIRE(counter.add(neg.data(), neg.size() / 2, parts[0]));
      REQUIRE(counter.add(neg.data() + neg.size() / 2, neg.size() - neg.size() / 2, parts[1]));
      const auto [auc, map] = counter.finish(counter.tally(parts));
      CHECK(same(auc, roc_auc(s, y, tie)));
      CHECK(same(map, average_precision(s, y, tie)));
      CHECK(parts[0].counter == nullptr);  // tally() cleared them
    }
  }
  // More candidates than a part buffers (RankCounter::kChunk): they are counted chunk by chunk,
  // each chunk's keys fewer than the ends (a third of the scores are positives: 2 ends each).
  {
    std::vector<float> s, pos, neg;
    std::vector<uint8_t> y;
    const size_t n = RankCounter::kChunk * 5 / 2;
    for (size_t i = 0; i < n; ++i) {
      const bool positive = i % 3 == 0;
      const float v = float(rng.uniform() * 8 - 4) + (positive ? 0.5f : 0.f);
      s.push_back(v);
      y.push_back(positive);
      (positive ? pos : neg).push_back(v);
    }
    const RankCounter counter(pos.data(), pos.size(), kLogitTie);
    std::vector<RankCounter::Part> parts(1);
    for (size_t at = 0; at < neg.size(); at += 300000)
      REQUIRE(counter.add(neg.data() + at, std::min<size_t>(300000, neg.size() - at), parts[0]));
    const auto [auc, map] = counter.finish(counter.tally(parts));
    CHECK(same(auc, roc_auc(s, y, kLogitTie)));
    CHECK(same(map, average_precision(s, y, kLogitTie)));
    // The same from four threads at once, each through its own part into the shared counts.
    const RankCounter counter4(pos.data(), pos.size(), kLogitTie);
    std::vector<RankCounter::Part> parts4(4);
    int bad = 0;
#pragma omp parallel for num_threads(4) schedule(dynamic, 1) reduction(+ : bad)
    for (int64_t c = 0; c < int64_t((neg.size() + 9999) / 10000); ++c) {
      const size_t at = size_t(c) * 10000;
      bad += !counter4.add(neg.data() + at, std::min<size_t>(10000, neg.size() - at),
                           parts4[size_t(omp_get_thread_num()) % 4]);
    }
    CHECK(bad == 0);
    SelfCommunicator self;
    const auto [auc4, map4] = counter4.finish(parts4, self);
    CHECK(same(auc4, auc));
    CHECK(same(map4, map));
  }
  // A part filled by one counter is refused by another of a different size.
  const std::vector<float> two{0.5f, 2.f};
  const RankCounter c2(two.data(), two.size(), 0.0);
  REQUIRE(c.add(&one, 1, part));
  CHECK_THROWS_AS(c2.add(&one, 1, part), ShapeError);
}

TEST_CASE("one_vs_many_reciprocal_rank: TGB's mean of optimistic and pessimistic ranks",
          "[gnn][metrics]") {
  const std::vector<float> neg{0.7f, 0.5f, 0.2f, 0.5f};
  // One above, three at or above: rank (1 + 3) / 2 + 1 = 3.
  CHECK(one_vs_many_reciprocal_rank(0.5f, neg.data(), 4) == Approx(1.0 / 3));
  CHECK(one_vs_many_reciprocal_rank(0.9f, neg.data(), 4) == 1.0);  // above all: rank 1
  CHECK(one_vs_many_reciprocal_rank(0.1f, neg.data(), 4) == Approx(1.0 / 5));
  CHECK(one_vs_many_reciprocal_rank(0.1f, neg.data(), 0) == 1.0);  // no negatives
  // Constant scores earn no credit beyond the middle: rank (0 + 4) / 2 + 1 = 3.
  const std::vector<float> same(4, 0.3f);
  CHECK(one_vs_many_reciprocal_rank(0.3f, same.data(), 4) == Approx(1.0 / 3));
  // With a tolerance, a negative within it counts as tied, not above.
  const std::vector<float> close{0.50001f};
  CHECK(one_vs_many_reciprocal_rank(0.5f, close.data(), 1) == Approx(1.0 / 2));
  CHECK(one_vs_many_reciprocal_rank(0.5f, close.data(), 1, kLogitTie) == Approx(1.0 / 1.5));
  const float nan = NAN;
  CHECK_THROWS_AS(one_vs_many_reciprocal_rank(0.5f, &nan, 1), Error);
}

TEST_CASE("undefined metrics are NaN, and bad input throws", "[gnn][metrics]") {
  CHECK(std::isnan(roc_auc({1, 2}, {1, 1})));
  CHECK(std::isnan(roc_auc({}, {})));
  CHECK(std::isnan(average_precision({1, 2}, {0, 0})));
  CHECK(std::isnan(mean_reciprocal_rank({1, 2}, {0, 0}, {0, 1})));
  CHECK_THROWS_AS(roc_auc({1, 2}, {1}), ShapeError);
  CHECK_THROWS_AS(mean_reciprocal_rank({1, 2}, {1, 0}, {0}), ShapeError);
  CHECK_THROWS_AS(average_precision({1, NAN}, {1, 0}), Error);
  CHECK_THROWS_AS(binary_f1({1}, {1, 0}), ShapeError);
}

TEST_CASE("binary_f1 and macro_f1 on hand-computed cases", "[gnn][metrics]") {
  // TP 2, FP 1, FN 1.
  const F1 f = binary_f1({1, 1, 0, 1, 0}, {1, 0, 0, 1, 1});
  CHECK(f.precision == Approx(2.0 / 3));
  CHECK(f.recall == Approx(2.0 / 3));
  CHECK(f.f1 == Approx(2.0 / 3));
  // P 1/2, R 1: F1 = 2/3 by the harmonic mean, not the arithmetic one (3/4).
  CHECK(binary_f1({1, 1}, {1, 0}).f1 == Approx(2.0 / 3));
  // No positive predicted: every ratio with a zero denominator is 0.
  const F1 none = binary_f1({0, 0, 0}, {1, 0, 1});
  CHECK(none.precision == 0.0);
  CHECK(none.recall == 0.0);
  CHECK(none.f1 == 0.0);

  // Class 0: F1 1; class 1: P 1/2, R 1 -> 2/3; class 2: P 1, R 2/3 -> 4/5.
  CHECK(macro_f1({0, 1, 2, 2, 1}, {0, 2, 2, 2, 1}) == Approx((1 + 2.0 / 3 + 0.8) / 3));
  // Class 5 appears only among predictions: it counts, with F1 0.
  CHECK(macro_f1({5, 1}, {1, 1}) == Approx((2.0 / 3 + 0) / 2));
  CHECK_THROWS_AS(macro_f1({1, 2}, {1}), ShapeError);
}

TEST_CASE("bce_with_logits values, stability and weights", "[gnn][metrics][loss]") {
  // Per item: log 2 at logit 0, ~0 for a confident hit, 1000 for a confident miss (no overflow),
  // and log(1 + e) for a negative at logit 1.
  const Var logits(Tensor::from_host(std::vector<float>{0, 1000, -1000, 1}.data(), 4, 1), true);
  const double expected = std::log(2.0) + 0 + 1000 + std::log1p(std::exp(1.0));
  Var loss = bce_with_logits(logits, {1, 1, 1, 0}, 2.0);
  CHECK(loss.value().at(0, 0) == Approx(expected / 2));
  loss.backward();
  // d/dx = (sigmoid(x) - y) / normaliser.
  CHECK(logits.grad().at(0, 0) == Approx(-0.25));
  CHECK(logits.grad().at(1, 0) == Approx(0.0).margin(1e-12));
  CHECK(logits.grad().at(2, 0) == Approx(-0.5));
  CHECK(logits.grad().at(3, 0) == Approx(0.5 / (1 + std::exp(-1.0))));

  const Var w = bce_with_logits(logits, {1, 1, 1, 0}, 1.0, {3, 1, 0, 0});
  CHECK(w.value().at(0, 0) == Approx(3 * std::log(2.0)));

  CHECK_THROWS_AS(bce_with_logits(logits, {1, 0}, 1.0), ShapeError);
  CHECK_THROWS_AS(bce_with_logits(logits, {1, 1, 1, 0}, 1.0, {1}), ShapeError);
  CHECK_THROWS_AS(bce_with_logits(logits, {1, 1, 2, 0}, 1.0), OptionError);
  CHECK_THROWS_AS(bce_with_logits(logits, {1, 1, 1, 0}, 0.0), OptionError);
  CHECK_THROWS_AS(bce_with_logits(Var(Tensor(4, 2)), {1, 1, 1, 0}, 1.0), ShapeError);
}

TEST_CASE("topk_rows ranks scores, ties by row, NaN last", "[gnn][metrics]") {
  const Tensor s =
      Tensor::from_host(std::vector<float>{0.5f, 2, NAN, 2, -INFINITY, 1}.data(), 6, 1);
  CHECK(topk_rows(s, 4) == std::vector<int32_t>{1, 3, 5, 0});
  CHECK(topk_rows(s, 6) == std::vector<int32_t>{1, 3, 5, 0, 4, 2});
  CHECK(topk_rows(s, 0).empty());
  CHECK_THROWS_AS(topk_rows(s, 7), ShapeError);
  CHECK_THROWS_AS(topk_rows(Tensor(3, 2), 1), ShapeError);
}
