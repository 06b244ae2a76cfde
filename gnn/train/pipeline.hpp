#pragma once
// The pipeline strategy (`dgnn train --strategy pipeline`): layer-pipelined model parallelism for
// the deep models, after GNNPipe (Chen et al., "GNNPipe: Scaling Deep GNN Training with Pipelined
// Model Parallelism"). Rank s is stage s: it runs a contiguous group of graph layers (chosen to
// balance the work, balance_stages) for every vertex. The graph is cut into chunks (METIS) that
// stream through the stages: stage s runs chunk c's forward while stage s+1 runs chunk c-1's,
// the last stage scores each chunk, and the gradients flow back the same way (all forwards, then
// all backwards, as GPipe; one optimiser step per epoch over every chunk's loss).
//
// What crosses ranks is a chunk's rows at a stage boundary: its activations forward, their
// gradients backward (2 (S-1) n x hidden floats an epoch), where graph parallelism exchanges a
// halo at every layer. GCNII's initial residual reads h0 in every layer: each stage recomputes
// h0 from the features (the input layer is replicated, its gradient summed over the stages with
// every other gradient) instead of receiving it, which would double the bytes.
//
// A chunk's neighbours in other chunks: the layer reads their historical embeddings (GNNPipe's
// answer to the dependency between chunks), and no gradient flows to them. The history is what
// the last exact pass computed: evaluation runs layer by layer over every chunk (each layer
// reads the current rows of every neighbour), and it keeps each layer's input rows of the
// vertices some other chunk reads; one pass before the first epoch fills it, and the loop's
// evaluation after every epoch refreshes it, with the parameters the next epoch trains. What
// differs from one process is then the missing gradient and dropout on the out-of-chunk rows,
// not their age. (Rows written as each chunk runs, GNNPipe's own scheme, compound the chunks'
// approximation over the layers: on a 6-layer GCNII over 5 chunks of the default SBM, test
// accuracy 0.72 against 0.90 for one process; refreshed by the exact pass, 0.97.) With one
// chunk (--chunks 1: exact mode) there is no out-of-chunk neighbour and every epoch equals one
// process's: the same masks (dropout keyed by vertex and layer), the same sums.
//
// Evaluation is exact whatever the chunks, and moves (S-1) n x hidden floats more an epoch
// (graph parallelism's evaluation exchanges its halos at every layer).
//
// Parameters and optimiser state are replicated as in every run (a checkpoint resumes on any
// strategy and rank count): a stage's backward reaches its own layers' parameters only, and the
// loop's gradient all-reduce sums the stages' shares into the whole gradient.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "dgnn/comm/communicator.hpp"
#include "dgnn/gnn/models/deep.hpp"
#include "dgnn/gnn/train/epoch_report.hpp"
#include "dgnn/gnn/train/static_run.hpp"
#include "dgnn/gnn/train/trainer.hpp"
#include "dgnn/graph/dataset.hpp"

namespace dgnn {

struct PipelineOptions {
  int chunks = 0;  // 0: 4 per stage; 1: exact mode (nothing stale)
  // The hybrid: P ranks as `stages` stages x P / stages graph parts (0: a stage per rank). Each
  // stage's ranks run its layers graph-parallel on the parts (a halo exchange per layer among
  // them); the rows of part q cross from stage s to s + 1 between the ranks holding part q. One
  // chunk per part (exact: every epoch equals one process).
  int stages = 0;
};

// The stages' layers: stage s runs graph layers [first[s], first[s + 1]), numbered from 1, so
// first has stages + 1 entries (first[0] = 1, first[stages] = layers + 1). Contiguous groups that
// minimise the most expensive stage: layer l costs layer_cost[l - 1], stage 0 also `stem`, the
// last stage also `head`, every stage `every` (GCNII's recomputed h0). OptionError when there
// are more stages than layers.
std::vector<int> balance_stages(const std::vector<double>& layer_cost, double stem, double head,
                                double every, int stages);

// The stages PipelineRun picks for a deep model on a graph of n vertices whose aggregation has
// `entries` entries (in-edges and self loops), by each part's flops: a graph layer
// 2 entries hidden + 2 n hidden^2, the input layer 2 n features hidden (on every stage when
// `stem_everywhere`: GCNII's h0), the output layer 2 n hidden classes. `dgnn plan` predicts the
// same stages.
std::vector<int> pipeline_stages(int64_t n, int64_t entries, int64_t features, int64_t hidden,
                                 int64_t classes, int layers, bool stem_everywhere, int stages);

// One stage's share of the graph's history: per graph layer it runs, the rows the layer's
// aggregation read of every vertex with a neighbour in another chunk (gnn/train/pipeline.cpp).
class PipelineHistory;

class PipelineRun : private TrainingTask {
 public:
  // `cfg.deep` must be set (OptionError otherwise); mini-batches, partition folders and devices
  // other than the CPU are refused. `read` runs on rank 0, which cuts the chunks and sends them
  // to every stage (each holds the whole graph: it runs its layers for every vertex).
  PipelineRun(const std::function<Dataset()>& read, StaticRunConfig cfg, PipelineOptions popt,
              Communicator& comm);
  ~PipelineRun() override;
  PipelineRun(const PipelineRun&) = delete;
  PipelineRun& operator=(const PipelineRun&) = delete;

  TrainResult train(const std::function<void(const EpochRecord&)>& on_epoch = {});
  EpochFormat epoch_format() const;

  int stages() const { return stages_; }
  int stage() const { return stage_; }
  int parts() const { return parts_; }  // graph parts per stage (the hybrid: > 1)
  int chunks() const { return int(chunks_.size()); }
  // Graph layers [first, last] of this stage (from 1).
  int first_layer() const { return first_[size_t(stage_)]; }
  int last_layer() const { return first_[size_t(stage_) + 1] - 1; }
  const std::vector<int>& stage_bounds() const { return first_; }
  DeepModel& model() { return *model_; }
  int64_t global_train() const { return global_[0]; }
  int64_t global_val() const { return global_[1]; }
  int64_t global_test() const { return global_[2]; }
  int64_t vertices() const { return vertices_; }
  int64_t feature_dim() const { return feature_dim_; }
  int32_t num_classes() const { return num_classes_; }

  // The loss and every parameter's gradient (summed over stages) at step index `step` (dropout's
  // key; epoch e trains step e - 1), without updating. Collective.
  double forward_backward(uint64_t step);
  // Accuracies {train, val, test} and the validation loss, exact, with the current parameters.
  std::array<double, 4> evaluate_with_loss();
  // The last stage: the logits (and the input ids) of every vertex, exact; other stages: none
  // (0 rows). Collective.
  Tensor predict();
  std::vector<int64_t> row_ids() const;
  // h_L of every vertex on the last stage (the head's input), none elsewhere. Collective.
  Tensor embeddings();
  // Bytes this rank held in its history tables (the stale rows).
  int64_t history_bytes() const;

 private:
  struct Chunk;
  // TrainingTask
  const std::vector<std::pair<std::string, Parameter*>>& parameters() override { return params_; }
  Optimizer& optimizer() override { return *optimizer_; }
  StepLoss step_loss(int epoch, int64_t step) override;
  StepLoss pipelined_loss(uint64_t step);
  std::vector<std::pair<std::string, double>> epoch_figures() override;
  Evaluation validate() override;
  Evaluation test() override;
  bool has_validation() const override { return global_[1] > 0; }
  void on_start(int epochs_done) override;  // fills the history (an exact pass)

  // The exact forward with no tape: h_L (embed) or the logits of every chunk (last stage).
  std::vector<Tensor> exact_forward(bool logits);
  void send_rows(int peer, const Tensor& rows);
  Tensor receive_rows(int peer, int64_t rows, int64_t cols);
  void finish_sends();

  // This stage's ranks' communication (the hybrid's halo exchanges) counted with the run's.
  void fold_group_stats();

  StaticRunConfig cfg_;
  Communicator& comm_;
  int stages_ = 1, stage_ = 0, parts_ = 1;
  int prev_rank_ = -1, next_rank_ = -1;  // the ranks holding this part on the stages around
  std::unique_ptr<Communicator> group_;  // this stage's ranks (the hybrid)
  std::vector<int> first_;
  std::vector<std::unique_ptr<Chunk>> chunks_;
  std::unique_ptr<PipelineHistory> history_;
  std::unique_ptr<DeepModel> model_;
  std::vector<std::pair<std::string, Parameter*>> params_;
  std::unique_ptr<Optimizer> optimizer_;
  std::unique_ptr<TrainingLoop> loop_;
  int64_t global_[3] = {0, 0, 0};
  int64_t vertices_ = 0, feature_dim_ = 0;
  int32_t num_classes_ = 0;
  // Sends in flight (and their buffers) until the step's end.
  std::vector<std::unique_ptr<PendingExchange>> pending_;
  std::vector<Tensor> sending_;
  bool history_filled_ = false;  // an exact pass has run
  double bubble_ms_ = 0;         // this rank blocked on a neighbour stage in the last step
  int64_t pipeline_bytes_ = 0;   // rows this rank sent to its neighbour stages in the last step
};

}  // namespace dgnn
