#pragma once
// Planted-partition stochastic block model: a node-classification dataset of any size whose
// labels are learnable from both the graph (homophily) and the features (class centroids plus
// noise), deterministic by seed and independent of the thread count.
#include <cstdint>
#include <string>
#include <vector>

#include "dgnn/graph/dataset.hpp"

namespace dgnn {

// Parameters of generate_sbm. The defaults give a graph on which a 2-layer GCN is clearly better
// than a feature-only classifier and than chance, but not perfect.
struct SbmConfig {
  int64_t vertices = 10000;
  int32_t classes = 8;
  double avg_degree = 10.0;  // 2 * undirected edges / vertices
  double homophily = 0.8;    // fraction of edges whose endpoints share a class
  int64_t feature_dim = 32;
  float signal = 0.12f;  // scale of the per-class centroid (entries ~ N(0,1) * signal)
  float noise = 1.0f;    // standard deviation of the per-vertex noise
  double train_frac = 0.6;
  double val_frac = 0.2;
  double test_frac = 0.2;  // vertices in no split are left out of all three
  // 0 = Erdos-Renyi-like degrees; in (0, 1): vertex weights are Pareto with tail index
  // 1/degree_skew, so degrees follow a power law (0.5 ~ the exponent-3 tail of preferential
  // attachment).
  double degree_skew = 0.0;
  uint64_t seed = 0;
};

// Throws OptionError for parameters no graph can satisfy (e.g. more classes than vertices, or
// more within-class edges per vertex than a class has other members).
void validate(const SbmConfig& cfg);

// One generated dataset, held in memory. Edges are undirected, stored once with src < dst,
// sorted, without duplicates or self loops.
struct SbmDataset {
  SbmConfig config;
  std::vector<int32_t> src, dst;
  std::vector<float> features;            // vertices x feature_dim, row-major
  std::vector<float> centroids;           // classes x feature_dim: the class means before scaling
  std::vector<int32_t> labels;            // per vertex, in [0, classes)
  std::vector<int32_t> train, val, test;  // ascending vertex ids, disjoint

  int64_t num_vertices() const { return config.vertices; }
  int64_t num_edges() const { return int64_t(src.size()); }
  // Fraction of edges joining two vertices of the same class.
  double measured_homophily() const;
  // The `# ...` line written at the top of edges.txt.
  std::string description() const;
  // Writes edges.txt, features.npy, labels.txt, train.txt, val.txt, test.txt into `dir`, the
  // layout load_dataset reads. Atomic: everything is written into a temporary folder next to
  // `dir`, then renamed over it. An existing `dir` is replaced only if it holds nothing but
  // these files (IoError otherwise, and for any write failure).
  // force: replace a folder of dataset files that dgnn did not write (dataset_dir.hpp).
  void write_dataset_dir(const std::string& dir, bool force = false) const;
  // The same dataset as load_dataset would return for the written directory, without files.
  Dataset to_dataset() const&;
  Dataset to_dataset() &&;  // moves the features instead of copying them
};

SbmDataset generate_sbm(const SbmConfig& cfg);

}  // namespace dgnn
