#pragma once
// Evolving stochastic block model: a temporal dataset whose communities drift. At every step a
// fraction of the vertices moves to another community, and that step's edges are drawn SBM-style
// from the current communities; features reflect the initial community, labels the final one.
// Deterministic by seed and independent of the thread count.
#include <cstdint>
#include <string>
#include <vector>

#include "dgnn/graph/temporal.hpp"

namespace dgnn {

struct EvolvingSbmConfig {
  int64_t vertices = 10000;
  int32_t snapshots = 10;
  int32_t classes = 8;
  double avg_degree = 4.0;  // per snapshot: 2 * undirected edges of one step / vertices
  double homophily = 0.8;   // fraction of a step's edges inside one (current) community
  double drift = 0.05;      // fraction of vertices that change community at each step
  int64_t feature_dim = 32;
  float signal = 0.3f;  // scale of the initial-community centroid in the features
  float noise = 1.0f;   // standard deviation of the per-vertex feature noise
  uint64_t seed = 0;
};

// OptionError (naming the command-line flag) for parameters no graph can satisfy.
void validate(const EvolvingSbmConfig& cfg);

struct EvolvingSbm {
  EvolvingSbmConfig config;
  // Undirected edges, src < dst, without duplicates or self loops within a step; the edges of
  // step t are [step_offsets[t], step_offsets[t + 1]), sorted.
  std::vector<int32_t> src, dst;
  std::vector<int64_t> step_offsets;
  std::vector<int32_t> communities;  // snapshots x vertices: community of v at step t
  std::vector<float> features;       // vertices x feature_dim, from the initial community
  std::vector<float> centroids;      // classes x feature_dim
  std::vector<int32_t> labels;       // the final community of each vertex

  int64_t num_vertices() const { return config.vertices; }
  int num_snapshots() const { return config.snapshots; }
  int64_t num_edges() const { return int64_t(src.size()); }
  int32_t community(int t, int64_t v) const {
    return communities[size_t(t) * size_t(config.vertices) + size_t(v)];
  }
  // Fraction of vertices whose community at step t differs from step t - 1.
  double measured_drift(int t) const;
  // Fraction of step t's edges whose endpoints share a community at step `at`.
  double measured_homophily(int t, int at) const;
  // The `# ...` lines at the top of edges.txt.
  std::string description() const;
  // edges.txt ("src dst time", time = step index), features.npy, labels.txt and snapshots.txt
  // (time column 2, 1-unit buckets, all vertices), so that load_temporal(dir) cuts the T
  // generated snapshots with no options. Atomic, like SbmDataset::write_dataset_dir.
  // force: replace a folder of dataset files that dgnn did not write (dataset_dir.hpp).
  void write_dataset_dir(const std::string& dir, bool force = false) const;
  // What load_temporal returns for the written directory (in `mode`), without files.
  TemporalGraph to_temporal(SnapshotMode mode = SnapshotMode::window, int window = 1) const;
};

EvolvingSbm generate_evolving_sbm(const EvolvingSbmConfig& cfg);

}  // namespace dgnn
