// PT-Scotch on a graph no rank holds whole: each rank hands over its block of rows (global ids)
// and gets back the part of each of its vertices. Compiled only beside MPI (DGNN_HAVE_PTSCOTCH).
#include <mpi.h>
// (it includes scotch.h from its own folder: one SCOTCH_Num for both)
#include <ptscotch.h>

#include <string>

#include "dgnn/partition/scotch/scotch_part.hpp"

namespace dgnn::scotch {

namespace {

struct Dgraph {
  SCOTCH_Dgraph g;
  explicit Dgraph(MPI_Comm comm) { DGNN_SCOTCH_CHECK(SCOTCH_dgraphInit(&g, comm)); }
  ~Dgraph() { SCOTCH_dgraphExit(&g); }
  Dgraph(const Dgraph&) = delete;
  Dgraph& operator=(const Dgraph&) = delete;
};

}  // namespace

std::vector<int32_t> partition_dgraph(const DistGraph& g, const PartitionOptions& opt,
                                      void* mpi_comm, const std::vector<int64_t>& vertex_weight,
                                      bool weighted, int64_t weight_total) {
  check_num_size();
  MPI_Comm comm = *static_cast<MPI_Comm*>(mpi_comm);
  const int64_t n = g.block_size();
  const std::vector<SCOTCH_Num> vert = narrow<SCOTCH_Num>(g.adj_offsets, "an edge count of");
  std::vector<SCOTCH_Num> edge = narrow<SCOTCH_Num>(g.adj, "a vertex id of");
  std::vector<SCOTCH_Num> edlo = narrow<SCOTCH_Num>(g.adj_weight, "an edge weight of");
  // The weights' total over every rank decides their scale, so that all ranks scale alike.
  std::vector<SCOTCH_Num> velo;
  if (weighted) velo = scaled_weights<SCOTCH_Num>(vertex_weight, weight_total);
  // A rank whose block is empty (or edgeless) still passes arrays, never null ones.
  if (edge.empty()) edge.push_back(0), edlo.push_back(1);
  if (velo.empty() && weighted) velo.push_back(0);

  SCOTCH_errorProg("dgnn");
  Dgraph graph(comm);
  DGNN_SCOTCH_CHECK(SCOTCH_dgraphBuild(&graph.g, 0, SCOTCH_Num(n), SCOTCH_Num(n),
                                       const_cast<SCOTCH_Num*>(vert.data()), nullptr,
                                       weighted ? velo.data() : nullptr, nullptr, vert.back(),
                                       vert.back(), edge.data(), nullptr, edlo.data()));
  const int ranks = int(g.vtxdist.size()) - 1;
  Strat strat;
  DGNN_SCOTCH_CHECK(SCOTCH_stratDgraphMapBuild(&strat.s, SCOTCH_STRATQUALITY, SCOTCH_Num(ranks),
                                               SCOTCH_Num(opt.parts), opt.imbalance - 1.0));
  // Deterministic message handling and a seeded stream per rank: the same parts for the same
  // options and rank count (scotch_part.hpp, Context).
  Context context(opt.seed, g.rank);
  Dgraph bound(comm);
  DGNN_SCOTCH_CHECK(SCOTCH_contextBindDgraph(context.get(), &graph.g, &bound.g));
  std::vector<SCOTCH_Num> part(size_t(n) + 1, 0);
  DGNN_SCOTCH_CHECK(SCOTCH_dgraphPart(&bound.g, SCOTCH_Num(opt.parts), &strat.s, part.data()));
  return std::vector<int32_t>(part.begin(), part.begin() + n);
}

}  // namespace dgnn::scotch
