#include <algorithm>
#include <catch2/catch.hpp>
#include <vector>

#include "dgnn/common/error.hpp"
#include "dgnn/common/hash_rng.hpp"
#include "dgnn/datasets/sbm.hpp"
#include "dgnn/partition/partition.hpp"

using namespace dgnn;

namespace {

Dataset sbm(int64_t n = 2000, double skew = 0.0, uint64_t seed = 3) {
  SbmConfig c;
  c.vertices = n;
  c.classes = 4;
  c.avg_degree = 10;
  c.feature_dim = 4;
  c.degree_skew = skew;
  c.seed = seed;
  return generate_sbm(c).to_dataset();
}

// An undirected graph given as pairs, stored both ways.
Csr undirected(int64_t n, const std::vector<std::pair<int, int>>& pairs) {
  std::vector<int32_t> row, col;
  for (auto [a, b] : pairs) {
    row.push_back(b), col.push_back(a);
    row.push_back(a), col.push_back(b);
  }
  return csr_from_coo(n, n, row, col, {});
}

std::vector<int64_t> sizes(const std::vector<int32_t>& part, int parts) {
  std::vector<int64_t> s(static_cast<size_t>(parts), 0);
  for (int32_t p : part) {
    REQUIRE(p >= 0);
    REQUIRE(p < parts);
    ++s[p];
  }
  return s;
}

PartitionOptions options(Partitioner m, int parts, uint64_t seed = 0) {
  PartitionOptions o;
  o.method = m;
  o.parts = parts;
  o.seed = seed;
  return o;
}

}  // namespace

TEST_CASE("partitioner names round-trip and unknown names are option errors") {
  for (Partitioner p : {Partitioner::metis, Partitioner::ptscotch, Partitioner::random,
                        Partitioner::hash, Partitioner::range})
    CHECK(parse_partitioner(partitioner_name(p)) == p);
  CHECK_THROWS_AS(parse_partitioner("kahip"), OptionError);
  CHECK(parse_metis_objective("volume") == MetisObjective::volume);
  CHECK_THROWS_AS(parse_metis_objective("speed"), OptionError);
}

TEST_CASE("every partitioner assigns every vertex to a valid, non-empty part") {
  const Dataset d = sbm();
  const int64_t n = d.num_vertices();
  for (Partitioner m :
       {Partitioner::metis, Partitioner::random, Partitioner::hash, Partitioner::range}) {
    for (int parts : {2, 3, 7, 16}) {
      INFO(partitioner_name(m) << " into " << parts);
      const auto part = partition_vertices(d.graph.in, options(m, parts));
      REQUIRE(int64_t(part.size()) == n);
      const auto s = sizes(part, parts);
      const int64_t lo = *std::min_element(s.begin(), s.end());
      const int64_t hi = *std::max_element(s.begin(), s.end());
      CHECK(lo > 0);
      if (m == Partitioner::random || m == Partitioner::range) CHECK(hi - lo <= 1);
      // METIS keeps max/mean within its ufactor (1.03), up to rounding on small parts.
      if (m == Partitioner::metis) CHECK(double(hi) * parts / double(n) <= 1.035);
      if (m == Partitioner::hash) CHECK(double(hi) * parts / double(n) <= 1.25);
    }
  }
}

TEST_CASE("range partitions are contiguous blocks in id order") {
  const Dataset d = sbm(1000);
  const auto part = partition_vertices(d.graph.in, options(Partitioner::range, 3));
  CHECK(std::is_sorted(part.begin(), part.end()));
  CHECK(sizes(part, 3) == std::vector<int64_t>{334, 333, 333});
}

TEST_CASE("hash partitions depend on the vertex id only") {
  const Dataset d = sbm(500);
  const auto a = partition_vertices(d.graph.in, options(Partitioner::hash, 5, 1));
  const auto b = partition_vertices(d.graph.in, options(Partitioner::hash, 5, 2));
  CHECK(a == b);
  for (size_t v = 0; v < a.size(); ++v) CHECK(a[v] == int32_t(mix64(v) % 5));
}

TEST_CASE("partitions are deterministic by seed") {
  const Dataset d = sbm();
  for (Partitioner m : {Partitioner::metis, Partitioner::random}) {
    INFO(partitioner_name(m));
    const auto a = partition_vertices(d.graph.in, options(m, 4, 11));
    const auto b = partition_vertices(d.graph.in, options(m, 4, 11));
    const auto c = partition_vertices(d.graph.in, options(m, 4, 12));
    CHECK(a == b);
    CHECK(a != c);
  }
}

TEST_CASE("one part is all zeros for every partitioner") {
  const Dataset d = sbm(300);
  for (Partitioner m :
       {Partitioner::metis, Partitioner::random, Partitioner::hash, Partitioner::range})
    CHECK(partition_vertices(d.graph.in, options(m, 1)) == std::vector<int32_t>(300, 0));
}

TEST_CASE("impossible partition options are option errors") {
  const Csr g = undirected(4, {{0, 1}, {2, 3}});
  CHECK_THROWS_AS(partition_vertices(g, options(Partitioner::metis, 0)), OptionError);
  CHECK_THROWS_AS(partition_vertices(g, options(Partitioner::random, 5)), OptionError);
  PartitionOptions o = options(Partitioner::metis, 2);
  o.imbalance = 0.9;
  CHECK_THROWS_AS(partition_vertices(g, o), OptionError);
}

TEST_CASE("METIS cuts only the bridge between two dense clusters") {
  // Two 20-cliques (0..19 and 20..39) joined by the single edge 7 - 33.
  std::vector<std::pair<int, int>> pairs;
  for (int base : {0, 20})
    for (int a = 0; a < 20; ++a)
      for (int b = a + 1; b < 20; ++b) pairs.emplace_back(base + a, base + b);
  pairs.emplace_back(7, 33);
  const Csr g = undirected(40, pairs);
  for (uint64_t seed : {0, 1, 2}) {
    const auto part = partition_vertices(g, options(Partitioner::metis, 2, seed));
    for (int v = 1; v < 20; ++v) CHECK(part[v] == part[0]);
    for (int v = 21; v < 40; ++v) CHECK(part[v] == part[20]);
    CHECK(part[0] != part[20]);
    const PartitionQuality q = partition_quality(g, part, 2);
    CHECK(q.edge_cut == 2);  // the bridge, stored both ways
    CHECK(q.halo_vertices == 2);
  }
}

TEST_CASE("METIS partitions a directed graph through its symmetrised structure") {
  // Two directed 10-cycles with chords, one edge from the first to the second.
  std::vector<int32_t> row, col;
  auto edge = [&](int u, int v) { row.push_back(v), col.push_back(u); };
  for (int base : {0, 10})
    for (int i = 0; i < 10; ++i) {
      edge(base + i, base + (i + 1) % 10);
      edge(base + i, base + (i + 3) % 10);
    }
  edge(4, 15);
  const Csr g = csr_from_coo(20, 20, row, col, {});
  const auto part = partition_vertices(g, options(Partitioner::metis, 2));
  const PartitionQuality q = partition_quality(g, part, 2);
  CHECK(q.edge_cut == 1);
  CHECK(q.halo_vertices == 1);
}

TEST_CASE("METIS handles a graph without edges") {
  const Csr g = csr_from_coo(10, 10, {}, {}, {});
  const auto part = partition_vertices(g, options(Partitioner::metis, 3));
  const auto s = sizes(part, 3);
  CHECK(*std::max_element(s.begin(), s.end()) - *std::min_element(s.begin(), s.end()) <= 1);
}

TEST_CASE("extra METIS constraints balance in-edges and training vertices") {
  const Dataset d = sbm(4000, 0.5);  // power-law degrees: vertex balance alone skews edges
  PartitionOptions o = options(Partitioner::metis, 8);
  o.balance_edges = true;
  o.balance_train = true;
  const auto part = partition_vertices(d.graph.in, o, d.train);
  const PartitionQuality q = partition_quality(d.graph.in, part, 8, d.train);
  CHECK(q.vertex_balance <= 1.05);
  CHECK(q.edge_balance <= 1.05);
  int64_t most = 0;
  for (const PartQuality& p : q.per_part) most = std::max(most, p.train);
  CHECK(double(most) * 8 / double(d.train.size()) <= 1.05);
}

TEST_CASE("the volume objective is accepted and gives a valid partition") {
  const Dataset d = sbm();
  PartitionOptions o = options(Partitioner::metis, 4);
  o.objective = MetisObjective::volume;
  const auto part = partition_vertices(d.graph.in, o);
  const auto s = sizes(part, 4);
  CHECK(*std::min_element(s.begin(), s.end()) > 0);
  const auto rnd = partition_vertices(d.graph.in, options(Partitioner::random, 4));
  CHECK(partition_quality(d.graph.in, part, 4).halo_vertices <
        partition_quality(d.graph.in, rnd, 4).halo_vertices);
}
