#pragma once
// Mini-batch training data: each step's sampled blocks as GraphViews, the input rows of the first
// block and the labels of the seeds. A loader produces them on a background thread one step ahead
// of training, so sampling and the feature gather hide behind the previous step's compute.
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "dgnn/comm/communicator.hpp"
#include "dgnn/gnn/core/graph_view.hpp"
#include "dgnn/kernels/minibatch_kernels.hpp"
#include "dgnn/sampler/sampler.hpp"

namespace dgnn {

// What batches are sampled from: neighbour lists by global id (NeighborSource) and feature rows
// by global id. Both may be collective (distributed); then every rank calls them in step.
class GraphStore : public NeighborSource {
 public:
  virtual Tensor gather_features(const std::vector<int64_t>& ids) = 0;
  virtual int64_t feature_dim() const = 0;
};

// The whole graph and its features in this process (both must outlive the store).
std::unique_ptr<GraphStore> make_local_store(const Csr& in, const Tensor& features);

struct MiniBatchOptions {
  int64_t batch_size = 0;   // seeds per rank and step; 0 = full-batch training
  SamplerOptions sampler;   // fanouts (one per layer), replace, seed, threads (0: the caller's)
  bool prefetch = true;     // sample the next batch on a background thread
  std::vector<Norm> norms;  // adjacencies to build with the batch (the model's), off the step
  bool attention = false;   // also build the attention structure (GAT) with the batch
  // Where the batches train. Blocks sampled on the CPU from a store (distributed sampling, or
  // attention, which needs host structure) have their adjacencies and input rows moved to this
  // device on the sampling thread, so the step finds them there.
  Device device = Device::cpu;
};

struct MiniBatch {
  int64_t epoch = 0;                              // from 0: the key of the draws
  int64_t step = 0;                               // within the epoch
  std::vector<int64_t> seeds;                     // global ids, the rows of the output
  std::vector<std::unique_ptr<GraphView>> views;  // views[i] feeds layer i
  Var inputs;                                     // features of views[0]'s sources (n_src x F)
  std::vector<int32_t> labels;                    // per seed
  int64_t global_seeds = 0;   // seeds of this step over all ranks: the loss normaliser
  int64_t edges = 0;          // sampled block entries
  double sample_ms = 0;       // sampling, feature gather and views, on whichever thread
  int64_t sample_bytes = 0;   // sent by this rank to sample it (distributed)
  kernels::StreamMark ready;  // on a GPU: the end of its making on the producing thread's stream

  std::vector<const GraphView*> blocks() const;
};

// How a batch's seeds become its blocks and input rows: sampled on the CPU from a GraphStore
// (what the loader builds from one), or on a GPU (gnn/train/device_minibatch.hpp). Called on the
// loader's prefetch thread, one batch at a time.
class BatchSampler {
 public:
  virtual ~BatchSampler() = default;
  virtual const SamplerOptions& options() const = 0;
  // Fills mb.views, mb.inputs and mb.edges for mb.seeds (keyed by mb.epoch), with the
  // adjacencies of opt.norms (and the attention structure if opt.attention) built where the
  // batch trains (so the training step does not wait for them).
  virtual void sample(MiniBatch& mb, const MiniBatchOptions& opt) = 0;
};

// Builds what a step over `v` will ask for (opt.norms' adjacencies, the attention structure if
// opt.attention, the dropout keys) in `v`'s device memory now, on the sampling thread.
void prepare_view(const GraphView& v, const MiniBatchOptions& opt);

class MiniBatchLoader {
 public:
  // `train_ids` / `train_labels`: this rank's training vertices (global ids) and their classes.
  // Collective (agrees on the number of steps per epoch: the largest over ranks; a rank out of
  // seeds takes empty steps that still join every collective). `sample_comm` carries the
  // sampler's traffic (a communicator of its own: it runs on the prefetch thread); null on one
  // process. The store and communicators must outlive the loader.
  MiniBatchLoader(GraphStore& store, std::vector<int64_t> train_ids,
                  std::vector<int32_t> train_labels, MiniBatchOptions opt, Communicator& comm,
                  Communicator* sample_comm = nullptr);
  // The same with batches from `sampler` (opt.sampler is then the sampler's options).
  MiniBatchLoader(std::unique_ptr<BatchSampler> sampler, std::vector<int64_t> train_ids,
                  std::vector<int32_t> train_labels, MiniBatchOptions opt, Communicator& comm,
                  Communicator* sample_comm = nullptr);
  ~MiniBatchLoader();
  MiniBatchLoader(const MiniBatchLoader&) = delete;
  MiniBatchLoader& operator=(const MiniBatchLoader&) = delete;

  int64_t steps_per_epoch() const { return steps_; }
  const MiniBatchOptions& options() const { return opt_; }

  // Produces the batches of epochs [first, last] (from 0) in order, ahead of next() when
  // prefetching.
  void start(int64_t first_epoch, int64_t last_epoch);
  // The next batch of that sequence; records how long training waited for it.
  MiniBatch next();
  double last_wait_ms() const { return last_wait_ms_; }
  // One batch, here and now (tests; no pipeline).
  MiniBatch make(int64_t epoch, int64_t step);

 private:
  void produce();
  int64_t global_seeds_at(int64_t step) const;

  std::unique_ptr<BatchSampler> sampler_;
  std::vector<int64_t> train_ids_;
  std::vector<int32_t> train_labels_;
  MiniBatchOptions opt_;
  Communicator* sample_comm_;
  std::vector<int64_t> rank_train_;  // training vertices per rank
  int64_t steps_ = 0;
  bool distributed_ = false;
  int64_t batches_epoch_ = -1;  // the epoch batches_ was cut for
  std::vector<std::vector<int64_t>> batches_;

  // The pipeline: one slot, filled by the producer, emptied by next().
  int64_t first_ = 0, last_ = -1;
  int64_t next_epoch_ = 0, next_step_ = 0;  // of the consumer
  std::thread producer_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::optional<MiniBatch> slot_;
  std::exception_ptr error_;
  bool stop_ = false;
  double last_wait_ms_ = 0;
};

}  // namespace dgnn
