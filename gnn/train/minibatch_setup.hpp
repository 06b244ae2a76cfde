#pragma once
// Mini-batch training on one rank of a job, set up in one call: seeds from this rank's training
// vertices; under MPI, neighbours and features of other ranks' vertices come from their owners,
// on a communicator of the sampler's own (it talks on the prefetch thread while the training
// thread all-reduces gradients).
// Where blocks are sampled: on the GPU when one process trains there (they never leave device
// memory); on the CPU otherwise, and then moved to the device on the prefetch thread. That is the
// case under mpirun (other ranks' rows come over MPI, as DistDGL samples) and for attention layers
// (attention needs the block's structure on the host).
#include <memory>

#include "dgnn/comm/communicator.hpp"
#include "dgnn/gnn/models/layers.hpp"
#include "dgnn/gnn/train/distributed.hpp"
#include "dgnn/gnn/train/minibatch.hpp"

namespace dgnn {

enum class BatchPlacement {
  cpu,            // sampled and trained on the CPU
  device,         // sampled on the GPU the model trains on
  cpu_to_device,  // sampled on the CPU (attention needs host structure), moved to the GPU
  mpi_to_device,  // sampled on the CPU (other ranks' rows come over MPI), moved to the GPU
};
// A line for the log: "the GPU", "the CPU (attention needs host structure), moved to the GPU", ...
const char* placement_description(BatchPlacement p);

struct RankMiniBatches {
  BatchPlacement placement = BatchPlacement::cpu;
  // Prefetch was asked for but MPI gives no MPI_THREAD_MULTIPLE: batches are sampled in turn.
  bool prefetch_dropped = false;
  // Declared in the order they must outlive each other: the store and the loader's thread read
  // the host copy of the features and talk on the sampler's communicator until they are gone.
  Var host_features;  // the features' host copy when blocks move to a device
  std::unique_ptr<Communicator> sample_comm;
  std::unique_ptr<GraphStore> store;
  std::unique_ptr<MiniBatchLoader> loader;
};

// `opt.norms`, `opt.attention` and `opt.device` are set here from `layer` and `dev`. Collective
// over `comm` (the loader agrees on the number of steps). `setup` and `comm` must outlive the
// result.
std::unique_ptr<RankMiniBatches> make_rank_minibatches(const RankSetup& setup, MiniBatchOptions opt,
                                                       const LayerSpec& layer, Device dev,
                                                       Communicator& comm);

}  // namespace dgnn
