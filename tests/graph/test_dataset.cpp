#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <limits>
#include <set>

#include "dgnn/common/error.hpp"
#include "dgnn/common/io_stats.hpp"
#include "dgnn/graph/dataset.hpp"
#include "dgnn/graph/npy.hpp"
#include "temp_files.hpp"

using namespace dgnn;
using Catch::Matchers::Contains;
using dgnn::test::error_of;
using dgnn::test::TempDir;

namespace {

DatasetOptions options(const std::string& graph, const TempDir& tmp) {
  DatasetOptions o;
  o.graph = graph;
  o.edges.cache_dir = tmp.path("cache");
  return o;
}

std::vector<float> row(const Dataset& ds, int64_t v) {
  return {ds.features.begin() + v * ds.feature_dim, ds.features.begin() + (v + 1) * ds.feature_dim};
}

}  // namespace

TEST_CASE("dataset folder: files picked up by name, ids relabelled", "[dataset]") {
  TempDir tmp;
  const Dataset ds = load_dataset(options(std::string(DGNN_TEST_DATA) + "/graph_tiny", tmp));
  // Vertex 70 is only in labels.txt and features.txt: an isolated vertex.
  CHECK(ds.graph.original_ids == std::vector<int64_t>{10, 20, 30, 40, 50, 60, 70});
  CHECK(ds.num_vertices() == 7);
  CHECK(ds.graph.num_edges() == 10);
  CHECK(ds.graph.in.degree(6) == 0);
  CHECK(ds.labels == std::vector<int32_t>{0, 1, 0, 1, -1, 2, 2});
  CHECK(ds.num_classes == 3);
  CHECK(ds.feature_dim == 2);
  CHECK(row(ds, 2) == std::vector<float>{0.5f, 0.5f});
  CHECK(row(ds, 6) == std::vector<float>{3, 3});
  CHECK(ds.train == std::vector<int32_t>{0, 1, 3});
  CHECK(ds.val == std::vector<int32_t>{2});
  CHECK(ds.test == std::vector<int32_t>{5, 6});
  CHECK_THAT(ds.description, Contains("edges.csv") && Contains("7 vertices"));
  CHECK(ds.labelled_isolated == 1);  // 70
  CHECK_THAT(ds.description, Contains("1 vertex of the labels in no edge"));
}

TEST_CASE("dataset_files: what a folder provides, explicit options on top", "[dataset]") {
  TempDir tmp;
  DatasetOptions o;
  CHECK_THROWS_AS(dataset_files(o), OptionError);
  o.graph = tmp.dir();
  CHECK_THROWS_AS(dataset_files(o), IoError);  // no edges.*
  tmp.write("edges.csv.gz", "");
  tmp.write("edges.csv", "0 1\n");
  tmp.write("features.txt", "0 1\n");
  tmp.write("labels.txt", "0 1\n");
  tmp.write("val.txt", "0\n");
  // A folder where a file belongs is refused (skipped, the dataset lost its features silently),
  // unless an option names the file instead.
  std::filesystem::create_directories(tmp.path("features.npy"));
  CHECK_THAT(error_of<IoError>([&] { dataset_files(o); }),
             Contains(tmp.path("features.npy") + ": is a directory, not a feature matrix"));
  {
    DatasetOptions given = o;
    given.features = tmp.path("features.txt");
    CHECK(dataset_files(given).features == given.features);
  }
  std::filesystem::remove(tmp.path("features.npy"));
  std::filesystem::create_directories(tmp.path("train.txt.gz"));
  CHECK_THAT(error_of<IoError>([&] { dataset_files(o); }),
             Contains(tmp.path("train.txt.gz") + ": is a directory, not a split file"));
  std::filesystem::remove(tmp.path("train.txt.gz"));
  DatasetFiles f = dataset_files(o);
  CHECK(f.edges == tmp.path("edges.csv"));
  CHECK(f.features == tmp.path("features.txt"));
  CHECK(f.labels == tmp.path("labels.txt"));
  CHECK(f.train.empty());
  CHECK(f.val == tmp.path("val.txt"));
  CHECK(f.test.empty());
  o.test = "/elsewhere/test.txt";
  o.labels = "/elsewhere/labels.txt";
  f = dataset_files(o);
  CHECK(f.test == o.test);
  CHECK(f.labels == o.labels);
  o.graph = tmp.path("edges.csv");  // a file: only the options name the rest
  f = dataset_files(o);
  CHECK(f.edges == o.graph);
  CHECK(f.features.empty());
  CHECK(f.val.empty());
  CHECK(f.test == o.test);
}

TEST_CASE("dataset: labels without edges are counted, not refused", "[dataset]") {
  TempDir tmp;
  DatasetOptions o = options(tmp.write("e.txt", "0 1\n1 2\n"), tmp);
  o.labels = tmp.write("l.txt", "0 1\n2 0\n7 1\n9 -1\n");
  const Dataset ds = load_dataset(o);
  CHECK(ds.graph.original_ids == std::vector<int64_t>{0, 1, 2, 7, 9});
  CHECK(ds.labelled_isolated == 2);
  CHECK_THAT(ds.description, Contains("2 vertices of the labels in no edge"));
  o.labels = tmp.write("l2.txt", "0 1\n2 0\n");
  const Dataset all_in = load_dataset(o);
  CHECK(all_in.labelled_isolated == 0);
  CHECK_THAT(all_in.description, !Contains("in no edge"));
}

TEST_CASE("dataset: explicit options override the folder's files", "[dataset]") {
  TempDir tmp;
  DatasetOptions o = options(std::string(DGNN_TEST_DATA) + "/graph_tiny", tmp);
  o.train = tmp.write("train.txt", "10\n");  // not in the folder's val or test
  o.labels = tmp.write("labels.txt", "10 4\n30 1\n60 5\n70 0\n");
  const Dataset ds = load_dataset(o);
  CHECK(ds.num_vertices() == 7);  // 70 still comes from features.txt
  CHECK(ds.labels == std::vector<int32_t>{4, -1, 1, -1, -1, 5, 0});
  CHECK(ds.num_classes == 6);
  CHECK(ds.train == std::vector<int32_t>{0});
  CHECK(ds.val == std::vector<int32_t>{2});
}

TEST_CASE("dataset: npy features make every row a vertex", "[dataset]") {
  TempDir tmp;
  const std::vector<float> x = {0, 0.5f, 1, 1.5f, 2, 2.5f, 3, 3.5f};
  tmp.write("d/edges.txt", "0 1\n1 2\n");
  write_npy(tmp.path("d/features.npy"), x.data(), 4, 2);
  tmp.write("d/labels.txt", "0 1\n1 0\n2 1\n3 0\n");
  DatasetOptions o = options(tmp.path("d"), tmp);
  o.train_frac = 0.5;
  o.val_frac = 0.25;
  const Dataset ds = load_dataset(o);
  CHECK(ds.num_vertices() == 4);
  CHECK(ds.graph.original_ids == std::vector<int64_t>{0, 1, 2, 3});
  CHECK(ds.graph.in.degree(3) == 0);
  CHECK(ds.feature_dim == 2);
  CHECK(ds.features == x);
  // No split files: a random 2/1/1 split of the 4 labelled vertices.
  CHECK(ds.train.size() == 2);
  CHECK(ds.val.size() == 1);
  CHECK(ds.test.size() == 1);
  std::set<int32_t> all(ds.train.begin(), ds.train.end());
  all.insert(ds.val.begin(), ds.val.end());
  all.insert(ds.test.begin(), ds.test.end());
  CHECK(all == std::set<int32_t>{0, 1, 2, 3});
}

TEST_CASE("dataset: an edge id beyond the feature rows names the edge line", "[dataset][errors]") {
  TempDir tmp;
  const std::vector<float> x(6, 1.0f);
  write_npy(tmp.path("f.npy"), x.data(), 3, 2);
  const std::string edges = tmp.write("e.txt", "# ids must be < 3\n0 1\n1 2\n2 5\n7 0\n");
  DatasetOptions o = options(edges, tmp);
  o.features = tmp.path("f.npy");
  // Twice: the second load comes from the cache and must still find the line.
  for (int i = 0; i < 2; ++i) {
    CHECK_THAT(error_of<InputError>([&] { load_dataset(o); }),
               Contains(edges + ":4: expected vertex ids below 3") && Contains("f.npy") &&
                   Contains("found 5"));
  }
  o.graph = tmp.write("ok.txt", "0 1\n1 2\n");
  o.labels = tmp.write("l.txt", "0 1\n4 0\n");
  CHECK_THAT(error_of<InputError>([&] { load_dataset(o); }),
             Contains(o.labels + ":2: expected vertex ids below 3") && Contains("found 4"));
  o.features = tmp.write("bad.npy", "not numpy");
  CHECK_THAT(error_of<InputError>([&] { load_dataset(o); }),
             Contains(o.features + ": not a .npy file"));
}

TEST_CASE("dataset: label and split errors", "[dataset][errors]") {
  TempDir tmp;
  const std::string edges = tmp.write("e.txt", "0 1\n1 2\n");
  DatasetOptions o = options(edges, tmp);
  auto err = [&](std::string DatasetOptions::*field, const std::string& name,
                 const std::string& text) {
    DatasetOptions c = o;
    c.*field = tmp.write(name, text);
    return std::pair{c.*field, error_of<InputError>([&] { load_dataset(c); })};
  };
  {
    auto [f, m] = err(&DatasetOptions::labels, "l1.txt", "0 1\n1 -2\n");
    CHECK_THAT(m, Contains(f + ":2: expected a label >= 0, or -1 for unlabelled, found -2"));
  }
  {
    auto [f, m] = err(&DatasetOptions::labels, "l2.txt", "# v y\n0 1\n1 x\n");
    CHECK_THAT(m, Contains(f + ":3: expected an integer label, found 'x'"));
  }
  {
    auto [f, m] = err(&DatasetOptions::labels, "l3.txt", "0 1\n1\n");
    CHECK_THAT(m, Contains(f + ":2: expected 'vertex label', found 1 column"));
  }
  {
    auto [f, m] = err(&DatasetOptions::labels, "l4.txt", "0 1\n-1 1\n");
    CHECK_THAT(m, Contains(f + ":2: expected a non-negative vertex id, found -1"));
  }
  {
    auto [f, m] = err(&DatasetOptions::labels, "l5.txt", "0 1\n2 0\n0 1\n");
    CHECK_THAT(m, Contains(f + ":3: expected one label per vertex") && Contains("(line 1)"));
  }
  // Inferred classes: a huge label (an id column, say) would build a model that wide.
  for (const char* y : {"1000000", "300000000", "2147483647", "3000000000"}) {
    auto [f, m] = err(&DatasetOptions::labels, std::string("big") + y + ".txt",
                      std::string("0 1\n1 ") + y + "\n");
    CHECK_THAT(m, Contains(f + ":2: expected a class label below 1000000") &&
                      Contains("--num-classes") && Contains(std::string("found ") + y));
  }
  {
    DatasetOptions c = o;
    c.labels = tmp.write("l_many.txt", "0 1\n1 999999\n");
    CHECK(load_dataset(c).num_classes == 1000000);
    c.num_classes = 300000001;  // asked for: allowed
    c.labels = tmp.write("l_asked.txt", "0 1\n1 300000000\n");
    const Dataset ds = load_dataset(c);
    CHECK(ds.num_classes == 300000001);
    CHECK(ds.labels[1] == 300000000);
  }
  o.num_classes = 2;
  {
    auto [f, m] = err(&DatasetOptions::labels, "l6.txt", "0 1\n1 2\n");
    CHECK_THAT(m, Contains(f + ":2: expected a label below the 2 classes, found 2"));
  }
  {
    auto [f, m] = err(&DatasetOptions::labels, "l7.txt", "0 1\n1 3000000000\n");
    CHECK_THAT(m, Contains(f + ":2: expected a label below the 2 classes, found 3000000000"));
  }
  o.labels = tmp.write("labels.txt", "0 1\n1 0\n2 -1\n");
  {
    auto [f, m] = err(&DatasetOptions::train, "t1.txt", "0\n1\n99\n");
    CHECK_THAT(m, Contains(f + ":3: expected a vertex of the graph, found id 99"));
  }
  {
    auto [f, m] = err(&DatasetOptions::val, "t2.txt", "0\n2\n");
    CHECK_THAT(m, Contains(f + ":2: expected a labelled vertex, vertex 2 has no label"));
  }
  {
    auto [f, m] = err(&DatasetOptions::test, "t3.txt", "zero\n0\nfirst\n");
    CHECK_THAT(m, Contains(f + ":3: expected an integer vertex id, found 'first'"));
  }
  {
    auto [f, m] = err(&DatasetOptions::train, "t4.txt", "0\n1\n0\n");
    CHECK_THAT(m, Contains(f + ":3: expected each vertex once, vertex 0 is already on line 1"));
  }
  {
    // In two of train / val / test: the second file's line, and the first file named.
    DatasetOptions c = o;
    c.train = tmp.write("t5.txt", "# train\n0\n");
    c.test = tmp.write("t6.txt", "1\n0\n");
    CHECK_THAT(error_of<InputError>([&] { load_dataset(c); }),
               Contains(c.test +
                        ":2: expected train, val and test to be disjoint, vertex 0 "
                        "is also in " +
                        c.train + " (line 2)"));
    c.test.clear();
    c.val = tmp.write("t7.txt", "1\n");
    const Dataset ds = load_dataset(c);  // disjoint: fine
    CHECK(ds.train == std::vector<int32_t>{0});
    CHECK(ds.val == std::vector<int32_t>{1});
  }
  DatasetOptions c = o;
  c.labels = tmp.path("missing_labels.txt");
  CHECK_THAT(error_of<IoError>([&] { load_dataset(c); }), Contains(c.labels));
  c = o;
  c.graph = tmp.path("missing_edges.txt");
  CHECK_THAT(error_of<IoError>([&] { load_dataset(c); }), Contains(c.graph));
  c.graph = tmp.dir();  // a folder without edges.*
  CHECK_THAT(error_of<IoError>([&] { load_dataset(c); }), Contains("has no edges.txt"));
  c.graph = tmp.write("empty.txt", "# nothing here\n");
  CHECK_THAT(error_of<InputError>([&] { load_dataset(c); }),
             Contains(c.graph + ": no edges found"));
}

TEST_CASE("dataset: text feature errors", "[dataset][errors]") {
  TempDir tmp;
  DatasetOptions o = options(tmp.write("e.txt", "1 2\n2 3\n"), tmp);
  o.features = tmp.write("f1.txt", "1 0.5 1\n2 1 1\n3 1 2 3\n");
  CHECK_THAT(error_of<InputError>([&] { load_dataset(o); }),
             Contains(o.features +
                      ":3: expected 2 feature values after the vertex id (as on line 1), found 3"));
  o.features = tmp.write("f2.txt", "1 0.5 1\n2 1 one\n");
  CHECK_THAT(error_of<InputError>([&] { load_dataset(o); }),
             Contains(o.features + ":2: expected a number as feature value, found 'one'"));
  o.features = tmp.write("f3.txt", "1 0.5 1\n3 1 1\n");
  CHECK_THAT(error_of<InputError>([&] { load_dataset(o); }),
             Contains(o.features + ": expected a feature row for every vertex, vertex 2"));
  for (const char* x : {"nan", "inf", "-inf", "NaN", "infinity"}) {
    o.features =
        tmp.write(std::string("f_") + x + ".txt", std::string("1 0.5 1\n2 1 ") + x + "\n3 1 1\n");
    CHECK_THAT(error_of<InputError>([&] { load_dataset(o); }),
               Contains(o.features + ":2: expected a finite feature value, found '" + x + "'"));
  }
}

TEST_CASE("dataset: npy features must be finite and have columns", "[dataset][errors]") {
  TempDir tmp;
  DatasetOptions o = options(tmp.write("e.txt", "0 1\n1 2\n"), tmp);
  std::vector<float> x = {0, 1, 2, 3, 4, 5};
  o.features = tmp.path("ok.npy");
  write_npy(o.features, x.data(), 3, 2);
  CHECK(load_dataset(o).features == x);
  x[5] = std::numeric_limits<float>::quiet_NaN();
  o.features = tmp.path("nan.npy");
  write_npy(o.features, x.data(), 3, 2);
  CHECK_THAT(error_of<InputError>([&] { load_dataset(o); }),
             Contains(o.features + ": expected finite feature values, row 2 (vertex 2) column 1 "
                                   "holds NaN"));
  x[5] = 5;
  x[2] = -std::numeric_limits<float>::infinity();
  o.features = tmp.path("inf.npy");
  write_npy(o.features, x.data(), 3, 2);
  CHECK_THAT(error_of<InputError>([&] { load_dataset(o); }),
             Contains(o.features + ": expected finite feature values, row 1 (vertex 1) column 0 "
                                   "holds infinity"));
  o.features = tmp.path("none.npy");
  write_npy(o.features, x.data(), 3, 0);
  CHECK_THAT(error_of<InputError>([&] { load_dataset(o); }),
             Contains(o.features + ": expected at least one feature column, the matrix is 3 x 0"));
}

TEST_CASE("dataset: random split is seeded and uses labelled vertices only", "[dataset]") {
  TempDir tmp;
  std::string edges, labels;
  for (int v = 0; v < 200; ++v) {
    edges += std::to_string(v) + " " + std::to_string((v + 1) % 200) + "\n";
    labels += std::to_string(v) + " " + (v % 4 == 3 ? "-1" : std::to_string(v % 3)) + "\n";
  }
  DatasetOptions o = options(tmp.write("e.txt", edges), tmp);
  o.labels = tmp.write("l.txt", labels);
  o.seed = 7;
  const Dataset a = load_dataset(o), b = load_dataset(o);
  CHECK(a.train.size() == 90);  // 150 labelled: 60% / 20% / rest
  CHECK(a.val.size() == 30);
  CHECK(a.test.size() == 30);
  CHECK(a.train == b.train);
  CHECK(a.val == b.val);
  CHECK(std::is_sorted(a.train.begin(), a.train.end()));
  for (auto* s : {&a.train, &a.val, &a.test})
    for (int32_t v : *s) CHECK(a.labels[v] >= 0);
  std::set<int32_t> all(a.train.begin(), a.train.end());
  all.insert(a.val.begin(), a.val.end());
  all.insert(a.test.begin(), a.test.end());
  CHECK(all.size() == 150);
  o.seed = 8;
  CHECK(load_dataset(o).train != a.train);
  o.train_frac = 0.9;
  o.val_frac = 0.2;
  CHECK_THROWS_AS(load_dataset(o), OptionError);
}

TEST_CASE("dataset: generated features", "[dataset]") {
  TempDir tmp;
  // Degrees (undirected): 0:3, 1:1, 2:1, 3:1, 9:0 (isolated, from the labels).
  DatasetOptions o = options(tmp.write("e.txt", "0 1\n0 2\n0 3\n"), tmp);
  o.labels = tmp.write("l.txt", "9 0\n");
  Dataset ds = load_dataset(o);
  CHECK(ds.num_vertices() == 5);
  REQUIRE(ds.feature_dim == 3);  // buckets floor(log2(d + 1)) for d <= 3: 0..2
  CHECK(row(ds, 0) == std::vector<float>{0, 0, 1});
  CHECK(row(ds, 1) == std::vector<float>{0, 1, 0});
  CHECK(row(ds, 4) == std::vector<float>{1, 0, 0});
  o.generated_dim = 2;  // capped: high degrees share the last bucket
  CHECK(row(load_dataset(o), 0) == std::vector<float>{0, 1});

  o.generated = GeneratedFeatures::onehot;
  ds = load_dataset(o);
  REQUIRE(ds.feature_dim == 5);
  CHECK(row(ds, 3) == std::vector<float>{0, 0, 0, 1, 0});

  o.generated = GeneratedFeatures::random;
  o.generated_dim = 4;
  o.seed = 3;
  ds = load_dataset(o);
  REQUIRE(ds.feature_dim == 4);
  CHECK(ds.features.size() == 20);
  for (float f : ds.features) CHECK((f >= -1.0f && f < 1.0f));
  CHECK(row(ds, 0) != row(ds, 1));
  // Keyed by original id: vertex 9 keeps its row when another vertex joins the graph.
  const std::vector<float> nine = row(ds, 4);
  o.labels = tmp.write("l2.txt", "9 0\n5 1\n");
  CHECK(row(load_dataset(o), 5) == nine);
  o.seed = 4;
  CHECK(row(load_dataset(o), 5) != nine);
}

TEST_CASE("dataset: one-hot features are refused above 20k vertices", "[dataset][errors]") {
  TempDir tmp;
  std::string edges;
  for (int i = 0; i < 10001; ++i)
    edges += std::to_string(2 * i) + " " + std::to_string(2 * i + 1) + "\n";
  DatasetOptions o = options(tmp.write("e.txt", edges), tmp);
  o.generated = GeneratedFeatures::onehot;
  // 20002^2 floats would be 1.6 GB; 100k vertices (the old bound) 40 GB.
  CHECK_THAT(error_of<OptionError>([&] { load_dataset(o); }), Contains("20002 vertices") &&
                                                                  Contains("more than 20000") &&
                                                                  Contains("degree or random"));
}

TEST_CASE("dataset: cora as it ships (every file gzipped)", "[dataset][cora]") {
  const std::string dir = std::string(DGNN_SOURCE_DIR) + "/datasets/cora";
  TempDir tmp;
  const Dataset ds = load_dataset(options(dir, tmp));
  CHECK(ds.num_vertices() == 2708);
  CHECK(ds.graph.input_edges == 5278);
  CHECK(ds.graph.num_edges() == 10556);
  CHECK(ds.feature_dim == 1433);
  CHECK(ds.num_classes == 7);
  CHECK(ds.train.size() == 140);
  CHECK(ds.val.size() == 500);
  CHECK(ds.test.size() == 1000);
  INFO(ds.description);
  CHECK(ds.graph.self_loops_removed == 0);
  CHECK(ds.graph.duplicates_merged == 0);
}

namespace {

// Cora rewritten in the OGB node-property layout, as ogbn-arxiv unpacks: raw/edge.csv.gz
// ("src,dst"), raw/node-feat.csv.gz and raw/node-label.csv.gz (a row per vertex, no ids),
// raw/num-node-list.csv.gz, split/<name>/{train,valid,test}.csv.gz.
std::string ogb_folder(const TempDir& tmp, const Dataset& cora, const std::string& name) {
  const std::string root = tmp.path(name);
  std::string edges, feat, label;
  const Csr& in = cora.graph.in;
  for (int64_t v = 0; v < in.rows; ++v)
    for (int64_t k = in.offsets[v]; k < in.offsets[v + 1]; ++k)
      if (in.indices[k] < v)  // each undirected edge once, ids as stored (0..2707 = dense)
        edges += std::to_string(in.indices[k]) + "," + std::to_string(v) + "\n";
  for (int64_t v = 0; v < cora.num_vertices(); ++v) {
    for (int64_t j = 0; j < cora.feature_dim; ++j) {
      if (j) feat += ',';
      feat += cora.features[size_t(v * cora.feature_dim + j)] != 0 ? "1.0" : "0.0";
    }
    feat += '\n';
    label += std::to_string(cora.labels[size_t(v)]) + "\n";
  }
  tmp.write_gz(name + "/raw/edge.csv.gz", edges);
  tmp.write_gz(name + "/raw/node-feat.csv.gz", feat);
  tmp.write_gz(name + "/raw/node-label.csv.gz", label);
  tmp.write_gz(name + "/raw/num-node-list.csv.gz", std::to_string(cora.num_vertices()) + "\n");
  auto ids = [&](const std::vector<int32_t>& set) {
    std::string t;
    for (int32_t v : set) t += std::to_string(cora.graph.original_ids[size_t(v)]) + "\n";
    return t;
  };
  tmp.write_gz(name + "/split/planetoid/train.csv.gz", ids(cora.train));
  tmp.write_gz(name + "/split/planetoid/valid.csv.gz", ids(cora.val));
  tmp.write_gz(name + "/split/planetoid/test.csv.gz", ids(cora.test));
  return root;
}

}  // namespace

TEST_CASE("dataset: the OGB node-property layout reads as the same graph", "[dataset][ogb]") {
  TempDir tmp;
  const Dataset cora = load_dataset(options(std::string(DGNN_SOURCE_DIR) + "/datasets/cora", tmp));
  REQUIRE(cora.graph.original_ids.back() == 2707);  // dense id = original id
  const std::string dir = ogb_folder(tmp, cora, "ogbn-cora");
  const DatasetFiles f = dataset_files(options(dir, tmp));
  CHECK(f.by_row);
  CHECK_THAT(f.train, Contains("split/planetoid/train.csv.gz"));
  const Dataset ds = load_dataset(options(dir, tmp));
  CHECK(ds.graph.original_ids == cora.graph.original_ids);
  CHECK(ds.graph.in.offsets == cora.graph.in.offsets);
  CHECK(ds.graph.in.indices == cora.graph.in.indices);
  CHECK(ds.features == cora.features);
  CHECK(ds.labels == cora.labels);
  CHECK(ds.num_classes == 7);
  CHECK(ds.train == cora.train);
  CHECK(ds.val == cora.val);
  CHECK(ds.test == cora.test);

  // A vertex with no edge still counts (num-node-list), and its errors name file:line.
  const std::string small = tmp.path("small");
  tmp.write_gz("small/raw/edge.csv.gz", "0,1\n1,2\n");
  tmp.write_gz("small/raw/node-feat.csv.gz", "0.5,1\n1,2\n3,4\n5,6\n");
  tmp.write_gz("small/raw/node-label.csv.gz", "0\n1\nnan\n1\n");
  tmp.write_gz("small/raw/num-node-list.csv.gz", "4\n");
  const Dataset s4 = load_dataset(options(small, tmp));
  CHECK(s4.num_vertices() == 4);
  CHECK(s4.labels == std::vector<int32_t>{0, 1, -1, 1});
  CHECK(s4.graph.in.degree(3) == 0);
  tmp.write_gz("small/raw/node-feat.csv.gz", "0.5,1\n1,2\n3\n5,6\n");
  CHECK_THAT(error_of<InputError>([&] { load_dataset(options(small, tmp)); }),
             Contains("node-feat.csv.gz:3: expected 2 feature values"));
  tmp.write_gz("small/raw/node-feat.csv.gz", "0.5,1\n1,2\n3,4\n");
  CHECK_THAT(error_of<InputError>([&] { load_dataset(options(small, tmp)); }),
             Contains("node-feat.csv.gz: is 3 x 2, expected 4 x 2: one row per vertex") &&
                 Contains("num-node-list.csv.gz says 4 vertices"));
  tmp.write_gz("small/raw/node-feat.csv.gz", "0.5,1\n1,2\n3,4\n5,6\n");
  tmp.write_gz("small/raw/edge.csv.gz", "0,1\n1,7\n");
  CHECK_THAT(error_of<InputError>([&] { load_dataset(options(small, tmp)); }),
             Contains("edge.csv.gz:2: expected vertex ids below 4"));
  tmp.write_gz("small/raw/edge.csv.gz", "0,1\n");
  // One split missing its valid.csv trained without validation, silently.
  tmp.write_gz("small/split/a/train.csv.gz", "0\n");
  tmp.write_gz("small/split/a/test.csv.gz", "1\n");
  CHECK_THAT(error_of<IoError>([&] { load_dataset(options(small, tmp)); }),
             Contains(small + "/split/a/valid.csv: missing (and no valid.csv.gz)"));
  tmp.write_gz("small/split/a/valid.csv.gz", "3\n");
  CHECK(load_dataset(options(small, tmp)).val == std::vector<int32_t>{3});
  // A relative folder name finds the same files.
  const std::string relative = std::filesystem::relative(small).string();
  REQUIRE(relative.front() != '/');
  CHECK(load_dataset(options(relative, tmp)).val == std::vector<int32_t>{3});
  tmp.write_gz("small/split/b/train.csv.gz", "1\n");
  CHECK_THAT(error_of<IoError>([&] { load_dataset(options(small, tmp)); }),
             Contains("several splits"));
  DatasetOptions chosen = options(small, tmp);  // what the message asks for: all three
  chosen.train = tmp.path("small/split/a/train.csv.gz");
  chosen.val = tmp.path("small/split/a/valid.csv.gz");
  chosen.test = tmp.path("small/split/a/test.csv.gz");
  CHECK(load_dataset(chosen).test == std::vector<int32_t>{1});
}

TEST_CASE("head_subgraph: the first vertices, the edges among them, their rows and splits",
          "[dataset]") {
  // 0 <- 1, 0 <- 3; 1 <- 0, 1 <- 2; 2 <- 1; 3 <- 0: rows 0..1 hold 4 entries, 0..2 five.
  Dataset d;
  d.graph.in = csr_from_coo(4, 4, {0, 0, 1, 1, 2, 3}, {1, 3, 0, 2, 1, 0}, {1, 2, 3, 4, 5, 6});
  d.feature_dim = 2;
  d.features = {0, 1, 10, 11, 20, 21, 30, 31};
  d.labels = {0, 1, 0, 1};
  d.num_classes = 2;
  d.train = {0, 3};
  d.val = {2};
  d.test = {1};
  const Dataset s = head_subgraph(d, 5);  // rows 0..2: entries 1, 0; 0, 2; 1 (3 dropped)
  REQUIRE(s.num_vertices() == 3);
  CHECK(s.graph.in.offsets == std::vector<int64_t>{0, 1, 3, 4});
  CHECK(s.graph.in.indices == std::vector<int32_t>{1, 0, 2, 1});
  CHECK(s.graph.in.values == std::vector<float>{1, 3, 4, 5});
  CHECK(s.features == std::vector<float>{0, 1, 10, 11, 20, 21});
  CHECK(s.labels == std::vector<int32_t>{0, 1, 0});
  CHECK(s.train == std::vector<int32_t>{0});
  CHECK(s.val == std::vector<int32_t>{2});
  CHECK(s.test == std::vector<int32_t>{1});
  CHECK(s.num_classes == 2);
  CHECK(head_subgraph(d, 100).num_vertices() == 4);  // everything fits
  CHECK(head_subgraph(d, 0).num_vertices() == 1);    // at least one row
}

TEST_CASE("dataset: split files hold one id per line, in LF or CRLF lines", "[dataset][errors]") {
  TempDir tmp;
  DatasetOptions o = options(tmp.write("e.txt", "0 1\n1 2\n2 3\n"), tmp);
  o.labels = tmp.write("l.txt", "0 1\r\n1 0\r\n2 1\r\n3 0\r\n");
  o.train = tmp.write("train.txt", "0\n1\n");
  o.val = tmp.write("val.txt", "# val\r\n2\r\n");
  o.test = tmp.write("test.txt", "3 # the last one\n");  // a comment after the id
  const Dataset ds = load_dataset(o);
  CHECK(ds.labels == std::vector<int32_t>{1, 0, 1, 0});
  CHECK(ds.train == std::vector<int32_t>{0, 1});
  CHECK(ds.val == std::vector<int32_t>{2});
  CHECK(ds.test == std::vector<int32_t>{3});
  // Old Mac line ends: one line of ids, its first alone was read (1 of 2 training vertices).
  {
    DatasetOptions c = o;
    c.train = tmp.write("train_cr.txt", "0\r1\r");
    CHECK_THAT(error_of<InputError>([&] { load_dataset(c); }),
               Contains(c.train + ":1: a carriage return without a line feed"));
    c.train = o.train;
    c.labels = tmp.write("l_cr.txt", "# vertex label\r0 1\r1 0\r");
    CHECK_THAT(error_of<InputError>([&] { load_dataset(c); }),
               Contains(c.labels + ":1: a carriage return without a line feed"));
  }
  // Two columns (an id and a label, say): the second one was silently dropped.
  o.val = tmp.write("val2.txt", "2\n3 7\n");
  o.test.clear();
  CHECK_THAT(error_of<InputError>([&] { load_dataset(o); }),
             Contains(o.val + ":2: expected one vertex id per line, found 2 columns"));
  o.val = tmp.write("val3.txt", "2,0\n");
  CHECK_THAT(error_of<InputError>([&] { load_dataset(o); }),
             Contains(o.val + ":1: expected one vertex id per line, found 2 columns"));
}

TEST_CASE("dataset: a label line has two columns, no more", "[dataset][errors]") {
  TempDir tmp;
  DatasetOptions o = options(tmp.write("e.txt", "0 1\n1 2\n"), tmp);
  o.labels = tmp.write("l.txt", "# vertex label\n0 1\n1 0 5\n");
  CHECK_THAT(error_of<InputError>([&] { load_dataset(o); }),
             Contains(o.labels + ":3: expected 'vertex label', found 3 columns"));
  o.labels = tmp.write("l2.txt", "0 1 # first\n1 0\n");
  CHECK(load_dataset(o).labels == std::vector<int32_t>{1, 0, -1});
  o.labels = tmp.write("l3.txt", "0 1\n1 0.5\n");
  CHECK_THAT(error_of<InputError>([&] { load_dataset(o); }),
             Contains(o.labels + ":2: expected an integer label, found '0.5'"));
  // No label at all: every vertex unlabelled, an error far from its cause (a split's), before.
  o.labels = tmp.write("l4.txt", "# vertex label\n");
  CHECK_THAT(error_of<InputError>([&] { load_dataset(o); }),
             Contains(o.labels + ": no labels found (expected 'vertex label' lines)"));
}

TEST_CASE("dataset: npy rows past every vertex the edges and labels name are refused",
          "[dataset][errors]") {
  TempDir tmp;
  DatasetOptions o = options(tmp.write("e.txt", "0 1\n1 2\n"), tmp);
  o.labels = tmp.write("l.txt", "0 1\n1 0\n2 1\n3 0\n");  // vertex 3: labelled, no edge
  // 6 x 2: rows 4 and 5 are vertices of nothing (a matrix of another graph).
  o.features = tmp.path("f6.npy");
  write_npy(o.features, std::vector<float>(12, 1.f).data(), 6, 2);
  CHECK_THAT(error_of<InputError>([&] { load_dataset(o); }),
             Contains(o.features + ": is 6 x 2, expected 4 x 2: rows 4..5 (row i = vertex i) are "
                                   "vertices in no edge") &&
                 Contains("'ID -1'"));
  // A flattened 4 x 2 matrix: 8 vertices of one feature each, before.
  o.features = tmp.path("flat.npy");
  write_npy(o.features, std::vector<float>(8, 1.f).data(), std::vector<int64_t>{8});
  CHECK_THAT(error_of<InputError>([&] { load_dataset(o); }),
             Contains(o.features + ": is 8 (1-D), expected 4 x F (8 = 4 x 2: a flattened "
                                   "matrix? save it 2-D, as [4, 2])"));
  // Too few rows (transposed): the edge line and the matrix's shape.
  o.features = tmp.path("t.npy");
  write_npy(o.features, std::vector<float>(8, 1.f).data(), 2, 4);
  CHECK_THAT(error_of<InputError>([&] { load_dataset(o); }),
             Contains(o.graph + ":2: expected vertex ids below 2 (the rows of " + o.features +
                      ", which is 2 x 4; row i = vertex i), found 2"));
  // What is named keeps its rows: a label line 'ID -1', a vertex of a removed self-loop; and a
  // 1-D array of one value per vertex is one feature.
  o.features = tmp.path("f6.npy");
  o.labels = tmp.write("l2.txt", "0 1\n1 0\n2 1\n3 0\n5 -1\n");
  CHECK(load_dataset(o).num_vertices() == 6);
  o.labels = tmp.write("l3.txt", "0 1\n1 0\n2 1\n");
  o.graph = tmp.write("loop.txt", "0 1\n1 2\n5 5\n");
  CHECK(load_dataset(o).num_vertices() == 6);
  o.features = tmp.path("one.npy");
  write_npy(o.features, std::vector<float>(6, 1.f).data(), std::vector<int64_t>{6});
  CHECK(load_dataset(o).feature_dim == 1);
}

TEST_CASE("dataset: an OGB vertex count is checked before it sizes anything", "[dataset][ogb]") {
  TempDir tmp;
  const std::string d = tmp.path("ogb");
  tmp.write("ogb/raw/edge.csv", "0,1\n1,2\n");
  const std::string count = tmp.path("ogb/raw/num-node-list.csv");
  auto err = [&](const std::string& text) {
    tmp.write("ogb/raw/num-node-list.csv", text);
    return error_of<InputError>([&] { load_dataset(options(d, tmp)); });
  };
  CHECK_THAT(err("3000000000\n"), Contains(count + ":1: the vertex count 3000000000 is more than "
                                                   "dgnn's 2147483647 (vertex ids are 32-bit)"));
  CHECK_THAT(err("3e9\n"),
             Contains(count + ":1: expected the vertex count (an integer), found '3e9'"));
  CHECK_THAT(err("4,5\n"), Contains(count + ":1: expected one number, the vertex count, found 2 "
                                            "columns"));
  CHECK_THAT(err("4\n5\n"), Contains(count + ":2: expected one number, the vertex count, found a "
                                             "second line"));
  CHECK_THAT(err("0\n"), Contains(count + ":1: expected a vertex count > 0, found 0"));
  CHECK_THAT(err(""), Contains(count + ": expected the vertex count, found nothing"));
  // One label row per vertex: 3 rows cannot be 200 million vertices (refused before the graph's
  // arrays are sized by the count).
  tmp.write("ogb/raw/node-label.csv", "0\n1\n0\n");
  CHECK_THAT(err("200000000\n"),
             Contains("node-label.csv: has 3 rows, expected one per vertex (200000000, the count "
                      "in " +
                      count + ")"));
  tmp.write("ogb/raw/num-node-list.csv", "3\n");
  CHECK(load_dataset(options(d, tmp)).num_vertices() == 3);
}

TEST_CASE("read_vertex_features: a .npy has a row per vertex id of the graph, no more",
          "[dataset][errors]") {
  TempDir tmp;
  const std::vector<int64_t> ids = {0, 2, 3};  // a temporal graph's vertices: ids up to 3
  int64_t dim = 0;
  const std::string ok = tmp.path("ok.npy");
  write_npy(ok, std::vector<float>{0, 1, 2, 3, 4, 5, 6, 7}.data(), 4, 2);
  CHECK(read_vertex_features(ok, ids, &dim) == std::vector<float>{0, 1, 4, 5, 6, 7});
  CHECK(dim == 2);
  // Rows past the graph were dropped unseen, before.
  const std::string more = tmp.path("more.npy");
  write_npy(more, std::vector<float>(12, 1.f).data(), 6, 2);
  CHECK_THAT(
      error_of<InputError>([&] { read_vertex_features(more, ids, &dim); }),
      Contains(more + ": is 6 x 2, expected 4 x 2: one row per vertex id 0..3 of the graph"));
  const std::string flat = tmp.path("flat.npy");
  write_npy(flat, std::vector<float>(8, 1.f).data(), std::vector<int64_t>{8});
  CHECK_THAT(error_of<InputError>([&] { read_vertex_features(flat, ids, &dim); }),
             Contains(flat + ": is 8 (1-D), expected 4 x F (8 = 4 x 2: a flattened matrix?"));
  const std::string few = tmp.path("few.npy");
  write_npy(few, std::vector<float>(12, 1.f).data(), 3, 4);
  CHECK_THAT(error_of<InputError>([&] { read_vertex_features(few, ids, &dim); }),
             Contains(few + ": is 3 x 4, expected 4 x 3 (transposed?)") &&
                 Contains("vertex id 3 is in the edges"));
}

TEST_CASE("read_vertex_feature_rows: a .npy's rows are read alone, checked as the whole file",
          "[dataset][errors]") {
  TempDir tmp;
  const std::vector<int64_t> ids = {0, 2, 3, 5, 6};  // dense ids 0..4
  int64_t dim = 0;
  const std::string ok = tmp.path("ok.npy");
  std::vector<float> m(7 * 3);
  for (size_t i = 0; i < m.size(); ++i) m[i] = float(i);
  write_npy(ok, m.data(), 7, 3);
  const std::vector<float> whole = read_vertex_features(ok, ids, &dim);
  for (const std::vector<int64_t>& rows :
       {std::vector<int64_t>{}, {0}, {1, 2}, {0, 2, 4}, {0, 1, 2, 3, 4}, {3, 4}}) {
    INFO("rows " << rows.size());
    const int64_t before = input_bytes_read();
    const std::vector<float> got = read_vertex_feature_rows(ok, ids, rows, &dim);
    CHECK(dim == 3);
    // Only the rows asked for were read (one read per run of consecutive ids).
    CHECK(input_bytes_read() - before == int64_t(rows.size()) * 3 * 4);
    REQUIRE(got.size() == rows.size() * 3);
    for (size_t i = 0; i < rows.size(); ++i)
      for (int c = 0; c < 3; ++c) CHECK(got[i * 3 + size_t(c)] == whole[size_t(rows[i]) * 3 + size_t(c)]);
  }
  // float64 rows convert as the whole read converts them.
  const std::string f8 = tmp.path("f8.npy");
  std::vector<double> d(7 * 2);
  for (size_t i = 0; i < d.size(); ++i) d[i] = 0.5 + double(i);
  {
    std::string hdr = "{'descr': '<f8', 'fortran_order': False, 'shape': (7, 2), }";
    std::string h = hdr;
    while ((10 + h.size() + 1) % 64) h.push_back(' ');
    h.push_back('\n');
    std::string bytes = "\x93NUMPY";
    bytes.push_back(1), bytes.push_back(0);
    bytes.push_back(char(h.size() & 0xff)), bytes.push_back(char(h.size() >> 8));
    bytes += h;
    bytes.append(reinterpret_cast<const char*>(d.data()), d.size() * 8);
    tmp.write("f8.npy", bytes);
  }
  CHECK(read_vertex_feature_rows(f8, ids, {1, 4}, &dim) == std::vector<float>{4.5f, 5.5f, 12.5f, 13.5f});
  // The shape is checked from the header, as read_vertex_features checks it.
  const std::string more = tmp.path("more.npy");
  write_npy(more, std::vector<float>(16, 1.f).data(), 8, 2);
  CHECK_THAT(error_of<InputError>([&] { read_vertex_feature_rows(more, ids, {0}, &dim); }),
             Contains(more + ": is 8 x 2, expected 7 x 2: one row per vertex id 0..6"));
  // A value that is not finite, in a row read: named by its vertex; in a row not read: unseen.
  m[size_t(5 * 3 + 1)] = std::numeric_limits<float>::quiet_NaN();  // vertex 5 = dense 3
  const std::string nan = tmp.path("nan.npy");
  write_npy(nan, m.data(), 7, 3);
  CHECK_THAT(error_of<InputError>([&] { read_vertex_feature_rows(nan, ids, {2, 3}, &dim); }),
             Contains(nan + ": expected finite feature values, row 5 (vertex 5) column 1 holds NaN"));
  CHECK(read_vertex_feature_rows(nan, ids, {0, 4}, &dim).size() == 6);
  // Text (and gzipped) files are read whole and cut.
  const std::string txt = tmp.write("f.txt", "0 1 2\n2 3 4\n3 5 6\n5 7 8\n6 9 10\n");
  CHECK(read_vertex_feature_rows(txt, ids, {1, 3}, &dim) == std::vector<float>{3, 4, 7, 8});
  CHECK(dim == 2);
}
