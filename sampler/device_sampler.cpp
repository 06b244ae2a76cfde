#include "dgnn/sampler/device_sampler.hpp"

#include <algorithm>
#include <climits>

#include "dgnn/common/error.hpp"
#include "dgnn/kernels/sample_draw.hpp"

namespace dgnn {

int64_t DeviceSampledBatch::edges() const {
  int64_t n = 0;
  for (const auto& b : blocks) n += b.nnz;
  return n;
}

DeviceNeighborSampler::DeviceNeighborSampler(Device dev, const Csr& in, SamplerOptions opt)
    : dev_(dev), opt_(std::move(opt)), n_(in.rows) {
  DGNN_CHECK(in.rows == in.cols, ShapeError, "neighbour sampling needs a square graph");
  if (opt_.fanouts.empty()) throw OptionError("--fanouts: need one fanout per layer");
  for (int f : opt_.fanouts)
    if (f == 0 || f < -1)
      throw OptionError("--fanouts: " + std::to_string(f) + " is not >= 1 or -1");
  std::vector<int64_t> degree(static_cast<size_t>(n_));
  for (int64_t v = 0; v < n_; ++v) {
    int64_t lo, hi;
    draw::self_range(in.indices.data() + in.offsets[size_t(v)], in.degree(v), v, true, &lo, &hi);
    degree[size_t(v)] = in.degree(v) - (hi - lo);
    self_loops_ = self_loops_ || hi > lo;
  }
  offsets_ = kernels::Buffer::upload(dev_, in.offsets);
  indices_ = kernels::Buffer::upload(dev_, in.indices);
  if (in.weighted()) values_ = kernels::Buffer::upload(dev_, in.values);
  degree_ = kernels::Buffer::upload(dev_, degree);
  local_of_ = kernels::Buffer::upload(dev_, std::vector<int32_t>(size_t(n_), -1));
  first_of_ = kernels::Buffer::upload(dev_, std::vector<int64_t>(size_t(n_), INT64_MAX));
}

DeviceSampledBatch DeviceNeighborSampler::sample(const std::vector<int64_t>& seeds,
                                                 uint64_t epoch) {
  std::vector<int64_t> sorted = seeds;
  std::sort(sorted.begin(), sorted.end());
  for (size_t i = 0; i < sorted.size(); ++i) {
    if (i > 0 && sorted[i] == sorted[i - 1])
      throw OptionError("mini-batch seeds must be distinct: vertex " + std::to_string(sorted[i]) +
                        " repeats");
    DGNN_CHECK(sorted[i] >= 0 && sorted[i] < n_, OptionError,
               "mini-batch seed " + std::to_string(sorted[i]) + " is not a vertex");
  }
  DeviceSampledBatch batch;
  batch.seeds = seeds;
  const int layers = int(opt_.fanouts.size());
  batch.blocks.resize(size_t(layers));
  kernels::SampleGraph g;
  g.in = CsrView{n_, n_, offsets_.as<int64_t>(), indices_.as<int32_t>(),
                 values_.bytes() ? values_.as<float>() : nullptr};
  g.in.device_nnz = int64_t(indices_.bytes() / sizeof(int32_t));
  g.degree = degree_.as<int64_t>();
  g.self_loops = self_loops_;
  kernels::Buffer seeds_dev = kernels::Buffer::upload(dev_, seeds);
  const int64_t* dst = seeds_dev.as<int64_t>();
  int64_t n_dst = int64_t(seeds.size());
  for (int l = layers - 1; l >= 0; --l) {
    kernels::DeviceBlock& b = batch.blocks[size_t(l)];
    b = kernels::sample_block(dev_, g, dst, n_dst, opt_.fanouts[size_t(l)], opt_.replace,
                              opt_.seed, epoch, l, local_of_.as<int32_t>(),
                              first_of_.as<int64_t>());
    dst = b.src.as<int64_t>();
    n_dst = b.n_src;
  }
  return batch;
}

namespace {

template <typename T>
std::vector<T> download(const kernels::Buffer& b, int64_t count) {
  std::vector<T> out(static_cast<size_t>(count));
  if (count > 0)
    kernels::copy(Device::cpu, out.data(), b.device(), b.as<T>(), size_t(count) * sizeof(T));
  return out;
}

}  // namespace

SampledBatch to_host(const DeviceSampledBatch& batch) {
  SampledBatch out;
  out.seeds = batch.seeds;
  for (const kernels::DeviceBlock& d : batch.blocks) {
    Block b;
    b.n_dst = d.n_dst;
    b.adj.rows = d.n_dst;
    b.adj.cols = d.n_src;
    b.adj.offsets = download<int64_t>(d.offsets, d.n_dst + 1);
    b.adj.indices = download<int32_t>(d.indices, d.nnz);
    if (d.values.bytes()) b.adj.values = download<float>(d.values, d.nnz);
    b.src = download<int64_t>(d.src, d.n_src);
    b.src_degree = download<int64_t>(d.src_degree, d.n_src);
    out.blocks.push_back(std::move(b));
  }
  return out;
}

kernels::DeviceBlock to_device(Device dev, const Block& b) {
  DGNN_CHECK(b.adj.rows == b.n_dst && b.adj.cols == b.n_src() &&
                 int64_t(b.adj.offsets.size()) == b.n_dst + 1 &&
                 b.src_degree.size() == b.src.size(),
             ShapeError, "to_device: an inconsistent block");
  kernels::DeviceBlock d;
  d.n_dst = b.n_dst;
  d.n_src = b.n_src();
  d.nnz = b.adj.nnz();
  d.offsets = kernels::Buffer::upload(dev, b.adj.offsets);
  d.indices = kernels::Buffer::upload(dev, b.adj.indices);
  if (b.adj.weighted()) d.values = kernels::Buffer::upload(dev, b.adj.values);
  d.src = kernels::Buffer::upload(dev, b.src);
  d.src_degree = kernels::Buffer::upload(dev, b.src_degree);
  return d;
}

}  // namespace dgnn
