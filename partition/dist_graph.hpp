#pragma once
// A graph no rank holds whole: its vertices (dense ids) are cut into blocks of consecutive ids,
// rank r holding [vtxdist[r], vtxdist[r + 1]) with those vertices' edges. Parallel reading
// (graph/dist_read.hpp) produces it; the parallel partitioner (PT-Scotch) cuts it; the sharded
// loader (partition/dist_part.hpp) turns it and the partition into each rank's LocalPart.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "dgnn/comm/communicator.hpp"
#include "dgnn/graph/csr.hpp"
#include "dgnn/partition/partition.hpp"

namespace dgnn {

struct DistGraph {
  int64_t num_vertices = 0;      // global
  std::vector<int64_t> vtxdist;  // ranks + 1 offsets: rank r holds [vtxdist[r], vtxdist[r+1])
  // The in-edges of this rank's vertices: row i = vertex vtxdist[rank] + i, its sources as
  // global dense ids, sorted, duplicates merged as the single-process loader merges them.
  std::vector<int64_t> in_offsets;  // block_size() + 1
  std::vector<int64_t> in_src;
  std::vector<float> in_weight;  // empty when unweighted
  // The symmetrised structure of the block, what a partitioner cuts: row i = the union of the
  // vertex's in- and out-neighbours (global ids, sorted, each once, no self loop), and per
  // neighbour the number of stored directed edges between the pair (1 or 2), so that the cut a
  // partitioner minimises is partition_quality's edge_cut.
  std::vector<int64_t> adj_offsets;  // block_size() + 1
  std::vector<int64_t> adj;
  std::vector<int64_t> adj_weight;

  int rank = 0;
  int64_t begin() const { return vtxdist[size_t(rank)]; }
  int64_t end() const { return vtxdist[size_t(rank) + 1]; }
  int64_t block_size() const { return end() - begin(); }
  // The rank whose block holds global vertex v (binary search of vtxdist).
  int owner(int64_t v) const;
};

// Rank `rank`'s block of a graph held whole (`in`: in-CSR, row = destination), blocks of about
// equal vertex count: for tests, and to compare the parallel partitioner with METIS on a graph
// one process can read. The symmetrised rows are built as partition_vertices builds METIS's.
DistGraph dist_graph_block(const Csr& in, int rank, int ranks);

// Fills g's symmetrised rows (adj, adj_weight, adj_offsets) from its in-edges (in_offsets, in_src:
// sorted sources per row): in- and out-neighbours, each pair weighted by the stored entries
// between the two (partitioners.cpp's symmetrise, on the blocks). `directed` false: the in-edges
// already hold both directions of every edge. Collective (directed: out-edges move to their
// sources' blocks).
void symmetrise_blocks(DistGraph& g, bool directed, Communicator& comm);

// Whether this build has the parallel partitioner (PT-Scotch, with MPI).
bool have_parallel_partitioner();

// PT-Scotch k-way partition of `g` into opt.parts parts over all ranks of `comm` (collective;
// no rank builds the whole graph): the part of each vertex of this rank's block, in [0, parts).
// opt.imbalance bounds the vertex-count imbalance; `vertex_weight` (block_size() entries, or
// empty for 1 each) replaces the vertex count as what is balanced. PT-Scotch balances one
// weight only: callers that need several constraints (per-snapshot work) combine them first.
// Deterministic given the options and the rank count. OptionError when this build has no
// parallel partitioner.
std::vector<int32_t> partition_distributed(const DistGraph& g, const PartitionOptions& opt,
                                           Communicator& comm,
                                           const std::vector<int64_t>& vertex_weight = {});

// The part of each vertex of this rank's block under any partitioner (collective):
// - ptscotch: partition_distributed, balancing one weight: the vertex count, in-edges
//   (opt.balance_edges) and each `balance` column, every one normalised to its total over the
//   graph and summed (what partition_vertices does for ptscotch on one process). On one rank
//   this is sequential Scotch on the whole graph, the same parts as partition_vertices.
// - metis: the blocks' symmetrised rows and balance columns are gathered to rank 0, which runs
//   METIS as partition_vertices does (vertex count, in-edges, one constraint per column), and
//   the parts are scattered back: the same parts as partition_vertices on the whole graph. The
//   price is memory: rank 0 then holds the union structure of the graph (metis_gather_bytes).
// - random, hash, range: computed on each rank for its block, the same parts as
//   partition_vertices gives those dense ids (random shuffles all the vertices on every rank:
//   4 bytes per vertex of the graph while it runs).
// `balance`: block_size() weights per column, on every rank the same number of columns.
// opt.balance_train is not read (no training set here): OptionError for metis and ptscotch;
// pass the training vertices as a balance column instead.
std::vector<int32_t> partition_blocks(const DistGraph& g, const PartitionOptions& opt,
                                      Communicator& comm,
                                      const std::vector<std::vector<int64_t>>& balance = {});
// partition_blocks for a caller that needs only the parts: PT-Scotch (one pass, several ranks)
// frees g's symmetrised rows (adj, adj_weight) as soon as it holds its own 32-bit copy of them,
// so that they are not held twice at its peak (on the 100k x 30 evolving SBM, 67 of a rank's
// 387 MB at 4 ranks). Every other path leaves g as it is. g's blocks (vtxdist) stay.
std::vector<int32_t> partition_blocks_releasing(DistGraph& g, const PartitionOptions& opt,
                                                Communicator& comm,
                                                const std::vector<std::vector<int64_t>>& balance = {});

// Every vertex's part on every rank, from each rank's `mine` (its block's parts): to measure a
// partition's quality or compare it with partition_vertices'. Collective; 4 bytes per vertex.
std::vector<int32_t> allgather_parts(const DistGraph& g, const std::vector<int32_t>& mine,
                                     Communicator& comm);

// What partition_blocks with metis makes rank 0 hold, in bytes: the gathered symmetrised rows
// (32-bit), `balance_columns` gathered columns, the constraint arrays and the parts; METIS's own
// working memory (a few times the graph) comes on top. Collective. Every other partitioner keeps
// each rank at about its own block (PT-Scotch: a 32-bit copy of the block's rows, plus its
// working memory).
int64_t metis_gather_bytes(const DistGraph& g, Communicator& comm, const PartitionOptions& opt,
                           size_t balance_columns = 0);

}  // namespace dgnn
