#include <omp.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <numeric>
#include <set>
#include <vector>

#include "dgnn/common/error.hpp"
#include "dgnn/datasets/sbm.hpp"

using namespace dgnn;

namespace {

SbmConfig small_config(uint64_t seed = 7) {
  SbmConfig c;
  c.vertices = 3000;
  c.classes = 5;
  c.avg_degree = 12;
  c.homophily = 0.75;
  c.feature_dim = 16;
  c.seed = seed;
  return c;
}

// Nearest-centroid accuracy on the test split after `hops` rounds of symmetric-normalised
// propagation with self loops (what a GCN layer does before its weights), centroids fitted on
// the train split. hops = 0 is a feature-only classifier.
double propagated_accuracy(const SbmDataset& ds, int hops) {
  const int64_t n = ds.num_vertices(), f = ds.config.feature_dim;
  const int c = ds.config.classes;
  std::vector<std::vector<int32_t>> adj(n);
  for (int64_t e = 0; e < ds.num_edges(); ++e) {
    adj[ds.src[e]].push_back(ds.dst[e]);
    adj[ds.dst[e]].push_back(ds.src[e]);
  }
  std::vector<double> x(ds.features.begin(), ds.features.end()), y(x.size());
  for (int h = 0; h < hops; ++h) {
    for (int64_t v = 0; v < n; ++v) {
      const double dv = double(adj[v].size() + 1);
      for (int64_t j = 0; j < f; ++j) y[v * f + j] = x[v * f + j] / dv;
      for (int32_t u : adj[v]) {
        const double w = 1.0 / std::sqrt(dv * double(adj[u].size() + 1));
        for (int64_t j = 0; j < f; ++j) y[v * f + j] += w * x[u * f + j];
      }
    }
    x.swap(y);
  }
  std::vector<double> cen(size_t(c) * f, 0.0);
  std::vector<int> count(c, 0);
  for (int32_t v : ds.train) {
    ++count[ds.labels[v]];
    for (int64_t j = 0; j < f; ++j) cen[ds.labels[v] * f + j] += x[v * f + j];
  }
  for (int k = 0; k < c; ++k)
    for (int64_t j = 0; j < f; ++j) cen[k * f + j] /= std::max(1, count[k]);
  int64_t correct = 0;
  for (int32_t v : ds.test) {
    int best = 0;
    double best_d = 1e300;
    for (int k = 0; k < c; ++k) {
      double d = 0;
      for (int64_t j = 0; j < f; ++j)
        d += (x[v * f + j] - cen[k * f + j]) * (x[v * f + j] - cen[k * f + j]);
      if (d < best_d) best_d = d, best = k;
    }
    correct += best == ds.labels[v];
  }
  return double(correct) / double(ds.test.size());
}

}  // namespace

TEST_CASE("sbm: the same seed gives identical arrays, another seed different ones") {
  const SbmDataset a = generate_sbm(small_config(7));
  const SbmDataset b = generate_sbm(small_config(7));
  const SbmDataset c = generate_sbm(small_config(8));
  CHECK(a.src == b.src);
  CHECK(a.dst == b.dst);
  CHECK(a.features == b.features);
  CHECK(a.labels == b.labels);
  CHECK(a.train == b.train);
  CHECK(a.val == b.val);
  CHECK(a.test == b.test);
  CHECK(a.src != c.src);
  CHECK(a.features != c.features);
  CHECK(a.labels != c.labels);
  CHECK(a.train != c.train);
}

TEST_CASE("sbm: output does not depend on the thread count") {
  SbmConfig cfg = small_config();
  cfg.vertices = 200000;  // several edge chunks, so threads really split the work
  cfg.degree_skew = 0.3;
  const int before = omp_get_max_threads();
  omp_set_num_threads(1);
  const SbmDataset one = generate_sbm(cfg);
  omp_set_num_threads(3);
  const SbmDataset three = generate_sbm(cfg);
  omp_set_num_threads(before);
  CHECK(one.src == three.src);
  CHECK(one.dst == three.dst);
  CHECK(one.features == three.features);
}

TEST_CASE("sbm: sizes, simple graph, degree and homophily as configured") {
  const SbmConfig cfg = small_config();
  const SbmDataset ds = generate_sbm(cfg);
  REQUIRE(ds.num_vertices() == 3000);
  REQUIRE(ds.labels.size() == 3000);
  REQUIRE(ds.features.size() == 3000u * 16u);
  REQUIRE(ds.centroids.size() == 5u * 16u);

  // Stored once per undirected edge, src < dst, sorted, no duplicates, ids in range.
  for (int64_t e = 0; e < ds.num_edges(); ++e) {
    REQUIRE(ds.src[e] < ds.dst[e]);
    REQUIRE(ds.src[e] >= 0);
    REQUIRE(ds.dst[e] < 3000);
    if (e > 0) REQUIRE(std::pair(ds.src[e - 1], ds.dst[e - 1]) < std::pair(ds.src[e], ds.dst[e]));
  }
  const double avg_degree = 2.0 * double(ds.num_edges()) / 3000.0;
  CHECK(avg_degree == Approx(12.0).epsilon(0.02));
  CHECK(ds.measured_homophily() == Approx(0.75).margin(0.03));

  // Balanced classes: sizes differ by at most one.
  std::vector<int64_t> per_class(5, 0);
  for (int32_t l : ds.labels) {
    REQUIRE(l >= 0);
    REQUIRE(l < 5);
    ++per_class[l];
  }
  for (int64_t k : per_class) CHECK(k == 600);
}

TEST_CASE("sbm: homophily extremes") {
  SbmConfig cfg = small_config();
  cfg.homophily = 1.0;
  CHECK(generate_sbm(cfg).measured_homophily() == 1.0);
  cfg.homophily = 0.0;
  CHECK(generate_sbm(cfg).measured_homophily() == 0.0);
  cfg.homophily = 0.3;
  CHECK(generate_sbm(cfg).measured_homophily() == Approx(0.3).margin(0.03));
}

TEST_CASE("sbm: degree skew gives heavy-tailed degrees at the same average") {
  SbmConfig cfg = small_config();
  cfg.vertices = 20000;
  auto max_degree = [](const SbmDataset& ds) {
    std::vector<int64_t> deg(ds.num_vertices(), 0);
    for (int64_t e = 0; e < ds.num_edges(); ++e) ++deg[ds.src[e]], ++deg[ds.dst[e]];
    return *std::max_element(deg.begin(), deg.end());
  };
  const SbmDataset flat = generate_sbm(cfg);
  cfg.degree_skew = 0.5;
  const SbmDataset skewed = generate_sbm(cfg);
  CHECK(2.0 * double(skewed.num_edges()) / 20000.0 == Approx(12.0).epsilon(0.02));
  CHECK(skewed.measured_homophily() == Approx(0.75).margin(0.03));
  // Poisson(12) tops out near 30 on 20k vertices; a tail-index-2 power law reaches hundreds.
  CHECK(max_degree(flat) < 40);
  CHECK(max_degree(skewed) > 150);
}

TEST_CASE("sbm: features carry the class, and the graph makes it clearer") {
  const SbmDataset ds = generate_sbm(small_config());
  const double chance = 1.0 / 5.0;
  const double raw = propagated_accuracy(ds, 0);
  const double two_hop = propagated_accuracy(ds, 2);
  CHECK(raw > chance + 0.08);
  // Propagation averages noise over same-class neighbours: the reason to run a GNN here.
  CHECK(two_hop > raw + 0.25);
  CHECK(two_hop > 0.8);

  // With no signal the features say nothing about the class.
  SbmConfig cfg = small_config();
  cfg.signal = 0;
  CHECK(propagated_accuracy(generate_sbm(cfg), 0) < chance + 0.05);
}

TEST_CASE("sbm: splits have the configured sizes and are disjoint and sorted") {
  SbmConfig cfg = small_config();
  cfg.train_frac = 0.1;
  cfg.val_frac = 0.25;
  cfg.test_frac = 0.5;
  const SbmDataset ds = generate_sbm(cfg);
  CHECK(ds.train.size() == 300);
  CHECK(ds.val.size() == 750);
  CHECK(ds.test.size() == 1500);
  std::set<int32_t> all;
  for (const auto* split : {&ds.train, &ds.val, &ds.test}) {
    CHECK(std::is_sorted(split->begin(), split->end()));
    for (int32_t v : *split) {
      REQUIRE(v >= 0);
      REQUIRE(v < 3000);
      all.insert(v);
    }
  }
  CHECK(all.size() == 300 + 750 + 1500);
}

TEST_CASE("sbm: impossible parameters are OptionErrors") {
  SbmConfig cfg = small_config();
  cfg.classes = 3001;
  CHECK_THROWS_AS(generate_sbm(cfg), OptionError);
  cfg = small_config();
  cfg.homophily = 1.5;
  CHECK_THROWS_AS(generate_sbm(cfg), OptionError);
  cfg = small_config();
  cfg.train_frac = 0.7;
  cfg.val_frac = 0.3;
  cfg.test_frac = 0.1;
  CHECK_THROWS_AS(generate_sbm(cfg), OptionError);
  cfg = small_config();
  cfg.avg_degree = 3000;
  CHECK_THROWS_AS(generate_sbm(cfg), OptionError);
  // 1000 classes of 3: a vertex cannot have 9 within-class neighbours.
  cfg = small_config();
  cfg.classes = 1000;
  CHECK_THROWS_WITH(generate_sbm(cfg), Catch::Contains("within-class"));
  cfg = small_config();
  cfg.degree_skew = 1.0;
  CHECK_THROWS_AS(generate_sbm(cfg), OptionError);
}

TEST_CASE("sbm: a dense small graph still reaches its edge count") {
  SbmConfig cfg;
  cfg.vertices = 60;
  cfg.classes = 3;
  cfg.avg_degree = 15;  // about half of the within-class pairs: many duplicates to top up
  cfg.homophily = 0.8;
  const SbmDataset ds = generate_sbm(cfg);
  CHECK(ds.num_edges() == 450);
}
