#include <catch2/catch.hpp>
#include <vector>

#include "dgnn/common/error.hpp"
#include "dgnn/partition/partition.hpp"

using namespace dgnn;

namespace {

// Directed edges u -> v of a 6-vertex graph; parts {0,1,2} {3,4} {5}.
//   in(0) = {1,2,3}  in(1) = {0,3}  in(2) = {}  in(3) = {4,5}  in(4) = {5}  in(5) = {0,1}
Csr hand_graph() {
  const std::vector<std::pair<int, int>> edges = {{1, 0}, {2, 0}, {3, 0}, {0, 1}, {3, 1},
                                                  {4, 3}, {5, 3}, {5, 4}, {0, 5}, {1, 5}};
  std::vector<int32_t> row, col;
  for (auto [u, v] : edges) row.push_back(v), col.push_back(u);
  return csr_from_coo(6, 6, row, col, {});
}

}  // namespace

TEST_CASE("partition quality is exact on a hand-made directed graph") {
  const Csr g = hand_graph();
  const std::vector<int32_t> part = {0, 0, 0, 1, 1, 2};
  const PartitionQuality q = partition_quality(g, part, 3, {0, 2, 3, 5});
  // Cut in-edges: 3->0, 3->1 (part 0), 5->3, 5->4 (part 1), 0->5, 1->5 (part 2).
  CHECK(q.edge_cut == 6);
  // Distinct remote sources: {3} for part 0, {5} for part 1, {0,1} for part 2.
  CHECK(q.halo_vertices == 4);
  REQUIRE(q.per_part.size() == 3);
  CHECK(q.per_part[0].vertices == 3);
  CHECK(q.per_part[1].vertices == 2);
  CHECK(q.per_part[2].vertices == 1);
  CHECK(q.per_part[0].edges == 5);
  CHECK(q.per_part[1].edges == 3);
  CHECK(q.per_part[2].edges == 2);
  CHECK(q.per_part[0].halo == 1);
  CHECK(q.per_part[1].halo == 1);
  CHECK(q.per_part[2].halo == 2);
  CHECK(q.per_part[0].train == 2);
  CHECK(q.per_part[1].train == 1);
  CHECK(q.per_part[2].train == 1);
  CHECK(q.vertex_balance == Approx(1.5));  // 3 / (6 / 3)
  CHECK(q.edge_balance == Approx(1.5));    // 5 / (10 / 3)
}

TEST_CASE("one part has no cut, no halo and perfect balance") {
  const PartitionQuality q = partition_quality(hand_graph(), std::vector<int32_t>(6, 0), 1);
  CHECK(q.edge_cut == 0);
  CHECK(q.halo_vertices == 0);
  CHECK(q.vertex_balance == 1.0);
  CHECK(q.edge_balance == 1.0);
  CHECK(q.per_part[0].edges == 10);
}

TEST_CASE("an empty part counts in the balance") {
  const PartitionQuality q = partition_quality(hand_graph(), {0, 0, 0, 1, 1, 1}, 3);
  CHECK(q.per_part[2].vertices == 0);
  CHECK(q.vertex_balance == Approx(1.5));
}

TEST_CASE("assignments that do not fit the graph are option errors") {
  const Csr g = hand_graph();
  CHECK_THROWS_AS(partition_quality(g, {0, 0, 0}, 2), OptionError);
  CHECK_THROWS_AS(partition_quality(g, {0, 0, 0, 1, 1, 2}, 2), OptionError);
  CHECK_THROWS_AS(partition_quality(g, {0, 0, 0, 1, 1, -1}, 2), OptionError);
  CHECK_THROWS_AS(partition_quality(g, {0, 0, 0, 1, 1, 1}, 2, {9}), OptionError);
}

TEST_CASE("a temporal union's halo rows count neighbours in either direction") {
  // A union holds an undirected pair once, (dst, src) as its first event had it: 1 -> 0,
  // 1 -> 2, 2 -> 3; parts {0, 1} {2, 3}. Vertex 1's row goes to part 1 (neighbour 2) and
  // vertex 2's to part 0 (neighbour 1): 2 rows, where the in-neighbour count sees only 2's
  // in-neighbour 1.
  const Csr u = csr_from_coo(4, 4, {0, 2, 3}, {1, 1, 2}, {});
  const std::vector<int32_t> part = {0, 0, 1, 1};
  CHECK(union_halo_rows(u, part) == 2);
  CHECK(partition_quality(u, part, 2).halo_vertices == 1);
  // Parts {1} {0} {2, 3}: vertex 1's neighbours 0 and 2 are on two other parts, so its row goes
  // to both; 0's goes to part 0, 2's to part 0, 3's nowhere.
  CHECK(union_halo_rows(u, {1, 0, 2, 2}) == 4);
  CHECK_THROWS_AS(union_halo_rows(u, {0, 1}), ShapeError);
}
