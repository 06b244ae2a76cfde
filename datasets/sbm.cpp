#include "dgnn/datasets/sbm.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <numeric>
#include <string>

#include "dgnn/common/error.hpp"
#include "dgnn/common/hash_rng.hpp"
#include "dgnn/common/memory.hpp"
#include "dgnn/datasets/dataset_dir.hpp"
#include "dgnn/graph/npy.hpp"

namespace dgnn {

using dataset_dir::fmt_double;

namespace {

// Independent streams derived from the one seed, so changing e.g. the feature dimension does
// not change the graph.
enum Stream : uint64_t {
  kLabels = 1,
  kWeights = 2,
  kEdges = 3,
  kCentroids = 4,
  kFeatures = 5,
  kSplit = 6,
};

uint64_t stream_seed(uint64_t seed, Stream s) { return hash_combine(seed, 0x5b3d0000ull + s); }

// Edges are generated in fixed-size chunks, each with its own counter-based stream: the output
// depends on the seed only, never on how OpenMP schedules the chunks.
constexpr int64_t kChunk = int64_t(1) << 16;

// Two standard normals per logarithm (Box-Muller pair): features are the bulk of the random
// numbers drawn, and Rng::normal discards the second value.
inline void normal_pair(Rng& rng, float& a, float& b) {
  double u1 = (double(rng.next() >> 11) + 1.0) * (1.0 / 9007199254740993.0);
  double u2 = rng.uniform_double();
  double r = std::sqrt(-2.0 * std::log(u1));
  double t = 6.283185307179586 * u2;
  a = float(r * std::cos(t));
  b = float(r * std::sin(t));
}

// Fisher-Yates shuffle of 0..n-1.
std::vector<int32_t> permutation(int64_t n, uint64_t seed) {
  std::vector<int32_t> p(n);
  std::iota(p.begin(), p.end(), 0);
  Rng rng(seed);
  for (int64_t i = n - 1; i > 0; --i) std::swap(p[i], p[rng.below(uint64_t(i) + 1)]);
  return p;
}

// Walker/Vose alias table over n weights: O(1) weighted draws, which keeps the generator O(E)
// even with skewed degrees. alias[] holds indices local to the table.
void build_alias(const double* w, int64_t n, float* prob, int32_t* alias) {
  double sum = 0;
  for (int64_t i = 0; i < n; ++i) sum += w[i];
  std::vector<double> scaled(n);
  std::vector<int32_t> small, large;
  for (int64_t i = 0; i < n; ++i) {
    scaled[i] = w[i] * double(n) / sum;
    (scaled[i] < 1.0 ? small : large).push_back(int32_t(i));
  }
  while (!small.empty() && !large.empty()) {
    int32_t s = small.back(), l = large.back();
    small.pop_back();
    prob[s] = float(scaled[s]);
    alias[s] = l;
    scaled[l] -= 1.0 - scaled[s];
    if (scaled[l] < 1.0) {
      large.pop_back();
      small.push_back(l);
    }
  }
  // Leftovers are 1 up to rounding.
  for (int32_t i : small) prob[i] = 1.0f, alias[i] = i;
  for (int32_t i : large) prob[i] = 1.0f, alias[i] = i;
}

// Draws vertices uniformly or by weight, from all vertices or from one class.
class VertexSampler {
 public:
  VertexSampler(const SbmConfig& cfg, const std::vector<int32_t>& labels) {
    const int64_t n = cfg.vertices;
    const int32_t c = cfg.classes;
    class_off_.assign(c + 1, 0);
    for (int32_t l : labels) ++class_off_[l + 1];
    for (int32_t k = 0; k < c; ++k) class_off_[k + 1] += class_off_[k];
    members_.resize(n);
    std::vector<int64_t> fill(class_off_.begin(), class_off_.end() - 1);
    for (int64_t v = 0; v < n; ++v) members_[fill[labels[v]]++] = int32_t(v);
    if (cfg.degree_skew <= 0) return;

    weighted_ = true;
    // Pareto weights (1 - U)^-skew: a power-law tail with index 1 / skew.
    std::vector<double> w(n);
    const uint64_t ws = stream_seed(cfg.seed, kWeights);
    for (int64_t v = 0; v < n; ++v) {
      double u = double(mix64(ws + uint64_t(v)) >> 11) * (1.0 / 9007199254740992.0);
      w[v] = std::pow(1.0 - u, -cfg.degree_skew);
    }
    prob_.resize(n);
    alias_.resize(n);
    build_alias(w.data(), n, prob_.data(), alias_.data());
    std::vector<double> wm(n);
    for (int64_t i = 0; i < n; ++i) wm[i] = w[members_[i]];
    class_prob_.resize(n);
    class_alias_.resize(n);
    for (int32_t k = 0; k < c; ++k) {
      int64_t off = class_off_[k];
      build_alias(wm.data() + off, class_off_[k + 1] - off, class_prob_.data() + off,
                  class_alias_.data() + off);
    }
  }

  int32_t any(Rng& rng) const {
    int32_t i = int32_t(rng.below(members_.size()));
    if (!weighted_) return i;
    return rng.uniform() < prob_[i] ? i : alias_[i];
  }
  int32_t in_class(int32_t k, Rng& rng) const {
    int64_t off = class_off_[k];
    int32_t i = int32_t(rng.below(uint64_t(class_off_[k + 1] - off)));
    if (weighted_ && rng.uniform() >= class_prob_[off + i]) i = class_alias_[off + i];
    return members_[off + i];
  }

 private:
  std::vector<int64_t> class_off_;  // members_ of class k: [class_off_[k], class_off_[k+1])
  std::vector<int32_t> members_;    // vertices grouped by class, ascending within a class
  bool weighted_ = false;
  std::vector<float> prob_, class_prob_;
  std::vector<int32_t> alias_, class_alias_;
};

constexpr uint64_t kDropped = std::numeric_limits<uint64_t>::max();

// `count` candidate edges as keys (min << 32 | max); self loops become kDropped.
void draw_edges(const SbmConfig& cfg, const std::vector<int32_t>& labels,
                const VertexSampler& sampler, uint64_t round_seed, int64_t count,
                std::vector<uint64_t>& out) {
  const int64_t base = int64_t(out.size());
  out.resize(base + count);
  const int64_t chunks = (count + kChunk - 1) / kChunk;
  const bool mixed = cfg.classes > 1;
#pragma omp parallel for schedule(dynamic, 1)
  for (int64_t ch = 0; ch < chunks; ++ch) {
    Rng rng(hash_combine(round_seed, uint64_t(ch)));
    const int64_t end = std::min(count, (ch + 1) * kChunk);
    for (int64_t e = ch * kChunk; e < end; ++e) {
      int32_t u = sampler.any(rng);
      int32_t v;
      if (!mixed || rng.uniform_double() < cfg.homophily) {
        v = sampler.in_class(labels[u], rng);
      } else {
        // Reject same-class targets so the measured homophily is the configured one, not
        // homophily + (1 - homophily) / classes. validate() ensures other classes exist.
        int tries = 0;
        do v = sampler.any(rng);
        while (labels[v] == labels[u] && ++tries < 256);
      }
      uint64_t a = uint64_t(std::min(u, v)), b = uint64_t(std::max(u, v));
      out[base + e] = u == v ? kDropped : (a << 32 | b);
    }
  }
}

// Sorts keys and removes duplicates and dropped entries. A counting sort by the smaller
// endpoint, then small per-vertex sorts: O(E log degree) rather than a full comparison sort.
void sort_unique(std::vector<uint64_t>& keys, int64_t n) {
  std::vector<int64_t> off(n + 1, 0);
  int64_t kept = 0;
  for (uint64_t k : keys)
    if (k != kDropped) ++off[(k >> 32) + 1], ++kept;
  for (int64_t v = 0; v < n; ++v) off[v + 1] += off[v];
  std::vector<uint64_t> sorted(kept);
  {
    std::vector<int64_t> fill(off.begin(), off.end() - 1);
    for (uint64_t k : keys)
      if (k != kDropped) sorted[fill[k >> 32]++] = k;
  }
  std::vector<int64_t> unique_count(n);
#pragma omp parallel for schedule(dynamic, 4096)
  for (int64_t v = 0; v < n; ++v) {
    auto first = sorted.begin() + off[v], last = sorted.begin() + off[v + 1];
    std::sort(first, last);
    unique_count[v] = std::unique(first, last) - first;
  }
  int64_t w = 0;
  for (int64_t v = 0; v < n; ++v)
    for (int64_t i = 0; i < unique_count[v]; ++i) sorted[w++] = sorted[off[v] + i];
  sorted.resize(w);
  keys.swap(sorted);
}

}  // namespace

void validate(const SbmConfig& cfg) {
  auto fail = [](const std::string& what) { throw OptionError("sbm: " + what); };
  if (cfg.vertices < 2 || cfg.vertices > std::numeric_limits<int32_t>::max())
    fail("vertices must be in [2, 2^31-1], got " + std::to_string(cfg.vertices));
  if (cfg.classes < 1 || cfg.classes > cfg.vertices)
    fail("classes must be in [1, vertices], got " + std::to_string(cfg.classes) + " for " +
         std::to_string(cfg.vertices) + " vertices");
  if (!(cfg.avg_degree > 0) || cfg.avg_degree > double(cfg.vertices - 1))
    fail("avg-degree must be in (0, vertices-1], got " + fmt_double(cfg.avg_degree));
  if (!(cfg.homophily >= 0 && cfg.homophily <= 1))
    fail("homophily must be in [0, 1], got " + fmt_double(cfg.homophily));
  if (cfg.feature_dim < 1) fail("features must be >= 1");
  if (!(cfg.signal >= 0) || !(cfg.noise >= 0)) fail("signal and noise must be >= 0");
  for (double f : {cfg.train_frac, cfg.val_frac, cfg.test_frac})
    if (!(f >= 0 && f <= 1)) fail("split fractions must be in [0, 1]");
  if (cfg.train_frac + cfg.val_frac + cfg.test_frac > 1 + 1e-9)
    fail("train + val + test fractions exceed 1 (" +
         fmt_double(cfg.train_frac + cfg.val_frac + cfg.test_frac) + ")");
  if (!(cfg.degree_skew >= 0 && cfg.degree_skew < 1))
    fail("degree-skew must be in [0, 1), got " + fmt_double(cfg.degree_skew));
  if (cfg.classes > 1) {
    // A simple graph caps within- and across-class degrees; asking for more cannot be met.
    const double smallest = double(cfg.vertices / cfg.classes);
    const double within = cfg.homophily * cfg.avg_degree;
    if (within > smallest - 1)
      fail("homophily * avg-degree = " + fmt_double(within) +
           " within-class neighbours per vertex, but a class has only " + fmt_double(smallest) +
           " members; use fewer classes or a lower degree");
    const double across = (1 - cfg.homophily) * cfg.avg_degree;
    if (across > double(cfg.vertices) - smallest - 1)
      fail("(1 - homophily) * avg-degree exceeds the vertices outside a class");
  }
  // The features (floats) and the edges (two ids each way) are held whole while written.
  const double bytes = double(cfg.vertices) * (double(cfg.feature_dim) * 4 + cfg.avg_degree * 16);
  if (exceeds_memory(bytes))
    fail("--vertices " + std::to_string(cfg.vertices) + " with --features " +
         std::to_string(cfg.feature_dim) + " and --avg-degree " + fmt_double(cfg.avg_degree) +
         " need at least " + memory_str(bytes) + more_than_usable());
}

SbmDataset generate_sbm(const SbmConfig& cfg) {
  validate(cfg);
  SbmDataset ds;
  ds.config = cfg;
  const int64_t n = cfg.vertices;
  const int32_t c = cfg.classes;
  const int64_t f = cfg.feature_dim;

  // Balanced classes on a random permutation, so vertex ids carry no class information (range
  // partitioners would otherwise cut along classes).
  ds.labels.resize(n);
  {
    auto perm = permutation(n, stream_seed(cfg.seed, kLabels));
    for (int64_t i = 0; i < n; ++i) ds.labels[perm[i]] = int32_t(i % c);
  }

  // Edges: draw, dedupe, and top up what self loops and duplicates removed. Each round is its
  // own stream, so the result is still a function of the seed alone.
  VertexSampler sampler(cfg, ds.labels);
  const int64_t target = std::llround(double(n) * cfg.avg_degree / 2.0);
  std::vector<uint64_t> keys;
  keys.reserve(target + target / 64 + 16);
  for (int round = 0; round < 64 && int64_t(keys.size()) < target; ++round) {
    uint64_t rs = hash_combine(stream_seed(cfg.seed, kEdges), uint64_t(round));
    draw_edges(cfg, ds.labels, sampler, rs, target - int64_t(keys.size()), keys);
    sort_unique(keys, n);
  }
  ds.src.resize(keys.size());
  ds.dst.resize(keys.size());
  for (size_t i = 0; i < keys.size(); ++i) {
    ds.src[i] = int32_t(keys[i] >> 32);
    ds.dst[i] = int32_t(keys[i] & 0xffffffffu);
  }
  std::vector<uint64_t>().swap(keys);

  ds.centroids.resize(size_t(c) * f);
  {
    Rng rng(stream_seed(cfg.seed, kCentroids));
    for (float& x : ds.centroids) x = rng.normal();
  }
  ds.features.resize(size_t(n) * f);
  const uint64_t fs = stream_seed(cfg.seed, kFeatures);
#pragma omp parallel for schedule(static)
  for (int64_t v = 0; v < n; ++v) {
    Rng rng(hash_combine(fs, uint64_t(v)));
    const float* mu = ds.centroids.data() + size_t(ds.labels[v]) * f;
    float* x = ds.features.data() + size_t(v) * f;
    for (int64_t j = 0; j < f; j += 2) {
      float a, b;
      normal_pair(rng, a, b);
      x[j] = mu[j] * cfg.signal + a * cfg.noise;
      if (j + 1 < f) x[j + 1] = mu[j + 1] * cfg.signal + b * cfg.noise;
    }
  }

  {
    auto perm = permutation(n, stream_seed(cfg.seed, kSplit));
    const int64_t n_train = std::min<int64_t>(n, std::llround(cfg.train_frac * double(n)));
    const int64_t n_val = std::min<int64_t>(n - n_train, std::llround(cfg.val_frac * double(n)));
    const int64_t n_test =
        std::min<int64_t>(n - n_train - n_val, std::llround(cfg.test_frac * double(n)));
    auto take = [&](int64_t from, int64_t len) {
      std::vector<int32_t> s(perm.begin() + from, perm.begin() + from + len);
      std::sort(s.begin(), s.end());
      return s;
    };
    ds.train = take(0, n_train);
    ds.val = take(n_train, n_val);
    ds.test = take(n_train + n_val, n_test);
  }
  return ds;
}

double SbmDataset::measured_homophily() const {
  if (src.empty()) return 0.0;
  int64_t same = 0;
  for (size_t i = 0; i < src.size(); ++i) same += labels[src[i]] == labels[dst[i]];
  return double(same) / double(src.size());
}

std::string SbmDataset::description() const {
  const SbmConfig& c = config;
  return "# sbm: undirected planted-partition graph, one edge per line (src dst); vertices=" +
         std::to_string(c.vertices) + " edges=" + std::to_string(num_edges()) +
         " classes=" + std::to_string(c.classes) + " avg_degree=" + fmt_double(c.avg_degree) +
         " homophily=" + fmt_double(c.homophily) + " features=" + std::to_string(c.feature_dim) +
         " signal=" + fmt_double(c.signal) + " noise=" + fmt_double(c.noise) +
         " degree_skew=" + fmt_double(c.degree_skew) + " train_frac=" + fmt_double(c.train_frac) +
         " val_frac=" + fmt_double(c.val_frac) + " test_frac=" + fmt_double(c.test_frac) +
         " seed=" + std::to_string(c.seed);
}

Dataset SbmDataset::to_dataset() const& { return SbmDataset(*this).to_dataset(); }

Dataset SbmDataset::to_dataset() && {
  EdgeList edges;
  edges.src.assign(src.begin(), src.end());
  edges.dst.assign(dst.begin(), dst.end());
  edges.lines = num_edges();
  EdgeListOptions opt;
  opt.directed = false;
  Dataset d;
  d.description = "generated " + description().substr(2);
  // min_vertices = n keeps isolated vertices, so dense ids equal generated ids.
  d.graph = build_graph(edges, opt, {}, num_vertices());
  d.feature_dim = config.feature_dim;
  d.features = std::move(features);
  d.labels = std::move(labels);
  d.num_classes = config.classes;
  d.train = std::move(train);
  d.val = std::move(val);
  d.test = std::move(test);
  return d;
}

void SbmDataset::write_dataset_dir(const std::string& dir, bool force) const {
  namespace fs = std::filesystem;
  dataset_dir::write_atomically(
      dir, config.seed ^ uint64_t(num_edges()),
      [&](const std::string& tmp_dir) {
        const fs::path tmp(tmp_dir);
        dataset_dir::write_edges((tmp / "edges.txt").string(), description(), src, dst);
        write_npy((tmp / "features.npy").string(), features.data(), num_vertices(),
                  config.feature_dim);
        dataset_dir::write_labels((tmp / "labels.txt").string(), labels, "vertex label");
        dataset_dir::write_ids((tmp / "train.txt").string(), train);
        dataset_dir::write_ids((tmp / "val.txt").string(), val);
        dataset_dir::write_ids((tmp / "test.txt").string(), test);
      },
      force);
}

}  // namespace dgnn
