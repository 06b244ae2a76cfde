#pragma once
// The one training loop, for every task (PyTorch Lightning's Trainer.fit and LightningModule):
// the loop owns the epochs, the compute / comm / wait split, best-validation selection and its
// restore before the test, early stopping, checkpoints (every N epochs, at the end) and resuming
// from one, and every optimiser step (zero_grad, backward, the gradient all-reduce, clipping,
// the update) through the epoch's windows; a task supplies its parameters and optimiser, each
// step's loss (StepLoss), and its evaluations. Node classification (full graph or mini-batch), temporal link prediction and
// edge classification (vertex or snapshot strategy) and node classification over snapshots are
// tasks (gnn/train/trainer.hpp, gnn/temporal/temporal_trainer.hpp, gnn/temporal/temporal_node.hpp);
// a user's task may be one too.
//
// Distributed: parameters and optimiser state are replicated, so a checkpoint written on P
// ranks (by rank 0) resumes on any number of ranks. Every call here is collective.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "dgnn/comm/communicator.hpp"
#include "dgnn/gnn/core/module.hpp"
#include "dgnn/gnn/train/rank_usage.hpp"
#include "dgnn/gnn/train/optimizer.hpp"

namespace dgnn {

// A training step's time split over ranks: means (compute = time - comm - wait), the slowest
// rank's of each, and bytes sent in the step (sum over ranks, and the largest rank's).
struct StepSplit {
  double time_ms = 0;  // the slowest rank's
  double compute_ms = 0, comm_ms = 0, wait_ms = 0;
  double max_compute_ms = 0, max_comm_ms = 0, max_wait_ms = 0;
  int64_t bytes_sent = 0, max_bytes_sent = 0;
};
// Collective: combines this rank's comm.stats() since their last reset with its step time.
StepSplit split_step(Communicator& comm, double step_ms);

// What the loop trains with; every task takes it (a temporal task adds its own options).
struct TrainOptions {
  int epochs = 200;
  uint64_t seed = 0;
  std::string optimizer = "adam";  // adam | sgd
  float lr = 0.01f;
  float weight_decay = 0.f;
  float momentum = 0.f;  // sgd only
  // Gradient clipping: before each update, the gradients (summed over ranks) are scaled so that
  // their global L2 norm is at most this (0: never; PyTorch's clip_grad_norm_).
  float clip_norm = 0.f;
  // Early stopping: stop after this many epochs without a better validation score (0: never).
  int patience = 0;
  // Node classification: the validation score that selects the model and counts for patience,
  // "acc" (the highest accuracy) or "loss" (the lowest cross-entropy: GCNII's protocol).
  std::string select = "acc";
  std::string save;              // checkpoint written after the last epoch ("" = none)
  int save_every = 0;            // ... and after every N-th epoch (0: only at the end)
  std::string load;              // checkpoint to resume from ("" = none)
  std::string meta_json = "{}";  // settings stored in checkpoints ("model" is checked)
};
// OptionError naming the flag for an option out of range (NaN fails every check).
void check_train_options(const TrainOptions& opt);
// The optimiser the options name over `params`.
std::unique_ptr<Optimizer> make_optimizer(
    const std::vector<std::pair<std::string, Parameter*>>& params, const TrainOptions& opt);

// A task's evaluation of one split: named metrics in print order, and the number model
// selection maximises (accuracy, MAP, F1; the first epoch wins ties).
struct Evaluation {
  std::vector<std::pair<std::string, double>> metrics;
  double selection = 0;
  // The metric called `name` (NaN when absent).
  double get(const std::string& name) const;
};

// One optimiser step's loss, as a task computes it (TrainingTask::step_loss); the loop runs the
// rest of the step: zero_grad, backward, the gradient all-reduce and the optimiser step.
struct StepLoss {
  // What backward runs on (times `scale`). Undefined: this rank computed nothing in this step; it
  // still joins the gradient all-reduce (a rank without training vertices or seeds).
  Var loss;
  float scale = 1;
  // This rank's part of the step's reported loss: summed over ranks in the gradient all-reduce,
  // unless the task summed it already (`summed`, e.g. in double precision before its backward).
  double value = 0;
  bool summed = false;
  // The epoch's loss is sum(value * weight) / sum(count) over its steps (0 when the counts are).
  double weight = 1, count = 1;
  // False: no rank has anything to learn from in this step (every rank says so alike): no
  // backward, no all-reduce and no optimiser step.
  bool step = true;
  // The task already put part of this step's gradient into the parameters (it zeroed them
  // first, then back-propagated a part early, see backward_to): the loop must not zero them.
  bool accumulated = false;
};

class TrainingTask {
 public:
  virtual ~TrainingTask() = default;
  // The trained parameters, as checkpoints name them, and the optimiser stepping them (made
  // with make_optimizer), both replicated on every rank.
  virtual const std::vector<std::pair<std::string, Parameter*>>& parameters() = 0;
  virtual Optimizer& optimizer() = 0;
  // A training epoch (from 1) is steps_in_epoch(epoch) optimiser steps (BPTT windows,
  // mini-batches; one full-graph step), each from step_loss(epoch, step): the forward and the
  // loss, collective where the model is. begin_epoch runs before the first (a recurrent model
  // resets its state), end_step after each update (truncated BPTT detaches the state there),
  // end_epoch after the last. Deterministic given (epoch, parameters, optimiser state): a
  // resumed run repeats what an uninterrupted one does.
  virtual int64_t steps_in_epoch(int /*epoch*/) { return 1; }
  virtual void begin_epoch(int /*epoch*/) {}
  virtual StepLoss step_loss(int epoch, int64_t step) = 0;
  virtual void end_step(int /*epoch*/, int64_t /*step*/) {}
  virtual void end_epoch(int /*epoch*/) {}
  // The evaluation after every epoch (validation; may report more splits) and the final test,
  // with the current parameters.
  virtual Evaluation validate() = 0;
  virtual Evaluation test() = 0;
  // False: there is nothing to select on, and the last epoch's parameters are kept.
  virtual bool has_validation() const { return true; }
  // Called once before the first epoch a run trains, after a checkpoint is restored, with the
  // epochs done so far (e.g. to start a loader's prefetch there).
  virtual void on_start(int /*epochs_done*/) {}
  // Figures of the epoch just trained beside the loop's (mini-batch sampling times, ...), by
  // name, added to its record.
  virtual std::vector<std::pair<std::string, double>> epoch_figures() { return {}; }
};

// What every task's epoch reports: its loss, time split, validation metrics (by the task's names)
// and the task's own figures (TrainingTask::epoch_figures).
struct EpochRecord : StepSplit {
  int epoch = 0;  // from 1
  double loss = 0;
  Evaluation val;
  double eval_ms = 0;
  std::vector<std::pair<std::string, double>> figures;
  // The figure called `name` (`otherwise` when absent).
  double figure(const std::string& name, double otherwise = 0) const;
};

// Per optimiser step of an epoch, what the step would apply without applying it
// (TrainingLoop::epoch_gradients): the step's reported loss (summed over ranks), its count
// (StepLoss::count: steps or samples with targets) and every parameter's gradient, summed over
// ranks and flattened in parameter order.
struct StepGradients {
  double loss = 0;
  int64_t count = 0;
  std::vector<float> grads;
};

// What every run reports of its loop, whatever its task: each task's result type (TrainResult,
// TemporalResult, ForecastResult, NodeSequenceResult) is this and the task's metrics.
struct LoopSummary {
  int epochs_run = 0;          // in this invocation (after a resume: the remaining ones)
  int last_epoch = 0;          // the last epoch trained, counting those of a resumed checkpoint
  int best_epoch = 0;          // 0: none (no epoch trained)
  bool stopped_early = false;  // --patience ran out before --epochs
  double final_loss = 0;
  // Medians over this invocation's epochs.
  double median_epoch_ms = 0, median_compute_ms = 0, median_comm_ms = 0, median_wait_ms = 0;
  int64_t bytes_per_epoch = 0;  // the last epoch's, summed over ranks
  double test_ms = 0;           // the test's evaluation
  // Every rank's peak resident memory and input bytes read when the test ended (every rank
  // holds every rank's): the --log-json final record's rank_peak_bytes.
  RankUsage usage;
};

struct LoopResult : LoopSummary {
  Evaluation best_val;  // the validation of the best epoch
  Evaluation test;      // with the best-validation parameters
};

// Median of a list (0 when empty).
double median(std::vector<double> v);

// Sums every parameter's gradient over ranks (and `extra`, e.g. the loss) in one all-reduce:
// latency, not bandwidth, dominates small models. Every rank reduces every parameter, even one
// its backward did not reach (a rank without training vertices), so the collectives match; one
// that no rank's backward reached is left without a gradient, as on one rank (the optimiser then
// leaves it unchanged). `flat` is scratch kept by the caller across steps. No-op on one rank.
void allreduce_gradients(Communicator& comm,
                         const std::vector<std::pair<std::string, Parameter*>>& params,
                         std::vector<float>& flat, double* extra = nullptr);

// Scales the parameters' gradients so that their global L2 norm is at most max_norm (none that
// is below it is touched; a NaN norm leaves them as they are for the optimiser to meet).
void clip_gradients(const std::vector<std::pair<std::string, Parameter*>>& params, float max_norm);

class TrainingLoop {
 public:
  TrainingLoop(TrainingTask& task, Communicator& comm, TrainOptions opt);

  // Resumes from opt.load if given, trains up to opt.epochs (or until patience runs out), saves
  // opt.save, then tests with the best-validation parameters and leaves those in the model (a
  // caller writing predictions or embeddings gets the tested model). `on_epoch` sees every
  // epoch as it ends.
  LoopResult run(const std::function<void(const EpochRecord&)>& on_epoch = {});

  // Rank 0 writes (atomically) the parameters, the optimiser's state, the loop's position and
  // the best-validation state; load restores them (InputError / OptionError naming the file
  // for a checkpoint of another model, optimiser or shape, or one past opt.epochs).
  void save_checkpoint(const std::string& path);
  void load_checkpoint(const std::string& path);

  int epoch() const { return epoch_; }

  // The only place in gnn/ where a task's gradients are made and applied. gradients(): zero the
  // gradients, backward of the task's loss, sum them (and the reported value) over ranks;
  // returns the step's reported loss, summed over ranks. step(): that, then the optimiser step
  // (none when l.step is false). Collective.
  double gradients(const StepLoss& l);
  double step(const StepLoss& l);
  // One training epoch, as run() trains it: the task's steps in order; returns its loss.
  double train_epoch(int epoch);
  // Epoch `epoch`'s steps from a fresh state, each one's gradients without updating (the
  // parameters stay as they are), then a fresh state again. Collective.
  std::vector<StepGradients> epoch_gradients(int epoch);

 private:
  void restore_checkpoint(const std::string& path);
  void keep_best(int epoch, const Evaluation& val);

  TrainingTask& task_;
  Communicator& comm_;
  TrainOptions opt_;
  int epoch_ = 0;  // epochs completed
  int best_epoch_ = 0;
  bool has_best_ = false;
  Evaluation best_val_;
  std::vector<Tensor> best_params_;
  std::vector<float> flat_;  // gradients packed for one all-reduce
};

}  // namespace dgnn
