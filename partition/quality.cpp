// Partition quality: what a partition costs per layer (edges cut, halo rows exchanged) and how
// evenly it spreads the work.
#include <algorithm>
#include <string>

#include "dgnn/common/error.hpp"
#include "dgnn/partition/partition.hpp"

namespace dgnn {

void check_assignment(const Csr& g, const std::vector<int32_t>& part, int parts) {
  if (parts < 1)
    throw OptionError("the number of parts must be >= 1, got " + std::to_string(parts));
  if (int64_t(part.size()) != g.rows)
    throw OptionError("a partition of " + std::to_string(part.size()) +
                      " vertices does not fit a graph of " + std::to_string(g.rows));
  for (size_t v = 0; v < part.size(); ++v)
    if (part[v] < 0 || part[v] >= parts)
      throw OptionError("vertex " + std::to_string(v) + " is assigned to part " +
                        std::to_string(part[v]) + ", outside [0, " + std::to_string(parts) + ")");
}

PartitionQuality partition_quality(const Csr& g, const std::vector<int32_t>& part, int parts,
                                   const std::vector<int32_t>& train) {
  check_assignment(g, part, parts);
  PartitionQuality q;
  q.per_part.assign(size_t(parts), {});
  const int64_t n = g.rows;

  // Vertices grouped by part, so one stamp array finds each part's distinct remote sources.
  std::vector<int64_t> start(size_t(parts) + 1, 0);
  for (int32_t p : part) ++start[p + 1];
  for (int p = 0; p < parts; ++p) start[p + 1] += start[p];
  std::vector<int32_t> by_part(static_cast<size_t>(n));
  std::vector<int64_t> fill(start.begin(), start.end() - 1);
  for (int64_t v = 0; v < n; ++v) by_part[fill[part[v]]++] = int32_t(v);

  std::vector<int32_t> seen_by(size_t(n), -1);
  for (int p = 0; p < parts; ++p) {
    PartQuality& pq = q.per_part[p];
    pq.vertices = start[p + 1] - start[p];
    for (int64_t i = start[p]; i < start[p + 1]; ++i) {
      const int32_t v = by_part[i];
      pq.edges += g.degree(v);
      for (int64_t e = g.offsets[v]; e < g.offsets[v + 1]; ++e) {
        const int32_t u = g.indices[e];
        if (part[u] == p) continue;
        ++q.edge_cut;
        if (seen_by[u] != p) {
          seen_by[u] = p;
          ++pq.halo;
        }
      }
    }
    q.halo_vertices += pq.halo;
  }
  for (int32_t v : train) {
    if (v < 0 || v >= n)
      throw OptionError("training vertex " + std::to_string(v) + " is not a vertex of the graph");
    ++q.per_part[part[v]].train;
  }

  auto balance = [&](int64_t PartQuality::*field) {
    int64_t total = 0, most = 0;
    for (const PartQuality& pq : q.per_part) total += pq.*field, most = std::max(most, pq.*field);
    // An empty quantity is perfectly balanced.
    return total == 0 ? 1.0 : double(most) * parts / double(total);
  };
  q.vertex_balance = balance(&PartQuality::vertices);
  q.edge_balance = balance(&PartQuality::edges);
  return q;
}

int64_t union_halo_rows(const Csr& u, const std::vector<int32_t>& part) {
  DGNN_CHECK(int64_t(part.size()) == u.rows && u.rows == u.cols, ShapeError,
             "union_halo_rows: one part per vertex of a square graph");
  const Csr t = u.transpose();
  int64_t rows = 0;
  std::vector<int32_t> seen;
  for (int64_t v = 0; v < u.rows; ++v) {
    seen.clear();
    for (const Csr* g : {&u, &t})
      for (int64_t k = g->offsets[size_t(v)]; k < g->offsets[size_t(v) + 1]; ++k) {
        const int32_t q = part[size_t(g->indices[size_t(k)])];
        if (q != part[size_t(v)]) seen.push_back(q);
      }
    std::sort(seen.begin(), seen.end());
    rows += std::unique(seen.begin(), seen.end()) - seen.begin();
  }
  return rows;
}

}  // namespace dgnn
