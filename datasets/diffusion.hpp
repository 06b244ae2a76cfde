#pragma once
// Forecasting data at any size: a noisy diffusion on a planted-partition graph. Each community
// has a seasonal drive of its own phase; at every step a vertex keeps part of its value, mixes
// in its neighbours' mean (the graph carries information a vertex's own past does not) and adds
// noise. The signal is standardised (mean 0, variance 1 over all steps and vertices) as
// PyG-Temporal's datasets are. Deterministic by seed, independent of the thread count.
#include <cstdint>
#include <string>
#include <vector>

#include "dgnn/graph/signals.hpp"

namespace dgnn {

struct DiffusionConfig {
  int64_t vertices = 10000;
  int64_t steps = 500;
  int32_t classes = 8;       // communities
  double avg_degree = 10.0;  // 2 * undirected edges / vertices
  double homophily = 0.8;    // fraction of edges inside a community
  double persistence = 0.8;  // share of the previous step's value kept
  double mixing = 0.6;       // of that, the share taken from the neighbours' mean
  double drive = 1.0;        // amplitude of the communities' seasonal drive
  int period = 52;           // steps per season
  double noise = 0.3;        // standard deviation of each step's per-vertex noise
  uint64_t seed = 0;
};

// OptionError (naming the flag) for parameters outside their ranges.
void validate(const DiffusionConfig& cfg);

struct DiffusionDataset {
  DiffusionConfig config;
  std::vector<int32_t> src, dst;  // undirected edges, once each, src < dst
  std::vector<int32_t> community;
  std::vector<float> signal;        // steps x vertices, row-major, standardised
  std::string description() const;  // the "# ..." line at the top of edges.txt
  // The graph and signal as a forecasting run reads them (one channel, vertices 0..N-1).
  SignalSeries to_series() const;
  // edges.txt and signals.npy ([steps, vertices]) into `dir`, atomically (dataset_dir.hpp).
  void write_dataset_dir(const std::string& dir, bool force = false) const;
};

DiffusionDataset generate_diffusion(const DiffusionConfig& cfg);

}  // namespace dgnn
