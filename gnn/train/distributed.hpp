#pragma once
// What one rank trains on: its part of the graph as a GraphView wired to a halo exchange, and its
// share of the node-classification task. A model runs on it unchanged.
#include <memory>

#include "dgnn/comm/halo.hpp"
#include "dgnn/gnn/core/graph_view.hpp"
#include "dgnn/gnn/train/trainer.hpp"
#include "dgnn/partition/partition.hpp"

namespace dgnn {

struct RankSetup {
  LocalPart part;
  std::unique_ptr<HaloExchange> halo;
  std::unique_ptr<GraphView> graph;
  NodeTask task;
};

// Takes ownership of `part`; `comm` must outlive the result. OptionError without labels. The
// features and the halo exchange are on `dev` (on a GPU with several ranks, `comm` must have a
// device communicator attached: attach_device_comm in comm/device_comm.hpp).
std::unique_ptr<RankSetup> make_rank_setup(LocalPart part, Communicator& comm,
                                           Device dev = Device::cpu);

// The partition of `d` for `comm.size()` ranks, computed on rank 0 and broadcast (so every rank
// agrees even if a partitioner were not deterministic), and this rank's part of it. Every rank
// holds the dataset.
LocalPart partition_and_extract(const Dataset& d, const PartitionOptions& opt, Communicator& comm);

// Rank 0 (which alone holds the dataset: `d` is ignored elsewhere and may be null) partitions it,
// cuts every rank's part and sends each its own; the others only receive.
LocalPart partition_and_scatter(const Dataset* d, const PartitionOptions& opt, Communicator& comm);

}  // namespace dgnn
