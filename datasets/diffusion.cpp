#include "dgnn/datasets/diffusion.hpp"

#include <cmath>
#include <filesystem>
#include <limits>

#include "dgnn/common/error.hpp"
#include "dgnn/common/format.hpp"
#include "dgnn/common/hash_rng.hpp"
#include "dgnn/common/memory.hpp"
#include "dgnn/datasets/dataset_dir.hpp"
#include "dgnn/datasets/sbm.hpp"
#include "dgnn/graph/npy.hpp"

namespace dgnn {

namespace {

SbmConfig graph_config(const DiffusionConfig& c) {
  SbmConfig g;
  g.vertices = c.vertices;
  g.classes = c.classes;
  g.avg_degree = c.avg_degree;
  g.homophily = c.homophily;
  g.feature_dim = 1;
  g.train_frac = 0, g.val_frac = 0, g.test_frac = 0;
  g.seed = c.seed;
  return g;
}

}  // namespace

void validate(const DiffusionConfig& c) {
  auto fail = [](const std::string& what) { throw OptionError("diffusion: " + what); };
  if (c.steps < 2 || c.steps > (int64_t(1) << 24))
    fail("steps must be in [2, 2^24], got " + std::to_string(c.steps));
  if (double(c.steps) * double(c.vertices) > double(std::numeric_limits<int64_t>::max() / 8))
    fail("steps x vertices is too large");
  if (!(c.persistence >= 0 && c.persistence < 1))
    fail("persistence must be in [0, 1), got " + fmt_double(c.persistence));
  if (!(c.mixing >= 0 && c.mixing <= 1))
    fail("mixing must be in [0, 1], got " + fmt_double(c.mixing));
  if (!(c.drive >= 0) || !std::isfinite(c.drive)) fail("drive must be >= 0");
  if (!(c.noise >= 0) || !std::isfinite(c.noise)) fail("noise must be >= 0");
  if (c.drive == 0 && c.noise == 0)
    fail("drive and noise are both 0: the signal would be constant");
  if (c.period < 2) fail("period must be >= 2 steps, got " + std::to_string(c.period));
  // The signal (steps x vertices floats) is held whole while written.
  const double bytes = double(c.steps) * double(c.vertices) * 4;
  if (exceeds_memory(bytes))
    fail("--steps " + std::to_string(c.steps) + " x --vertices " + std::to_string(c.vertices) +
         " signal values need " + memory_str(bytes) + more_than_usable());
  validate(graph_config(c));
}

std::string DiffusionDataset::description() const {
  const DiffusionConfig& c = config;
  return "# dgnn diffusion: vertices=" + std::to_string(c.vertices) +
         " steps=" + std::to_string(c.steps) + " classes=" + std::to_string(c.classes) +
         " avg_degree=" + fmt_double(c.avg_degree) + " homophily=" + fmt_double(c.homophily) +
         " persistence=" + fmt_double(c.persistence) + " mixing=" + fmt_double(c.mixing) +
         " drive=" + fmt_double(c.drive) + " period=" + std::to_string(c.period) +
         " noise=" + fmt_double(c.noise) + " seed=" + std::to_string(c.seed);
}

DiffusionDataset generate_diffusion(const DiffusionConfig& cfg) {
  validate(cfg);
  DiffusionDataset d;
  d.config = cfg;
  SbmDataset g = generate_sbm(graph_config(cfg));
  d.src = std::move(g.src);
  d.dst = std::move(g.dst);
  d.community = std::move(g.labels);
  const int64_t n = cfg.vertices, T = cfg.steps;
  // Undirected adjacency as lists.
  std::vector<int64_t> off(size_t(n) + 1, 0);
  for (size_t e = 0; e < d.src.size(); ++e)
    ++off[size_t(d.src[e]) + 1], ++off[size_t(d.dst[e]) + 1];
  for (int64_t v = 0; v < n; ++v) off[size_t(v) + 1] += off[size_t(v)];
  std::vector<int32_t> nbr(size_t(off.back()));
  {
    std::vector<int64_t> at(off.begin(), off.end() - 1);
    for (size_t e = 0; e < d.src.size(); ++e) {
      nbr[size_t(at[size_t(d.src[e])]++)] = d.dst[e];
      nbr[size_t(at[size_t(d.dst[e])]++)] = d.src[e];
    }
  }
  // Each community's phase, spread over the season.
  std::vector<double> phase(size_t(cfg.classes));
  for (int32_t c = 0; c < cfg.classes; ++c)
    phase[size_t(c)] = 6.283185307179586 * double(c) / double(cfg.classes);
  const double p = cfg.persistence, m = cfg.mixing, w = 6.283185307179586 / double(cfg.period);
  // The drive enters each step scaled by (1 - p): the stationary swing is about `drive`.
  auto season = [&](int64_t t, int64_t v) {
    return std::sin(w * double(t) + phase[size_t(d.community[size_t(v)])]);
  };
  const double step_drive = cfg.drive * (1.0 - p) * 3.0;
  auto noise = [&](int64_t t, int64_t v) {
    return cfg.noise * double(Rng(hash_combine(cfg.seed ^ 0xd1ff, uint64_t(t * n + v))).normal());
  };
  std::vector<double> x(static_cast<size_t>(n)), next(static_cast<size_t>(n));
  d.signal.resize(size_t(T * n));
  for (int64_t v = 0; v < n; ++v) x[size_t(v)] = cfg.drive * season(0, v) + noise(0, v);
  for (int64_t t = 0; t < T; ++t) {
    if (t > 0) {
#pragma omp parallel for schedule(static)
      for (int64_t v = 0; v < n; ++v) {
        const int64_t b = off[size_t(v)], e = off[size_t(v) + 1];
        double mean = x[size_t(v)];
        if (e > b) {
          double s = 0;
          for (int64_t k = b; k < e; ++k) s += x[size_t(nbr[size_t(k)])];
          mean = s / double(e - b);
        }
        next[size_t(v)] =
            p * ((1.0 - m) * x[size_t(v)] + m * mean) + step_drive * season(t, v) + noise(t, v);
      }
      x.swap(next);
    }
    for (int64_t v = 0; v < n; ++v) d.signal[size_t(t * n + v)] = float(x[size_t(v)]);
  }
  // Standardised over everything (serial sums: the same on any thread count).
  double sum = 0, sq = 0;
  for (float v : d.signal) sum += v;
  const double mean = sum / double(d.signal.size());
  for (float v : d.signal) sq += (double(v) - mean) * (double(v) - mean);
  const double sd = std::sqrt(sq / double(d.signal.size()));
  const double inv = sd > 0 ? 1.0 / sd : 1.0;
  for (float& v : d.signal) v = float((double(v) - mean) * inv);
  return d;
}

void DiffusionDataset::write_dataset_dir(const std::string& dir, bool force) const {
  namespace fs = std::filesystem;
  dataset_dir::write_atomically(
      dir, config.seed ^ uint64_t(src.size()) ^ 0xd1ff,
      [&](const std::string& tmp_dir) {
        const fs::path tmp(tmp_dir);
        dataset_dir::write_edges((tmp / "edges.txt").string(), description(), src, dst);
        write_npy((tmp / "signals.npy").string(), signal.data(),
                  std::vector<int64_t>{config.steps, config.vertices});
      },
      force);
}

SignalSeries DiffusionDataset::to_series() const {
  EdgeList e;
  e.src.assign(src.begin(), src.end());
  e.dst.assign(dst.begin(), dst.end());
  e.lines = int64_t(src.size());
  SignalSeries s;
  s.graph = static_as_temporal(std::move(e), EdgeListOptions{}, "generated diffusion",
                               config.vertices);
  s.steps = config.steps;
  s.channels = 1;
  s.values = signal;
  return s;
}

}  // namespace dgnn
