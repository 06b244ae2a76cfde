#pragma once
// GraphView: what one rank sees of the graph, and aggregate(), the op where distribution lives.
// Locally, vertices 0..n_owned-1 are this rank's and n_owned..n_owned+n_halo-1 are halo copies
// of vertices owned elsewhere. The local CSR holds the in-edges of owned vertices; its columns
// index [owned | halo]. In one process n_halo = 0 and nothing is exchanged.
// A sampled block (mini-batch training, sampler/) is the same local form without an exchange:
// n_dst destination rows over n_src sources, the destinations first among the sources; x then
// already holds every source row (n_src rows) and aggregate() returns n_dst rows.
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "dgnn/comm/halo.hpp"
#include "dgnn/gnn/core/autograd.hpp"
#include "dgnn/graph/csr.hpp"
#include "dgnn/kernels/device_csr.hpp"
#include "dgnn/kernels/sample_block.hpp"

namespace dgnn {

// How neighbour rows are weighted in aggregate().
enum class Norm : uint8_t {
  sum,   // y_v = sum_u w_uv x_u (edge weights if the graph has them, else 1)
  mean,  // y_v = (1/deg_v) sum_u x_u
  gcn,   // y_v = sum_{u in N(v) + v} x_u / sqrt(deg_u deg_v), deg counting the self-loop
};

// Some entries of a shared list of ids, in the list's order, kept as whichever is smaller: a bit
// per entry of the list, or the members' positions (int32). A rank's snapshots name their halo
// vertices this way: the rank keeps one list of every snapshot's halo vertices and each snapshot
// a few bits, not 8 bytes a halo row a snapshot (at 8 ranks of a 100k x 30 SBM, 4.8 -> 1 MB a
// rank). The ids are made when asked for (ids()), which the temporal models never do.
class IdSubset {
 public:
  IdSubset() = default;
  // `positions`: ascending, distinct, each in [0, of->size()).
  IdSubset(std::shared_ptr<const std::vector<int64_t>> of, const std::vector<int32_t>& positions);
  int64_t size() const { return size_; }
  std::vector<int64_t> ids() const;
  // What this keeps (not the shared list).
  int64_t bytes() const { return int64_t(bits_.size() * 8 + positions_.size() * 4); }

 private:
  std::shared_ptr<const std::vector<int64_t>> of_;
  std::vector<uint64_t> bits_;       // a bit per entry of *of_, or
  std::vector<int32_t> positions_;   // the members' positions
  int64_t size_ = 0;
};

class GraphView {
 public:
  // The whole graph in one process (global ids are the dense ids).
  explicit GraphView(const Csr& in, Device dev = Device::cpu);
  // One rank's part: `local_in` is n_owned x (n_owned + n_halo); `global_ids` has an entry per
  // local vertex; `halo_in_degree` is the global in-degree of each halo vertex (GCN weights need
  // it); `halo` must outlive the view.
  GraphView(Csr local_in, int64_t n_owned, std::vector<int64_t> global_ids,
            std::vector<int64_t> halo_in_degree, HaloExchange* halo, Device dev = Device::cpu);
  // The same, the owned rows' ids shared (a rank's snapshots have the same owned rows) and the
  // halo rows' ids a subset of a shared list: the [owned | halo] list global_ids() returns is
  // made on first use.
  GraphView(Csr local_in, std::shared_ptr<const std::vector<int64_t>> owned_ids, IdSubset halo_ids,
            std::vector<int64_t> halo_in_degree, HaloExchange* halo, Device dev = Device::cpu);
  // A bipartite block: `block_in` is n_dst x n_src, source j < n_dst being destination j;
  // `global_ids` names every source (dropout keys); `src_degree` is each source's in-degree in
  // the whole graph, self loops not counted. Row v's non-self entries are a sample of v's
  // in-neighbours: gcn and sum weights use the whole graph's degrees and scale the sampled
  // entries by src_degree[v] / (entries sampled) — an unbiased estimate of the full-neighbourhood
  // sum, and exactly it when every neighbour was taken. mean averages the sample.
  struct Bipartite {};
  GraphView(Bipartite, Csr block_in, int64_t n_dst, std::vector<int64_t> global_ids,
            std::vector<int64_t> src_degree, Device dev = Device::cpu);
  // The same block left where it was sampled (sampler/device_sampler.hpp): its structure, ids
  // and degrees stay in the block's memory and its adjacencies are built there
  // (kernels::block_adjacency, the same values as the host's). No host structure: structure()
  // and attention() are not available, global_ids() only on the CPU.
  GraphView(Bipartite, kernels::DeviceBlock block);

  int64_t n_owned() const { return n_owned_; }
  // Owned rows [0, n_interior) have no halo in-neighbour: they are aggregated while the halo
  // exchange is in flight. (Partitions order interior vertices first to make this large.)
  int64_t n_interior() const { return n_interior_; }
  // Whether aggregate() overlaps interior rows with the exchange (on by default; off only to
  // measure what the overlap saves).
  bool overlap() const { return overlap_; }
  void set_overlap(bool on) { overlap_ = on; }
  int64_t n_halo() const { return n_halo_; }
  // A sampled block: x carries all n_owned + n_halo source rows, nothing is exchanged.
  bool bipartite() const { return bipartite_; }
  // Rows of the x that aggregate() takes: n_owned, or every source of a block.
  int64_t n_input_rows() const { return bipartite_ ? n_owned_ + n_halo_ : n_owned_; }
  Device device() const { return dev_; }
  const Csr& structure() const;
  // Global id per local vertex ([owned | halo]); keys for dropout masks.
  const int64_t* global_ids() const;
  // The same ids in `dev`'s memory (copied there on first use): dropout masks on a GPU.
  const int64_t* global_ids_on(Device dev) const;
  HaloExchange* halo() const { return halo_; }

  // The normalised adjacency (forward) and its transpose (backward), built on first use.
  struct Adjacency {
    Csr forward;  // n_owned x (n_owned + n_halo)
    // (n_owned + n_halo) x n_owned; the forward matrix itself when that is symmetric (GCN and
    // sum weights on an undirected graph), which saves a copy of the graph. Not on a rank whose
    // owned block is symmetric (owned_symmetric): see there.
    const Csr& backward() const;
    Csr transposed;
    bool symmetric = false;
    // A rank's part of an undirected graph (GCN or sum weights): the owned columns of the
    // forward matrix are symmetric, so the transpose's owned rows are the forward rows' owned
    // entries (their first owned_ends()[r] entries, columns being sorted), and its halo rows are
    // the forward rows' other entries turned around: nothing of the transpose is kept
    // (`transposed` is empty). Saves a copy of every entry that a rectangular matrix (never
    // `symmetric`) would otherwise keep, and of every halo row's offset (on a graph cut as
    // much as a random one, most rows of a rank's part are halo rows). The CPU backward reads
    // this form, the halo rows made by halo_transpose() as it runs; a GPU gets the whole
    // transpose, built on the host when first asked for and not kept there.
    bool owned_symmetric = false;
    // Per forward row, how many of its entries lie in owned columns (the first ones: columns
    // are sorted). Made when the backward asks, not kept: 4 bytes a row a snapshot otherwise.
    std::vector<int32_t> owned_ends() const;
    // The transpose's halo rows of an owned-symmetric matrix: n_halo x n_owned, halo row h
    // being row n_owned + h of the whole transpose, entries in Csr::transpose()'s order (the
    // same bits). One pass over the forward rows' halo entries.
    Csr halo_transpose() const;
    // The matrices as the kernels of `dev` take them: the host CSRs on the CPU, device copies
    // (made on first use, kept with the graph) on a GPU.
    const kernels::DeviceCsr& forward_on(Device dev) const { return on(dev, false); }
    const kernels::DeviceCsr& backward_on(Device dev) const { return on(dev, true); }
    // Takes a forward copy built on the device itself (snapshots by difference) instead of
    // uploading `forward` on first use; the caller guarantees it holds the same matrix.
    void adopt_forward(Device dev, std::unique_ptr<kernels::DeviceCsr> copy) const;
    // The same for the transpose of a non-symmetric matrix (`transposed`).
    void adopt_backward(Device dev, std::unique_ptr<kernels::DeviceCsr> copy) const;
    // Both directions built on `dev` with no host matrices behind them (a device block's):
    // asking for them on another device is an error.
    void adopt_both(Device dev, kernels::DeviceCsr forward, kernels::DeviceCsr backward) const;
    // The forward matrix's entries split by column for a streamed halo (HaloExchange::pieces(),
    // which cover the halo columns [n_owned, cols)): a row's columns are sorted, so the owned
    // columns and each piece's are one run of the row's entries (kernels::spmm_span). Built on
    // first use: int32 positions per row and piece, no copy of the entries (host memory:
    // streaming is a CPU exchange).
    struct ColumnSpans {
      // bounds[j][r]: how many of row r's entries lie below the j-th piece boundary in column
      // order (boundary 0 is n_owned: the owned run's end).
      std::vector<std::vector<int32_t>> bounds;
      // Piece p's run: from bounds[at[p]] to bounds[at[p] + 1] (null past the last: the row's end).
      std::vector<size_t> at;
      const int32_t* begin(size_t p) const { return bounds[at[p]].data(); }
      const int32_t* end(size_t p) const {
        return at[p] + 1 < bounds.size() ? bounds[at[p] + 1].data() : nullptr;
      }
      const int32_t* owned_end() const { return bounds[0].data(); }
    };
    // Computed at each call, not kept: one pass over the entries, beside an aggregation's
    // SpMM over them, and (pieces + 1) x rows int32 a snapshot would otherwise hold for the run.
    ColumnSpans column_spans(const std::vector<std::pair<int64_t, int64_t>>& pieces,
                             int64_t n_owned) const;

   private:
    const kernels::DeviceCsr& on(Device dev, bool backward) const;
    mutable std::unique_ptr<kernels::DeviceCsr> copies_[2][2];  // [backward][device]
    mutable bool device_only_ = false;
    mutable std::mutex mutex_;
  };
  const Adjacency& adjacency(Norm norm) const;

  // The entries attention runs over (gnn/core/attention.hpp): each row's in-edges plus one self
  // loop (the GCN adjacency's structure, values dropped), its transpose, and for each transposed
  // entry the forward entry it is, so an edge matrix (one row per entry) can be put in the
  // transposed order with a gather. Built on first use.
  struct AttentionGraph {
    Csr forward;                // n_dst x (n_owned + n_halo), or a block's n_dst x n_src
    Csr backward;               // its transpose
    std::vector<int32_t> perm;  // backward entry i is forward entry perm[i]
    // Per forward entry, a key from the global ids of its two ends (attention dropout masks:
    // the same on any rank count).
    std::vector<int64_t> edge_keys;
    const int64_t* edge_keys_on(Device dev) const;
    const kernels::DeviceCsr& forward_on(Device dev) const { return on(dev, false); }
    const kernels::DeviceCsr& backward_on(Device dev) const { return on(dev, true); }
    const int32_t* perm_on(Device dev) const;

   private:
    const kernels::DeviceCsr& on(Device dev, bool backward) const;
    mutable std::unique_ptr<kernels::DeviceCsr> copies_[2][2];  // [backward][device]
    mutable kernels::Buffer perm_on_device_, keys_on_device_;
    mutable std::mutex mutex_;
  };
  const AttentionGraph& attention() const;

 private:
  Csr in_;
  int64_t n_owned_ = 0;
  int64_t n_halo_ = 0;
  int64_t n_interior_ = 0;
  bool overlap_ = true;
  bool bipartite_ = false;
  // Every input row's id: given, or made on first use (ids()) from the dense ids of a whole
  // graph or from the shared owned ids and the halo ids. A run that never asks (no dropout: the
  // temporal models) then keeps no 8 bytes a row a snapshot for them.
  mutable std::vector<int64_t> global_ids_;
  std::shared_ptr<const std::vector<int64_t>> owned_ids_;
  IdSubset halo_ids_;
  bool ids_deferred_ = false;
  mutable std::once_flag ids_once_;
  const std::vector<int64_t>& ids() const;
  struct Deferred {};  // the rank's-part constructor without the ids' check
  GraphView(Csr local_in, int64_t n_owned, std::vector<int64_t> global_ids,
            std::vector<int64_t> halo_in_degree, HaloExchange* halo, Device dev, Deferred);
  // A block: the degree of every source. A rank's part: dropped once the GCN adjacency, its
  // only reader there, is built.
  mutable std::vector<int64_t> halo_in_degree_;
  HaloExchange* halo_ = nullptr;
  Device dev_ = Device::cpu;
  std::unique_ptr<kernels::DeviceBlock> block_;  // a device block: everything lives here
  mutable std::unique_ptr<Adjacency> adj_[3];
  mutable std::unique_ptr<AttentionGraph> attention_;
  mutable kernels::Buffer ids_on_device_;
  mutable std::mutex adj_mutex_;
};

// Neighbourhood aggregation: x is n_input_rows() x F (n_owned, or n_src on a block), the result
// n_owned x F. Exchanges halo rows forward and returns their gradients backward, so models are
// written once for any rank count and for sampled mini-batches.
Var aggregate(const GraphView& g, const Var& x, Norm norm);
// Element-wise max (min) over each vertex's in-neighbours (edge weights ignored; 0 for a vertex
// with none), as PyG's aggr="max" / "min": GraphSAGE's pooling aggregator is
// aggregate_max(g, relu(x W)). The gradient goes to the neighbour each maximum came from (the
// first in neighbour order among equals). Same distribution and mini-batch behaviour as
// aggregate; in mini-batch training it reads the Norm::mean adjacency (list it in
// LayerSpec::norms).
Var aggregate_max(const GraphView& g, const Var& x);
Var aggregate_min(const GraphView& g, const Var& x);

// The rows of x that belong to the vertices aggregate() produces rows for — what a layer's self
// term (SAGE's root weight, GIN's (1 + eps) x) uses: x itself on a whole graph or a rank's part,
// its first n_dst rows on a sampled block.
Var dst_rows(const GraphView& g, const Var& x);

}  // namespace dgnn
