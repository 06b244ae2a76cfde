#include "dgnn/gnn/train/minibatch_setup.hpp"

#include "dgnn/gnn/train/device_minibatch.hpp"
#include "dgnn/gnn/train/dist_sampler.hpp"

namespace dgnn {

const char* placement_description(BatchPlacement p) {
  switch (p) {
    case BatchPlacement::cpu:
      return "the CPU";
    case BatchPlacement::device:
      return "the GPU";
    case BatchPlacement::cpu_to_device:
      return "the CPU (attention needs host structure), moved to the GPU";
    case BatchPlacement::mpi_to_device:
      return "the CPU (other ranks' rows come over MPI), moved to the GPU";
  }
  return "the CPU";
}

std::unique_ptr<RankMiniBatches> make_rank_minibatches(const RankSetup& setup, MiniBatchOptions opt,
                                                       const LayerSpec& layer, Device dev,
                                                       Communicator& comm) {
  auto r = std::make_unique<RankMiniBatches>();
  opt.norms = layer.norms;
  opt.attention = layer.attention;
  opt.device = dev;
  const NodeTask& task = setup.task;
  const bool multi = comm.size() > 1;
  const bool gpu_sampling = dev != Device::cpu && !multi && !layer.attention;
  r->placement = dev == Device::cpu ? BatchPlacement::cpu
                 : gpu_sampling     ? BatchPlacement::device
                 : multi            ? BatchPlacement::mpi_to_device
                                    : BatchPlacement::cpu_to_device;
  if (dev != Device::cpu && !gpu_sampling)
    r->host_features = Var(task.features.value().to(Device::cpu));
  const Var& features = r->host_features.defined() ? r->host_features : task.features;
  if (multi) {
    r->sample_comm = comm.duplicate();
    if (!comm.concurrent_duplicates() && opt.prefetch) {
      opt.prefetch = false;
      r->prefetch_dropped = true;
    }
    r->store = make_dist_store(*setup.graph, setup.part.global_vertices, features, *r->sample_comm);
  } else if (!gpu_sampling) {
    r->store = make_local_store(setup.graph->structure(), features.value());
  }
  std::vector<int64_t> train_ids;
  std::vector<int32_t> train_labels;
  for (int32_t row : task.train) {
    train_ids.push_back(setup.part.global_ids[size_t(row)]);
    train_labels.push_back(task.labels[size_t(row)]);
  }
  if (r->store) {
    r->loader = std::make_unique<MiniBatchLoader>(
        *r->store, std::move(train_ids), std::move(train_labels), opt, comm, r->sample_comm.get());
  } else {
    // One GPU: the structure is uploaded once, blocks are sampled and normalised there and the
    // input rows gathered from the features already there (make_rank_setup put them).
    r->loader = std::make_unique<MiniBatchLoader>(
        make_device_sampler(setup.graph->structure(), task.features.value(), opt.sampler),
        std::move(train_ids), std::move(train_labels), opt, comm);
  }
  return r;
}

}  // namespace dgnn
