#pragma once
// Internal to partition/: Scotch (one process) and PT-Scotch (the ranks of an MPI job) behind
// plain arrays, so that only the files of this folder include Scotch's (and MPI's) headers.
// Compiled only in builds that found them (DGNN_HAVE_SCOTCH, DGNN_HAVE_PTSCOTCH).
#include <scotch.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "dgnn/common/error.hpp"
#include "dgnn/partition/dist_graph.hpp"
#include "dgnn/partition/partition.hpp"

namespace dgnn::scotch {

// Sequential Scotch k-way of a symmetrised graph held whole (rows: offsets from 0, neighbour
// ids, edge weights), balancing `vertex_weight` (one per row, or empty: 1 each).
std::vector<int32_t> partition_graph(const std::vector<int64_t>& offsets,
                                     const std::vector<int64_t>& adj,
                                     const std::vector<int64_t>& adj_weight,
                                     const std::vector<int64_t>& vertex_weight,
                                     const PartitionOptions& opt);

// PT-Scotch k-way of g's blocks over the MPI communicator `mpi_comm` (an MPI_Comm*); collective.
// `weighted`: whether any rank has vertex weights (then every rank has one per vertex of its
// block); `weight_total`: their sum over all ranks. `release`: g itself (non-null only where the
// caller needs none of g's symmetrised rows afterwards): each of adj and adj_weight is freed
// as soon as its narrowed copy is made, before Scotch runs (16 bytes an arc at its peak).
std::vector<int32_t> partition_dgraph(const DistGraph& g, const PartitionOptions& opt,
                                      void* mpi_comm, const std::vector<int64_t>& vertex_weight,
                                      bool weighted, int64_t weight_total,
                                      DistGraph* release = nullptr);

// Shared by both (scotch_part.cpp): OptionError unless the library's SCOTCH_Num has the size of
// the header's; Error naming a failed Scotch call.
void check_num_size();
[[noreturn]] void throw_scotch_error(const char* call, const char* file, int line);

// The context a partition runs in: deterministic, one thread, its own random stream seeded
// from opt.seed (and `rank`, so that the ranks of PT-Scotch draw differently, as Scotch's own
// dgpart does). Scotch's default context is neither: it runs one thread per core and seeds from
// a global stream, and on Debian's build the same call gave a different partition at every run
// (measured: cut 2713, 2600, 2643 on one 3000-vertex graph). One thread, because the result
// also depends on the thread count, which would tie the parts to the machine. A graph is bound
// to it (SCOTCH_contextBindGraph / BindDgraph) before it is partitioned.
class Context {
 public:
  Context(uint64_t seed, int rank);
  ~Context() { SCOTCH_contextExit(&c_); }
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;
  SCOTCH_Context* get() { return &c_; }

 private:
  SCOTCH_Context c_;
};

struct Strat {
  SCOTCH_Strat s;
  Strat();
  ~Strat() { SCOTCH_stratExit(&s); }
  Strat(const Strat&) = delete;
  Strat& operator=(const Strat&) = delete;
};

// `v` in Scotch's integer type (Num: SCOTCH_Num); OptionError naming `what` for a value it
// cannot hold (a 32-bit SCOTCH_Num build and a graph past 2^31 entries).
template <class Num>
std::vector<Num> narrow(const std::vector<int64_t>& v, const char* what) {
  std::vector<Num> out(v.size());
  for (size_t i = 0; i < v.size(); ++i) {
    if (v[i] > int64_t(std::numeric_limits<Num>::max()))
      throw OptionError(std::string("ptscotch: ") + what + " " + std::to_string(v[i]) +
                        " does not fit this Scotch build's " + std::to_string(8 * sizeof(Num)) +
                        "-bit SCOTCH_Num; use metis, random, hash or range");
    out[i] = Num(v[i]);
  }
  return out;
}

// Vertex weights scaled so that their sum over the graph (`total`) fits 2^30; ShapeError for a
// negative one.
template <class Num>
std::vector<Num> scaled_weights(const std::vector<int64_t>& w, int64_t total) {
  const int64_t scale = total / (int64_t(1) << 30) + 1;
  std::vector<Num> out(w.size());
  for (size_t i = 0; i < w.size(); ++i) {
    if (w[i] < 0) throw ShapeError("ptscotch: a negative vertex weight");
    out[i] = Num(w[i] / scale);
  }
  return out;
}

}  // namespace dgnn::scotch

// Scotch functions return 0 on success; on failure Scotch has printed its reason (libscotcherr,
// which returns, not the errexit library that ends the process).
#define DGNN_SCOTCH_CHECK(call)                                                     \
  do {                                                                              \
    if ((call) != 0) ::dgnn::scotch::throw_scotch_error(#call, __FILE__, __LINE__); \
  } while (0)
