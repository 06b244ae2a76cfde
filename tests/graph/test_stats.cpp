#include <catch2/catch.hpp>
#include <numeric>
#include <vector>

#include "dgnn/graph/stats.hpp"

using namespace dgnn;

namespace {

// A graph from directed (src, dst) pairs; undirected graphs store each pair both ways, as
// build_graph does, and self loops once.
Graph make_graph(int64_t n, const std::vector<std::pair<int32_t, int32_t>>& edges, bool directed) {
  std::vector<int32_t> row, col;
  for (auto [u, v] : edges) {
    row.push_back(v);  // row = destination
    col.push_back(u);
    if (!directed && u != v) {
      row.push_back(u);
      col.push_back(v);
    }
  }
  Graph g;
  g.in = csr_from_coo(n, n, row, col, {});
  g.directed = directed;
  g.original_ids.resize(n);
  std::iota(g.original_ids.begin(), g.original_ids.end(), 100);
  return g;
}

}  // namespace

TEST_CASE("stats: path + isolated vertex + triangle, undirected") {
  // 0-1-2-3 path, 4 alone, 5-6-7 triangle.
  const Graph g = make_graph(8, {{0, 1}, {1, 2}, {2, 3}, {5, 6}, {6, 7}, {7, 5}}, false);
  const GraphStats s = graph_stats(g);
  CHECK(s.vertices == 8);
  CHECK(s.stored_edges == 12);
  CHECK(s.edges == 6);
  CHECK(!s.directed);
  CHECK(s.self_loops == 0);
  CHECK(s.isolated == 1);
  CHECK(s.components == 3);
  CHECK(s.largest_component == 4);
  // Degrees 1 2 2 1 0 2 2 2.
  CHECK(s.in_degree.min == 0);
  CHECK(s.in_degree.max == 2);
  CHECK(s.in_degree.mean == Approx(1.5));
  CHECK(s.in_degree.median == Approx(2.0));
  CHECK(s.in_degree.p99 == Approx(2.0));
  CHECK(s.out_degree.mean == Approx(1.5));
  CHECK(s.csr_bytes == 9 * 8 + 12 * 4);
  CHECK(s.id_map_bytes == 8 * 8);
}

TEST_CASE("stats: directed graph, weak components, in and out degrees, self loops") {
  // 0 -> 1 -> 2, 0 -> 2, 3 -> 3 (self loop only), 4 alone.
  const Graph g = make_graph(5, {{0, 1}, {1, 2}, {0, 2}, {3, 3}}, true);
  const GraphStats s = graph_stats(g);
  CHECK(s.directed);
  CHECK(s.stored_edges == 4);
  CHECK(s.edges == 4);
  CHECK(s.self_loops == 1);
  CHECK(s.isolated == 1);  // 3 has its loop, so only 4
  CHECK(s.components == 3);
  CHECK(s.largest_component == 3);
  // in: 0 1 2 1 0; out: 2 1 0 1 0.
  CHECK(s.in_degree.max == 2);
  CHECK(s.in_degree.median == Approx(1.0));
  CHECK(s.out_degree.max == 2);
  CHECK(s.out_degree.mean == Approx(0.8));
  CHECK(s.out_degree.min == 0);
}

TEST_CASE("stats: undirected self loops count once") {
  const Graph g = make_graph(3, {{0, 1}, {2, 2}}, false);
  const GraphStats s = graph_stats(g);
  CHECK(s.stored_edges == 3);
  CHECK(s.self_loops == 1);
  CHECK(s.edges == 2);
  CHECK(s.components == 2);
  CHECK(s.isolated == 0);
}

TEST_CASE("stats: quantiles interpolate between ranks") {
  std::vector<int64_t> v(100);
  std::iota(v.begin(), v.end(), 1);  // 1..100
  CHECK(quantile(v, 0.5) == Approx(50.5));
  CHECK(quantile(v, 0.99) == Approx(99.01));
  CHECK(quantile(v, 0.0) == Approx(1.0));
  CHECK(quantile(v, 1.0) == Approx(100.0));
  std::vector<int64_t> empty;
  CHECK(quantile(empty, 0.5) == 0.0);
}

TEST_CASE("stats: a million-vertex path is one component (no recursion)") {
  const int32_t n = 1000000;
  std::vector<std::pair<int32_t, int32_t>> edges;
  edges.reserve(n - 1);
  for (int32_t v = 0; v + 1 < n; ++v) edges.emplace_back(v, v + 1);
  const GraphStats s = graph_stats(make_graph(n, edges, false));
  CHECK(s.components == 1);
  CHECK(s.largest_component == n);
  CHECK(s.isolated == 0);
  CHECK(s.in_degree.min == 1);
  CHECK(s.in_degree.max == 2);
}

TEST_CASE("stats: an empty graph") {
  const GraphStats s = graph_stats(make_graph(0, {}, false));
  CHECK(s.vertices == 0);
  CHECK(s.components == 0);
  CHECK(s.in_degree.max == 0);
}
