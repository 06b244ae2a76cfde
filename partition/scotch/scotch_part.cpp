// Sequential Scotch on a symmetrised graph one process holds (the ptscotch partitioner on one
// process), and what Scotch and PT-Scotch share: the integer-size check, the seed, errors.
#include "dgnn/partition/scotch/scotch_part.hpp"

#include <scotch.h>

#include <cmath>
#include <string>

#include "dgnn/common/hash_rng.hpp"

namespace dgnn::scotch {

void check_num_size() {
  // The library's integer type is fixed when it is built (Debian ships 32-bit, and int64 / long
  // variants under scotch-int64 / scotch-long): a header of another build would hand it arrays
  // it reads with the wrong stride.
  const int lib = SCOTCH_numSizeof();
  if (lib != int(sizeof(SCOTCH_Num)))
    throw OptionError("ptscotch: the Scotch library's SCOTCH_Num has " + std::to_string(lib) +
                      " bytes but the scotch.h dgnn was built with has " +
                      std::to_string(sizeof(SCOTCH_Num)) +
                      ": rebuild dgnn with the header of that library (DGNN_SCOTCH_INCLUDE_DIR)");
}

Context::Context(uint64_t seed, int rank) {
  DGNN_SCOTCH_CHECK(SCOTCH_contextInit(&c_));
  try {
    DGNN_SCOTCH_CHECK(SCOTCH_contextRandomClone(&c_));
    DGNN_SCOTCH_CHECK(SCOTCH_contextOptionSetNum(&c_, SCOTCH_OPTIONNUMDETERMINISTIC, 1));
    DGNN_SCOTCH_CHECK(SCOTCH_contextOptionSetNum(&c_, SCOTCH_OPTIONNUMRANDOMFIXEDSEED, 1));
    DGNN_SCOTCH_CHECK(SCOTCH_contextThreadSpawn(&c_, 1, nullptr));
    // Fold the 64-bit seed so that every bit of it counts (as for METIS).
    SCOTCH_contextRandomSeed(&c_, SCOTCH_Num((mix64(seed) & 0x3fffffff) + uint64_t(rank)));
    SCOTCH_contextRandomReset(&c_);
  } catch (...) {
    SCOTCH_contextExit(&c_);
    throw;
  }
}

Strat::Strat() { DGNN_SCOTCH_CHECK(SCOTCH_stratInit(&s)); }

void throw_scotch_error(const char* call, const char* file, int line) {
  throw Error(std::string("Scotch: ") + call + " failed (its reason is printed above) at " + file +
              ":" + std::to_string(line));
}

namespace {

struct Graph {
  SCOTCH_Graph g;
  Graph() { DGNN_SCOTCH_CHECK(SCOTCH_graphInit(&g)); }
  ~Graph() { SCOTCH_graphExit(&g); }
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;
};

}  // namespace

std::vector<int32_t> partition_graph(const std::vector<int64_t>& offsets,
                                     const std::vector<int64_t>& adj,
                                     const std::vector<int64_t>& adj_weight,
                                     const std::vector<int64_t>& vertex_weight,
                                     const PartitionOptions& opt) {
  check_num_size();
  const int64_t n = int64_t(offsets.size()) - 1;
  DGNN_CHECK(vertex_weight.empty() || int64_t(vertex_weight.size()) == n, ShapeError,
             "ptscotch: one vertex weight per vertex");
  const std::vector<SCOTCH_Num> vert = narrow<SCOTCH_Num>(offsets, "an edge count of");
  std::vector<SCOTCH_Num> edge = narrow<SCOTCH_Num>(adj, "a vertex id of");
  std::vector<SCOTCH_Num> edlo = narrow<SCOTCH_Num>(adj_weight, "an edge weight of");
  std::vector<SCOTCH_Num> velo;
  if (!vertex_weight.empty()) {
    int64_t total = 0;
    for (int64_t w : vertex_weight) total += w;
    velo = scaled_weights<SCOTCH_Num>(vertex_weight, total);
  }
  // Scotch reads one entry past an empty array's start in places: never hand it a null one.
  if (edge.empty()) edge.push_back(0), edlo.push_back(1);

  SCOTCH_errorProg("dgnn");
  Graph graph;
  DGNN_SCOTCH_CHECK(SCOTCH_graphBuild(&graph.g, 0, SCOTCH_Num(n), vert.data(), nullptr,
                                      velo.empty() ? nullptr : velo.data(), nullptr, vert.back(),
                                      edge.data(), edlo.data()));
  Strat strat;
  DGNN_SCOTCH_CHECK(SCOTCH_stratGraphMapBuild(&strat.s, SCOTCH_STRATQUALITY, SCOTCH_Num(opt.parts),
                                              opt.imbalance - 1.0));
  // (declared after `graph`, before `bound`: the bound graph goes first, then its context)
  Context context(opt.seed, 0);
  Graph bound;
  DGNN_SCOTCH_CHECK(SCOTCH_contextBindGraph(context.get(), &graph.g, &bound.g));
  std::vector<SCOTCH_Num> part(size_t(n), 0);
  DGNN_SCOTCH_CHECK(SCOTCH_graphPart(&bound.g, SCOTCH_Num(opt.parts), &strat.s, part.data()));
  return std::vector<int32_t>(part.begin(), part.end());
}

}  // namespace dgnn::scotch
