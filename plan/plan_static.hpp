#pragma once
// `dgnn plan` on a static graph as a library call: the predicted epoch of distributed full-graph
// training on P ranks, per partitioner, from the partition's per-rank counts (computed up to a
// largest P, extrapolated beyond), kernel rates timed here or given (RateOptions::given), GAT's
// attention scaled by a probe of real epochs, and a network. The arithmetic of one prediction
// is perf_model.hpp; this file derives its inputs.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "dgnn/graph/dataset.hpp"
#include "dgnn/partition/partition.hpp"
#include "dgnn/plan/calibration.hpp"
#include "dgnn/plan/perf_model.hpp"

namespace dgnn::perf {

// What a static plan is asked for, as `dgnn plan` parsed it.
struct StaticPlanOptions {
  ModelKind kind = ModelKind::gcn;
  // A deep model (GCNII, residual GCN) instead of `kind` stacked: its layers and hidden width
  // are these (`layers` and `hidden` below are not read).
  std::optional<DeepModelOptions> deep;
  // A deep model: also the pipeline strategy's rows (partitioner "pipeline") for every rank count
  // from 2 up to the graph layers, with this many chunks (0: 4 per stage, as dgnn train).
  bool pipeline = true;
  int pipeline_chunks = 0;
  int layers = 2;
  int64_t hidden = 16;
  uint64_t seed = 0;                           // the partitioners' (and the probe's model)
  std::vector<std::string> partitioner_names;  // the rows' partitioners, named as given
  std::vector<Partitioner> partitioners;       // ... and parsed
  std::vector<int> ranks;                      // ascending
  int max_partition = 256;                     // beyond it, counts are extrapolated
  Network net;
  bool overlap = true;
  RateOptions rates;  // threads, cores, the calibration cache or the given rates
};

// GAT's attention: its kernels timed alone (the calibration) miss much of what a real layer
// does around them (the coefficients' dropout hashes each entry's ends, the tape's entries x
// heads tensors, the gathers into the transpose's order). So one process trains the model for
// four epochs at the 1-rank row's threads, and the attention terms of every row are scaled by
// what the measured epoch leaves them beyond the model's other terms (on the first 4 M entries'
// vertices of a larger graph: a ratio, which the graph's size hardly moves). With given rates,
// the file's factor, nothing trained. Other models: factor 1, nothing measured.
struct AttentionProbe {
  double factor = 1, epoch_ms = 0;  // epoch_ms: the measured epoch (0: none)
  int64_t vertices = 0;             // the graph it trained on
  bool given = false;
};

struct StaticPlan {
  std::vector<LayerShape> layers;
  AttentionProbe probe;
  int probe_threads = 1;      // the threads it trained with (the 1-rank row's)
  std::vector<int> fitted;    // the two rank counts extrapolated from; empty: none
  std::vector<PlanRow> rows;  // per partitioner, per rank count
  size_t best = 0;            // the row of the shortest epoch
  CalibrationRecord calibration;
};

// The plan of `d`. OptionError for more ranks than vertices, or a dataset without labels.
StaticPlan plan_static(const Dataset& d, const StaticPlanOptions& o);

}  // namespace dgnn::perf
