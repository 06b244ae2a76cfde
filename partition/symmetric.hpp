#pragma once
// Internal to partition/: the symmetrised structure the graph partitioners cut (METIS in
// partitioners.cpp, Scotch and PT-Scotch in scotch/), built by one function for a whole graph
// and for one rank's block (dist_graph.cpp), and the pieces of partition_vertices that the
// distributed dispatcher (partition_blocks) shares so that it gives the same parts.
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "dgnn/common/error.hpp"
#include "dgnn/graph/csr.hpp"
#include "dgnn/partition/partition.hpp"

namespace dgnn::detail {

// Rows of the undirected graph without self loops that a partitioner wants: row v = the union
// of v's in- and out-neighbours, each once, sorted; weight = the stored directed edges between
// the pair (1 or 2, more with kept duplicates), so that the cut minimised is exactly the
// edge_cut partition_quality reports. offsets start at 0 for the first row built.
template <class Idx>
struct SymmetricRows {
  std::vector<Idx> offsets, adj, weight;
};

// Rows [begin, end) of `in` (in-CSR: row = destination) symmetrised; `out` = in.transpose().
// Idx is the index type the partitioner takes; `too_large` is the OptionError thrown when the
// rows' neighbour count does not fit it.
template <class Idx>
SymmetricRows<Idx> symmetrise_rows(const Csr& in, const Csr& out, int64_t begin, int64_t end,
                                   const std::string& too_large) {
  SymmetricRows<Idx> m;
  const int64_t stored = in.offsets[size_t(end)] - in.offsets[size_t(begin)] +
                         out.offsets[size_t(end)] - out.offsets[size_t(begin)];
  m.offsets.assign(size_t(end - begin) + 1, 0);
  m.adj.reserve(size_t(stored));
  m.weight.reserve(size_t(stored));
  constexpr int64_t kMaxIdx = int64_t(std::numeric_limits<Idx>::max());
  for (int64_t v = begin; v < end; ++v) {
    const int64_t row_start = int64_t(m.adj.size());
    int64_t a = in.offsets[size_t(v)], a_end = in.offsets[size_t(v) + 1];
    int64_t b = out.offsets[size_t(v)], b_end = out.offsets[size_t(v) + 1];
    // Merge of two sorted lists; equal neighbours (duplicates, reciprocal edges) add up.
    while (a < a_end || b < b_end) {
      int32_t u;
      if (b >= b_end || (a < a_end && in.indices[size_t(a)] <= out.indices[size_t(b)])) {
        u = in.indices[size_t(a++)];
      } else {
        u = out.indices[size_t(b++)];
      }
      if (u == v) continue;
      if (int64_t(m.adj.size()) > row_start && m.adj.back() == Idx(u)) {
        ++m.weight.back();
      } else {
        m.adj.push_back(Idx(u));
        m.weight.push_back(1);
      }
    }
    if (int64_t(m.adj.size()) > kMaxIdx) throw OptionError(too_large);
    m.offsets[size_t(v - begin) + 1] = Idx(m.adj.size());
  }
  return m;
}

// The OptionErrors of partition_vertices for bad options; true when the answer is trivial
// (one part, or no vertex): every vertex on part 0.
bool check_partition_options(int64_t n, const PartitionOptions& opt);

// The part of each vertex of [begin, end) of a graph of n vertices under random, hash or range:
// what partition_vertices gives those vertices (random shuffles all n, whatever the range).
std::vector<int32_t> baseline_parts(int64_t n, int64_t begin, int64_t end,
                                    const PartitionOptions& opt);

// METIS k-way of a symmetrised graph held whole (n rows, 32-bit indices: METIS's idx_t).
// `columns`: the constraints, vertex count first (a column of zeros must not be among them);
// `extra`: further columns of the caller, scaled to fit 32-bit sums (a column of zeros is
// dropped). Consumes `m`.
std::vector<int32_t> metis_partition(SymmetricRows<int32_t>& m, int64_t n,
                                     const PartitionOptions& opt,
                                     std::vector<std::vector<int32_t>> columns,
                                     const std::vector<std::vector<int64_t>>& extra);

// Scotch (and PT-Scotch) balance one weight per vertex; several balanced quantities (the vertex
// count, in-edges, training vertices, the caller's columns) become one by normalising each
// column to a common total and summing: weight(v) = sum over columns c of c[v] / total(c),
// scaled to integers (at least 1 per vertex). `totals`: each column's sum over the whole graph
// (so that every rank of a distributed graph scales alike); a column summing to 0 is dropped.
// Callers put the vertex count (1 each) first: when it is the only column left, the answer is
// empty (a weight of 1 each, what Scotch assumes without weights).
std::vector<int64_t> combine_columns(const std::vector<const std::vector<int64_t>*>& columns,
                                     const std::vector<int64_t>& totals, int64_t rows,
                                     int64_t global_rows);

// Deals `pieces` pieces to `parts` parts so that every quantity is balanced: `load[c][q]` is
// quantity c's load in piece q (the sum over the whole graph), columns of total 0 ignored.
// Greedy, heaviest piece first, each to the part whose most loaded quantity (as a share of its
// total) stays lowest. Deterministic: every rank computes the same map from the same loads.
std::vector<int32_t> deal_pieces(const std::vector<std::vector<int64_t>>& load, int parts);

// ptscotch's pieces (opt.overpartition > 1): the part of each piece of `fine` given the
// columns' loads per piece over the graph, or `fine` itself when overpartition is off or only
// the vertex count is balanced. Shared by partition_vertices and partition_blocks.
bool overpartitioned(const PartitionOptions& opt, const std::vector<int64_t>& totals);

// Sequential Scotch k-way of a symmetrised graph held whole (rows as DistGraph's adj arrays:
// offsets from 0, global ids), balancing `vertex_weight` (one per row, or empty: 1 each).
// OptionError when this build has no Scotch.
std::vector<int32_t> scotch_whole(const std::vector<int64_t>& offsets,
                                  const std::vector<int64_t>& adj,
                                  const std::vector<int64_t>& adj_weight,
                                  const std::vector<int64_t>& vertex_weight,
                                  const PartitionOptions& opt);

}  // namespace dgnn::detail
