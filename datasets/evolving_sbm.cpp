#include "dgnn/datasets/evolving_sbm.hpp"

#include <algorithm>
#include <filesystem>
#include <limits>
#include <numeric>

#include "dgnn/common/error.hpp"
#include "dgnn/common/hash_rng.hpp"
#include "dgnn/common/memory.hpp"
#include "dgnn/datasets/dataset_dir.hpp"
#include "dgnn/graph/npy.hpp"

namespace dgnn {

using dataset_dir::fmt_double;

namespace {

// Independent streams from the one seed: changing the feature width leaves the graph alone.
enum Stream : uint64_t { kInitial = 1, kMoves = 2, kEdges = 3, kCentroids = 4, kFeatures = 5 };

uint64_t stream_seed(uint64_t seed, Stream s) { return hash_combine(seed, 0xe5b30000ull + s); }

// Vertices grouped by community, for uniform draws from one community.
struct Members {
  std::vector<int64_t> off;  // community c: [off[c], off[c + 1])
  std::vector<int32_t> list;
  Members(const int32_t* label, int64_t n, int32_t classes) : off(size_t(classes) + 1, 0) {
    for (int64_t v = 0; v < n; ++v) ++off[size_t(label[v]) + 1];
    for (int32_t c = 0; c < classes; ++c) off[c + 1] += off[c];
    list.resize(size_t(n));
    std::vector<int64_t> fill(off.begin(), off.end() - 1);
    for (int64_t v = 0; v < n; ++v) list[size_t(fill[label[v]]++)] = int32_t(v);
  }
  int64_t size(int32_t c) const { return off[c + 1] - off[c]; }
  int32_t draw(int32_t c, Rng& rng) const {
    return list[size_t(off[c] + int64_t(rng.below(uint64_t(size(c)))))];
  }
};

// One step's edges as sorted unique keys (min << 32 | max), drawn from the step's communities.
// Rounds top up what self loops and duplicates removed; each round is its own stream.
std::vector<uint64_t> draw_step(const EvolvingSbmConfig& cfg, const int32_t* label, int t) {
  const int64_t n = cfg.vertices;
  const Members members(label, n, cfg.classes);
  const int64_t target = std::max<int64_t>(1, std::llround(double(n) * cfg.avg_degree / 2.0));
  std::vector<uint64_t> keys;
  keys.reserve(size_t(target + target / 32 + 16));
  for (int round = 0; round < 64 && int64_t(keys.size()) < target; ++round) {
    Rng rng(hash_combine(hash_combine(stream_seed(cfg.seed, kEdges), uint64_t(t)), round));
    for (int64_t e = int64_t(keys.size()); e < target; ++e) {
      const int32_t u = int32_t(rng.below(uint64_t(n)));
      int32_t v;
      if (cfg.classes == 1 || rng.uniform_double() < cfg.homophily) {
        v = members.draw(label[u], rng);
      } else {
        // Rejection keeps the measured homophily at the setting, not H + (1 - H) / classes.
        int tries = 0;
        do v = int32_t(rng.below(uint64_t(n)));
        while (label[v] == label[u] && ++tries < 256);
      }
      if (u != v) keys.push_back(uint64_t(std::min(u, v)) << 32 | uint64_t(std::max(u, v)));
    }
    std::sort(keys.begin(), keys.end());
    keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  }
  return keys;
}

}  // namespace

void validate(const EvolvingSbmConfig& cfg) {
  auto fail = [](const std::string& what) { throw OptionError("evolving-sbm: " + what); };
  if (cfg.vertices < 2 || cfg.vertices > std::numeric_limits<int32_t>::max())
    fail("--vertices must be in [2, 2^31-1], got " + std::to_string(cfg.vertices));
  if (cfg.snapshots < 1 || cfg.snapshots > 100000)
    fail("--snapshots must be in [1, 100000], got " + std::to_string(cfg.snapshots));
  if (cfg.classes < 1 || cfg.classes > cfg.vertices)
    fail("--classes must be in [1, vertices], got " + std::to_string(cfg.classes));
  if (!(cfg.avg_degree > 0) || cfg.avg_degree > double(cfg.vertices - 1))
    fail("--avg-degree must be in (0, vertices-1], got " + fmt_double(cfg.avg_degree));
  if (!(cfg.homophily >= 0 && cfg.homophily <= 1))
    fail("--homophily must be in [0, 1], got " + fmt_double(cfg.homophily));
  if (!(cfg.drift >= 0 && cfg.drift <= 1))
    fail("--drift must be in [0, 1], got " + fmt_double(cfg.drift));
  if (cfg.drift > 0 && cfg.classes < 2)
    fail("--drift > 0 needs at least 2 classes to move between");
  if (cfg.feature_dim < 1) fail("--features must be >= 1");
  if (!(cfg.signal >= 0) || !(cfg.noise >= 0)) fail("signal and noise must be >= 0");
  if (cfg.classes > 1) {
    const double smallest = double(cfg.vertices / cfg.classes);
    if (cfg.homophily * cfg.avg_degree > smallest - 1)
      fail("--homophily * --avg-degree = " + fmt_double(cfg.homophily * cfg.avg_degree) +
           " within-community neighbours per vertex, but a community has about " +
           fmt_double(smallest) + " members; use fewer classes or a lower degree");
  }
  // Every snapshot's edges (two ids each way) and the features are held whole while written.
  const double bytes = double(cfg.vertices) *
                       (double(cfg.feature_dim) * 4 + cfg.avg_degree * 16 * double(cfg.snapshots));
  if (exceeds_memory(bytes))
    fail("--vertices " + std::to_string(cfg.vertices) + " with --snapshots " +
         std::to_string(cfg.snapshots) + ", --avg-degree " + fmt_double(cfg.avg_degree) +
         " and --features " + std::to_string(cfg.feature_dim) + " need at least " +
         memory_str(bytes) + more_than_usable());
}

EvolvingSbm generate_evolving_sbm(const EvolvingSbmConfig& cfg) {
  validate(cfg);
  EvolvingSbm ds;
  ds.config = cfg;
  const int64_t n = cfg.vertices;
  const int T = cfg.snapshots;
  const int32_t c = cfg.classes;

  // Communities: balanced on a random permutation, then each step moves a fresh sample of
  // round(drift * n) vertices (a partial Fisher-Yates over a pool that persists across steps).
  ds.communities.resize(size_t(T) * size_t(n));
  std::vector<int32_t> pool(static_cast<size_t>(n));
  std::iota(pool.begin(), pool.end(), 0);
  {
    Rng rng(stream_seed(cfg.seed, kInitial));
    for (int64_t i = n - 1; i > 0; --i) std::swap(pool[i], pool[rng.below(uint64_t(i) + 1)]);
    for (int64_t i = 0; i < n; ++i) ds.communities[pool[i]] = int32_t(i % c);
  }
  const int64_t moves = std::llround(cfg.drift * double(n));
  for (int t = 1; t < T; ++t) {
    int32_t* now = ds.communities.data() + size_t(t) * size_t(n);
    std::copy_n(now - n, n, now);
    Rng rng(hash_combine(stream_seed(cfg.seed, kMoves), uint64_t(t)));
    for (int64_t i = 0; i < moves; ++i) {
      std::swap(pool[i], pool[i + int64_t(rng.below(uint64_t(n - i)))]);
      const int32_t v = pool[i];
      // Uniform over the other communities.
      const int32_t to = int32_t(rng.below(uint64_t(c - 1)));
      now[v] = to >= now[v] ? to + 1 : to;
    }
  }
  ds.labels.assign(ds.communities.end() - n, ds.communities.end());

  // Steps are independent given their communities: drawn in parallel, each from its own stream.
  std::vector<std::vector<uint64_t>> steps(static_cast<size_t>(T));
#pragma omp parallel for schedule(dynamic, 1)
  for (int t = 0; t < T; ++t)
    steps[t] = draw_step(cfg, ds.communities.data() + size_t(t) * size_t(n), t);
  ds.step_offsets.assign(size_t(T) + 1, 0);
  for (int t = 0; t < T; ++t)
    ds.step_offsets[t + 1] = ds.step_offsets[t] + int64_t(steps[t].size());
  ds.src.resize(size_t(ds.step_offsets[T]));
  ds.dst.resize(ds.src.size());
  for (int t = 0; t < T; ++t) {
    const int64_t base = ds.step_offsets[t];
    for (size_t i = 0; i < steps[t].size(); ++i) {
      ds.src[base + i] = int32_t(steps[t][i] >> 32);
      ds.dst[base + i] = int32_t(steps[t][i] & 0xffffffffu);
    }
    std::vector<uint64_t>().swap(steps[t]);
  }

  const int64_t f = cfg.feature_dim;
  ds.centroids.resize(size_t(c) * size_t(f));
  {
    Rng rng(stream_seed(cfg.seed, kCentroids));
    for (float& x : ds.centroids) x = rng.normal();
  }
  ds.features.resize(size_t(n) * size_t(f));
  const uint64_t fs = stream_seed(cfg.seed, kFeatures);
#pragma omp parallel for schedule(static)
  for (int64_t v = 0; v < n; ++v) {
    Rng rng(hash_combine(fs, uint64_t(v)));
    const float* mu = ds.centroids.data() + size_t(ds.communities[v]) * size_t(f);
    float* x = ds.features.data() + size_t(v) * size_t(f);
    for (int64_t j = 0; j < f; ++j) x[j] = mu[j] * cfg.signal + rng.normal() * cfg.noise;
  }
  return ds;
}

double EvolvingSbm::measured_drift(int t) const {
  if (t < 1 || t >= num_snapshots()) return 0.0;
  int64_t moved = 0;
  for (int64_t v = 0; v < num_vertices(); ++v) moved += community(t, v) != community(t - 1, v);
  return double(moved) / double(num_vertices());
}

double EvolvingSbm::measured_homophily(int t, int at) const {
  const int64_t a = step_offsets[t], b = step_offsets[t + 1];
  if (a == b) return 0.0;
  int64_t same = 0;
  for (int64_t e = a; e < b; ++e) same += community(at, src[e]) == community(at, dst[e]);
  return double(same) / double(b - a);
}

std::string EvolvingSbm::description() const {
  const EvolvingSbmConfig& c = config;
  return "# evolving-sbm: undirected edges drawn per snapshot from drifting communities, one per "
         "line (src dst time), time = snapshot index; vertices=" +
         std::to_string(c.vertices) + " snapshots=" + std::to_string(c.snapshots) +
         " edges=" + std::to_string(num_edges()) + " classes=" + std::to_string(c.classes) +
         " avg_degree=" + fmt_double(c.avg_degree) + " homophily=" + fmt_double(c.homophily) +
         " drift=" + fmt_double(c.drift) + " features=" + std::to_string(c.feature_dim) +
         " signal=" + fmt_double(c.signal) + " noise=" + fmt_double(c.noise) +
         " seed=" + std::to_string(c.seed) + "\n# snapshot-seconds: 1 (see snapshots.txt)";
}

void EvolvingSbm::write_dataset_dir(const std::string& dir, bool force) const {
  using dataset_dir::TextWriter;
  namespace fs = std::filesystem;
  dataset_dir::write_atomically(
      dir, config.seed ^ uint64_t(num_edges()),
      [&](const std::string& tmp_dir) {
        const fs::path tmp(tmp_dir);
        {
          TextWriter w((tmp / "edges.txt").string());
          w.text(description());
          w.put('\n');
          for (int t = 0; t < num_snapshots(); ++t) {
            for (int64_t e = step_offsets[t]; e < step_offsets[t + 1]; ++e) {
              w.integer(src[e]);
              w.put(' ');
              w.integer(dst[e]);
              w.put(' ');
              w.integer(t);
              w.put('\n');
            }
          }
          w.close();
        }
        write_npy((tmp / "features.npy").string(), features.data(), num_vertices(),
                  config.feature_dim);
        dataset_dir::write_labels((tmp / "labels.txt").string(), labels,
                                  "vertex label (the community at the last snapshot)");
        TemporalLayout lay;
        lay.time_col = 2;
        lay.seconds = 1;
        lay.snapshots = num_snapshots();
        lay.vertices = num_vertices();
        TextWriter w((tmp / "snapshots.txt").string());
        w.text(lay.to_text());
        w.close();
      },
      force);
}

TemporalGraph EvolvingSbm::to_temporal(SnapshotMode mode, int window) const {
  EdgeList e;
  e.src.assign(src.begin(), src.end());
  e.dst.assign(dst.begin(), dst.end());
  e.time.resize(src.size());
  for (int t = 0; t < num_snapshots(); ++t)
    std::fill(e.time.begin() + step_offsets[t], e.time.begin() + step_offsets[t + 1], t);
  e.lines = num_edges();
  EdgeListOptions opt;
  opt.time_col = 2;
  SnapshotOptions snap;
  snap.seconds = 1;
  snap.mode = mode;
  snap.window = window;
  return build_temporal(e, opt, snap, "generated evolving-sbm", num_vertices());
}

}  // namespace dgnn
