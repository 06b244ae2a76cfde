#pragma once
// Node classification over snapshot sequences: a temporal model runs through every snapshot, and
// a linear head classifies each vertex from its embedding after the last one (labels are per
// vertex, e.g. the final community of an evolving planted partition). Vertices are split into
// train / validation / test; training back-propagates through the whole sequence, or through its
// last `bptt` steps when that is set (truncation: the state is detached before them).
//
// Distributed with the vertex strategy: each rank runs its share of every snapshot (halo
// exchanges inside the model), classifies its owned vertices, and the loss, gradients and
// metric counts are summed over ranks, so any rank count computes what one process does.
#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "dgnn/comm/communicator.hpp"
#include "dgnn/gnn/models/layers.hpp"
#include "dgnn/gnn/temporal/temporal_models.hpp"
#include "dgnn/gnn/train/optimizer.hpp"
#include "dgnn/gnn/train/trainer.hpp"
#include "dgnn/gnn/train/training_loop.hpp"

namespace dgnn {

struct NodeSequenceTask {
  // Per owned row of the model's output: class index, -1 = unlabelled.
  std::vector<int32_t> labels;
  std::vector<int32_t> train, val, test;  // owned rows
  int64_t global_train = 0, global_val = 0, global_test = 0;
  int32_t num_classes = 0;
};

// The loop's options (epochs, optimiser, checkpoints, patience; 50 epochs by default) and the
// task's.
struct NodeSequenceOptions : TrainOptions {
  NodeSequenceOptions() { epochs = 50; }
  int bptt = 0;  // 0: back-propagate through every snapshot
};

struct NodeSequenceResult : LoopSummary {
  double best_val_acc = 0;
  double test_acc = 0, test_macro_f1 = 0;  // with the best-validation parameters
};

// A task of the training loop (gnn/train/training_loop.hpp): one optimiser step per epoch.
class NodeSequenceTrainer : private TrainingTask {
 public:
  // graphs[t] and features (one matrix, or one per snapshot) are this rank's; they, the model
  // and the task must outlive the trainer.
  NodeSequenceTrainer(TemporalModel& model, const std::vector<std::unique_ptr<GraphView>>& graphs,
                      const std::vector<Var>& features, const NodeSequenceTask& task,
                      Communicator& comm, NodeSequenceOptions opt);
  ~NodeSequenceTrainer() override;
  // The loop's run; afterwards the model and head hold the best-validation parameters. Each
  // epoch's record has the metrics train_acc, val_acc and val_macro_f1.
  NodeSequenceResult run(const std::function<void(const EpochRecord&)>& on_epoch = {});
  double train_epoch(int epoch) { return loop_->train_epoch(epoch); }
  // Accuracy and macro F1 (over classes present) of rows `rows` of host logits, summed over
  // ranks.
  std::array<double, 2> evaluate(const Tensor& logits, const std::vector<int32_t>& rows,
                                 int64_t global_count);
  Linear& head() { return head_; }
  // Logits of the owned rows after the whole sequence (no dropout), on the host.
  Tensor predict();
  // The owned rows' embeddings after the last snapshot (what the head classifies), on the host.
  Tensor embeddings();

 private:
  // TrainingTask.
  const std::vector<std::pair<std::string, Parameter*>>& parameters() override { return params_; }
  Optimizer& optimizer() override { return *optimizer_; }
  StepLoss step_loss(int epoch, int64_t step) override;  // the whole sequence: one step
  Evaluation validate() override;  // training and validation accuracy, validation macro-F1
  Evaluation test() override;
  bool has_validation() const override { return task_.global_val > 0; }

  // Logits of the owned rows (the embeddings, with `embed`).
  Var run_sequence(bool training, uint64_t step, bool embed = false);

  TemporalModel& model_;
  const std::vector<std::unique_ptr<GraphView>>& graphs_;
  const std::vector<Var>& features_;
  const NodeSequenceTask& task_;
  Communicator& comm_;
  NodeSequenceOptions opt_;
  Linear head_;
  std::vector<std::pair<std::string, Parameter*>> params_;
  std::unique_ptr<Optimizer> optimizer_;
  std::vector<int32_t> train_labels_;
  std::unique_ptr<TrainingLoop> loop_;
};

}  // namespace dgnn
