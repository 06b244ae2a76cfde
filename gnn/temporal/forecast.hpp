#pragma once
// Spatio-temporal forecasting (T-GCN's and GCRN's own task, PyTorch Geometric Temporal's main
// use): a signal on every vertex at every step (graph/signals.hpp), and each vertex's signal
// `horizon` steps ahead to predict.
//
// Sample i is the step t = lags - 1 + i: a vertex sees its last `lags` signals x_{t-lags+1..t}
// (lags x F columns, oldest first) and its static features, on the graph of step t (the same
// graph at every step when it is static), and the target is x_{t+horizon} (all F channels).
// The model runs the samples in order and carries its recurrent state from one to the next (as
// PyG-Temporal's T-GCN example does); a linear head reads ReLU(embedding). Loss: the mean squared
// error over the vertices and channels of a sample, averaged over the samples of a window.
// Samples split by time: the first train_frac train, the next val_frac validate, the rest test.
// Training back-propagates through windows of `bptt` samples (the whole training span when 0,
// one optimiser step per epoch); evaluation runs the sequence from its start so that validation
// and test see their history.
//
// Metrics (each split): MSE, MAE, RMSE and masked MAPE (percent, over targets that are not 0, as
// traffic papers report it), beside the same metrics of two naive forecasts of the same targets:
// 0, and the last value seen (x_t).
//
// Distributed, vertex strategy: each rank holds its owned vertices' signals and runs its share
// of every step (halo exchanges inside the model). Snapshot strategy: each rank holds every
// vertex's signal and runs whole steps, a block of every window of samples
// (gnn/temporal/temporal_snapshot.hpp). Either way error sums and gradients are summed over
// ranks, so any rank count computes what one process does.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "dgnn/comm/communicator.hpp"
#include "dgnn/gnn/core/graph_view.hpp"
#include "dgnn/gnn/models/layers.hpp"
#include "dgnn/gnn/temporal/temporal_models.hpp"
#include "dgnn/gnn/temporal/temporal_snapshot.hpp"
#include "dgnn/gnn/train/optimizer.hpp"
#include "dgnn/gnn/train/training_loop.hpp"
#include "dgnn/graph/signals.hpp"

namespace dgnn {

struct ForecastOptions : TrainOptions {
  ForecastOptions() { epochs = 50; }
  int lags = 4;
  int horizon = 1;
  int bptt = 0;  // samples per back-propagation window; 0 = the whole training span
  double train_frac = 0.7;
  double val_frac = 0.1;
};

// The samples of a signal of `steps` steps and how they split (counts rounded down, as
// PyG-Temporal's temporal_signal_split does; the test gets the rest). OptionError naming the
// flag when lags or horizon is < 1, when no sample fits, or when training or test would be empty.
struct ForecastSplit {
  int64_t first = 0;  // the step of sample 0 (lags - 1)
  int64_t samples = 0, train = 0, val = 0, test = 0;
};
ForecastSplit forecast_split(int64_t steps, const ForecastOptions& opt);

// The windows samples run in, as bounds from 0 to the sample count: training windows of `bptt`
// samples (the whole training span when 0), then validation and test cut the same way.
std::vector<int> forecast_windows(const ForecastSplit& split, const ForecastOptions& opt);
// The snapshot strategy's plan over those windows: blocks of samples balanced by `cost` (per
// sample: its graph's entries plus the vertices). OptionError for more ranks than samples.
SnapshotPlan forecast_snapshot_plan(const ForecastSplit& split, const ForecastOptions& opt,
                                    const std::vector<int64_t>& cost, int ranks,
                                    int64_t num_vertices);

// One rank's share of a signal: its owned vertices' rows, in the order of its graph views.
struct ForecastData {
  int64_t steps = 0, channels = 1, static_dim = 0;
  int64_t global_vertices = 0;
  std::vector<float> signals;  // steps x rows x channels
  std::vector<float> statics;  // rows x static_dim (empty when static_dim is 0)
  int64_t rows() const {
    return steps > 0 && channels > 0 ? int64_t(signals.size()) / (steps * channels) : 0;
  }
};
// The rows `owned` (dense ids) of s, and of `statics` (every vertex, `static_dim` columns).
ForecastData forecast_rows(const SignalSeries& s, const std::vector<int64_t>& owned,
                           const std::vector<float>& statics = {}, int64_t static_dim = 0);
// The model's input width for `lags` lags of d's channels plus its static features.
inline int64_t forecast_input_dim(const ForecastData& d, int lags) {
  return int64_t(lags) * d.channels + d.static_dim;
}

struct ForecastMetrics {
  double mse = 0, mae = 0, rmse = 0;
  double mape = 0;  // percent, over targets that are not 0 (NaN when every target is 0)
};

struct ForecastResult : LoopSummary {
  ForecastMetrics best_val;
  ForecastMetrics test;                  // with the best-validation parameters
  ForecastMetrics test_zero, test_last;  // the naive forecasts on the test samples
  ForecastMetrics val_zero, val_last;    // ... and on the validation samples
  ForecastSplit split;
};

// A static model (dims = {in, hidden..., out}, layers from `make_layer`, no dropout) run on
// every step alone, as a TemporalModel without state: the static layers applied per step. It
// runs under the vertex strategy (window() throws).
std::unique_ptr<TemporalModel> make_per_step_model(const LayerFactory& make_layer,
                                                   const std::vector<int64_t>& dims);

// Forecasting as a task of the training loop (gnn/train/training_loop.hpp).
class ForecastTrainer : private TrainingTask {
 public:
  // graphs: this rank's view of each step's graph (steps entries), or one view for every step;
  // data: this rank's rows (data.rows() == the views' owned vertices). model, graphs and data
  // must outlive the trainer. The model's input width must be forecast_input_dim(data, lags).
  // Snapshot strategy (`plan`, from forecast_snapshot_plan for this split and options): data has
  // every vertex's rows, graphs are whole (one for every step, or one per step, null where no
  // sample of this rank reads it).
  ForecastTrainer(TemporalModel& model, std::vector<const GraphView*> graphs,
                  const ForecastData& data, Communicator& comm, ForecastOptions opt,
                  Device dev = Device::cpu, const SnapshotPlan* plan = nullptr);
  ~ForecastTrainer() override;

  // The loop's run. Each epoch's record has the metrics train_mse and val_mse, val_mae,
  // val_rmse, val_mape.
  ForecastResult run(const std::function<void(const EpochRecord&)>& on_epoch = {});
  // One training pass (an optimiser step per window); returns the mean loss over the samples.
  double train_epoch(int epoch) { return loop_->train_epoch(epoch); }
  const ForecastSplit& split() const { return split_; }
  // This rank's forecasts of the test samples with the current parameters: test x rows x
  // channels, on the host (snapshot strategy: every vertex's, on rank 0, empty elsewhere).
  // Collective.
  std::vector<float> test_forecasts();
  // Metrics of the model over samples [begin, end) with the current parameters (the sequence
  // runs from its start). Collective.
  ForecastMetrics evaluate(int64_t begin, int64_t end);
  // Per training window of `epoch`, from a fresh state and without updating: the window's loss
  // (summed over its samples), its samples (count) and every parameter's gradient of its mean
  // (summed over ranks, flattened in parameters() order): what an optimiser step would apply
  // after that window. Collective.
  std::vector<StepGradients> epoch_gradients(int epoch) { return loop_->epoch_gradients(epoch); }
  // The trained parameters as checkpoints name them (the model's, then the head's).
  const std::vector<std::pair<std::string, Parameter*>>& named_parameters() const {
    return params_;
  }
  Linear& head() { return head_; }

 private:
  // TrainingTask: one optimiser step per training window.
  const std::vector<std::pair<std::string, Parameter*>>& parameters() override { return params_; }
  Optimizer& optimizer() override { return *optimizer_; }
  int64_t steps_in_epoch(int) override { return int64_t(windows().size()) - 1; }
  void begin_epoch(int) override { model_.reset_state(); }
  StepLoss step_loss(int epoch, int64_t window) override;
  void end_step(int, int64_t) override { model_.detach_state(); }
  Evaluation validate() override;
  Evaluation test() override;
  bool has_validation() const override { return split_.val > 0; }

  struct Sums;
  // The training windows' bounds, from 0 to the training samples.
  std::vector<int64_t> windows() const;
  // The loss of samples [start, end) from the model's current state: its value summed over the
  // samples (and ranks), the backward on its mean.
  StepLoss window_loss(int epoch, int64_t start, int64_t end);
  StepLoss window_loss_snapshots(int epoch, int64_t start, int64_t end);
  // The input of sample i (rows x features), on the trainer's device.
  Var inputs(int64_t i) const;
  const GraphView& graph_of(int64_t i) const {
    return *graphs_[graphs_.size() == 1 ? 0 : size_t(split_.first + i)];
  }
  // Sample i's forecast (rows x channels) from the model's current state; advances it.
  Var forecast(int64_t i, bool training, uint64_t key);
  // Sample i's loss (its squared errors summed over this rank's rows, over all vertices and
  // channels): summed over ranks, the sample's MSE.
  Var sample_loss(const Var& pred, int64_t i);
  Tensor targets(int64_t i) const;  // rows x channels, on the host
  // Runs samples 0..end-1 without a tape; `each` sees the host forecast of every sample >= begin.
  void run_samples(int64_t begin, int64_t end,
                   const std::function<void(int64_t i, const Tensor& host)>& each);
  ForecastMetrics finish(Sums& s);
  ForecastMetrics naive(int64_t begin, int64_t end, bool last);

  TemporalModel& model_;
  std::vector<const GraphView*> graphs_;
  const ForecastData& data_;
  Communicator& comm_;
  ForecastOptions opt_;
  Device dev_;
  ForecastSplit split_;
  Linear head_;
  std::vector<std::pair<std::string, Parameter*>> params_;
  std::unique_ptr<Optimizer> optimizer_;
  std::unique_ptr<TrainingLoop> loop_;
  const SnapshotPlan* plan_ = nullptr;
  std::vector<const GraphView*> sample_views_;  // snapshot strategy: per sample, null if not owned
};

}  // namespace dgnn
