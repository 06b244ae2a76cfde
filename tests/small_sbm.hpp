#pragma once
// The small planted-partition dataset the mini-batch tests share (CPU and GPU): 4 classes,
// average degree 8, 12 features, 30% training vertices.
#include <cstdint>

#include "dgnn/datasets/sbm.hpp"
#include "dgnn/graph/dataset.hpp"

namespace dgnn::test {

inline Dataset small_sbm(int64_t n, uint64_t seed) {
  SbmConfig cfg;
  cfg.vertices = n;
  cfg.classes = 4;
  cfg.avg_degree = 8;
  cfg.feature_dim = 12;
  cfg.train_frac = 0.3;
  cfg.seed = seed;
  return generate_sbm(cfg).to_dataset();
}

}  // namespace dgnn::test
