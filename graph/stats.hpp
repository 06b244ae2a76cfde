#pragma once
// Summary statistics of a Graph (sizes, degrees, components, memory), as `dgnn info` shows them.
#include <cstdint>
#include <vector>

#include "dgnn/graph/graph.hpp"

namespace dgnn {

// Order statistics of one degree sequence. Quantiles interpolate linearly between the two
// nearest ranks (numpy's default), so the median of an even count is the mean of the middle two.
struct DegreeStats {
  int64_t min = 0;
  int64_t max = 0;
  double mean = 0;
  double median = 0;
  double p99 = 0;
};

struct GraphStats {
  int64_t vertices = 0;
  int64_t stored_edges = 0;  // CSR entries: an undirected edge counts twice, a self loop once
  int64_t edges = 0;         // as a user counts them: undirected edges once
  bool directed = false;
  int64_t self_loops = 0;  // stored entries (v, v)
  int64_t isolated = 0;    // vertices with no edge in either direction (self loops count)
  DegreeStats in_degree;   // for an undirected graph, equal to out_degree
  DegreeStats out_degree;
  // Weakly connected components for a directed graph; an isolated vertex is one component.
  int64_t components = 0;
  int64_t largest_component = 0;  // vertices
  int64_t csr_bytes = 0;
  int64_t id_map_bytes = 0;
};

// Linear-interpolated q-quantile (q in [0, 1]) of values; 0 for an empty vector. Reorders values.
double quantile(std::vector<int64_t>& values, double q);

// O(V + E), iterative (union-find), so any size of graph is safe.
GraphStats graph_stats(const Graph& g);

}  // namespace dgnn
