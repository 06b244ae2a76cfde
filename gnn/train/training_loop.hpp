#pragma once
// The one training loop, for every task (PyTorch Lightning's Trainer.fit and LightningModule):
// the loop owns the epochs, the compute / comm / wait split, best-validation selection and its
// restore before the test, early stopping, checkpoints (every N epochs, at the end) and resuming
// from one; a task supplies its parameters and optimiser, one training epoch, and its
// evaluations. Node classification (full graph or mini-batch), temporal link prediction and
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
  // Early stopping: stop after this many epochs without a better validation score (0: never).
  int patience = 0;
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

class TrainingTask {
 public:
  virtual ~TrainingTask() = default;
  // The trained parameters, as checkpoints name them, and the optimiser stepping them (made
  // with make_optimizer), both replicated on every rank.
  virtual const std::vector<std::pair<std::string, Parameter*>>& parameters() = 0;
  virtual Optimizer& optimizer() = 0;
  // One training epoch (from 1): as many optimiser steps as the task takes; returns the mean
  // loss over all ranks. Deterministic given (epoch, parameters, optimiser state): a resumed run
  // repeats what an uninterrupted one does.
  virtual double train_epoch(int epoch) = 0;
  // The evaluation after every epoch (validation; may report more splits) and the final test,
  // with the current parameters.
  virtual Evaluation validate() = 0;
  virtual Evaluation test() = 0;
  // False: there is nothing to select on, and the last epoch's parameters are kept.
  virtual bool has_validation() const { return true; }
  // Called once before the first epoch a run trains, after a checkpoint is restored, with the
  // epochs done so far (e.g. to start a loader's prefetch there).
  virtual void on_start(int /*epochs_done*/) {}
};

struct EpochRecord : StepSplit {
  int epoch = 0;  // from 1
  double loss = 0;
  Evaluation val;
  double eval_ms = 0;
};

struct LoopResult {
  int epochs_run = 0;  // in this invocation (after a resume: the remaining ones)
  int last_epoch = 0;  // the last epoch trained, counting those of a resumed checkpoint
  int best_epoch = 0;
  Evaluation best_val;  // the validation of the best epoch
  Evaluation test;      // with the best-validation parameters
  bool stopped_early = false;
  double final_loss = 0;
  // Medians over this invocation's epochs.
  double median_epoch_ms = 0, median_compute_ms = 0, median_comm_ms = 0, median_wait_ms = 0;
  int64_t bytes_per_epoch = 0;  // the last epoch's, summed over ranks
  double test_ms = 0;           // the test's evaluation
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
};

}  // namespace dgnn
