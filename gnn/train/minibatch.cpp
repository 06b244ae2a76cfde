#include "dgnn/gnn/train/minibatch.hpp"

#include <omp.h>

#include <algorithm>
#include <numeric>

#include "dgnn/common/error.hpp"
#include "dgnn/common/timer.hpp"
#include "dgnn/kernels/buffer.hpp"
#include "dgnn/kernels/kernels.hpp"
#include "dgnn/kernels/minibatch_kernels.hpp"

namespace dgnn {

std::vector<const GraphView*> MiniBatch::blocks() const {
  std::vector<const GraphView*> out;
  for (const auto& v : views) out.push_back(v.get());
  return out;
}

namespace {

class LocalStore final : public GraphStore {
 public:
  LocalStore(const Csr& in, const Tensor& features) : source_(in), features_(features) {
    DGNN_CHECK(features.rows() == in.rows, ShapeError,
               "features have " + std::to_string(features.rows()) + " rows for " +
                   std::to_string(in.rows) + " vertices");
  }
  int64_t num_vertices() const override { return source_.num_vertices(); }
  int64_t degree(int64_t v) const override { return source_.degree(v); }
  void sample(const std::vector<int64_t>& frontier, int layer, uint64_t epoch,
              const SamplerOptions& opt, SampledRows& out) override {
    source_.sample(frontier, layer, epoch, opt, out);
  }
  int64_t feature_dim() const override { return features_.cols(); }
  Tensor gather_features(const std::vector<int64_t>& ids) override {
    const Device dev = features_.device();
    std::vector<int32_t> idx(ids.begin(), ids.end());
    Tensor out = Tensor::uninitialized(int64_t(ids.size()), features_.cols(), dev);
    // Features in GPU memory: the row list goes there too (kernels read it there).
    const kernels::Buffer on_dev =
        dev == Device::cpu ? kernels::Buffer() : kernels::Buffer::upload(dev, idx);
    kernels::gather_rows(dev, features_.view(),
                         dev == Device::cpu ? idx.data() : on_dev.as<const int32_t>(),
                         int64_t(idx.size()), out.view());
    return out;
  }

 private:
  LocalNeighborSource source_;
  const Tensor& features_;
};

// Sampling on the CPU, through the store (local or distributed); the batch then moves to
// opt.device (DistDGL's split: sample where the graph is, train where the model is).
class StoreSampler final : public BatchSampler {
 public:
  StoreSampler(GraphStore& store, SamplerOptions opt)
      : store_(store), sampler_(store, [&] {
          // The prefetch thread does not inherit omp_set_num_threads: fix the count here.
          if (opt.threads <= 0) opt.threads = omp_get_max_threads();
          return opt;
        }()) {}
  const SamplerOptions& options() const override { return sampler_.options(); }
  void sample(MiniBatch& mb, const MiniBatchOptions& opt) override {
    // The loader's prefetch thread starts on device 0, not necessarily the context's.
    kernels::bind_thread(opt.device);
    SampledBatch sb = sampler_.sample(mb.seeds, uint64_t(mb.epoch));
    mb.edges = sb.edges();
    Tensor x = store_.gather_features(sb.blocks.front().src);
    mb.inputs = Var(x.device() == opt.device ? std::move(x) : x.to(opt.device));
    for (Block& b : sb.blocks) {
      mb.views.push_back(std::make_unique<GraphView>(GraphView::Bipartite{}, std::move(b.adj),
                                                     b.n_dst, std::move(b.src),
                                                     std::move(b.src_degree), opt.device));
      prepare_view(*mb.views.back(), opt);
    }
  }

 private:
  GraphStore& store_;
  NeighborSampler sampler_;
};

}  // namespace

void prepare_view(const GraphView& v, const MiniBatchOptions& opt) {
  if (v.n_owned() == 0) return;  // a rank out of seeds: nothing will be aggregated
  const Device dev = v.device();
  for (Norm n : opt.norms) {
    const GraphView::Adjacency& a = v.adjacency(n);
    a.forward_on(dev);
    a.backward_on(dev);
  }
  if (opt.attention) {
    const GraphView::AttentionGraph& at = v.attention();
    at.forward_on(dev);
    at.backward_on(dev);
    at.perm_on(dev);
    at.edge_keys_on(dev);
  }
  v.global_ids_on(dev);  // dropout masks
}

std::unique_ptr<GraphStore> make_local_store(const Csr& in, const Tensor& features) {
  return std::make_unique<LocalStore>(in, features);
}

MiniBatchLoader::MiniBatchLoader(GraphStore& store, std::vector<int64_t> train_ids,
                                 std::vector<int32_t> train_labels, MiniBatchOptions opt,
                                 Communicator& comm, Communicator* sample_comm)
    : MiniBatchLoader(std::make_unique<StoreSampler>(store, opt.sampler), std::move(train_ids),
                      std::move(train_labels), opt, comm, sample_comm) {}

MiniBatchLoader::MiniBatchLoader(std::unique_ptr<BatchSampler> sampler,
                                 std::vector<int64_t> train_ids, std::vector<int32_t> train_labels,
                                 MiniBatchOptions opt, Communicator& comm,
                                 Communicator* sample_comm)
    : sampler_(std::move(sampler)),
      train_ids_(std::move(train_ids)),
      train_labels_(std::move(train_labels)),
      opt_(std::move(opt)),
      sample_comm_(sample_comm) {
  if (opt_.batch_size < 1) throw OptionError("--batch-size must be >= 1");
  DGNN_CHECK(sampler_ != nullptr, Error, "MiniBatchLoader: no sampler");
  DGNN_CHECK(train_ids_.size() == train_labels_.size(), ShapeError,
             "need one label per training vertex");
  opt_.sampler = sampler_->options();
  const int p = comm.size();
  distributed_ = p > 1;
  DGNN_CHECK(!distributed_ || sample_comm_ != nullptr, OptionError,
             "distributed mini-batches need a communicator for the sampler");
  rank_train_.assign(size_t(p), 0);
  rank_train_[size_t(comm.rank())] = int64_t(train_ids_.size());
  comm.allreduce_sum(rank_train_.data(), p);
  for (int64_t n : rank_train_)
    steps_ = std::max(steps_, (n + opt_.batch_size - 1) / opt_.batch_size);
}

MiniBatchLoader::~MiniBatchLoader() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (!producer_.joinable()) return;
  // Unwinding from an error on a distributed run: the producer may sit in a collective that its
  // peers will never join. The job is about to be aborted (main's fail_job); do not wait for it.
  if (distributed_ && std::uncaught_exceptions() > 0)
    producer_.detach();
  else
    producer_.join();
}

int64_t MiniBatchLoader::global_seeds_at(int64_t step) const {
  int64_t n = 0;
  for (int64_t r : rank_train_)
    n += std::clamp<int64_t>(r - step * opt_.batch_size, 0, opt_.batch_size);
  return n;
}

MiniBatch MiniBatchLoader::make(int64_t epoch, int64_t step) {
  Timer timer;
  const int64_t bytes0 = sample_comm_ ? sample_comm_->stats().bytes_sent : 0;
  MiniBatch mb;
  mb.epoch = epoch;
  mb.step = step;
  // Shuffled positions into the training list, cut into the epoch's batches (once per epoch).
  if (batches_epoch_ != epoch) {
    std::vector<int64_t> all(train_ids_.size());
    std::iota(all.begin(), all.end(), int64_t{0});
    batches_ = epoch_batches(all, opt_.batch_size, opt_.sampler.seed, uint64_t(epoch));
    batches_epoch_ = epoch;
  }
  if (size_t(step) < batches_.size()) {
    for (int64_t pos : batches_[size_t(step)]) {
      mb.seeds.push_back(train_ids_[size_t(pos)]);
      mb.labels.push_back(train_labels_[size_t(pos)]);
    }
  }
  sampler_->sample(mb, opt_);
  mb.ready = kernels::mark_stream(opt_.device);
  mb.global_seeds = global_seeds_at(step);
  mb.sample_bytes = sample_comm_ ? sample_comm_->stats().bytes_sent - bytes0 : 0;
  mb.sample_ms = timer.ms();
  return mb;
}

void MiniBatchLoader::start(int64_t first_epoch, int64_t last_epoch) {
  DGNN_CHECK(!producer_.joinable(), Error, "MiniBatchLoader::start called twice");
  first_ = first_epoch;
  last_ = last_epoch;
  next_epoch_ = first_epoch;
  next_step_ = 0;
  if (opt_.prefetch && last_ >= first_ && steps_ > 0)
    producer_ = std::thread([this] { produce(); });
}

void MiniBatchLoader::produce() {
  // On a GPU this thread's stream may still be writing a batch nobody took (the loader is torn
  // down early, after an error): once joined, its work is done, so what it wrote is freed after.
  struct DrainAtExit {
    Device dev;
    ~DrainAtExit() {
      try {
        kernels::synchronize(dev);
      } catch (...) {
      }
    }
  } drain{opt_.device};
  try {
    kernels::bind_thread(opt_.device);
    kernels::use_own_stream(opt_.device);
    for (int64_t e = first_; e <= last_; ++e)
      for (int64_t s = 0; s < steps_; ++s) {
        {
          // One batch ahead: start the next only once the last one was taken.
          std::unique_lock<std::mutex> lock(mu_);
          cv_.wait(lock, [&] { return stop_ || !slot_.has_value(); });
          if (stop_) return;
        }
        MiniBatch mb = make(e, s);
        {
          std::lock_guard<std::mutex> lock(mu_);
          slot_.emplace(std::move(mb));
        }
        cv_.notify_all();
      }
  } catch (...) {
    std::lock_guard<std::mutex> lock(mu_);
    error_ = std::current_exception();
    cv_.notify_all();
  }
}

MiniBatch MiniBatchLoader::next() {
  DGNN_CHECK(next_epoch_ <= last_, Error, "MiniBatchLoader::next past the last epoch");
  Timer wait;
  std::optional<MiniBatch> mb;
  if (!producer_.joinable()) {
    mb.emplace(make(next_epoch_, next_step_));
  } else {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return slot_.has_value() || error_ != nullptr; });
    if (!slot_.has_value()) std::rethrow_exception(error_);
    mb.emplace(std::move(*slot_));
    slot_.reset();
    lock.unlock();
    cv_.notify_all();
  }
  // The step's kernels start after the batch's (made on the prefetch thread's stream).
  kernels::wait_for(mb->ready);
  last_wait_ms_ = wait.ms();
  if (++next_step_ == steps_) {
    next_step_ = 0;
    ++next_epoch_;
  }
  return std::move(*mb);
}

}  // namespace dgnn
