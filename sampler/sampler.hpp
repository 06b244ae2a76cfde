#pragma once
// Uniform neighbour sampling for mini-batch training (GraphSAGE / DGL style): from a batch of
// seed vertices, one bipartite block per GNN layer, built from the seeds outwards. A block's
// destinations are the vertices whose next-layer rows it produces; its sources are the
// destinations first (in the same order), then the sampled neighbours not among them, in order of
// first appearance — the compact local numbering that aggregate() reads (gnn/core/graph_view.hpp).
//
// Every draw is a pure function of (seed, epoch, layer, vertex): a vertex's sample does not
// depend on the batch it is in, the thread count or the rank that draws it.
#include <cstdint>
#include <string>
#include <vector>

#include "dgnn/graph/csr.hpp"

namespace dgnn {

struct SamplerOptions {
  // Neighbours drawn per vertex, one entry per GNN layer, the input layer first (DGL's order:
  // {10, 25} draws 25 neighbours of each seed and 10 of each of those). -1 = every neighbour.
  std::vector<int> fanouts;
  bool replace = false;  // with replacement (a neighbour may repeat; exactly `fanout` draws)
  uint64_t seed = 0;
  int threads = 0;  // OpenMP threads for one batch; 0 = the OpenMP default
};

// "10,25" -> {10, 25}; OptionError naming --fanouts for anything but comma-separated integers
// that are >= 1 or -1.
std::vector<int> parse_fanouts(const std::string& text);

// One layer's bipartite graph in local numbering.
struct Block {
  Csr adj;  // n_dst x n_src; row v: v's sampled in-neighbours (source numbers)
  int64_t n_dst = 0;
  std::vector<int64_t> src;         // global id per source; the first n_dst are the destinations
  std::vector<int64_t> src_degree;  // each source's in-degree in the whole graph, no self loops
  int64_t n_src() const { return int64_t(src.size()); }
};

struct SampledBatch {
  std::vector<int64_t> seeds;  // global ids: the destinations of the last block
  std::vector<Block> blocks;   // blocks[i] feeds layer i; blocks[0].src are the input vertices
  int64_t edges() const;       // sampled entries over all blocks
};

// Sampled neighbour lists of a frontier: row i (entries offsets[i] .. offsets[i+1]) lists the
// global ids drawn for frontier[i], with edge weights when the graph has them.
struct SampledRows {
  std::vector<int64_t> offsets{0};
  std::vector<int64_t> nbrs;
  std::vector<float> weights;  // empty: unweighted
};

// How many entries sample_positions draws for a vertex with `deg` candidates.
int64_t sample_count(int64_t deg, int fanout, bool replace);
// The candidate positions drawn (ascending, in [0, deg)), written to out[0 .. sample_count):
// all of them when fanout < 0 or, without replacement, fanout >= deg; else `fanout` distinct
// ones, or `fanout` independent draws with replacement. A pure function of its arguments.
void sample_positions(int64_t deg, int fanout, bool replace, uint64_t key, int64_t* out);
// The key of vertex v's draw at `layer` of `epoch`.
uint64_t sample_key(uint64_t seed, uint64_t epoch, int layer, int64_t v);

// Draws one vertex's neighbours from its whole-graph in-row (`row`, `deg` entries, sorted): a
// self loop is not a candidate but is always kept (it costs no new source), so the fanout counts
// other vertices; the count is sample_count(non-self entries) + self entries. Writes global ids
// (and weights when `w` is not null) to the outputs, in row order. `self_loops` false says the
// graph has none (the row is not searched for v).
int64_t sample_row_count(const int32_t* row, int64_t deg, int64_t v, bool self_loops, int fanout,
                         bool replace);
void sample_row(const int32_t* row, const float* w, int64_t deg, int64_t v, bool self_loops,
                int fanout, bool replace, uint64_t key, int64_t* out_ids, float* out_w);

// Where neighbour lists come from: the whole graph in this process, or (gnn/dist_sampler) the
// ranks that own the frontier's vertices. sample() may be collective there.
class NeighborSource {
 public:
  virtual ~NeighborSource() = default;
  virtual int64_t num_vertices() const = 0;
  // In-degree in the whole graph, self loops not counted.
  virtual int64_t degree(int64_t v) const = 0;
  virtual void sample(const std::vector<int64_t>& frontier, int layer, uint64_t epoch,
                      const SamplerOptions& opt, SampledRows& out) = 0;
};

// The whole graph in memory (`in` must outlive it).
class LocalNeighborSource final : public NeighborSource {
 public:
  explicit LocalNeighborSource(const Csr& in);
  int64_t num_vertices() const override { return in_.rows; }
  int64_t degree(int64_t v) const override { return degree_[size_t(v)]; }
  void sample(const std::vector<int64_t>& frontier, int layer, uint64_t epoch,
              const SamplerOptions& opt, SampledRows& out) override;

 private:
  const Csr& in_;
  std::vector<int64_t> degree_;
  bool self_loops_ = false;
};

// Builds the blocks of a batch layer by layer. One batch at a time per object (it keeps a
// global -> local scratch map of num_vertices entries between calls).
class NeighborSampler {
 public:
  NeighborSampler(NeighborSource& source, SamplerOptions opt);
  // Seeds must be distinct global ids. Collective when the source is.
  SampledBatch sample(const std::vector<int64_t>& seeds, uint64_t epoch);
  const SamplerOptions& options() const { return opt_; }

 private:
  NeighborSource& source_;
  SamplerOptions opt_;
  std::vector<int32_t> local_of_;  // -1 = not a source of the block being built
};

// The training vertices of `epoch` in shuffled order (seeded by (seed, epoch)), cut into
// batches of batch_size (the last one may be shorter).
std::vector<std::vector<int64_t>> epoch_batches(const std::vector<int64_t>& train,
                                                int64_t batch_size, uint64_t seed, uint64_t epoch);

}  // namespace dgnn
