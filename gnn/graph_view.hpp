#pragma once
// GraphView: what one rank sees of the graph, and aggregate(), the op where distribution lives.
// Locally, vertices 0..n_owned-1 are this rank's and n_owned..n_owned+n_halo-1 are halo copies
// of vertices owned elsewhere. The local CSR holds the in-edges of owned vertices; its columns
// index [owned | halo]. In one process n_halo = 0 and nothing is exchanged.
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "comm/halo.hpp"
#include "gnn/autograd.hpp"
#include "graph/csr.hpp"
#include "kernels/device_csr.hpp"

namespace dgnn {

// How neighbour rows are weighted in aggregate().
enum class Norm : uint8_t {
  sum,   // y_v = sum_u w_uv x_u (edge weights if the graph has them, else 1)
  mean,  // y_v = (1/deg_v) sum_u x_u
  gcn,   // y_v = sum_{u in N(v) + v} x_u / sqrt(deg_u deg_v), deg counting the self-loop
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

  int64_t n_owned() const { return n_owned_; }
  // Owned rows [0, n_interior) have no halo in-neighbour: they are aggregated while the halo
  // exchange is in flight. (Partitions order interior vertices first to make this large.)
  int64_t n_interior() const { return n_interior_; }
  // Whether aggregate() overlaps interior rows with the exchange (on by default; off only to
  // measure what the overlap saves).
  bool overlap() const { return overlap_; }
  void set_overlap(bool on) { overlap_ = on; }
  int64_t n_halo() const { return n_halo_; }
  Device device() const { return dev_; }
  const Csr& structure() const { return in_; }
  // Global id per local vertex ([owned | halo]); keys for dropout masks.
  const int64_t* global_ids() const { return global_ids_.data(); }
  // The same ids in `dev`'s memory (copied there on first use): dropout masks on a GPU.
  const int64_t* global_ids_on(Device dev) const;
  HaloExchange* halo() const { return halo_; }

  // The normalised adjacency (forward) and its transpose (backward), built on first use.
  struct Adjacency {
    Csr forward;  // n_owned x (n_owned + n_halo)
    // (n_owned + n_halo) x n_owned; the forward matrix itself when that is symmetric (GCN and
    // sum weights on an undirected graph), which saves a copy of the graph.
    const Csr& backward() const { return symmetric ? forward : transposed; }
    Csr transposed;
    bool symmetric = false;
    // The matrices as the kernels of `dev` take them: the host CSRs on the CPU, device copies
    // (made on first use, kept with the graph) on a GPU.
    const kernels::DeviceCsr& forward_on(Device dev) const { return on(dev, false); }
    const kernels::DeviceCsr& backward_on(Device dev) const { return on(dev, true); }

   private:
    const kernels::DeviceCsr& on(Device dev, bool backward) const;
    mutable std::unique_ptr<kernels::DeviceCsr> copies_[2][2];  // [backward][device]
    mutable std::mutex mutex_;
  };
  const Adjacency& adjacency(Norm norm) const;

 private:
  Csr in_;
  int64_t n_owned_ = 0;
  int64_t n_halo_ = 0;
  int64_t n_interior_ = 0;
  bool overlap_ = true;
  std::vector<int64_t> global_ids_;
  std::vector<int64_t> halo_in_degree_;
  HaloExchange* halo_ = nullptr;
  Device dev_ = Device::cpu;
  mutable std::unique_ptr<Adjacency> adj_[3];
  mutable kernels::Buffer ids_on_device_;
  mutable std::mutex adj_mutex_;
};

// Neighbourhood aggregation: x is n_owned x F, the result n_owned x F. Exchanges halo rows
// forward and returns their gradients backward, so models are written once for any rank count.
Var aggregate(const GraphView& g, const Var& x, Norm norm);

}  // namespace dgnn
