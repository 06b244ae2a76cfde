#pragma once
// Mini-batches sampled where the model trains: the graph's structure uploaded to the device once
// (sampler/device_sampler.hpp), each batch's blocks sampled there and wrapped as device-block
// GraphViews whose adjacencies are built there too, and the input rows gathered there from the
// device-resident feature matrix. Only the seeds go up and a few sizes come back per batch. The
// blocks are the CPU sampler's for the same seeds and key, bit for bit.
#include <memory>

#include "dgnn/gnn/core/tensor.hpp"
#include "dgnn/gnn/train/minibatch.hpp"
#include "dgnn/graph/csr.hpp"

namespace dgnn {

// `in`: the whole graph (uploaded here; not kept); `features`: one row per vertex, in the
// memory of the device that samples (it must outlive the sampler). DeviceError on the CPU.
std::unique_ptr<BatchSampler> make_device_sampler(const Csr& in, const Tensor& features,
                                                  SamplerOptions opt);

}  // namespace dgnn
