#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <string>

#include "dgnn/common/error.hpp"
#include "dgnn/datasets/sbm.hpp"
#include "dgnn/graph/dataset.hpp"
#include "../graph/temp_files.hpp"

using namespace dgnn;
namespace fs = std::filesystem;
using dgnn::test::TempDir;

namespace {

SbmConfig config() {
  SbmConfig c;
  c.vertices = 1500;
  c.classes = 4;
  c.avg_degree = 8;
  c.feature_dim = 10;
  c.seed = 3;
  return c;
}

Dataset load(const fs::path& dir) {
  DatasetOptions opt;
  opt.graph = dir.string();
  opt.edges.use_cache = false;
  return load_dataset(opt);
}

std::string first_line(const fs::path& p) {
  std::ifstream in(p);
  std::string line;
  std::getline(in, line);
  return line;
}

}  // namespace

TEST_CASE("sbm: write_dataset_dir round-trips through load_dataset") {
  TempDir tmp;
  const SbmDataset ds = generate_sbm(config());
  const fs::path dir = tmp.path("sbm");
  ds.write_dataset_dir(dir.string());

  for (const char* f :
       {"edges.txt", "features.npy", "labels.txt", "train.txt", "val.txt", "test.txt"})
    CHECK(fs::is_regular_file(dir / f));
  CHECK(first_line(dir / "edges.txt").rfind("# sbm:", 0) == 0);
  // Nothing but the dataset is left behind: no temporary folders next to it.
  CHECK(std::distance(fs::directory_iterator(tmp.dir()), fs::directory_iterator()) == 1);

  const Dataset back = load(dir);
  REQUIRE(back.num_vertices() == ds.num_vertices());
  CHECK(!back.graph.directed);
  CHECK(back.graph.num_edges() == 2 * ds.num_edges());
  CHECK(back.graph.self_loops_removed == 0);
  CHECK(back.graph.duplicates_merged == 0);
  CHECK(back.feature_dim == 10);
  CHECK(back.features == ds.features);
  CHECK(back.labels == ds.labels);
  CHECK(back.num_classes == 4);
  CHECK(back.train == ds.train);
  CHECK(back.val == ds.val);
  CHECK(back.test == ds.test);
  // Every generated edge is in the CSR (both directions, as the graph is undirected).
  const Csr& in = back.graph.in;
  for (int64_t e = 0; e < ds.num_edges(); e += 97) {
    const int32_t u = ds.src[e], v = ds.dst[e];
    auto row = [&](int32_t r) {
      return std::vector<int32_t>(in.indices.begin() + in.offsets[r],
                                  in.indices.begin() + in.offsets[r + 1]);
    };
    auto rv = row(v), ru = row(u);
    CHECK(std::binary_search(rv.begin(), rv.end(), u));
    CHECK(std::binary_search(ru.begin(), ru.end(), v));
  }
}

TEST_CASE("sbm: an existing dataset is replaced, a folder with other files is not") {
  TempDir tmp;
  const fs::path dir = tmp.path("data");
  SbmConfig cfg = config();
  generate_sbm(cfg).write_dataset_dir(dir.string());
  cfg.vertices = 800;
  const SbmDataset second = generate_sbm(cfg);
  second.write_dataset_dir(dir.string() + "/");  // a trailing slash names the same folder
  CHECK(load(dir).num_vertices() == 800);
  CHECK(std::distance(fs::directory_iterator(tmp.dir()), fs::directory_iterator()) == 1);

  const fs::path other = tmp.path("mine");
  fs::create_directories(other);
  std::ofstream(other / "notes.md") << "keep me\n";
  CHECK_THROWS_AS(second.write_dataset_dir(other.string()), IoError);
  CHECK(fs::exists(other / "notes.md"));
  CHECK(!fs::exists(other / "edges.txt"));

  std::ofstream(tmp.path("plain")) << "x\n";
  CHECK_THROWS_AS(second.write_dataset_dir(tmp.path("plain")), IoError);
}

TEST_CASE("sbm: to_dataset equals loading the written directory") {
  TempDir tmp;
  const SbmDataset ds = generate_sbm(config());
  ds.write_dataset_dir(tmp.path("d"));
  const Dataset loaded = load(tmp.path("d"));
  const Dataset copied = ds.to_dataset();
  const Dataset moved = generate_sbm(config()).to_dataset();
  for (const Dataset* d : {&copied, &moved}) {
    CHECK(d->graph.in.offsets == loaded.graph.in.offsets);
    CHECK(d->graph.in.indices == loaded.graph.in.indices);
    CHECK(d->graph.original_ids == loaded.graph.original_ids);
    CHECK(d->graph.directed == loaded.graph.directed);
    CHECK(d->features == loaded.features);
    CHECK(d->feature_dim == loaded.feature_dim);
    CHECK(d->labels == loaded.labels);
    CHECK(d->num_classes == loaded.num_classes);
    CHECK(d->train == loaded.train);
    CHECK(d->val == loaded.val);
    CHECK(d->test == loaded.test);
  }
  CHECK(ds.features.size() == 1500u * 10u);  // the const overload left the source intact
}
