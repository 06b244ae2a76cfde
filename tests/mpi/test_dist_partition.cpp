// Partitioning a graph no rank holds whole (partition/dist_graph.hpp) on 2-4 ranks: each rank
// takes its block of a generated graph and partition_blocks cuts the blocks. random, hash and
// range give partition_vertices' parts on the whole graph, and so does METIS (gathered to rank 0);
// PT-Scotch gives a valid, balanced, reproducible partition whose cut is near METIS's and far
// below random's. Assertions are CHECKs (never REQUIRE after the first collective) so that a
// failing rank still takes part in every later collective.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <vector>

#include "../small_sbm.hpp"
#include "dgnn/comm/communicator.hpp"
#include "dgnn/common/error.hpp"
#include "dgnn/partition/dist_graph.hpp"
#include "dgnn/partition/partition.hpp"

using namespace dgnn;

namespace {

Communicator& multi_rank_world() {
  Communicator& comm = world();
  REQUIRE(comm.size() > 1);  // run under mpiexec -n 2 or more
  return comm;
}

PartitionOptions options(Partitioner m, int parts, uint64_t seed = 0) {
  PartitionOptions o;
  o.method = m;
  o.parts = parts;
  o.seed = seed;
  return o;
}

double vertex_balance(const std::vector<int32_t>& part, int parts) {
  std::vector<int64_t> s(size_t(parts), 0);
  for (int32_t p : part) ++s[size_t(p)];
  return double(*std::max_element(s.begin(), s.end())) * parts / double(part.size());
}

// The in-degree of each vertex of the block: a balance column as a caller would pass one.
std::vector<int64_t> degree_column(const DistGraph& b) {
  std::vector<int64_t> c(size_t(b.block_size()));
  for (int64_t i = 0; i < b.block_size(); ++i)
    c[size_t(i)] = b.in_offsets[size_t(i) + 1] - b.in_offsets[size_t(i)] + 1;
  return c;
}

}  // namespace

TEST_CASE("random, hash, range and METIS on blocks give the whole graph's parts",
          "[dist_partition]") {
  Communicator& comm = multi_rank_world();
  const Dataset d = test::small_sbm(1500, 21);  // every rank generates the same graph
  const DistGraph b = dist_graph_block(d.graph.in, comm.rank(), comm.size());
  CHECK(b.vtxdist.size() == size_t(comm.size()) + 1);
  for (Partitioner m :
       {Partitioner::metis, Partitioner::random, Partitioner::hash, Partitioner::range})
    for (int parts : {2, 3, 5}) {
      INFO(partitioner_name(m) << " into " << parts << " on " << comm.size() << " ranks");
      const PartitionOptions o = options(m, parts, 4);
      const std::vector<int32_t> mine = partition_blocks(b, o, comm);
      CHECK(int64_t(mine.size()) == b.block_size());
      const std::vector<int32_t> all = allgather_parts(b, mine, comm);
      CHECK_NOTHROW(check_assignment(d.graph.in, all, parts));
      CHECK(all == partition_vertices(d.graph.in, o));
    }
  // METIS with further constraints (in-edges, a caller's column): the same multi-constraint
  // partition as on one process.
  PartitionOptions o = options(Partitioner::metis, 4, 2);
  o.balance_edges = true;
  const std::vector<int64_t> col = degree_column(b);
  const std::vector<int32_t> all = allgather_parts(b, partition_blocks(b, o, comm, {col}), comm);
  const DistGraph whole = dist_graph_block(d.graph.in, 0, 1);
  CHECK(all == partition_vertices(d.graph.in, o, {}, {degree_column(whole)}));
}

TEST_CASE("PT-Scotch on blocks: valid, balanced, reproducible, a cut near METIS's",
          "[dist_partition]") {
  Communicator& comm = multi_rank_world();
  const Dataset d = test::small_sbm(3000, 5);
  const DistGraph b = dist_graph_block(d.graph.in, comm.rank(), comm.size());
  if (!have_parallel_partitioner()) {  // an MPI build without PT-Scotch: one clear error
    CHECK_THROWS_AS(partition_blocks(b, options(Partitioner::ptscotch, 2), comm), OptionError);
    return;
  }
  auto cut = [&](const std::vector<int32_t>& all, int parts) {
    return partition_quality(d.graph.in, all, parts).edge_cut;
  };
  for (int parts : {2, 4, 7}) {
    INFO(parts << " parts on " << comm.size() << " ranks");
    const PartitionOptions o = options(Partitioner::ptscotch, parts, 9);
    const std::vector<int32_t> mine = partition_blocks(b, o, comm);
    const std::vector<int32_t> all = allgather_parts(b, mine, comm);
    CHECK_NOTHROW(check_assignment(d.graph.in, all, parts));
    // PT-Scotch keeps to its bound less tightly than METIS: measured 1.041 for 1.03 (7 parts of
    // 3000 vertices on 4 ranks, 5 vertices over).
    CHECK(vertex_balance(all, parts) <= o.imbalance + 0.015);
    // Something else partitioned in between must not change the next result.
    partition_blocks(b, options(Partitioner::ptscotch, 3, 1), comm);
    CHECK(partition_blocks(b, o, comm) == mine);
    const int64_t metis =
        cut(partition_vertices(d.graph.in, options(Partitioner::metis, parts)), parts);
    const int64_t random =
        cut(partition_vertices(d.graph.in, options(Partitioner::random, parts)), parts);
    CHECK(cut(all, parts) <= 2 * metis);
    CHECK(cut(all, parts) * 2 < random);  // (4 classes into 7 parts: METIS's is 0.47x random's)
  }
}

TEST_CASE("PT-Scotch balances vertex weights and combined balance columns", "[dist_partition]") {
  Communicator& comm = multi_rank_world();
  if (!have_parallel_partitioner()) return;  // (the case above checks the error)
  const Dataset d = test::small_sbm(2000, 8);
  const DistGraph b = dist_graph_block(d.graph.in, comm.rank(), comm.size());
  const PartitionOptions o = options(Partitioner::ptscotch, 4, 1);
  // Vertex weights: the lowest tenth of the ids weighs 9, the rest 1.
  std::vector<int64_t> w(size_t(b.block_size()));
  for (int64_t i = 0; i < b.block_size(); ++i) w[size_t(i)] = b.begin() + i < 200 ? 9 : 1;
  const std::vector<int32_t> all = allgather_parts(b, partition_distributed(b, o, comm, w), comm);
  std::vector<double> load(4, 0);
  for (int64_t v = 0; v < 2000; ++v) load[size_t(all[size_t(v)])] += v < 200 ? 9 : 1;
  CHECK(*std::max_element(load.begin(), load.end()) * 4 / 3600.0 <= 1.04);
  // A balance column beside the vertex count: a valid partition that spreads both.
  const std::vector<int64_t> col = degree_column(b);
  const std::vector<int32_t> both = allgather_parts(b, partition_blocks(b, o, comm, {col}), comm);
  CHECK_NOTHROW(check_assignment(d.graph.in, both, 4));
  CHECK(vertex_balance(both, 4) <= 1.15);
  // Over-partitioned: pieces dealt to the parts, the same map on every rank.
  PartitionOptions over = o;
  over.overpartition = 4;
  const std::vector<int32_t> dealt =
      allgather_parts(b, partition_blocks(b, over, comm, {col}), comm);
  CHECK_NOTHROW(check_assignment(d.graph.in, dealt, 4));
  CHECK(vertex_balance(dealt, 4) <= 1.15);
  // A column of the wrong length is refused on the rank that has it, before any collective.
  if (comm.rank() == 0)
    CHECK_THROWS_AS(partition_blocks(b, o, comm, {std::vector<int64_t>(3, 1)}), ShapeError);
}

TEST_CASE("what METIS's gather costs rank 0 does not depend on the rank count",
          "[dist_partition]") {
  Communicator& comm = multi_rank_world();
  const Dataset d = test::small_sbm(1000, 3);
  const DistGraph b = dist_graph_block(d.graph.in, comm.rank(), comm.size());
  SelfCommunicator self;
  const PartitionOptions o = options(Partitioner::metis, 4);
  CHECK(metis_gather_bytes(b, comm, o, 1) ==
        metis_gather_bytes(dist_graph_block(d.graph.in, 0, 1), self, o, 1));
}
