#include "dgnn/graph/stats.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace dgnn {

namespace {

// Union-find with path halving and union by size: near-linear, no recursion.
class DisjointSets {
 public:
  explicit DisjointSets(int64_t n) : parent_(n), size_(n, 1) {
    std::iota(parent_.begin(), parent_.end(), 0);
  }
  int64_t find(int64_t x) {
    while (parent_[x] != x) {
      parent_[x] = parent_[parent_[x]];
      x = parent_[x];
    }
    return x;
  }
  void unite(int64_t a, int64_t b) {
    a = find(a);
    b = find(b);
    if (a == b) return;
    if (size_[a] < size_[b]) std::swap(a, b);
    parent_[b] = a;
    size_[a] += size_[b];
  }
  int64_t size_of_root(int64_t r) const { return size_[r]; }

 private:
  std::vector<int64_t> parent_;
  std::vector<int64_t> size_;
};

DegreeStats degree_stats(std::vector<int64_t> deg) {
  DegreeStats s;
  if (deg.empty()) return s;
  auto [lo, hi] = std::minmax_element(deg.begin(), deg.end());
  s.min = *lo;
  s.max = *hi;
  s.mean = double(std::accumulate(deg.begin(), deg.end(), int64_t(0))) / double(deg.size());
  s.median = quantile(deg, 0.5);
  s.p99 = quantile(deg, 0.99);
  return s;
}

}  // namespace

double quantile(std::vector<int64_t>& values, double q) {
  if (values.empty()) return 0.0;
  const double pos = q * double(values.size() - 1);
  const size_t lo = size_t(std::floor(pos));
  std::nth_element(values.begin(), values.begin() + lo, values.end());
  const double a = double(values[lo]);
  if (lo + 1 >= values.size()) return a;
  // The next rank is the smallest element of the upper part nth_element left behind.
  const double b = double(*std::min_element(values.begin() + lo + 1, values.end()));
  return a + (b - a) * (pos - double(lo));
}

GraphStats graph_stats(const Graph& g) {
  const Csr& in = g.in;
  const int64_t n = in.rows;
  GraphStats s;
  s.vertices = n;
  s.stored_edges = in.nnz();
  s.directed = g.directed;

  // Row v of `in` lists the sources of edges u -> v.
  std::vector<int64_t> in_deg(n), out_deg(n, 0);
  DisjointSets sets(n);
  for (int64_t v = 0; v < n; ++v) {
    in_deg[v] = in.degree(v);
    for (int64_t e = in.offsets[v]; e < in.offsets[v + 1]; ++e) {
      const int64_t u = in.indices[e];
      ++out_deg[u];
      if (u == v) {
        ++s.self_loops;
      } else {
        sets.unite(u, v);
      }
    }
  }
  s.edges = g.directed ? s.stored_edges : (s.stored_edges - s.self_loops) / 2 + s.self_loops;
  for (int64_t v = 0; v < n; ++v) s.isolated += in_deg[v] == 0 && out_deg[v] == 0;
  for (int64_t v = 0; v < n; ++v) {
    if (sets.find(v) != v) continue;
    ++s.components;
    s.largest_component = std::max(s.largest_component, sets.size_of_root(v));
  }
  s.in_degree = degree_stats(std::move(in_deg));
  s.out_degree = g.directed ? degree_stats(std::move(out_deg)) : s.in_degree;
  s.csr_bytes = in.memory_bytes();
  s.id_map_bytes = int64_t(g.original_ids.size() * sizeof(int64_t));
  return s;
}

}  // namespace dgnn
