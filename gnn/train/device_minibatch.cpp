#include "dgnn/gnn/train/device_minibatch.hpp"

#include "dgnn/common/error.hpp"
#include "dgnn/kernels/minibatch_kernels.hpp"
#include "dgnn/sampler/device_sampler.hpp"

namespace dgnn {

namespace {

class DeviceSampler final : public BatchSampler {
 public:
  DeviceSampler(const Csr& in, const Tensor& features, SamplerOptions opt)
      : sampler_(features.device(), in, std::move(opt)), features_(features) {}
  const SamplerOptions& options() const override { return sampler_.options(); }

  void sample(MiniBatch& mb, const MiniBatchOptions& opt) override {
    const Device dev = sampler_.device();
    // The loader's prefetch thread starts on device 0, not necessarily the context's.
    kernels::bind_thread(dev);
    DeviceSampledBatch sb = sampler_.sample(mb.seeds, uint64_t(mb.epoch));
    mb.edges = sb.edges();
    const kernels::DeviceBlock& first = sb.blocks.front();
    Tensor x = Tensor::uninitialized(first.n_src, features_.cols(), dev);
    kernels::gather_rows_by_id(dev, features_.view(), first.src.as<const int64_t>(), first.n_src,
                               x.view());
    mb.inputs = Var(std::move(x));
    for (kernels::DeviceBlock& b : sb.blocks) {
      mb.views.push_back(std::make_unique<GraphView>(GraphView::Bipartite{}, std::move(b)));
      prepare_view(*mb.views.back(), opt);
    }
  }

 private:
  DeviceNeighborSampler sampler_;
  const Tensor& features_;
};

}  // namespace

std::unique_ptr<BatchSampler> make_device_sampler(const Csr& in, const Tensor& features,
                                                  SamplerOptions opt) {
  if (features.device() == Device::cpu)
    throw DeviceError(
        "make_device_sampler: the features are in CPU memory; sampling on the CPU "
        "is make_local_store's");
  DGNN_CHECK(features.rows() == in.rows, ShapeError,
             "features have " + std::to_string(features.rows()) + " rows for " +
                 std::to_string(in.rows) + " vertices");
  return std::make_unique<DeviceSampler>(in, features, std::move(opt));
}

}  // namespace dgnn
