#pragma once
// Full-batch node-classification training: forward over the whole (local) graph, loss over the
// training vertices, gradients all-reduced across ranks, optimiser step; evaluation after each
// step; the parameters with the best validation accuracy are kept for the final test.
#include <array>
#include <cmath>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "dgnn/comm/communicator.hpp"
#include "dgnn/gnn/core/module.hpp"
#include "dgnn/gnn/train/minibatch.hpp"
#include "dgnn/gnn/train/optimizer.hpp"
#include "dgnn/gnn/train/training_loop.hpp"
#include "dgnn/graph/dataset.hpp"

namespace dgnn {

// This rank's share of a node-classification task (rows are local vertex numbers).
struct NodeTask {
  Var features;                 // n_owned x F (a leaf: trainers share it, nobody copies it)
  std::vector<int32_t> labels;  // n_owned entries, -1 = unlabelled
  std::vector<int32_t> train, val, test;
  int64_t global_train = 0, global_val = 0, global_test = 0;  // counts over all ranks
  int32_t num_classes = 0;
};

// The whole dataset as one process's task. OptionError when it has no labels.
NodeTask make_node_task(const Dataset& d);

struct TrainResult : LoopSummary {
  double best_val_acc = -1;
  double best_val_loss = std::nan("");  // the validation loss of that epoch
  double test_acc = 0;  // with the best-validation parameters
  // Mini-batch training: medians over epochs of the batch production time and of the part of it
  // training waited for.
  double median_sample_ms = 0, median_sample_wait_ms = 0;
};

// Node classification's evaluation, shared by its tasks (Trainer, PipelineRun): a rank's correct
// predictions per split (train, val, test) and its validation cross-entropy sum.
struct NodeSplitCounts {
  int64_t correct[3] = {0, 0, 0};
  double val_loss = 0;
  // Adds the counts of `logits`, whose rows the splits and `labels` index alike.
  void add(const Tensor& logits, const std::vector<int32_t>& labels,
           const std::vector<int32_t>& train, const std::vector<int32_t>& val,
           const std::vector<int32_t>& test);
  // Summed over ranks (collective): {train, val, test accuracy, mean validation loss (NaN
  // without validation vertices)} over the global split sizes.
  std::array<double, 4> reduce(Communicator& comm, int64_t global_train, int64_t global_val,
                               int64_t global_test);
};
// validate()'s record of those four: every metric, and the selection --select names ("loss":
// the lowest validation loss; "acc": the best validation accuracy).
Evaluation node_validation(const std::array<double, 4>& e, const std::string& select);
Evaluation node_test(double test_acc);
// A node run's result from the loop's (the mini-batch medians left at 0).
TrainResult node_result(const LoopResult& r);

// Node classification as a task of the training loop (gnn/train/training_loop.hpp): one optimiser
// step per epoch over the whole graph, or the mini-batch loader's steps.
class Trainer : private TrainingTask {
 public:
  Trainer(Module& model, const GraphView& graph, const NodeTask& task, Communicator& comm,
          TrainOptions opt);
  ~Trainer() override;

  // The loop's run; afterwards the model holds the best-validation parameters (those tested).
  // Each epoch's record has the metrics train_acc, val_acc and test_acc and, when training on
  // mini-batches, this rank's figures: steps (optimiser steps), sample_ms (time producing the
  // batches: sampling, feature gather, views), sample_wait_ms (how much of it training waited
  // for; the rest was hidden behind compute by the prefetch thread), sample_hidden_ms,
  // sampled_edges (block entries) and sample_bytes_sent (bytes the sampler sent).
  TrainResult run(const std::function<void(const EpochRecord&)>& on_epoch = {});
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
  // The same and the validation vertices' mean cross-entropy (global; NaN without any).
  std::array<double, 4> evaluate_with_loss();
  // Logits of the owned rows with the current parameters (no dropout).
  Tensor predict();

  void save_checkpoint(const std::string& path);
  void load_checkpoint(const std::string& path);

 private:
  // TrainingTask: one full-graph step per epoch, or the loader's mini-batches.
  const std::vector<std::pair<std::string, Parameter*>>& parameters() override { return params_; }
  Optimizer& optimizer() override { return *optimizer_; }
  int64_t steps_in_epoch(int epoch) override;
  void begin_epoch(int epoch) override;
  StepLoss step_loss(int epoch, int64_t step) override;
  void end_step(int epoch, int64_t step) override;
  void end_epoch(int epoch) override;
  std::vector<std::pair<std::string, double>> epoch_figures() override;
  Evaluation validate() override;  // train, validation and test accuracy; selects on validation
  Evaluation test() override;
  bool has_validation() const override { return task_.global_val > 0; }
  void on_start(int epochs_done) override;

  // ShapeError unless the model gave one row per owned vertex and one column per class.
  void check_logits(const Var& logits) const;
  // The loss of the full graph, and of one mini-batch, at step index `step` (dropout's key).
  StepLoss full_loss(uint64_t step);
  StepLoss batch_loss(const MiniBatch& batch, uint64_t step);
  // This rank's mini-batch figures of the epoch being trained.
  struct BatchFigures {
    int64_t steps = 0;
    double sample_ms = 0, sample_wait_ms = 0;
    int64_t sampled_edges = 0, sample_bytes = 0;
  };

  Module& model_;
  const GraphView& graph_;
  const NodeTask& task_;
  Communicator& comm_;
  TrainOptions opt_;
  std::unique_ptr<Optimizer> optimizer_;
  std::vector<std::pair<std::string, Parameter*>> params_;
  std::vector<int32_t> train_labels_;
  Var features_;
  MiniBatchLoader* loader_ = nullptr;
  BatchFigures figures_;
  std::unique_ptr<MiniBatch> batch_;  // the step's batch, until its backward has run
  std::unique_ptr<TrainingLoop> loop_;
};

}  // namespace dgnn
