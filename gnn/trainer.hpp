#pragma once
// Full-batch node-classification training: forward over the whole (local) graph, loss over the
// training vertices, gradients all-reduced across ranks, optimiser step; evaluation after each
// step; the parameters with the best validation accuracy are kept for the final test.
#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "dgnn/comm/communicator.hpp"
#include "dgnn/gnn/minibatch.hpp"
#include "dgnn/gnn/module.hpp"
#include "dgnn/gnn/optimizer.hpp"
#include "dgnn/graph/dataset.hpp"

namespace dgnn {

// This rank's share of a node-classification task (rows are local vertex numbers).
struct NodeTask {
  Var features;                  // n_owned x F (a leaf: trainers share it, nobody copies it)
  std::vector<int32_t> labels;   // n_owned entries, -1 = unlabelled
  std::vector<int32_t> train, val, test;
  int64_t global_train = 0, global_val = 0, global_test = 0;  // counts over all ranks
  int32_t num_classes = 0;
};

// Median of a list (0 when empty).
double median(std::vector<double> v);

// The whole dataset as one process's task. OptionError when it has no labels.
NodeTask make_node_task(const Dataset& d);

struct TrainOptions {
  int epochs = 200;
  uint64_t seed = 0;
  std::string optimizer = "adam";  // adam | sgd
  float lr = 0.01f;
  float weight_decay = 0.f;
  float momentum = 0.f;            // sgd only
  std::string save;                // checkpoint written after the last epoch ("" = none)
  std::string load;                // checkpoint to resume from ("" = none)
  std::string meta_json = "{}";    // settings stored in checkpoints
};

// A training step's time split over ranks: means (compute = time - comm - wait), the slowest
// rank's of each, and bytes sent in the step (sum over ranks, and the largest rank's).
struct StepSplit {
  double time_ms = 0;  // the slowest rank's
  double compute_ms = 0, comm_ms = 0, wait_ms = 0;
  double max_compute_ms = 0, max_comm_ms = 0, max_wait_ms = 0;
  int64_t bytes_sent = 0, max_bytes_sent = 0;
};
// Sums every parameter's gradient over ranks (and `extra`, e.g. the loss) in one all-reduce:
// latency, not bandwidth, dominates small models. Every rank reduces every parameter, even one
// its backward did not reach (a rank without training vertices), so the collectives match; one
// that no rank's backward reached is left without a gradient, as on one rank (the optimiser then
// leaves it unchanged). `flat` is scratch kept by the caller across steps. No-op on one rank.
void allreduce_gradients(Communicator& comm,
                         const std::vector<std::pair<std::string, Parameter*>>& params,
                         std::vector<float>& flat, double* extra = nullptr);

// Collective: combines this rank's comm.stats() since their last reset with its step time.
StepSplit split_step(Communicator& comm, double step_ms);

struct EpochStats : StepSplit {
  int epoch = 0;  // from 1
  double loss = 0;
  double train_acc = 0, val_acc = 0, test_acc = 0;
  double eval_ms = 0;
  // Mini-batch training (this rank's): optimiser steps, time spent producing the batches
  // (sampling, feature gather, views) and how much of it training waited for — the rest was
  // hidden behind compute by the prefetch thread; block entries sampled; bytes the sampler sent.
  int64_t steps = 1;
  double sample_ms = 0, sample_wait_ms = 0;
  int64_t sampled_edges = 0, sample_bytes = 0;
};

struct TrainResult {
  int epochs_run = 0;     // in this invocation (after a resume: the remaining ones)
  int last_epoch = 0;
  int best_epoch = 0;
  double best_val_acc = -1;
  double test_acc = 0;    // with the best-validation parameters
  double final_loss = 0;
  double median_epoch_ms = 0;
  // Medians over epochs of the split (ms) and bytes sent per epoch (sum over ranks).
  double median_compute_ms = 0, median_comm_ms = 0, median_wait_ms = 0;
  int64_t bytes_per_epoch = 0;
  // Mini-batch training: medians over epochs of the batch production time and of the part of it
  // training waited for.
  double median_sample_ms = 0, median_sample_wait_ms = 0;
};

class Trainer {
 public:
  Trainer(Module& model, const GraphView& graph, const NodeTask& task, Communicator& comm,
          TrainOptions opt);
  ~Trainer();

  TrainResult run(const std::function<void(const EpochStats&)>& on_epoch = {});
  // Mini-batch training: every epoch runs the loader's steps on sampled blocks instead of one
  // full-graph step (evaluation stays full-graph, on `graph`). Null = full-batch. The loader
  // must outlive run().
  void set_minibatch(MiniBatchLoader* loader) { loader_ = loader; }
  // The loss of one mini-batch (its seeds over all ranks) and the parameters' gradients
  // (summed over ranks) at `step`, without updating. Collective.
  double forward_backward(const MiniBatch& batch, uint64_t step);
  // One optimisation step at step index `step`; returns the (global) training loss.
  double train_step(uint64_t step);
  // The loss and the parameters' gradients (summed over ranks) at `step`, without updating.
  double forward_backward(uint64_t step);
  // Accuracies (global) with the current parameters: {train, val, test}.
  std::array<double, 3> evaluate();
  // Logits of the owned rows with the current parameters (no dropout).
  Tensor predict();

  void save_checkpoint(const std::string& path);
  void load_checkpoint(const std::string& path);

 private:
  // ShapeError unless the model gave one row per owned vertex and one column per class.
  void check_logits(const Var& logits) const;
  void restore_checkpoint(const std::string& path);
  // One epoch of mini-batch steps; returns the mean loss over the epoch's seeds.
  double train_epoch_minibatch(int epoch, EpochStats& st);

  Module& model_;
  const GraphView& graph_;
  const NodeTask& task_;
  Communicator& comm_;
  TrainOptions opt_;
  std::unique_ptr<Optimizer> optimizer_;
  std::vector<std::pair<std::string, Parameter*>> params_;
  std::vector<int32_t> train_labels_;
  std::vector<float> flat_;  // gradients packed for one all-reduce
  Var features_;
  MiniBatchLoader* loader_ = nullptr;
  int epoch_ = 0;  // epochs completed
  int best_epoch_ = 0;
  double best_val_ = -1;
  std::vector<Tensor> best_params_;
};

}  // namespace dgnn
