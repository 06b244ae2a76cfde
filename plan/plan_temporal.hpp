#pragma once
// `dgnn plan` on a temporal graph as a library call: the training steps as `dgnn train` would run
// them (the split, the BPTT windows, each step's snapshot and epoch 1's pairs, drawn and timed),
// then, per rank count, the predicted epoch under each strategy (and partitioner, for the vertex
// strategy) from rates timed here or given (RateOptions::given), the overhead of a real step
// over its kernels, and a network. The arithmetic of one prediction is perf_temporal.hpp; this
// file derives its inputs. Two calls, so that a caller can read the features' width between
// them (its errors then come after the options' own, as `dgnn plan` has always reported them).
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "dgnn/gnn/temporal/forecast.hpp"
#include "dgnn/gnn/temporal/temporal_models.hpp"
#include "dgnn/gnn/temporal/temporal_trainer.hpp"
#include "dgnn/graph/temporal.hpp"
#include "dgnn/partition/partition.hpp"
#include "dgnn/plan/calibration.hpp"
#include "dgnn/plan/perf_temporal.hpp"

namespace dgnn::perf {

// What a temporal plan is asked for, as `dgnn plan` parsed it.
struct TemporalPlanOptions {
  TemporalKind kind = TemporalKind::evolvegcn_o;
  // Forecasting a vertex signal: the steps are its samples (`forecast_opt`), each on its step's
  // graph (one graph for all when it is static), with a per-vertex head and no pairs. Otherwise
  // link prediction or edge classification over snapshots (`train`).
  bool forecast = false;
  TemporalOptions train;         // task, bptt, neg_train and the split's fractions
  ForecastOptions forecast_opt;  // lags, horizon, bptt and the split's fractions
  int64_t channels = 1;          // forecasting: the signal's channels
  int layers = 2;
  int64_t hidden = 16;
  uint64_t seed = 0;                           // the pairs' draws and the partitioners'
  bool vertex = true, snapshot = true;         // the strategies planned
  std::vector<std::string> partitioner_names;  // the vertex strategy's rows, named as given
  std::vector<Partitioner> partitioners;       // ... and parsed
  int snapshot_groups = -1;                    // as PartitionOptions::snapshot_groups
  std::vector<int> ranks;                      // ascending
  Network net;
  bool overlap = true;
  RateOptions rates;  // threads, cores, the calibration cache or the given rates
};

// The training steps of epoch 1, as the trainer runs them, with what the plan measures on them.
struct TemporalTraining {
  ForecastSplit forecast_split;  // forecasting: the signal's samples
  TemporalSplit split;           // the steps (forecasting: the samples) and how they split
  TemporalSteps steps;           // the training steps' windows, entries, pairs and drawing times
  // The training steps' graphs: snaps[snap_of[s]] is step s's (forecasting on a static graph:
  // one for all); nnz: the entries of every snapshot of the graph.
  std::vector<Csr> snaps;
  std::vector<size_t> snap_of;
  std::vector<int64_t> nnz;
  std::vector<PairBatch> batches;  // epoch 1's pairs per training step (none when forecasting)
  size_t largest = 0;              // the training step with the largest snapshot
  int64_t most_pairs = 1;          // the most pairs a step scores (at least 1)
  int probe_step = -1;             // the step a real step is timed on (-1: none scores pairs)

  const Csr& snap(int s) const { return snaps[snap_of[size_t(s)]]; }
  int windows() const { return int(steps.windows.size()) - 1; }
  // Drawing the pairs, in ms per epoch: one rank's; on a rank of several under the vertex
  // strategy; of that, what every rank pays.
  double drawing_ms() const;
  double drawing_known_ms() const;
  double drawing_fixed_ms() const;
};

// The split, windows, graphs and pairs of `g`'s training steps (`signal_steps`: a forecast
// signal's steps). OptionError when the options do not fit the graph, or for more ranks than
// vertices. Pairs are drawn (and timed, unless the rates are given) by the trainer's own code.
TemporalTraining temporal_training(const TemporalGraph& g, const TemporalPlanOptions& o,
                                   int64_t signal_steps = 0);

// A real step timed against its kernels' predicted sum, at one thread count.
struct StepProbe {
  double measured_s = 0, kernels_s = 0;
  // Every kernel time is multiplied by this (1 when the kernels take no time).
  double factor() const;
};

// A row's partitioner is the vertex strategy's, "-" for the snapshot strategy.
using TemporalPlanRow = PlanRowOf<TemporalPrediction>;

struct TemporalPlan {
  int64_t in_dim = 0;  // the model's input width
  TemporalShape shape;
  std::vector<TemporalPlanRow> rows;     // per rank count: the vertex strategy's, then snapshot's
  size_t best = 0;                       // the feasible row of the shortest epoch
  std::map<int, StepProbe> probes;       // by threads per rank: the real steps timed
  std::map<int, double> given_overhead;  // by threads per rank: the factors the rates gave
  std::map<int, double> oversubscribed;  // by processes: a synchronisation on a crowded node (s)
  std::map<int, Rates> fused;            // by threads per rank: the fused ops timed here
  CalibrationRecord calibration;
};

// The plan's rows for `features` (the input features' width; forecasting: the static
// features' width beside the lags). OptionError when no strategy can run the rank counts.
TemporalPlan plan_temporal(const TemporalGraph& g, const TemporalTraining& t, int64_t features,
                           const TemporalPlanOptions& o);

// What the plan used beyond the kernels (the steps' overheads, synchronisations on a crowded
// node, the pairs' drawing rate), in the form --rates reads.
GivenRates used_temporal_rates(const TemporalTraining& t, const TemporalPlan& p);

}  // namespace dgnn::perf
