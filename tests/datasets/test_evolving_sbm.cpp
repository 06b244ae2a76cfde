// The evolving SBM: determinism, the drift and homophily it promises, and the directory it writes
// read back by load_temporal (with no options) and load_dataset.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <string>

#include "dgnn/common/error.hpp"
#include "dgnn/datasets/evolving_sbm.hpp"
#include "dgnn/graph/dataset.hpp"
#include "dgnn/graph/temporal.hpp"
#include "../graph/temp_files.hpp"

using namespace dgnn;
using Catch::Matchers::Contains;
namespace fs = std::filesystem;
using dgnn::test::TempDir;

namespace {

EvolvingSbmConfig config() {
  EvolvingSbmConfig c;
  c.vertices = 3000;
  c.snapshots = 8;
  c.classes = 4;
  c.avg_degree = 6;
  c.homophily = 0.85;
  c.drift = 0.1;
  c.feature_dim = 6;
  c.seed = 11;
  return c;
}

bool same_csr(const Csr& a, const Csr& b) {
  return a.rows == b.rows && a.offsets == b.offsets && a.indices == b.indices &&
         a.values == b.values;
}

}  // namespace

TEST_CASE("evolving-sbm: deterministic by seed", "[evolving_sbm]") {
  const EvolvingSbm a = generate_evolving_sbm(config());
  const EvolvingSbm b = generate_evolving_sbm(config());
  CHECK(a.src == b.src);
  CHECK(a.dst == b.dst);
  CHECK(a.step_offsets == b.step_offsets);
  CHECK(a.communities == b.communities);
  CHECK(a.features == b.features);
  EvolvingSbmConfig other = config();
  other.seed = 12;
  CHECK(generate_evolving_sbm(other).src != a.src);
  // The feature width draws from its own stream: the graph does not change with it.
  other = config();
  other.feature_dim = 9;
  CHECK(generate_evolving_sbm(other).src == a.src);
}

TEST_CASE("evolving-sbm: drift, homophily and degree as configured", "[evolving_sbm]") {
  const EvolvingSbmConfig cfg = config();
  const EvolvingSbm ds = generate_evolving_sbm(cfg);
  REQUIRE(ds.step_offsets.size() == size_t(cfg.snapshots) + 1);
  CHECK(ds.measured_drift(0) == 0.0);
  for (int t = 1; t < cfg.snapshots; ++t) {
    CHECK(ds.measured_drift(t) == Approx(cfg.drift).margin(1e-9));  // exactly round(0.1 * 3000)
    const int64_t m = ds.step_offsets[t + 1] - ds.step_offsets[t];
    CHECK(m == 9000);  // n * avg_degree / 2, topped up after duplicates
    for (int64_t e = ds.step_offsets[t]; e < ds.step_offsets[t + 1]; ++e)
      REQUIRE(ds.src[e] < ds.dst[e]);
  }
  for (int t = 0; t < cfg.snapshots; ++t)
    CHECK(ds.measured_homophily(t, t) == Approx(cfg.homophily).margin(0.02));
  // Against the initial communities, the late edges are visibly less homophilous: the drift is
  // in the graph, not only in the labels.
  const int last = cfg.snapshots - 1;
  CHECK(ds.measured_homophily(last, 0) < cfg.homophily - 0.25);
  // Labels are the final communities; features follow the initial ones.
  for (int64_t v = 0; v < cfg.vertices; ++v) REQUIRE(ds.labels[v] == ds.community(last, v));
  int64_t moved = 0;
  for (int64_t v = 0; v < cfg.vertices; ++v) moved += ds.community(0, v) != ds.labels[v];
  CHECK(moved > cfg.vertices / 3);

  CHECK_THROWS_AS(
      [] {
        EvolvingSbmConfig c = config();
        c.drift = 1.5;
        generate_evolving_sbm(c);
      }(),
      OptionError);
  EvolvingSbmConfig one = config();
  one.classes = 1;
  try {
    generate_evolving_sbm(one);
    FAIL("expected an OptionError");
  } catch (const OptionError& e) {
    CHECK_THAT(e.what(), Contains("--drift"));
  }
}

TEST_CASE("evolving-sbm: to_temporal has the generated snapshots", "[evolving_sbm]") {
  const EvolvingSbmConfig cfg = config();
  const EvolvingSbm ds = generate_evolving_sbm(cfg);
  const TemporalGraph g = ds.to_temporal();
  REQUIRE(g.num_snapshots() == cfg.snapshots);
  CHECK(g.num_vertices == cfg.vertices);
  SnapshotCursor cur(g);
  do {
    const int t = cur.index();
    CHECK(cur.current().nnz() == 2 * (ds.step_offsets[t + 1] - ds.step_offsets[t]));
    CHECK(g.events[t].size() == ds.step_offsets[t + 1] - ds.step_offsets[t]);
    CHECK(g.events[t].start_time == t);
  } while (cur.next());
  // Fresh edges every step: window differences replace everything, cumulative ones only add.
  const TemporalGraph cum = ds.to_temporal(SnapshotMode::cumulative);
  CHECK(cum.diff_bytes() * 2 < cum.full_bytes());
  CHECK(g.diff_bytes() > g.full_bytes() / 2);
}

TEST_CASE("evolving-sbm: the directory round-trips through load_temporal", "[evolving_sbm]") {
  TempDir tmp;
  const EvolvingSbmConfig cfg = config();
  const EvolvingSbm ds = generate_evolving_sbm(cfg);
  const std::string dir = tmp.path("evo");
  ds.write_dataset_dir(dir);
  for (const char* f : {"edges.txt", "features.npy", "labels.txt", "snapshots.txt"})
    CHECK(fs::exists(fs::path(dir) / f));
  std::ifstream edges(fs::path(dir) / "edges.txt");
  std::string first;
  std::getline(edges, first);
  CHECK_THAT(first, Contains("drift=0.1"));

  for (SnapshotMode mode : {SnapshotMode::window, SnapshotMode::cumulative}) {
    SnapshotOptions snap;
    snap.mode = mode;
    const TemporalGraph loaded = load_temporal(dir, {}, snap);
    const TemporalGraph direct = ds.to_temporal(mode);
    REQUIRE(loaded.num_snapshots() == cfg.snapshots);
    CHECK(loaded.original_ids == direct.original_ids);
    CHECK(same_csr(loaded.base, direct.base));
    for (int t = 1; t < cfg.snapshots; ++t) {
      CHECK(loaded.diffs[t - 1].add_src == direct.diffs[t - 1].add_src);
      CHECK(loaded.diffs[t - 1].del_dst == direct.diffs[t - 1].del_dst);
    }
    CHECK(same_csr(loaded.snapshot(cfg.snapshots - 1), direct.snapshot(cfg.snapshots - 1)));
  }

  // The static loader reads the same directory: features per vertex, final labels.
  DatasetOptions opt;
  opt.graph = dir;
  opt.edges.use_cache = false;
  const Dataset d = load_dataset(opt);
  CHECK(d.num_vertices() == cfg.vertices);
  CHECK(d.feature_dim == cfg.feature_dim);
  CHECK(d.features == ds.features);
  CHECK(d.labels == ds.labels);

  // Rewriting replaces the dataset; a folder with foreign files is refused.
  ds.write_dataset_dir(dir);
  std::ofstream(fs::path(dir) / "notes.md") << "mine\n";
  CHECK_THROWS_AS(ds.write_dataset_dir(dir), IoError);
  CHECK(fs::exists(fs::path(dir) / "notes.md"));
}
