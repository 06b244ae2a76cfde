// Node-classification datasets: which files make up a dataset, and how features, labels and
// splits are read and checked against the graph. Everything vertex-keyed in the files uses
// original ids; everything in Dataset uses dense ids.
#include "dgnn/graph/dataset.hpp"

#include <unistd.h>

#include <algorithm>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <string_view>
#include <tuple>

#include "dgnn/common/error.hpp"
#include "dgnn/common/format.hpp"
#include "dgnn/common/hash_rng.hpp"
#include "dgnn/graph/dataset_rows.hpp"
#include "dgnn/graph/npy.hpp"

namespace dgnn {

namespace {

namespace fs = std::filesystem;
using rows::columns;
using rows::expect_fields;
using rows::for_each_row;
using rows::parse_number;
using rows::parse_vertex;

// A matrix's shape as its file has it: "3000 x 16", or "43336 (1-D)".
std::string shape_of(const NpyMatrix& m) {
  if (m.shape.size() == 1) return std::to_string(m.rows) + " (1-D)";
  return std::to_string(m.rows) + " x " + std::to_string(m.cols);
}

// "expected N x F" for a feature matrix of `m`'s width and `rows` rows, with a guess at what went
// wrong: a matrix saved flattened, or transposed.
std::string expected_rows(const NpyMatrix& m, int64_t rows) {
  const std::string r = std::to_string(rows);
  if (m.shape.size() != 1 && m.cols == rows && m.rows != rows)
    return "expected " + r + " x " + std::to_string(m.rows) + " (transposed?)";
  if (m.shape.size() != 1) return "expected " + r + " x " + std::to_string(m.cols);
  std::string e = "expected " + r + " x F";
  if (rows > 0 && m.rows > rows && m.rows % rows == 0) {
    const std::string f = std::to_string(m.rows / rows);
    e += " (" + std::to_string(m.rows) + " = " + r + " x " + f +
         ": a flattened matrix? save it 2-D, as [" + r + ", " + f + "])";
  }
  return e;
}

struct TextFeatures {
  std::vector<int64_t> ids;
  std::vector<int64_t> lines;  // the file line of each row
  std::vector<float> rows;     // ids.size() x dim
  int64_t dim = -1;
};

TextFeatures read_text_features(const std::string& path) {
  TextFeatures t;
  int64_t first_line = 0;
  for_each_row(path, [&](int64_t line, const std::vector<std::string_view>& f) {
    if (t.dim < 0) {
      expect_fields(f.size(), 2, path, line, "'vertex f1 f2 ...'");
      t.dim = int64_t(f.size()) - 1;
      first_line = line;
    } else if (int64_t(f.size()) - 1 != t.dim) {
      throw InputError(path, line,
                       "expected " + std::to_string(t.dim) +
                           " feature values after the vertex id (as on line " +
                           std::to_string(first_line) + "), found " + std::to_string(f.size() - 1));
    }
    t.ids.push_back(parse_vertex(f[0], path, line));
    t.lines.push_back(line);
    for (size_t k = 1; k < f.size(); ++k) {
      const float x = parse_number<float>(f[k], path, line, "a number as feature value");
      if (!std::isfinite(x))  // from_chars takes "nan" and "inf"; one poisons every gradient
        throw InputError(path, line,
                         "expected a finite feature value, found '" + std::string(f[k]) + "'");
      t.rows.push_back(x);
    }
  });
  if (t.ids.empty())
    throw InputError(path, 0, "no feature rows found (expected 'vertex f1 f2 ...')");
  return t;
}

// A text matrix of one row per vertex, in id order, no id column (OGB's node-feat.csv): read as
// a .npy would be, row i = vertex i.
NpyMatrix read_row_matrix(const std::string& path) {
  NpyMatrix m;
  int64_t first_line = 0;
  for_each_row(path, [&](int64_t line, const std::vector<std::string_view>& f) {
    if (m.rows == 0) {
      m.cols = int64_t(f.size());
      first_line = line;
    } else if (int64_t(f.size()) != m.cols) {
      throw InputError(path, line,
                       "expected " + std::to_string(m.cols) + " feature values (as on line " +
                           std::to_string(first_line) + "), found " + std::to_string(f.size()));
    }
    for (std::string_view v : f) {
      const float x = parse_number<float>(v, path, line, "a number as feature value");
      if (!std::isfinite(x))
        throw InputError(path, line,
                         "expected a finite feature value, found '" + std::string(v) + "'");
      m.data.push_back(x);
    }
    ++m.rows;
  });
  if (m.rows == 0) throw InputError(path, 0, "no feature rows found (one row per vertex)");
  m.shape = {m.rows, m.cols};
  return m;
}

// One NaN or infinity poisons every gradient it reaches; name the first one.
void check_finite(const NpyMatrix& m, const std::string& path) {
  const auto bad =
      std::find_if(m.data.begin(), m.data.end(), [](float x) { return !std::isfinite(x); });
  if (bad == m.data.end()) return;
  const int64_t i = bad - m.data.begin();
  throw InputError(path, 0,
                   "expected finite feature values, row " + std::to_string(i / m.cols) +
                       " (vertex " + std::to_string(i / m.cols) + ") column " +
                       std::to_string(i % m.cols) + " holds " +
                       (std::isnan(*bad) ? "NaN" : "infinity (or a float64 beyond float32 range)"));
}

struct LabelRow {
  int64_t id, line;
  int32_t label;
};

// by_row: one label per line, row i = vertex i (OGB's node-label.csv; "nan" = unlabelled, as
// in ogbn-papers100M).
std::vector<LabelRow> read_labels(const std::string& path, int32_t num_classes,
                                  bool by_row = false) {
  std::vector<LabelRow> rows;
  for_each_row(path, [&](int64_t line, const std::vector<std::string_view>& f) {
    if (!by_row) expect_fields(f.size(), 2, path, line, "'vertex label'", true);
    if (by_row && f.size() != 1)
      throw InputError(path, line,
                       "expected one label per line (row i = vertex i), found " +
                           std::to_string(f.size()) + " columns");
    const int64_t v = by_row ? int64_t(rows.size()) : parse_vertex(f[0], path, line);
    const int32_t y = rows::parse_label(f[by_row ? 0 : 1], path, line, num_classes, by_row);
    rows.push_back({v, line, y});
  });
  // (An empty label file would leave every vertex unlabelled, an error far from its cause.)
  if (rows.empty())
    throw InputError(path, 0,
                     by_row ? "no labels found (expected one per line, row i = vertex i)"
                            : "no labels found (expected 'vertex label' lines)");
  return rows;
}

// Where each vertex was put by the split files read so far (a vertex in two of them would be
// trained on and evaluated on, or counted twice).
struct SplitSeen {
  std::vector<int8_t> file;   // per dense id: index into paths, -1 = in no split yet
  std::vector<int64_t> line;  // per dense id: its line there
  std::vector<std::string> paths;
};

std::vector<int32_t> read_split(const std::string& path, const Graph& g,
                                const std::vector<int32_t>& labels, SplitSeen& seen) {
  if (seen.file.empty()) {
    seen.file.assign(size_t(g.num_vertices()), -1);
    seen.line.assign(size_t(g.num_vertices()), 0);
  }
  const int8_t me = int8_t(seen.paths.size());
  seen.paths.push_back(path);
  std::vector<int32_t> out;
  for_each_row(path, [&](int64_t line, const std::vector<std::string_view>& f) {
    expect_fields(f.size(), 1, path, line, "one vertex id per line", true);
    const int64_t v = parse_vertex(f[0], path, line);
    const int64_t d = g.dense_id(v);
    if (d < 0)
      throw InputError(path, line, "expected a vertex of the graph, found id " + std::to_string(v));
    if (!labels.empty() && labels[d] < 0)
      throw InputError(path, line,
                       "expected a labelled vertex, vertex " + std::to_string(v) + " has no label");
    if (seen.file[d] == me)
      throw InputError(path, line,
                       "expected each vertex once, vertex " + std::to_string(v) +
                           " is already on line " + std::to_string(seen.line[d]));
    if (seen.file[d] >= 0)
      throw InputError(path, line,
                       "expected train, val and test to be disjoint, vertex " + std::to_string(v) +
                           " is also in " + seen.paths[size_t(seen.file[d])] + " (line " +
                           std::to_string(seen.line[d]) + ")");
    seen.file[d] = me;
    seen.line[d] = line;
    out.push_back(int32_t(d));
  });
  // An empty split would print an accuracy of 0 (or train on nothing) as if it were a result.
  if (out.empty()) throw InputError(path, 0, "no vertex ids found (expected one per line)");
  return out;
}

void random_split(Dataset& ds, const DatasetOptions& opt) {
  LabelSplit sets = split_labelled(ds.labels, opt.train_frac, opt.val_frac, opt.seed);
  ds.train = std::move(sets[0]);
  ds.val = std::move(sets[1]);
  ds.test = std::move(sets[2]);
}

std::string generate_features(Dataset& ds, const DatasetOptions& opt) {
  const Graph& g = ds.graph;
  const int64_t n = g.num_vertices();
  int64_t max_deg = 0;
  for (int64_t v = 0; v < n; ++v) max_deg = std::max(max_deg, g.in.degree(v));
  return generated_feature_rows(
      opt, n, 0, n, [&](int64_t v) { return g.original_ids[size_t(v)]; },
      [&](int64_t v) { return g.in.degree(v); }, max_deg, &ds.features, &ds.feature_dim);
}

}  // namespace

// OGB's num-node-list.csv: one number, the vertex count. It sizes the graph's arrays before any
// edge is read, so a count beyond 32-bit ids, or beyond what this machine can hold (the graph
// alone takes 16 bytes a vertex), is a damaged file: refused, naming the value.
int64_t read_vertex_count(const std::string& path) {
  int64_t count = -1, at = 0;
  for_each_row(path, [&](int64_t line, const std::vector<std::string_view>& f) {
    if (count >= 0 || f.size() != 1)
      throw InputError(path, line,
                       "expected one number, the vertex count, found " +
                           (count >= 0 ? "a second line" : columns(f.size())));
    count = parse_number<int64_t>(f[0], path, line, "the vertex count (an integer)");
    at = line;
  });
  if (count < 0 && at == 0) throw InputError(path, 0, "expected the vertex count, found nothing");
  if (count <= 0)
    throw InputError(path, at, "expected a vertex count > 0, found " + std::to_string(count));
  constexpr int64_t kMaxIds = std::numeric_limits<int32_t>::max();
  if (count > kMaxIds)
    throw InputError(path, at,
                     "the vertex count " + std::to_string(count) + " is more than dgnn's " +
                         std::to_string(kMaxIds) + " (vertex ids are 32-bit)");
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGE_SIZE);
  const __int128 need = __int128(count) * 16, have = __int128(pages) * page;
  if (pages > 0 && page > 0 && need > have)
    throw InputError(path, at,
                     "the vertex count " + std::to_string(count) + " needs " +
                         std::to_string(int64_t(need / 1000000)) +
                         " MB for the graph's arrays alone, more than this machine's " +
                         std::to_string(int64_t(have / 1000000)) + " MB");
  return count;
}

namespace {

// A .npy's rows make ids 0..rows-1 vertices. Rows past every id that the edges and the labels
// name would be vertices of the matrix alone: a matrix of another graph, or a flattened one, far
// more likely than isolated unlabelled vertices (which a label line 'ID -1' keeps).
void check_unnamed_rows(const NpyMatrix& m, const DatasetFiles& p, const EdgeListOptions& opt,
                        const Graph& g, const std::vector<LabelRow>& labels) {
  int64_t named = -1;  // ids are dense ids here: every row is a vertex
  for (const LabelRow& r : labels) named = std::max(named, r.id);
  for (int64_t v = g.in.rows - 1; v > named; --v)
    if (g.in.degree(v) > 0) named = v;
  if (g.directed && named < m.rows - 1)  // (undirected: every source is a destination too)
    for (int32_t s : g.in.indices) named = std::max<int64_t>(named, s);
  if (named >= m.rows - 1) return;
  // A vertex of a removed self-loop has no edge left: the file has the last word.
  if (find_edge_id_at_least(p.edges, opt, named + 1).line > 0) return;
  throw InputError(p.features, 0,
                   "is " + shape_of(m) + ", " + expected_rows(m, named + 1) + ": rows " +
                       std::to_string(named + 1) + ".." + std::to_string(m.rows - 1) +
                       " (row i = vertex i) are vertices in no edge of " + p.edges +
                       " and no label line (a matrix of another graph?); a line 'ID -1' in the "
                       "labels keeps such a vertex");
}

}  // namespace

std::string generated_feature_rows(const DatasetOptions& opt, int64_t n, int64_t first,
                                   int64_t count,
                                   const std::function<int64_t(int64_t)>& original_id,
                                   const std::function<int64_t(int64_t)>& in_degree,
                                   int64_t max_in_degree, std::vector<float>* out,
                                   int64_t* dim) {
  if (opt.generated == GeneratedFeatures::onehot) {
    // n x n floats: 20,000 vertices is already 1.6 GB, before the model's first layer.
    constexpr int64_t kMaxOneHot = 20000;
    if (n > kMaxOneHot)
      throw OptionError("one-hot vertex features need n x n floats: refused for " +
                        std::to_string(n) + " vertices (more than " + std::to_string(kMaxOneHot) +
                        ", " + std::to_string(n * n * 4 / 1000000) +
                        " MB); use --generate-features degree or random, or give features");
    *dim = n;
    out->assign(size_t(count * n), 0.0f);
    for (int64_t v = 0; v < count; ++v) (*out)[size_t(v * n + first + v)] = 1.0f;
    return "one-hot vertex ids";
  }
  if (opt.generated_dim < 1)
    throw OptionError("generated feature dimension must be >= 1, got " +
                      std::to_string(opt.generated_dim));
  if (opt.generated == GeneratedFeatures::random) {
    const int64_t d = opt.generated_dim;
    // Refused up front, not by the allocator after minutes of swapping: training needs the
    // features and more, so at most half of the machine's memory (for the rows made here).
    const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGE_SIZE);
    const __int128 need = __int128(count) * d * 4, have = __int128(pages) * page;
    if (pages > 0 && page > 0 && 2 * need > have)
      throw OptionError("--feature-dim " + std::to_string(d) + ": " + std::to_string(count) +
                        " vertices x " + std::to_string(d) + " random features need " +
                        std::to_string(int64_t(need / 1000000)) + " MB, more than half of " +
                        "this machine's " + std::to_string(int64_t(have / 1000000)) + " MB");
    *dim = d;
    out->resize(size_t(count * d));
    // Keyed by original id, so a vertex gets the same row whatever else is in the graph.
    for (int64_t v = 0; v < count; ++v) {
      const uint64_t key = hash_combine(opt.seed, uint64_t(original_id(v)));
      for (int64_t j = 0; j < d; ++j)
        (*out)[size_t(v * d + j)] = 2.0f * unit_float(hash_combine(key, uint64_t(j))) - 1.0f;
    }
    return "random uniform [-1, 1), " + std::to_string(d) + " columns, seed " +
           std::to_string(opt.seed);
  }
  // Degree buckets: one-hot of floor(log2(in-degree + 1)), capped at generated_dim columns.
  const int64_t d =
      std::min<int64_t>(opt.generated_dim, std::bit_width(uint64_t(max_in_degree) + 1));
  *dim = d;
  out->assign(size_t(count * d), 0.0f);
  for (int64_t v = 0; v < count; ++v) {
    const int64_t b = std::bit_width(uint64_t(in_degree(v)) + 1) - 1;
    (*out)[size_t(v * d + std::min(b, d - 1))] = 1.0f;
  }
  return "one-hot log2 degree buckets, " + std::to_string(d) + " columns";
}

std::string find_edges_file(const std::string& dir) {
  std::error_code ec;
  for (const char* n : {"edges.txt", "edges.csv", "edges.txt.gz", "edges.csv.gz"}) {
    const fs::path p = fs::path(dir) / n;
    if (fs::is_regular_file(p, ec)) return p.string();
    if (fs::exists(p, ec))
      throw IoError(p.string() + ": is " +
                    (fs::is_directory(p, ec) ? "a directory" : "not a regular file") +
                    ", not an edge list");
  }
  throw IoError("dataset folder '" + dir +
                "' has no edges.txt, edges.csv, edges.txt.gz or edges.csv.gz");
}

DatasetFiles dataset_files(const DatasetOptions& opt) {
  if (opt.graph.empty())
    throw OptionError("no graph given (an edge-list file or a dataset folder)");
  DatasetFiles p;
  std::error_code ec;
  if (fs::is_directory(opt.graph, ec)) {
    const fs::path dir(opt.graph);
    // A name that exists but is no regular file (a folder, a FIFO) is refused, as edges.txt is:
    // skipped, it would leave the dataset without its features, labels or split, silently.
    auto file = [&](const fs::path& f, const char* what) -> std::string {
      if (fs::is_regular_file(f, ec)) return f.string();
      if (fs::exists(f, ec))
        throw IoError(f.string() + ": is " +
                      (fs::is_directory(f, ec) ? "a directory" : "not a regular file") + ", not " +
                      what);
      return {};
    };
    // The file an option names, else the folder's first of `names` (each may be gzipped: read in
    // place, as datasets ship compressed).
    auto first = [&](const std::string& given, std::initializer_list<const char*> names,
                     const char* what) -> std::string {
      if (!given.empty()) return given;
      for (const char* n : names)
        if (std::string f = file(dir / n, what); !f.empty()) return f;
      return {};
    };
    // The file an option names, else f or f.gz (OGB's layout: paths below the folder).
    const auto gz = [&](const std::string& given, const fs::path& f, const char* what) {
      if (!given.empty()) return given;
      const std::string plain = file(f, what);
      return plain.empty() ? file(f.string() + ".gz", what) : plain;
    };
    if (!fs::exists(dir / "edges.txt", ec) &&
        !gz({}, dir / "raw" / "edge.csv", "an edge list").empty()) {
      // OGB: what ogbn-arxiv, ogbn-products, ... unpack to.
      p.by_row = true;
      p.edges = gz({}, dir / "raw" / "edge.csv", "an edge list");
      p.features = gz({}, dir / "raw" / "node-feat.csv", "a feature matrix");
      p.labels = gz({}, dir / "raw" / "node-label.csv", "a label file");
      p.vertex_count = gz({}, dir / "raw" / "num-node-list.csv", "a vertex count");
      std::vector<fs::path> splits;
      for (const auto& e : fs::directory_iterator(dir / "split", ec))
        if (e.is_directory(ec)) splits.push_back(e.path());
      std::sort(splits.begin(), splits.end());
      const bool all_given = !opt.train.empty() && !opt.val.empty() && !opt.test.empty();
      if (splits.size() > 1 && !all_given) {
        std::string names;
        for (const fs::path& s : splits) names += (names.empty() ? "" : ", ") + s.string();
        throw IoError(opt.graph + ": several splits (" + names +
                      "); choose one with --train-ids, --val-ids and --test-ids");
      }
      if (splits.size() == 1) {
        // OGB's splits always come as the three: one missing is a damaged or partial download,
        // which would train without validation (or test on nothing) and say nothing.
        for (auto [mine, given, name] : {std::tuple{&p.train, &opt.train, "train.csv"},
                                         {&p.val, &opt.val, "valid.csv"},
                                         {&p.test, &opt.test, "test.csv"}}) {
          *mine = gz(*given, splits[0] / name, "a split file");
          if (mine->empty())
            throw IoError((splits[0] / name).string() + ": missing (and no " + name +
                          ".gz); an OGB split folder holds train.csv, valid.csv and test.csv "
                          "(or give --train-ids, --val-ids and --test-ids)");
        }
      }
      // A features or labels file given by option is in dgnn's own 'vertex ...' format.
      if (!opt.features.empty() || !opt.labels.empty())
        throw OptionError(
            "--features and --labels replace an OGB folder's node files, which are one row per "
            "vertex without ids: give neither, or convert the folder");
    } else {
      p.edges = find_edges_file(opt.graph);
      p.features = first(opt.features,
                         {"features.npy", "features.npy.gz", "features.txt", "features.txt.gz"},
                         "a feature matrix");
      p.labels = first(opt.labels, {"labels.txt", "labels.txt.gz"}, "a label file");
      p.train = first(opt.train, {"train.txt", "train.txt.gz"}, "a split file");
      p.val = first(opt.val, {"val.txt", "val.txt.gz"}, "a split file");
      p.test = first(opt.test, {"test.txt", "test.txt.gz"}, "a split file");
    }
  } else {
    p.edges = opt.graph;
  }
  for (auto [mine, given] : {std::pair{&p.features, &opt.features},
                             {&p.labels, &opt.labels},
                             {&p.train, &opt.train},
                             {&p.val, &opt.val},
                             {&p.test, &opt.test}})
    if (!given->empty()) *mine = *given;
  return p;
}

Dataset load_dataset(const DatasetOptions& opt) {
  const DatasetFiles p = dataset_files(opt);
  Dataset ds;
  std::string desc = "graph " + p.edges;

  // Features first: a .npy's row count makes ids 0..rows-1 vertices and bounds every other id.
  // A .npy, or an OGB folder's node-feat.csv: row i = vertex i.
  const bool npy = !p.features.empty() && (p.by_row || is_npy_file(p.features));
  NpyMatrix mat;
  TextFeatures text;
  int64_t npy_rows = 0;
  if (npy) {
    mat = p.by_row ? read_row_matrix(p.features) : read_npy(p.features);
    npy_rows = mat.rows;
    if (npy_rows == 0)
      throw InputError(p.features, 0, "expected at least one row, the matrix is empty");
    if (mat.cols == 0)
      throw InputError(p.features, 0,
                       "expected at least one feature column, the matrix is " +
                           std::to_string(npy_rows) + " x 0");
    check_finite(mat, p.features);
  } else if (!p.features.empty()) {
    text = read_text_features(p.features);
  }
  int64_t min_vertices = npy_rows;
  if (!p.vertex_count.empty()) {  // OGB's num-node-list.csv: the vertex count
    const int64_t count = read_vertex_count(p.vertex_count);
    if (npy && count != npy_rows)
      throw InputError(p.features, 0,
                       "is " + shape_of(mat) + ", " + expected_rows(mat, count) +
                           ": one row per vertex, and " + p.vertex_count + " says " +
                           std::to_string(count) + " vertices");
    min_vertices = count;
  }
  // Labels before the graph: a label file of one row per vertex checks the vertex count before
  // the count sizes the graph's arrays.
  std::vector<LabelRow> label_rows;
  if (!p.labels.empty()) label_rows = read_labels(p.labels, opt.num_classes, p.by_row);
  if (p.by_row && min_vertices > 0 && !label_rows.empty() &&
      int64_t(label_rows.size()) != min_vertices)
    throw InputError(p.labels, 0,
                     "has " + std::to_string(label_rows.size()) +
                         " rows, expected one per vertex (" + std::to_string(min_vertices) + ", " +
                         (npy ? "the rows of " + p.features : "the count in " + p.vertex_count) +
                         ")");
  ds.graph = load_graph(p.edges, opt.edges, min_vertices);
  const bool bounded = npy || !p.vertex_count.empty();
  if (bounded && ds.graph.original_ids.back() >= min_vertices) {
    const EdgeLocation at = find_edge_id_at_least(p.edges, opt.edges, min_vertices);
    throw InputError(p.edges, at.line,
                     "expected vertex ids below " + std::to_string(min_vertices) + " (" +
                         (npy ? "the rows of " + p.features + ", which is " + shape_of(mat) +
                                    "; row i = vertex i"
                              : "the vertex count in " + p.vertex_count) +
                         "), found " + std::to_string(at.id));
  }

  std::vector<int64_t> extra = text.ids;
  for (const LabelRow& r : label_rows) {
    if (npy && r.id >= npy_rows)
      throw InputError(p.labels, r.line,
                       "expected vertex ids below " + std::to_string(npy_rows) + " (the rows of " +
                           p.features + ", which is " + shape_of(mat) + "), found " +
                           std::to_string(r.id));
    ds.labelled_isolated += ds.graph.dense_id(r.id) < 0;  // (a repeated row is an error below)
    extra.push_back(r.id);
  }
  if (npy && p.vertex_count.empty()) check_unnamed_rows(mat, p, opt.edges, ds.graph, label_rows);
  add_isolated_vertices(ds.graph, std::move(extra));
  const int64_t n = ds.graph.num_vertices();

  if (!p.labels.empty()) {
    ds.labels.assign(size_t(n), -1);
    std::vector<int64_t> line_of(size_t(n), 0);
    int32_t max_label = -1;
    int64_t labelled = 0;
    for (const LabelRow& r : label_rows) {
      const int64_t d = ds.graph.dense_id(r.id);
      if (line_of[d] != 0)
        throw InputError(p.labels, r.line,
                         "expected one label per vertex, vertex " + std::to_string(r.id) +
                             " already has one (line " + std::to_string(line_of[d]) + ")");
      line_of[d] = r.line;
      ds.labels[d] = r.label;
      max_label = std::max(max_label, r.label);
      labelled += r.label >= 0;
    }
    ds.num_classes = opt.num_classes > 0 ? opt.num_classes : max_label + 1;
    desc += "; labels " + p.labels + " (" + std::to_string(ds.num_classes) + " classes, " +
            std::to_string(labelled) + " labelled)";
    if (ds.labelled_isolated > 0)
      desc += "; " + std::to_string(ds.labelled_isolated) + " vert" +
              (ds.labelled_isolated == 1 ? "ex" : "ices") +
              " of the labels in no edge (added without edges)";
  }

  if (opt.generate_given && !p.features.empty())
    throw OptionError(
        "--generate-features and --feature-dim make features when none are given, "
        "but " +
        p.features + " gives them");
  if (npy) {
    // Every vertex id is below npy_rows and all of 0..npy_rows-1 are vertices: dense == original.
    ds.feature_dim = mat.cols;
    ds.features = std::move(mat.data);
    desc += "; features " + p.features + " (" + std::to_string(npy_rows) + " x " +
            std::to_string(ds.feature_dim) + ")";
  } else if (!p.features.empty()) {
    ds.feature_dim = text.dim;
    ds.features.assign(size_t(n * text.dim), 0.0f);
    std::vector<char> have(size_t(n), 0);
    for (size_t i = 0; i < text.ids.size(); ++i) {
      const int64_t d = ds.graph.dense_id(text.ids[i]);
      if (have[d])
        throw InputError(p.features, text.lines[i],
                         "vertex " + std::to_string(text.ids[i]) + " has a second feature row");
      have[d] = 1;
      std::copy_n(text.rows.begin() + int64_t(i) * text.dim, text.dim,
                  ds.features.begin() + d * text.dim);
    }
    for (int64_t d = 0; d < n; ++d)
      if (!have[d])
        throw InputError(p.features, 0,
                         "expected a feature row for every vertex, vertex " +
                             std::to_string(ds.graph.original_ids[d]) + " has none");
    desc += "; features " + p.features + " (" + std::to_string(text.dim) + " columns)";
  } else {
    desc += "; features generated (" + generate_features(ds, opt) + ")";
  }

  if (!p.train.empty() || !p.val.empty() || !p.test.empty()) {
    if (opt.fracs_given)
      throw OptionError(
          "--train-frac and --val-frac split the labelled vertices at random, but "
          "the split comes from files here (" +
          (!p.train.empty() ? p.train
           : !p.val.empty() ? p.val
                            : p.test) +
          ")");
    SplitSeen seen;
    if (!p.train.empty()) ds.train = read_split(p.train, ds.graph, ds.labels, seen);
    if (!p.val.empty()) ds.val = read_split(p.val, ds.graph, ds.labels, seen);
    if (!p.test.empty()) ds.test = read_split(p.test, ds.graph, ds.labels, seen);
    desc += "; split from files";
  } else if (!ds.labels.empty()) {
    random_split(ds, opt);
    desc += "; split random (seed " + std::to_string(opt.seed) + ")";
  }
  if (!ds.train.empty() || !ds.val.empty() || !ds.test.empty())
    desc.append(1, ' ')
        .append(std::to_string(ds.train.size()))
        .append(1, '/')
        .append(std::to_string(ds.val.size()))
        .append(1, '/')
        .append(std::to_string(ds.test.size()));
  const Graph& g = ds.graph;
  ds.description = desc + "; " + std::to_string(n) + " vertices, " + std::to_string(g.num_edges()) +
                   " stored edges (" + (g.directed ? "directed" : "undirected") + ")";
  return ds;
}

std::vector<int32_t> read_vertex_labels(const std::string& path,
                                        const std::vector<int64_t>& original_ids,
                                        int32_t num_classes, int32_t* classes) {
  std::vector<int32_t> labels(original_ids.size(), -1);
  std::vector<int64_t> line_of(original_ids.size(), 0);
  int32_t top = -1;
  for (const LabelRow& r : read_labels(path, num_classes)) {
    const auto it = std::lower_bound(original_ids.begin(), original_ids.end(), r.id);
    if (it == original_ids.end() || *it != r.id)
      throw InputError(path, r.line,
                       "vertex " + std::to_string(r.id) + " is in no edge of the graph");
    const size_t v = size_t(it - original_ids.begin());
    if (line_of[v] > 0)
      throw InputError(path, r.line,
                       "expected one label per vertex, vertex " + std::to_string(r.id) +
                           " is already on line " + std::to_string(line_of[v]));
    line_of[v] = r.line;
    labels[v] = r.label;
    top = std::max(top, r.label);
  }
  if (classes) *classes = num_classes > 0 ? num_classes : top + 1;
  return labels;
}

namespace {

// A feature matrix of shape `m` (its data unread) for vertices whose largest id is
// original_ids.back(): the graph is read first and fixes the vertices, a row for each id up to
// the largest, no more (rows past it would be dropped unseen: a matrix of another graph, or a
// flattened one).
void check_feature_shape(const NpyMatrix& m, const std::vector<int64_t>& original_ids,
                         const std::string& path) {
  const int64_t rows = original_ids.empty() ? 0 : original_ids.back() + 1;
  if (m.rows != rows)
    throw InputError(
        path, 0,
        "is " + shape_of(m) + ", " + expected_rows(m, rows) + ": one row per vertex id 0.." +
            std::to_string(rows - 1) + " of the graph (row i = vertex id i)" +
            (m.rows < rows ? ", and vertex id " + std::to_string(rows - 1) + " is in the edges"
                           : ""));
  if (m.cols == 0)
    throw InputError(path, 0,
                     "expected at least one feature column, the matrix is " + shape_of(m));
}

}  // namespace

std::vector<float> read_vertex_feature_rows(const std::string& path,
                                            const std::vector<int64_t>& original_ids,
                                            const std::vector<int64_t>& rows, int64_t* dim) {
  if (!path.ends_with(".npy") || !std::filesystem::is_regular_file(path)) {
    // Text, or a gzipped .npy: read whole, then cut.
    const std::vector<float> all = read_vertex_features(path, original_ids, dim);
    std::vector<float> out(rows.size() * size_t(*dim));
    for (size_t i = 0; i < rows.size(); ++i)
      std::copy_n(all.begin() + rows[i] * *dim, *dim, out.begin() + int64_t(i) * *dim);
    return out;
  }
  const NpyLayout l = read_npy_layout(path);
  NpyMatrix shape;
  shape.rows = l.rows, shape.cols = l.cols, shape.shape = l.shape;
  check_feature_shape(shape, original_ids, path);
  *dim = l.cols;
  std::vector<int64_t> ids(rows.size());
  for (size_t i = 0; i < rows.size(); ++i) ids[i] = original_ids[size_t(rows[i])];
  std::vector<float> out = read_npy_row_set(path, l, ids);
  for (size_t i = 0; i < out.size(); ++i)
    if (!std::isfinite(out[i])) {
      const int64_t id = ids[i / size_t(l.cols)];
      throw InputError(path, 0,
                       "expected finite feature values, row " + std::to_string(id) + " (vertex " +
                           std::to_string(id) + ") column " +
                           std::to_string(int64_t(i) % l.cols) + " holds " +
                           (std::isnan(out[i]) ? "NaN"
                                               : "infinity (or a float64 beyond float32 range)"));
    }
  return out;
}

std::vector<float> read_vertex_features(const std::string& path,
                                        const std::vector<int64_t>& original_ids, int64_t* dim) {
  const int64_t n = int64_t(original_ids.size());
  std::vector<float> out;
  const bool npy = is_npy_file(path);
  if (npy) {
    NpyMatrix m = read_npy(path);
    check_finite(m, path);
    check_feature_shape(m, original_ids, path);
    *dim = m.cols;
    out.resize(size_t(n * m.cols));
    for (int64_t v = 0; v < n; ++v) {
      const int64_t id = original_ids[size_t(v)];
      std::copy(m.data.begin() + id * m.cols, m.data.begin() + (id + 1) * m.cols,
                out.begin() + v * m.cols);
    }
    return out;
  }
  const TextFeatures t = read_text_features(path);
  *dim = t.dim;
  out.assign(size_t(n * t.dim), 0.f);
  std::vector<char> seen(size_t(n), 0);
  for (size_t i = 0; i < t.ids.size(); ++i) {
    const auto it = std::lower_bound(original_ids.begin(), original_ids.end(), t.ids[i]);
    if (it == original_ids.end() || *it != t.ids[i])
      throw InputError(path, t.lines[i],
                       "vertex " + std::to_string(t.ids[i]) + " is in no edge of the graph");
    const int64_t v = it - original_ids.begin();
    if (seen[size_t(v)])
      throw InputError(path, t.lines[i],
                       "vertex " + std::to_string(t.ids[i]) + " has a second feature row");
    seen[size_t(v)] = 1;
    std::copy(t.rows.begin() + int64_t(i) * t.dim, t.rows.begin() + int64_t(i + 1) * t.dim,
              out.begin() + v * t.dim);
  }
  for (int64_t v = 0; v < n; ++v)
    if (!seen[size_t(v)])
      throw InputError(path, 0,
                       "no feature row for vertex " + std::to_string(original_ids[size_t(v)]) +
                           ", which appears in the edges");
  return out;
}

void require_split(int64_t train, int64_t val, int64_t test, double train_frac, double val_frac) {
  // A set the fractions ask for but rounding left empty would report an accuracy of 0 (or
  // train on nothing) as if it were a result.
  const char* empty = train == 0                               ? "training"
                      : val == 0 && val_frac > 0               ? "validation"
                      : test == 0 && train_frac + val_frac < 1 ? "test"
                                                               : nullptr;
  if (empty)
    throw OptionError("--train-frac " + fmt_double(train_frac) + " and --val-frac " +
                      fmt_double(val_frac) + " of " + std::to_string(train + val + test) +
                      " labelled vertices leave no " + empty +
                      " vertices: label more vertices or change the fractions");
}

LabelSplit split_labelled(const std::vector<int32_t>& labels, double train_frac, double val_frac,
                          uint64_t seed) {
  if (train_frac < 0 || val_frac < 0 || train_frac + val_frac > 1)
    throw OptionError("split fractions must be >= 0 with train + val <= 1 (got train " +
                      std::to_string(train_frac) + ", val " + std::to_string(val_frac) + ")");
  std::vector<int32_t> pool;
  for (size_t v = 0; v < labels.size(); ++v)
    if (labels[v] >= 0) pool.push_back(int32_t(v));
  Rng rng(hash_combine(seed, 0x73706c6974));  // "split": its own stream of the seed
  for (size_t i = pool.size(); i > 1; --i) std::swap(pool[i - 1], pool[rng.below(i)]);
  const size_t total = pool.size();
  const size_t n_train = std::min(total, size_t(std::llround(train_frac * double(total))));
  const size_t n_val = std::min(total - n_train, size_t(std::llround(val_frac * double(total))));
  LabelSplit out;
  out[0].assign(pool.begin(), pool.begin() + n_train);
  out[1].assign(pool.begin() + n_train, pool.begin() + n_train + n_val);
  out[2].assign(pool.begin() + n_train + n_val, pool.end());
  for (auto& s : out) std::sort(s.begin(), s.end());
  return out;
}

Dataset head_subgraph(const Dataset& d, int64_t max_entries) {
  const Csr& in = d.graph.in;
  const int64_t k =
      std::max<int64_t>(1, std::upper_bound(in.offsets.begin(), in.offsets.end(), max_entries) -
                               in.offsets.begin() - 1);
  Dataset s;
  s.feature_dim = d.feature_dim;
  s.num_classes = d.num_classes;
  s.graph.directed = d.graph.directed;
  Csr& c = s.graph.in;
  c.rows = c.cols = k;
  c.offsets.assign(1, 0);
  for (int64_t v = 0; v < k; ++v) {
    for (int64_t e = in.offsets[v]; e < in.offsets[v + 1]; ++e)
      if (in.indices[e] < k) {
        c.indices.push_back(in.indices[e]);
        if (in.weighted()) c.values.push_back(in.values[e]);
      }
    c.offsets.push_back(int64_t(c.indices.size()));
  }
  s.features.assign(d.features.begin(), d.features.begin() + k * d.feature_dim);
  if (!d.labels.empty()) s.labels.assign(d.labels.begin(), d.labels.begin() + k);
  for (auto [from, to] : {std::pair{&d.train, &s.train}, {&d.val, &s.val}, {&d.test, &s.test}})
    for (int32_t v : *from)
      if (v < k) to->push_back(v);
  return s;
}

}  // namespace dgnn
