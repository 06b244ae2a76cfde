#pragma once
// A whole forecasting run from a program (gnn/temporal/forecast.hpp says what is forecast): the
// graph and signal read on rank 0 and sent to the others, each rank's share of them under the
// strategy, the model and the trainer, in one object. `dgnn train --task forecast` is this plus
// parsing and printing:
//
//   dgnn::ForecastRunConfig cfg;
//   cfg.model = "tgcn";
//   cfg.train.lags = 4;
//   dgnn::ForecastRun run([] { return dgnn::read_signal_json("chickenpox.json"); }, cfg, comm);
//   dgnn::ForecastResult r = run.train();     // on 1 or P ranks: the same numbers
//
// Every call is collective.
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "dgnn/comm/communicator.hpp"
#include "dgnn/gnn/temporal/forecast.hpp"
#include "dgnn/gnn/temporal/temporal_dist.hpp"
#include "dgnn/gnn/temporal/temporal_run.hpp"
#include "dgnn/gnn/train/epoch_report.hpp"
#include "dgnn/graph/signals.hpp"
#include "dgnn/partition/partition.hpp"

namespace dgnn {

struct ForecastRunConfig {
  // A temporal model (evolvegcn-o, evolvegcn-h, gcrn, tgcn), or a static layer (gcn, sage, gin,
  // gat, or one registered with register_layer) applied to every step alone.
  std::string model = "tgcn";
  // A model of the program's own instead (dims = {input width, hidden...}); `model` then names
  // it in logs and checkpoints.
  std::function<std::unique_ptr<TemporalModel>(const std::vector<int64_t>& dims)> make_model;
  int layers = 2;
  int64_t hidden = 16;
  std::string strategy = "vertex";  // vertex | snapshot
  PartitionOptions partition;       // vertex strategy (parts: the rank count)
  Device device = Device::cpu;      // CUDA with several ranks needs a device communicator attached
  ForecastOptions train;            // lags, horizon, BPTT, split, epochs, optimiser, checkpoints
  // Static vertex features (row v = vertex v, *dim columns), made on every rank once the graph
  // is known; unset or empty: none.
  std::function<std::vector<float>(const TemporalGraph& g, int64_t* dim)> features;
};

class ForecastRun {
 public:
  // `read` runs on rank 0 (every rank of one process) and returns the graph and the signal.
  // OptionError for options that do not fit (too few steps for the lags and split, more ranks
  // than samples under the snapshot strategy, EvolveGCN-H under the vertex strategy on P ranks).
  ForecastRun(const std::function<SignalSeries()>& read, ForecastRunConfig cfg, Communicator& comm);
  ~ForecastRun();
  // The checks of the options alone (the constructor's first), for a caller to run before
  // anything else: OptionError naming the flag.
  static void check(const ForecastRunConfig& cfg, int ranks);
  ForecastRun(const ForecastRun&) = delete;  // the trainer holds references into it
  ForecastRun& operator=(const ForecastRun&) = delete;

  // Trains (the loop: resume, checkpoints, patience) and tests; the model then holds the
  // best-validation parameters.
  ForecastResult train(const std::function<void(const EpochRecord&)>& on_epoch = {});
  // How an epoch is printed and logged (gnn/train/epoch_report.hpp).
  EpochFormat epoch_format() const;

  ForecastTrainer& trainer() { return *trainer_; }  // test_forecasts, evaluate, ...
  TemporalModel& model() { return *model_; }
  const TemporalGraph& graph() const { return in_.g; }
  const ForecastSplit& split() const { return split_; }
  int64_t steps() const { return steps_; }
  int64_t channels() const { return channels_; }
  const std::string& signal_source() const { return source_; }
  // The vertices (ids 0..N-1) of the rows trainer().test_forecasts() returns on this rank.
  const std::vector<int64_t>& forecast_ids() const { return forecast_ids_; }
  const SnapshotMoves& moves() const { return in_.moves; }  // rank 0's count
  double load_ms() const { return in_.ms; }

 private:
  ForecastRunConfig cfg_;
  Communicator& comm_;
  LoadedTemporal in_;
  ForecastSplit split_;
  int64_t steps_ = 0, channels_ = 1;
  std::string source_;
  std::vector<int64_t> forecast_ids_;
  std::vector<std::unique_ptr<GraphView>> whole_;
  std::unique_ptr<TemporalRank> rank_data_;
  std::optional<SnapshotPlan> plan_;
  std::unique_ptr<ForecastData> data_;
  std::unique_ptr<TemporalModel> model_;
  std::unique_ptr<ForecastTrainer> trainer_;
};

}  // namespace dgnn
