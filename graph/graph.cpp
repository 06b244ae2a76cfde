// Relabelling raw edges to dense ids and building the in-edge CSR, with the edge policies.
#include "dgnn/graph/graph.hpp"

#include <algorithm>
#include <limits>
#include <string>

#include "dgnn/common/error.hpp"
#include "dgnn/graph/cache.hpp"

namespace dgnn {

namespace {

constexpr int64_t kMaxVertices = std::numeric_limits<int32_t>::max();

// Dense ids of all endpoints, in edge order, plus the sorted original ids. A direct array when
// the id range is small relative to the id count (one pass, no sort); sort + unique otherwise
// (ids up to 2^63 need no memory proportional to their value).
struct Relabel {
  std::vector<int64_t> original;  // dense -> original, ascending
  std::vector<int32_t> src, dst;  // dense endpoints per edge
};

Relabel relabel(const EdgeList& e, const std::vector<int64_t>& extra, int64_t min_vertices) {
  const size_t m = e.src.size();
  int64_t max_id = min_vertices - 1;
  for (size_t i = 0; i < m; ++i) max_id = std::max({max_id, e.src[i], e.dst[i]});
  for (int64_t v : extra) {
    DGNN_CHECK(v >= 0, OptionError, "build_graph: negative extra vertex id " + std::to_string(v));
    max_id = std::max(max_id, v);
  }
  const int64_t id_count = int64_t(2 * m + extra.size()) + std::max<int64_t>(min_vertices, 0);
  Relabel r;
  r.src.resize(m);
  r.dst.resize(m);
  if (max_id < 4 * id_count + (1 << 20)) {
    std::vector<int32_t> map(size_t(max_id + 1), 0);
    for (size_t i = 0; i < m; ++i) map[e.src[i]] = map[e.dst[i]] = 1;
    for (int64_t v : extra) map[v] = 1;
    for (int64_t v = 0; v < min_vertices; ++v) map[v] = 1;
    int64_t n = 0;
    for (int64_t v = 0; v <= max_id; ++v) n += map[v];
    DGNN_CHECK(n <= kMaxVertices, Error, "graph has more than 2^31-1 vertices");
    r.original.resize(n);
    int32_t next = 0;
    for (int64_t v = 0; v <= max_id; ++v) {
      if (map[v]) {
        r.original[next] = v;
        map[v] = next++;
      }
    }
    for (size_t i = 0; i < m; ++i) {
      r.src[i] = map[e.src[i]];
      r.dst[i] = map[e.dst[i]];
    }
    return r;
  }
  std::vector<int64_t>& ids = r.original;
  ids.reserve(size_t(id_count));
  ids.insert(ids.end(), e.src.begin(), e.src.end());
  ids.insert(ids.end(), e.dst.begin(), e.dst.end());
  ids.insert(ids.end(), extra.begin(), extra.end());
  for (int64_t v = 0; v < min_vertices; ++v) ids.push_back(v);
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  ids.shrink_to_fit();
  DGNN_CHECK(int64_t(ids.size()) <= kMaxVertices, Error, "graph has more than 2^31-1 vertices");
  auto find = [&](int64_t v) {
    return int32_t(std::lower_bound(ids.begin(), ids.end(), v) - ids.begin());
  };
  for (size_t i = 0; i < m; ++i) {
    r.src[i] = find(e.src[i]);
    r.dst[i] = find(e.dst[i]);
  }
  return r;
}

// Merges equal neighbours within each (sorted) row in place, summing weights; returns how many
// stored entries were removed.
int64_t merge_duplicates(Csr& c) {
  const bool weighted = c.weighted();
  int64_t out = 0, removed = 0;
  int64_t begin = 0;
  for (int64_t r = 0; r < c.rows; ++r) {
    const int64_t end = c.offsets[r + 1];
    const int64_t row_start = out;
    for (int64_t e = begin; e < end; ++e) {
      if (out > row_start && c.indices[out - 1] == c.indices[e]) {
        if (weighted) c.values[out - 1] += c.values[e];
        ++removed;
        continue;
      }
      c.indices[out] = c.indices[e];
      if (weighted) c.values[out] = c.values[e];
      ++out;
    }
    begin = end;
    c.offsets[r + 1] = out;
  }
  c.indices.resize(out);
  if (weighted) c.values.resize(out);
  return removed;
}

}  // namespace

int64_t Graph::dense_id(int64_t original) const {
  auto it = std::lower_bound(original_ids.begin(), original_ids.end(), original);
  return it != original_ids.end() && *it == original ? int64_t(it - original_ids.begin()) : -1;
}

Graph build_graph(const EdgeList& edges, const EdgeListOptions& opt,
                  const std::vector<int64_t>& extra_ids, int64_t min_vertices) {
  DGNN_CHECK(edges.src.size() == edges.dst.size(), ShapeError, "build_graph: src/dst differ");
  const bool weighted = !edges.weight.empty();
  DGNN_CHECK(!weighted || edges.weight.size() == edges.src.size(), ShapeError,
             "build_graph: one weight per edge expected");
  Relabel r = relabel(edges, extra_ids, min_vertices);
  Graph g;
  g.directed = opt.directed;
  g.input_edges = int64_t(edges.src.size());
  const int64_t n = int64_t(r.original.size());

  // Row = destination (in-edges). An undirected edge is stored both ways, a self-loop once.
  const size_t m = r.src.size();
  std::vector<int32_t> row, col;
  std::vector<float> w;
  row.reserve(opt.directed ? m : 2 * m);
  col.reserve(row.capacity());
  if (weighted) w.reserve(row.capacity());
  for (size_t i = 0; i < m; ++i) {
    const int32_t s = r.src[i], d = r.dst[i];
    if (s == d && opt.self_loops == SelfLoops::remove) {
      ++g.self_loops_removed;
      continue;
    }
    row.push_back(d);
    col.push_back(s);
    if (weighted) w.push_back(edges.weight[i]);
    if (!opt.directed && s != d) {
      row.push_back(s);
      col.push_back(d);
      if (weighted) w.push_back(edges.weight[i]);
    }
  }
  r.src = {};
  r.dst = {};
  g.in = csr_from_coo(n, n, row, col, w);
  if (opt.duplicates == Duplicates::merge) g.duplicates_merged = merge_duplicates(g.in);
  g.original_ids = std::move(r.original);
  return g;
}

void add_isolated_vertices(Graph& g, std::vector<int64_t> ids) {
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  std::erase_if(ids, [&](int64_t v) { return g.dense_id(v) >= 0; });
  if (ids.empty()) return;
  DGNN_CHECK(ids.front() >= 0, OptionError, "add_isolated_vertices: negative id");
  const int64_t old_n = g.num_vertices();
  const int64_t n = old_n + int64_t(ids.size());
  DGNN_CHECK(n <= kMaxVertices, Error, "graph has more than 2^31-1 vertices");
  std::vector<int64_t> merged(static_cast<size_t>(n));
  std::merge(g.original_ids.begin(), g.original_ids.end(), ids.begin(), ids.end(), merged.begin());
  // Old dense ids keep their relative order, so the remap is monotone and rows stay sorted.
  std::vector<int32_t> remap(static_cast<size_t>(old_n));
  std::vector<int64_t> offsets(size_t(n) + 1, 0);
  for (int64_t j = 0, i = 0; j < n; ++j) {
    int64_t deg = 0;
    if (i < old_n && merged[j] == g.original_ids[i]) {
      remap[i] = int32_t(j);
      deg = g.in.degree(i);
      ++i;
    }
    offsets[j + 1] = offsets[j] + deg;
  }
  for (int32_t& c : g.in.indices) c = remap[c];
  g.in.rows = g.in.cols = n;
  g.in.offsets = std::move(offsets);
  g.original_ids = std::move(merged);
}

Graph load_graph(const std::string& path, const EdgeListOptions& opt, int64_t min_vertices) {
  if (opt.use_cache) {
    if (auto cached = cache_load(path, opt, min_vertices)) return std::move(*cached);
  }
  EdgeList edges = read_edge_list(path, opt);
  if (opt.progress) opt.progress("build", 0.0);
  Graph g = build_graph(edges, opt, {}, min_vertices);
  if (opt.progress) opt.progress("build", 1.0);
  if (opt.use_cache) cache_store(path, opt, min_vertices, g);
  return g;
}

}  // namespace dgnn
