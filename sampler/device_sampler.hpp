#pragma once
// Neighbour sampling where the model trains: the graph's structure uploaded once to a device,
// each batch's blocks built there (kernels/sample_block.hpp) — the blocks NeighborSampler builds
// on the CPU for the same seeds and key, bit for bit, left in device memory.
#include <cstdint>
#include <vector>

#include "dgnn/graph/csr.hpp"
#include "dgnn/kernels/sample_block.hpp"
#include "dgnn/sampler/sampler.hpp"

namespace dgnn {

struct DeviceSampledBatch {
  std::vector<int64_t> seeds;               // global ids, host side
  std::vector<kernels::DeviceBlock> blocks;  // blocks[i] feeds layer i, as in SampledBatch
  int64_t edges() const;
};

class DeviceNeighborSampler {
 public:
  // Uploads `in` (square, sorted rows) to `dev`; the host graph is not kept.
  DeviceNeighborSampler(Device dev, const Csr& in, SamplerOptions opt);
  // Seeds must be distinct global ids (OptionError otherwise, as on the CPU).
  DeviceSampledBatch sample(const std::vector<int64_t>& seeds, uint64_t epoch);
  const SamplerOptions& options() const { return opt_; }
  Device device() const { return dev_; }

 private:
  Device dev_;
  SamplerOptions opt_;
  int64_t n_ = 0;
  bool self_loops_ = false;
  kernels::Buffer offsets_, indices_, values_, degree_;
  kernels::Buffer local_of_, first_of_;  // scratch, -1 / INT64_MAX between batches
};

// The batch copied back in the CPU sampler's form (tests, logs).
SampledBatch to_host(const DeviceSampledBatch& batch);
// A host block copied into `dev`'s memory (on the CPU: into Buffers), the inverse of to_host:
// tests build device-block views from the CPU sampler's blocks with it.
kernels::DeviceBlock to_device(Device dev, const Block& block);

}  // namespace dgnn
