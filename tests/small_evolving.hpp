#pragma once
// Temporal fixtures shared by the single-process, MPI and GPU tests: the small evolving SBM the
// distributed temporal tests compare on, and a signed temporal graph made from an evolving SBM
// (an edge inside a community +1, across -1: edge classification's task), and the edge list
// beneath both.
#include <cstdint>
#include <functional>
#include <string>

#include "dgnn/datasets/evolving_sbm.hpp"
#include "dgnn/graph/temporal.hpp"

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

// The steps of `sbm` as an edge list, each edge's time its step; with `weight`, edge i of step
// t weighs weight(t, i).
inline EdgeList sbm_edge_list(const EvolvingSbm& sbm,
                              const std::function<float(int, int64_t)>& weight = {}) {
  EdgeList e;
  for (int t = 0; t < sbm.num_snapshots(); ++t)
    for (int64_t i = sbm.step_offsets[size_t(t)]; i < sbm.step_offsets[size_t(t) + 1]; ++i) {
      e.src.push_back(sbm.src[size_t(i)]);
      e.dst.push_back(sbm.dst[size_t(i)]);
      if (weight) e.weight.push_back(weight(t, i));
      e.time.push_back(t);
    }
  return e;
}

// One snapshot per step of `sbm`, each edge weighted by the sign of its ends' communities.
inline TemporalGraph signed_temporal(const EvolvingSbm& sbm, const std::string& name) {
  const EdgeList e = sbm_edge_list(sbm, [&](int t, int64_t i) {
    return sbm.community(t, sbm.src[size_t(i)]) == sbm.community(t, sbm.dst[size_t(i)]) ? 1.f
                                                                                        : -1.f;
  });
  EdgeListOptions eo;
  eo.weight_col = 2;
  eo.time_col = 3;
  SnapshotOptions so;
  so.seconds = 1;
  return build_temporal(e, eo, so, name, sbm.num_vertices());
}

}  // namespace dgnn::test
