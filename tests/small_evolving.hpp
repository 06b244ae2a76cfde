#pragma once
// Temporal fixtures shared by the single-process, MPI and GPU tests: the small evolving SBM the
// distributed temporal tests compare on, and a signed temporal graph made from an evolving SBM
// (an edge inside a community +1, across -1: edge classification's task).
#include <cstdint>
#include <string>

#include "datasets/evolving_sbm.hpp"
#include "graph/temporal.hpp"

namespace dgnn::test {

// 240 vertices, 12 snapshots (11 steps: 7 train, 1 validation, 3 test), 3 classes.
inline const EvolvingSbm& small_evolving() {
  static const EvolvingSbm s = [] {
    EvolvingSbmConfig cfg;
    cfg.vertices = 240;
    cfg.snapshots = 12;
    cfg.classes = 3;
    cfg.avg_degree = 5;
    cfg.drift = 0.05;
    cfg.feature_dim = 6;
    cfg.seed = 4;
    return generate_evolving_sbm(cfg);
  }();
  return s;
}

// One snapshot per step of `sbm`, each edge weighted by the sign of its ends' communities.
inline TemporalGraph signed_temporal(const EvolvingSbm& sbm, const std::string& name) {
  const EvolvingSbmConfig& cfg = sbm.config;
  EdgeList e;
  for (int t = 0; t < cfg.snapshots; ++t)
    for (int64_t i = sbm.step_offsets[size_t(t)]; i < sbm.step_offsets[size_t(t) + 1]; ++i) {
      const int32_t u = sbm.src[size_t(i)], v = sbm.dst[size_t(i)];
      e.src.push_back(u);
      e.dst.push_back(v);
      e.weight.push_back(sbm.community(t, u) == sbm.community(t, v) ? 1.f : -1.f);
      e.time.push_back(t);
    }
  EdgeListOptions eo;
  eo.weight_col = 2;
  eo.time_col = 3;
  SnapshotOptions so;
  so.seconds = 1;
  return build_temporal(e, eo, so, name, cfg.vertices);
}

}  // namespace dgnn::test
