// A graph cut into blocks of dense ids (partition/dist_graph.hpp) on one process: the blocks'
// symmetrised rows are METIS's graph, the ptscotch partitioner (sequential Scotch here) gives
// valid, balanced, reproducible parts of a sane cut, and partition_blocks on one rank gives
// partition_vertices' parts for every partitioner. The multi-rank side: tests/mpi.
#include <algorithm>
#include <catch2/catch.hpp>
#include <vector>

#include "../small_evolving.hpp"
#include "dgnn/comm/communicator.hpp"
#include "dgnn/common/error.hpp"
#include "dgnn/datasets/sbm.hpp"
#include "dgnn/dgnn_config.hpp"
#include "dgnn/partition/dist_graph.hpp"
#include "dgnn/partition/partition.hpp"
#include "dgnn/partition/symmetric.hpp"

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

PartitionOptions options(Partitioner m, int parts, uint64_t seed = 0) {
  PartitionOptions o;
  o.method = m;
  o.parts = parts;
  o.seed = seed;
  return o;
}

// A directed graph with a reciprocal pair, a duplicate-free one-way edge, a self loop and an
// isolated vertex: 0 <-> 1, 1 -> 2, 2 -> 2, 3 -> 0; vertex 4 alone.
Csr small_directed() {
  std::vector<int32_t> dst{1, 0, 2, 2, 0}, src{0, 1, 1, 2, 3};
  return csr_from_coo(5, 5, dst, src, {});
}

// `g` made directed: some edges kept one way only, a few duplicated, self loops added.
Csr directed(const Csr& g) {
  std::vector<int32_t> dst, src;
  for (int32_t v = 0; v < g.rows; ++v) {
    for (int64_t k = g.offsets[size_t(v)]; k < g.offsets[size_t(v) + 1]; ++k) {
      const int32_t u = g.indices[size_t(k)];
      if (u < v && (u + v) % 3 == 0) continue;  // one way only
      dst.push_back(v), src.push_back(u);
      if (u > v && (u + v) % 11 == 0) dst.push_back(v), src.push_back(u);
    }
    if (v % 5 == 0) dst.push_back(v), src.push_back(v);
  }
  return csr_from_coo(g.rows, g.cols, dst, src, {});
}

double max_over_mean(const std::vector<int32_t>& part, int parts) {
  std::vector<int64_t> s(size_t(parts), 0);
  for (int32_t p : part) ++s[size_t(p)];
  return double(*std::max_element(s.begin(), s.end())) * parts / double(part.size());
}

}  // namespace

TEST_CASE("ptscotch is a partitioner name") {
  CHECK(parse_partitioner("ptscotch") == Partitioner::ptscotch);
  CHECK(std::string(partitioner_name(Partitioner::ptscotch)) == "ptscotch");
  try {
    parse_partitioner("parmetis");
    FAIL("no error");
  } catch (const OptionError& e) {
    CHECK(std::string(e.what()).find("metis, ptscotch, random, hash or range") !=
          std::string::npos);
  }
}

TEST_CASE("a block's symmetrised rows are hand-computed ones, and owner finds its rank") {
  const Csr g = small_directed();
  const DistGraph whole = dist_graph_block(g, 0, 1);
  CHECK(whole.num_vertices == 5);
  CHECK(whole.vtxdist == std::vector<int64_t>{0, 5});
  // Row v: neighbours either way, no self loop; weight 2 for the reciprocal pair 0 - 1.
  CHECK(whole.adj_offsets == std::vector<int64_t>{0, 2, 4, 5, 6, 6});
  CHECK(whole.adj == std::vector<int64_t>{1, 3, 0, 2, 1, 0});
  CHECK(whole.adj_weight == std::vector<int64_t>{2, 1, 2, 1, 1, 1});
  // In-edges as stored: the self loop stays there.
  CHECK(whole.in_offsets == std::vector<int64_t>{0, 2, 3, 5, 5, 5});
  CHECK(whole.in_src == std::vector<int64_t>{1, 3, 0, 1, 2});
  CHECK(whole.in_weight.empty());

  const DistGraph b = dist_graph_block(g, 1, 2);  // vertices 2, 3, 4
  CHECK(b.vtxdist == std::vector<int64_t>{0, 2, 5});
  CHECK(b.begin() == 2);
  CHECK(b.block_size() == 3);
  CHECK(b.adj_offsets == std::vector<int64_t>{0, 1, 2, 2});
  CHECK(b.adj == std::vector<int64_t>{1, 0});
  CHECK(b.in_src == std::vector<int64_t>{1, 2});
  for (int64_t v : {0, 1}) CHECK(b.owner(v) == 0);
  for (int64_t v : {2, 3, 4}) CHECK(b.owner(v) == 1);
  CHECK_THROWS_AS(b.owner(5), ShapeError);

  // Empty blocks (more ranks than vertices): the vertex belongs to the rank whose block holds it.
  DistGraph e;
  e.num_vertices = 2;
  e.vtxdist = {0, 0, 1, 1, 2};
  CHECK(e.owner(0) == 1);
  CHECK(e.owner(1) == 3);
}

TEST_CASE("the blocks' symmetrised rows, one after the other, are METIS's graph") {
  const Csr g = directed(sbm(1500, 0.5).graph.in);
  const auto metis = detail::symmetrise_rows<int32_t>(g, g.transpose(), 0, g.rows, "too large");
  // Pairs one way (weight 1), both ways (2) and with a duplicate (3).
  for (int32_t w : {1, 2, 3}) {
    INFO("weight " << w);
    CHECK(std::count(metis.weight.begin(), metis.weight.end(), w) > 0);
  }
  for (int ranks : {1, 3, 7}) {
    INFO(ranks << " blocks");
    std::vector<int64_t> offsets{0}, adj, weight, in_src;
    for (int r = 0; r < ranks; ++r) {
      const DistGraph b = dist_graph_block(g, r, ranks);
      CHECK(b.rank == r);
      CHECK(b.block_size() == b.end() - b.begin());
      for (size_t i = 1; i < b.adj_offsets.size(); ++i)
        offsets.push_back(offsets.back() + b.adj_offsets[i] - b.adj_offsets[i - 1]);
      adj.insert(adj.end(), b.adj.begin(), b.adj.end());
      weight.insert(weight.end(), b.adj_weight.begin(), b.adj_weight.end());
      in_src.insert(in_src.end(), b.in_src.begin(), b.in_src.end());
    }
    CHECK(offsets == std::vector<int64_t>(metis.offsets.begin(), metis.offsets.end()));
    CHECK(adj == std::vector<int64_t>(metis.adj.begin(), metis.adj.end()));
    CHECK(weight == std::vector<int64_t>(metis.weight.begin(), metis.weight.end()));
    CHECK(in_src == std::vector<int64_t>(g.indices.begin(), g.indices.end()));
  }
}

TEST_CASE("combining balance columns for Scotch: each normalised to its total, summed") {
  const std::vector<int64_t> ones(4, 1), work{0, 10, 30, 0}, zeros(4, 0);
  // Only the vertex count (a column of zeros is dropped): no weights, Scotch counts vertices.
  CHECK(detail::combine_columns({&ones, &zeros}, {4, 0}, 4, 4).empty());
  // Each column scaled to the same total (2^20 here: 8 per vertex is less).
  const auto w = detail::combine_columns({&ones, &work}, {4, 40}, 4, 4);
  const int64_t t = int64_t(1) << 20;
  CHECK(w == std::vector<int64_t>{t / 4, t / 4 + t / 4, t / 4 + 3 * t / 4, t / 4});
}

#if DGNN_HAVE_SCOTCH

TEST_CASE("ptscotch on one process: valid, balanced within the imbalance, reproducible") {
  const Dataset d = sbm();
  const int64_t n = d.num_vertices();
  for (int parts : {2, 3, 8}) {
    INFO(parts << " parts");
    PartitionOptions o = options(Partitioner::ptscotch, parts, 5);
    const auto a = partition_vertices(d.graph.in, o);
    REQUIRE(int64_t(a.size()) == n);
    check_assignment(d.graph.in, a, parts);
    std::vector<int64_t> s(size_t(parts), 0);
    for (int32_t p : a) ++s[size_t(p)];
    CHECK(*std::min_element(s.begin(), s.end()) > 0);
    CHECK(max_over_mean(a, parts) <= o.imbalance + 0.002);
    // Something else partitioned in between must not change the next result.
    partition_vertices(d.graph.in, options(Partitioner::ptscotch, 5, 9));
    CHECK(partition_vertices(d.graph.in, o) == a);
    o.imbalance = 1.10;
    CHECK(max_over_mean(partition_vertices(d.graph.in, o), parts) <= 1.10 + 0.002);
  }
  const auto s1 = partition_vertices(d.graph.in, options(Partitioner::ptscotch, 4, 1));
  const auto s2 = partition_vertices(d.graph.in, options(Partitioner::ptscotch, 4, 2));
  CHECK(s1 != s2);
}

TEST_CASE("ptscotch's cut is close to METIS's and far below random's") {
  const Dataset d = sbm(3000);
  for (int parts : {2, 4, 8}) {
    INFO(parts << " parts");
    auto cut = [&](Partitioner m) {
      return partition_quality(d.graph.in, partition_vertices(d.graph.in, options(m, parts)), parts)
          .edge_cut;
    };
    const int64_t scotch = cut(Partitioner::ptscotch), metis = cut(Partitioner::metis);
    const int64_t random = cut(Partitioner::random);
    CHECK(scotch <= 2 * metis);
    CHECK(scotch * 2 < random);
  }
}

TEST_CASE("ptscotch balances the extra quantities summed into one weight") {
  const Dataset d = sbm(4000, 0.5);  // power-law degrees: vertex balance alone skews edges
  PartitionOptions o = options(Partitioner::ptscotch, 8);
  const PartitionQuality plain =
      partition_quality(d.graph.in, partition_vertices(d.graph.in, o), 8);
  o.balance_edges = true;
  const PartitionQuality both = partition_quality(d.graph.in, partition_vertices(d.graph.in, o), 8);
  // One weight (vertices + in-edges, each normalised) bounds their sum, not each: neither
  // strays far, and the edges are more even than with vertices alone.
  CHECK(both.edge_balance < plain.edge_balance);
  CHECK(both.edge_balance <= 1.15);
  CHECK(both.vertex_balance <= 1.15);
}

TEST_CASE("ptscotch handles an edgeless graph and a temporal graph's snapshot groups") {
  const Csr empty = csr_from_coo(10, 10, {}, {}, {});
  const auto part = partition_vertices(empty, options(Partitioner::ptscotch, 3));
  check_assignment(empty, part, 3);
  CHECK(max_over_mean(part, 3) <= 4.0 * 3 / 10);

  const TemporalGraph g = test::signed_temporal(test::small_evolving(), "small evolving");
  PartitionOptions o = options(Partitioner::ptscotch, 3);
  const auto t = partition_temporal(g, o);
  check_assignment(temporal_union(g), t, 3);
  CHECK(partition_temporal(g, o) == t);
  o.snapshot_groups = 0;  // the union's vertex count only: another weight, another partition
  CHECK(partition_temporal(g, o) != t);
}

TEST_CASE("partition_distributed on one rank is sequential Scotch on the block") {
  const Dataset d = sbm(1000);
  SelfCommunicator self;
  const DistGraph b = dist_graph_block(d.graph.in, 0, 1);
  const PartitionOptions o = options(Partitioner::ptscotch, 4, 3);
  CHECK(partition_distributed(b, o, self) == partition_vertices(d.graph.in, o));
  // Vertex weights replace the count: the first tenth weighs as much as the rest.
  std::vector<int64_t> w(1000, 1);
  for (int v = 0; v < 100; ++v) w[size_t(v)] = 9;
  const auto part = partition_distributed(b, o, self, w);
  std::vector<int64_t> load(4, 0);
  for (int v = 0; v < 1000; ++v) load[size_t(part[size_t(v)])] += w[size_t(v)];
  CHECK(double(*std::max_element(load.begin(), load.end())) * 4 / 1900.0 <= 1.035);
  CHECK_THROWS_AS(partition_distributed(b, o, self, std::vector<int64_t>(7, 1)), ShapeError);
}

#else

TEST_CASE("without Scotch, ptscotch is one clear option error") {
  const Dataset d = sbm(200);
  CHECK_THROWS_AS(partition_vertices(d.graph.in, options(Partitioner::ptscotch, 2)), OptionError);
  CHECK_FALSE(have_parallel_partitioner());
}

#endif

TEST_CASE("partition_blocks on one rank gives partition_vertices' parts, every partitioner") {
  const Dataset d = sbm(1200, 0.3);
  SelfCommunicator self;
  const DistGraph b = dist_graph_block(d.graph.in, 0, 1);
  std::vector<Partitioner> all{Partitioner::metis, Partitioner::random, Partitioner::hash,
                               Partitioner::range};
  if (DGNN_HAVE_SCOTCH) all.push_back(Partitioner::ptscotch);
  // A further balanced quantity: the in-degree squared (what attention-like layers cost).
  std::vector<int64_t> col(size_t(d.num_vertices()));
  for (int64_t v = 0; v < d.num_vertices(); ++v)
    col[size_t(v)] = d.graph.in.degree(v) * d.graph.in.degree(v);
  for (Partitioner m : all)
    for (int parts : {1, 3, 5}) {
      INFO(partitioner_name(m) << " into " << parts);
      PartitionOptions o = options(m, parts, 7);
      CHECK(partition_blocks(b, o, self) == partition_vertices(d.graph.in, o));
      o.balance_edges = true;
      CHECK(partition_blocks(b, o, self, {col}) == partition_vertices(d.graph.in, o, {}, {col}));
    }
  PartitionOptions o = options(Partitioner::metis, 2);
  o.balance_train = true;
  CHECK_THROWS_AS(partition_blocks(b, o, self), OptionError);
  CHECK_THROWS_AS(
      partition_blocks(b, options(Partitioner::metis, 2), self, {std::vector<int64_t>(3, 1)}),
      ShapeError);
  // Blocks of another rank count than the communicator's.
  CHECK_THROWS_AS(
      partition_blocks(dist_graph_block(d.graph.in, 0, 2), options(Partitioner::hash, 2), self),
      ShapeError);
  CHECK_THROWS_AS(partition_blocks(b, options(Partitioner::range, 0), self), OptionError);
}

TEST_CASE("what METIS's gather costs rank 0 grows with the graph, not the rank count") {
  const Dataset d = sbm(1000);
  SelfCommunicator self;
  const DistGraph b = dist_graph_block(d.graph.in, 0, 1);
  const PartitionOptions o = options(Partitioner::metis, 4);
  const int64_t bytes = metis_gather_bytes(b, self, o);
  // At least the 32-bit symmetrised rows (offsets, neighbours, weights).
  CHECK(bytes >= 4 * (1001 + 2 * int64_t(b.adj.size())));
  CHECK(metis_gather_bytes(b, self, o, 2) == bytes + 2 * 16 * 1000);
}

TEST_CASE("pieces are dealt so that every quantity is balanced") {
  // Quantity 0 is spread evenly; quantity 1 sits in pieces 0 and 3 only: they must part.
  const auto to = detail::deal_pieces({{1, 1, 1, 1}, {4, 0, 0, 4}}, 2);
  CHECK(to[0] != to[3]);
  CHECK(to[1] != to[2]);
  // A quantity of total 0 is ignored; one piece each when pieces = parts.
  const auto one = detail::deal_pieces({{5, 3, 2}, {0, 0, 0}}, 3);
  CHECK(std::vector<int32_t>{one[0], one[1], one[2]} != std::vector<int32_t>{0, 0, 0});
  CHECK(one[0] != one[1]);
  CHECK(one[1] != one[2]);
  CHECK(one[0] != one[2]);
}

#if DGNN_HAVE_SCOTCH
TEST_CASE("ptscotch over-partitioned: valid, and the same on one rank's blocks") {
  const TemporalGraph g = test::signed_temporal(test::small_evolving(), "small evolving");
  PartitionOptions o = options(Partitioner::ptscotch, 3);
  o.overpartition = 4;
  const auto part = partition_temporal(g, o);
  const Csr u = temporal_union(g);
  check_assignment(u, part, 3);
  SelfCommunicator self;
  CHECK(partition_blocks(dist_graph_block(u, 0, 1), o, self, snapshot_group_work(g, o)) == part);
}
#endif
