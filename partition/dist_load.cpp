// Sharded loading (partition/dist_load.hpp): each rank parses its share of every input file,
// vertex ids are numbered by a sample sort, each rank keeps one block of dense ids, the blocks
// are partitioned, and every vertex moves to its part's rank with its edges, features, label and
// split. No step holds more than a rank's share, except where the file format forbids it: a
// gzipped .npy is inflated whole on rank 0, and a random split gathers the labels (4 bytes a
// vertex) on rank 0.
#include "dgnn/partition/dist_load.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "dgnn/comm/collectives.hpp"
#include "dgnn/common/error.hpp"
#include "dgnn/graph/npy.hpp"
#include "dgnn/partition/dist_graph.hpp"
#include "dgnn/partition/dist_read.hpp"

namespace dgnn {

namespace {

using dist_read::agreed;
using dist_read::IdSpace;
using dist_read::LabelRow;
using dist_read::lookup;
using dist_read::my_chunks;
using dist_read::number_ids;
using dist_read::parse_chunks;
using dist_read::parse_labels;
using dist_read::parse_row_labels;
using dist_read::parse_row_matrix;
using dist_read::parse_split;
using dist_read::parse_text_features;
using dist_read::read_edges;
using dist_read::SplitRow;
using dist_read::splittable;
using dist_read::TextChunk;
using dist_read::TextRows;

// ---- read: this rank's share of the inputs ----------------------------------------------------

// A .npy of features. Its shape is read first: its rows fix the vertex set (ids 0..rows-1).
struct NpyFeatures {
  bool plain = false;  // not gzipped: every rank reads its own rows
  NpyLayout layout;    // rows and cols on every rank (plain: where the data starts too)
  NpyMatrix whole;     // a gzipped .npy, inflated whole on rank 0 only
};

NpyFeatures read_npy_shape(const std::string& path, Communicator& comm) {
  const int me = comm.rank();
  NpyFeatures npy;
  npy.plain = splittable(path, comm);
  NpyLayout& layout = npy.layout;
  std::vector<int64_t> shape(3, 0);
  if (npy.plain) {
    // Every rank reads the header: a bad one is every rank's error, one line of the job, not P.
    agreed(comm, [&] { layout = read_npy_layout(path); });
  } else if (me == 0) {
    npy.whole = read_npy(path);
    layout.rows = npy.whole.rows, layout.cols = npy.whole.cols, layout.shape = npy.whole.shape;
  }
  if (me == 0) shape = {layout.rows, layout.cols, int64_t(layout.shape.size())};
  comm.broadcast(shape.data(), 24, 0);
  layout.rows = shape[0], layout.cols = shape[1];
  layout.shape.resize(size_t(shape[2]), 0);
  if (layout.rows == 0)
    throw AgreedInputError(path, 0, "expected at least one row, the matrix is empty");
  if (layout.cols == 0)
    throw AgreedInputError(path, 0,
                     "expected at least one feature column, the matrix is " +
                         std::to_string(layout.rows) + " x 0");
  return npy;
}

// The largest id of this rank's edges; InputError at the first edge with an id of `bound` or
// more, `why` saying what bounds them (run inside agreed).
int64_t edge_ids_below(const DatasetFiles& files, const EdgeList& edges, int64_t bound,
                       const std::string& why) {
  int64_t named = -1;
  for (size_t i = 0; i < edges.src.size(); ++i) {
    const int64_t hi = std::max(edges.src[i], edges.dst[i]);
    if (hi >= bound)
      throw InputError(files.edges, edges.line[i],
                       "expected vertex ids below " + std::to_string(bound) + " (" + why +
                           "), found " + std::to_string(hi));
    named = std::max(named, hi);
  }
  return named;
}

// A .npy bounds every id; its rows must all be named somewhere (check_unnamed_rows).
void check_npy_rows_named(const DatasetFiles& files, const NpyLayout& layout,
                          const EdgeList& edges, const std::vector<LabelRow>& label_rows,
                          Communicator& comm) {
  const int64_t npy_rows = layout.rows;
  int64_t named = -1;
  agreed(comm, [&] {
    named = edge_ids_below(files, edges, npy_rows,
                           "the rows of " + files.features + ", which is " +
                               std::to_string(npy_rows) + " x " + std::to_string(layout.cols) +
                               "; row i = vertex i");
    for (const LabelRow& r : label_rows) {
      if (r.id >= npy_rows)
        throw InputError(files.labels, r.line,
                         "expected vertex ids below " + std::to_string(npy_rows) +
                             " (the rows of " + files.features + "), found " + std::to_string(r.id));
      named = std::max(named, r.id);
    }
  });
  named = global_max(comm, named);
  if (named < npy_rows - 1)
    throw AgreedInputError(files.features, 0,
                     "is " + std::to_string(npy_rows) + " x " + std::to_string(layout.cols) +
                         ", expected " + std::to_string(named + 1) + " x " +
                         std::to_string(layout.cols) + ": rows " + std::to_string(named + 1) +
                         ".." + std::to_string(npy_rows - 1) +
                         " (row i = vertex i) are vertices in no edge of " + files.edges +
                         " and no label line (a matrix of another graph?); a line 'ID -1' in "
                         "the labels keeps such a vertex");
}

// The OGB layout's checks, as load_dataset makes them: the vertex count (num-node-list.csv, read
// by rank 0), the feature rows and the label rows one per vertex, every id below the count.
// Returns the count (0: neither a count file nor features: ids numbered as met).
int64_t check_ogb_rows(const DatasetFiles& files, const EdgeList& edges,
                       const std::vector<LabelRow>& label_rows, const TextRows& text,
                       Communicator& comm) {
  int64_t count = 0;
  if (!files.vertex_count.empty()) {
    agreed(comm, [&] {
      if (comm.rank() == 0) count = read_vertex_count(files.vertex_count);
    });
    comm.broadcast(&count, 8, 0);
  }
  const bool features = !files.features.empty();
  const int64_t feature_rows = features ? global_sum(comm, int64_t(text.ids.size())) : 0;
  const std::string shape = std::to_string(feature_rows) + " x " + std::to_string(text.dim);
  if (features && count > 0 && feature_rows != count)
    throw AgreedInputError(
        files.features, 0,
        "is " + shape + ", expected " + std::to_string(count) + " x " +
            (text.dim == count ? std::to_string(feature_rows) + " (transposed?)"
                               : std::to_string(text.dim)) +
            ": one row per vertex, and " + files.vertex_count + " says " + std::to_string(count) +
            " vertices");
  const bool counted = count > 0;  // by num-node-list.csv
  if (features && !counted) count = feature_rows;
  const int64_t labels = files.labels.empty() ? 0 : global_sum(comm, int64_t(label_rows.size()));
  if (!files.labels.empty() && count > 0 && labels != count)
    throw AgreedInputError(files.labels, 0,
                           "has " + std::to_string(labels) + " rows, expected one per vertex (" +
                               std::to_string(count) + ", " +
                               (features ? "the rows of " + files.features
                                         : "the count in " + files.vertex_count) +
                               ")");
  if (features && !counted) {
    // Rows only: a .npy's checks (every id below the rows, every row named somewhere).
    NpyLayout l;
    l.rows = feature_rows, l.cols = text.dim;
    check_npy_rows_named(files, l, edges, label_rows, comm);
  } else if (counted) {
    agreed(comm, [&] {
      (void)edge_ids_below(files, edges, count,
                           features ? "the rows of " + files.features + ", which is " + shape +
                                          "; row i = vertex i"
                                    : "the vertex count in " + files.vertex_count);
    });
  }
  return count;
}

// ---- number: the dense ids of every id met ----------------------------------------------------

// The numbering of the ids in this rank's edges, labels and feature rows; with a .npy
// (npy_rows > 0) its rows are the vertices and no id is gathered.
IdSpace number_inputs(const EdgeList& edges, const std::vector<LabelRow>& label_rows,
                      const TextRows& text, int64_t npy_rows, Communicator& comm) {
  std::vector<std::pair<int64_t, uint8_t>> all;
  if (npy_rows == 0) {
    all.reserve(2 * edges.src.size() + label_rows.size() + text.ids.size());
    for (size_t i = 0; i < edges.src.size(); ++i)
      all.push_back({edges.src[i], 1}), all.push_back({edges.dst[i], 1});
    for (const LabelRow& r : label_rows) all.push_back({r.id, 0});
    for (int64_t id : text.ids) all.push_back({id, 0});
  }
  return number_ids(std::move(all), npy_rows, comm);
}

// ---- build blocks: the block of dense ids this rank keeps -------------------------------------

struct Block {
  int64_t begin = 0, size = 0;
  DistGraph g;
  std::vector<int64_t> original;  // per vertex
  std::vector<float> features;    // size x dim
  int64_t dim = 0;
  std::vector<int32_t> labels;    // -1 unlabelled (empty: no labels)
  std::vector<int8_t> split;      // 0 none, 1 train, 2 val, 3 test
};

Block block_of(const IdSpace& ids, int me) {
  Block b;
  b.begin = ids.vtxdist[size_t(me)];
  b.size = ids.vtxdist[size_t(me) + 1] - b.begin;
  if (ids.identity) {
    b.original.resize(size_t(b.size));
    std::iota(b.original.begin(), b.original.end(), b.begin);
  } else {
    b.original = ids.mine;
  }
  return b;
}

struct InRec {
  int32_t row, col;
  int64_t line;
  float w;
};

// The block's in-edges (b.g's in-CSR): every edge goes to the owner of its destination (and,
// undirected, of its source). `edges` is freed before the exchange.
void build_in_edges(EdgeList edges, const EdgeListOptions& eo, const IdSpace& ids, Block& b,
                    Communicator& comm) {
  const int p = comm.size(), me = comm.rank();
  auto owner = [&](int64_t v) { return ids.owner_of_dense(v); };
  std::vector<int64_t> ends(edges.src);
  ends.insert(ends.end(), edges.dst.begin(), edges.dst.end());
  const std::vector<int64_t> dense = lookup(ids, ends, comm);
  std::vector<int64_t>().swap(ends);
  const size_t m = edges.src.size();
  std::vector<std::vector<InRec>> out(static_cast<size_t>(p));
  const bool weighted = eo.weight_col >= 0;
  for (size_t i = 0; i < m; ++i) {
    const int32_t s = int32_t(dense[i]), d = int32_t(dense[m + i]);
    if (s == d && eo.self_loops == SelfLoops::remove) continue;
    const float w = weighted ? edges.weight[i] : 1.0f;
    out[size_t(owner(d))].push_back({d, s, edges.line[i], w});
    if (!eo.directed && s != d) out[size_t(owner(s))].push_back({s, d, edges.line[i], w});
  }
  edges = EdgeList{};
  std::vector<InRec> in = route(comm, out);
  std::vector<std::vector<InRec>>().swap(out);
  // The single-process CSR's order: by destination, source, then file order (line).
  std::sort(in.begin(), in.end(), [](const InRec& a, const InRec& c) {
    return std::tie(a.row, a.col, a.line) < std::tie(c.row, c.col, c.line);
  });
  DistGraph& g = b.g;
  g.num_vertices = ids.n;
  g.vtxdist = ids.vtxdist;
  g.rank = me;
  g.in_offsets.assign(size_t(b.size) + 1, 0);
  const bool merge = eo.duplicates == Duplicates::merge;
  const bool any_weight = weighted;
  for (size_t k = 0; k < in.size(); ++k) {
    const InRec& r = in[k];
    if (merge && k > 0 && in[k - 1].row == r.row && in[k - 1].col == r.col) {
      if (any_weight) g.in_weight.back() += r.w;
      continue;
    }
    ++g.in_offsets[size_t(r.row - b.begin) + 1];
    g.in_src.push_back(r.col);
    if (any_weight) g.in_weight.push_back(r.w);
  }
  for (int64_t v = 0; v < b.size; ++v) g.in_offsets[size_t(v) + 1] += g.in_offsets[size_t(v)];
}

// Labels to the owners of their vertices (b.labels). Returns the number of classes; appends the
// labels' part of the description to *desc.
int32_t place_labels(const std::string& path, const std::vector<LabelRow>& label_rows,
                     int32_t num_classes_opt, const IdSpace& ids, Block& b, Communicator& comm,
                     std::string* desc) {
  const int p = comm.size();
  auto owner = [&](int64_t v) { return ids.owner_of_dense(v); };
  int64_t labelled = 0, labelled_isolated = 0;
  std::vector<int64_t> lid;
  for (const LabelRow& r : label_rows) lid.push_back(r.id);
  std::vector<uint8_t> from_edges;
  const std::vector<int64_t> dense = lookup(ids, lid, comm, &from_edges);
  struct Lab {
    int64_t v, line, id;
    int32_t y;
  };
  std::vector<std::vector<Lab>> out(static_cast<size_t>(p));
  int32_t max_label = -1;
  for (size_t i = 0; i < label_rows.size(); ++i) {
    out[size_t(owner(dense[i]))].push_back({dense[i], label_rows[i].line, label_rows[i].id,
                                            label_rows[i].label});
    labelled_isolated += !ids.identity && !from_edges[i];
    max_label = std::max(max_label, label_rows[i].label);
  }
  std::vector<Lab> got = route(comm, out);
  std::sort(got.begin(), got.end(),
            [](const Lab& a, const Lab& c) { return std::tie(a.v, a.line) < std::tie(c.v, c.line); });
  b.labels.assign(size_t(b.size), -1);
  agreed(comm, [&] {
    for (size_t k = 0; k < got.size(); ++k) {
      if (k > 0 && got[k - 1].v == got[k].v)
        throw InputError(path, got[k].line,
                         "expected one label per vertex, vertex " + std::to_string(got[k].id) +
                             " already has one (line " + std::to_string(got[k - 1].line) + ")");
      b.labels[size_t(got[k].v - b.begin)] = got[k].y;
      labelled += got[k].y >= 0;
    }
  });
  labelled = global_sum(comm, labelled);
  labelled_isolated = global_sum(comm, labelled_isolated);
  const int32_t num_classes =
      num_classes_opt > 0 ? num_classes_opt : int32_t(global_max(comm, max_label)) + 1;
  *desc += "; labels " + path + " (" + std::to_string(num_classes) + " classes, " +
           std::to_string(labelled) + " labelled)";
  if (labelled_isolated > 0)
    *desc += "; " + std::to_string(labelled_isolated) + " vert" +
             (labelled_isolated == 1 ? "ex" : "ices") +
             " of the labels in no edge (added without edges)";
  return num_classes;
}

// The block's rows of a .npy (b.features, b.dim): read by rows when plain, else dealt out from
// rank 0's whole matrix (freed then).
void npy_block_features(const std::string& path, NpyFeatures& npy, const IdSpace& ids, Block& b,
                        Communicator& comm) {
  const int p = comm.size(), me = comm.rank();
  b.dim = npy.layout.cols;
  if (npy.plain) {
    b.features = read_npy_rows(path, npy.layout, b.begin, b.begin + b.size);
  } else {
    std::vector<std::vector<float>> out(static_cast<size_t>(p));
    if (me == 0)
      for (int r = 0; r < p; ++r)
        out[size_t(r)].assign(npy.whole.data.begin() + ids.vtxdist[size_t(r)] * b.dim,
                              npy.whole.data.begin() + ids.vtxdist[size_t(r) + 1] * b.dim);
    npy.whole = NpyMatrix{};
    b.features = route(comm, out);
  }
  agreed(comm, [&] {
    for (size_t i = 0; i < b.features.size(); ++i)
      if (!std::isfinite(b.features[i])) {
        const int64_t row = b.begin + int64_t(i) / b.dim;
        throw InputError(path, 0,
                         "expected finite feature values, row " + std::to_string(row) +
                             " (vertex " + std::to_string(row) + ") column " +
                             std::to_string(int64_t(i) % b.dim) + " holds " +
                             (std::isnan(b.features[i]) ? "NaN"
                                                        : "infinity (or a float64 beyond float32 range)"));
      }
  });
}

// The block's rows of a text feature file (b.features, b.dim): every row goes to its vertex's
// owner, which checks that each vertex has exactly one. `text` is freed before the exchange.
void text_block_features(const std::string& path, TextRows text, const IdSpace& ids, Block& b,
                         Communicator& comm) {
  const int p = comm.size();
  auto owner = [&](int64_t v) { return ids.owner_of_dense(v); };
  b.dim = text.dim;
  const std::vector<int64_t> dense = lookup(ids, text.ids, comm);
  std::vector<std::vector<float>> out(static_cast<size_t>(p));
  std::vector<std::vector<int64_t>> head(static_cast<size_t>(p));  // (dense, line, id) each
  for (size_t i = 0; i < text.ids.size(); ++i) {
    const size_t r = size_t(owner(dense[i]));
    head[r].insert(head[r].end(), {dense[i], text.lines[i], text.ids[i]});
    out[r].insert(out[r].end(), text.values.begin() + int64_t(i) * b.dim,
                  text.values.begin() + int64_t(i + 1) * b.dim);
  }
  text = TextRows{};
  const std::vector<int64_t> h = route(comm, head);
  const std::vector<float> vals = route(comm, out);
  b.features.assign(size_t(b.size * b.dim), 0.0f);
  std::vector<int64_t> line_of(size_t(b.size), 0);
  agreed(comm, [&] {
    for (size_t k = 0; 3 * k < h.size(); ++k) {
      const int64_t v = h[3 * k] - b.begin, line = h[3 * k + 1];
      if (line_of[size_t(v)] != 0)
        throw InputError(path, std::max(line, line_of[size_t(v)]),
                         "vertex " + std::to_string(h[3 * k + 2]) + " has a second feature row");
      line_of[size_t(v)] = line;
      std::copy_n(vals.begin() + int64_t(k) * b.dim, b.dim, b.features.begin() + v * b.dim);
    }
  });
  agreed(comm, [&] {  // the lowest rank's first: the lowest id without a row
    for (int64_t v = 0; v < b.size; ++v)
      if (line_of[size_t(v)] == 0)
        throw InputError(path, 0,
                         "expected a feature row for every vertex, vertex " +
                             std::to_string(b.original[size_t(v)]) + " has none");
  });
}

// Generated features, as load_dataset makes them, for the block's rows (b.features, b.dim).
// Returns what generated_feature_rows says of them.
std::string generated_block_features(const DatasetOptions& opt, int64_t n, Block& b,
                                     Communicator& comm) {
  int64_t max_deg = 0;
  for (int64_t v = 0; v < b.size; ++v)
    max_deg = std::max(max_deg, b.g.in_offsets[size_t(v) + 1] - b.g.in_offsets[size_t(v)]);
  max_deg = global_max(comm, max_deg);
  return generated_feature_rows(
      opt, n, b.begin, b.size, [&](int64_t v) { return b.original[size_t(v)]; },
      [&](int64_t v) { return b.g.in_offsets[size_t(v) + 1] - b.g.in_offsets[size_t(v)]; },
      max_deg, &b.features, &b.dim);
}

// The split from the train/val/test files (b.split), checked at the vertices' owners; adds this
// rank's count of each to split_count.
void split_from_files(const DatasetFiles& files, const IdSpace& ids, Block& b, Communicator& comm,
                      int64_t* text_bytes, int64_t split_count[3]) {
  const int p = comm.size();
  const int64_t n = ids.n;
  auto owner = [&](int64_t v) { return ids.owner_of_dense(v); };
  const std::string* paths[3] = {&files.train, &files.val, &files.test};
  struct Seen {
    int64_t v, line, id, file;
  };
  std::vector<std::vector<Seen>> out(static_cast<size_t>(p));
  for (int f = 0; f < 3; ++f) {
    if (paths[f]->empty()) continue;
    const std::vector<SplitRow> rows_f =
        parse_split(*paths[f], my_chunks(*paths[f], comm, text_bytes), comm);
    std::vector<int64_t> sid;
    for (const SplitRow& r : rows_f) sid.push_back(r.id);
    // Ids that are no vertex: checked at the id's numbering rank, which knows them all.
    if (!ids.identity) {
      std::vector<std::vector<int64_t>> ask(static_cast<size_t>(p));
      for (size_t i = 0; i < rows_f.size(); ++i)
        ask[size_t(ids.owner_of_id(sid[i]))].insert(ask[size_t(ids.owner_of_id(sid[i]))].end(),
                                                    {sid[i], rows_f[i].line});
      const std::vector<int64_t> asked = route(comm, ask);
      agreed(comm, [&] {
        for (size_t k = 0; 2 * k < asked.size(); ++k)
          if (!std::binary_search(ids.mine.begin(), ids.mine.end(), asked[2 * k]))
            throw InputError(*paths[f], asked[2 * k + 1],
                             "expected a vertex of the graph, found id " + std::to_string(asked[2 * k]));
      });
    } else {
      agreed(comm, [&] {
        for (size_t i = 0; i < rows_f.size(); ++i)
          if (sid[i] >= n)
            throw InputError(*paths[f], rows_f[i].line,
                             "expected a vertex of the graph, found id " + std::to_string(sid[i]));
      });
    }
    const std::vector<int64_t> dense = lookup(ids, sid, comm);
    for (size_t i = 0; i < rows_f.size(); ++i)
      out[size_t(owner(dense[i]))].push_back({dense[i], rows_f[i].line, sid[i], f});
  }
  std::vector<Seen> got = route(comm, out);
  std::sort(got.begin(), got.end(), [](const Seen& a, const Seen& c) {
    return std::tie(a.v, a.file, a.line) < std::tie(c.v, c.file, c.line);
  });
  agreed(comm, [&] {
    for (size_t k = 0; k < got.size(); ++k) {
      const Seen& s = got[k];
      const std::string& path = *paths[s.file];
      if (!b.labels.empty() && b.labels[size_t(s.v - b.begin)] < 0)
        throw InputError(path, s.line,
                         "expected a labelled vertex, vertex " + std::to_string(s.id) +
                             " has no label");
      if (k > 0 && got[k - 1].v == s.v) {
        const Seen& first = got[k - 1];
        if (first.file == s.file)
          throw InputError(path, s.line,
                           "expected each vertex once, vertex " + std::to_string(s.id) +
                               " is already on line " + std::to_string(first.line));
        throw InputError(path, s.line,
                         "expected train, val and test to be disjoint, vertex " +
                             std::to_string(s.id) + " is also in " + *paths[first.file] +
                             " (line " + std::to_string(first.line) + ")");
      }
      b.split[size_t(s.v - b.begin)] = int8_t(1 + s.file);
      ++split_count[s.file];
    }
  });
}

// A random split over the labels (b.split): split_labelled shuffles the labelled vertices with
// one stream, so rank 0 runs it on every vertex's label (4 bytes a vertex) and hands each block
// its membership back. Adds this rank's count of each set to split_count.
void random_split(const DatasetOptions& opt, const IdSpace& ids, Block& b, Communicator& comm,
                  int64_t split_count[3]) {
  const int p = comm.size(), me = comm.rank();
  std::vector<std::vector<int32_t>> up(static_cast<size_t>(p));
  up[0] = b.labels;
  const std::vector<int32_t> all = route(comm, up);
  std::vector<std::vector<int8_t>> down(static_cast<size_t>(p));
  if (me == 0) {
    const LabelSplit sets = split_labelled(all, opt.train_frac, opt.val_frac, opt.seed);
    std::vector<int8_t> which(size_t(ids.n), 0);
    for (int s = 0; s < 3; ++s)
      for (int32_t v : sets[size_t(s)]) which[size_t(v)] = int8_t(1 + s);
    for (int r = 0; r < p; ++r)
      down[size_t(r)].assign(which.begin() + ids.vtxdist[size_t(r)],
                             which.begin() + ids.vtxdist[size_t(r) + 1]);
  }
  b.split = route(comm, down);
  for (int8_t s : b.split)
    if (s > 0) ++split_count[s - 1];
}

// ---- route to owners: every vertex to its part's rank ----------------------------------------

// A vertex on its way to its part's rank: (gid, original id, in-degree, label, split).
struct VRec {
  int64_t gid, orig, deg;
  int32_t label;
  int32_t split;
};

// What a rank receives of its part: the vertices (ascending gid: blocks arrive in rank order),
// their in-edges (source gid, weight) in that order, and their feature rows.
struct PartShard {
  std::vector<VRec> verts;
  std::vector<int64_t> srcs;
  std::vector<float> ws, feats;
  int64_t dim = 0;
};

// Sends every block vertex, with its in-edges and feature row, to the rank of its part. The
// block's features are freed before the exchange.
PartShard route_to_parts(Block& b, const std::vector<int32_t>& part, bool weighted,
                         Communicator& comm) {
  const int p = comm.size();
  PartShard s;
  std::vector<std::vector<VRec>> vo(static_cast<size_t>(p));
  std::vector<std::vector<int64_t>> so(static_cast<size_t>(p));
  std::vector<std::vector<float>> wo(static_cast<size_t>(p)), fo(static_cast<size_t>(p));
  for (int64_t v = 0; v < b.size; ++v) {
    const size_t q = size_t(part[size_t(v)]);
    const int64_t e0 = b.g.in_offsets[size_t(v)], e1 = b.g.in_offsets[size_t(v) + 1];
    vo[q].push_back({b.begin + v, b.original[size_t(v)], e1 - e0,
                     b.labels.empty() ? -1 : b.labels[size_t(v)], b.split[size_t(v)]});
    so[q].insert(so[q].end(), b.g.in_src.begin() + e0, b.g.in_src.begin() + e1);
    if (weighted) wo[q].insert(wo[q].end(), b.g.in_weight.begin() + e0, b.g.in_weight.begin() + e1);
    fo[q].insert(fo[q].end(), b.features.begin() + v * b.dim, b.features.begin() + (v + 1) * b.dim);
  }
  b.features = {};
  s.verts = route(comm, vo);
  s.srcs = route(comm, so);
  s.ws = route(comm, wo);
  s.feats = route(comm, fo);
  s.dim = b.dim;
  return s;
}

// The part and the in-degree (self loops left out: GCN weights) of every source of a part's
// edges, from its block's rank; the block answers for its own vertices.
struct Sources {
  std::vector<int64_t> ids;  // ascending
  std::vector<int64_t> part, deg;
  size_t index(int64_t u) const {
    return size_t(std::lower_bound(ids.begin(), ids.end(), u) - ids.begin());
  }
};

Sources source_info(const std::vector<int64_t>& srcs, const Block& b,
                    const std::vector<int32_t>& part, const IdSpace& ids, Communicator& comm) {
  Sources out;
  std::vector<int64_t>& src_ids = out.ids;
  src_ids = srcs;
  std::sort(src_ids.begin(), src_ids.end());
  src_ids.erase(std::unique(src_ids.begin(), src_ids.end()), src_ids.end());
  // Each source's block answers its part and its in-degree without self loops.
  const std::vector<int64_t> got = ask_owners(
      src_ids, 2, [&](int64_t v) { return ids.owner_of_dense(v); },
      [&](int64_t u, int64_t* answer) {
        const int64_t v = u - b.begin;
        int64_t deg = 0;
        for (int64_t e = b.g.in_offsets[size_t(v)]; e < b.g.in_offsets[size_t(v) + 1]; ++e)
          deg += b.g.in_src[size_t(e)] != u;
        answer[0] = part[size_t(v)];
        answer[1] = deg;
      },
      comm);
  out.part.resize(src_ids.size());
  out.deg.resize(src_ids.size());
  for (size_t i = 0; i < src_ids.size(); ++i) out.part[i] = got[2 * i], out.deg[i] = got[2 * i + 1];
  return out;
}

// ---- cut the local part -----------------------------------------------------------------------

// The LocalPart of this rank's shard, cut as extract_part does: owned (interior, then boundary),
// halo by (part, id), the halo plan, and the owned vertices' features, labels (has_labels) and
// split. The job-wide counts (classes, split sizes) are the caller's to fill in.
LocalPart cut_local_part(const PartShard& shard, const Sources& src, bool weighted,
                         bool has_labels, int64_t n, Communicator& comm) {
  const int p = comm.size(), me = comm.rank();
  const std::vector<VRec>& verts = shard.verts;
  const std::vector<int64_t>& srcs = shard.srcs;
  const std::vector<float>& ws = shard.ws;
  const std::vector<float>& feats = shard.feats;
  const int64_t dim = shard.dim;
  const std::vector<int64_t>& src_part = src.part;
  const std::vector<int64_t>& src_deg = src.deg;
  auto src_index = [&](int64_t u) { return src.index(u); };

  LocalPart lp;
  lp.rank = me;
  lp.parts = p;
  lp.global_vertices = n;
  const size_t nv = verts.size();  // ascending gid: blocks arrive in rank order
  std::vector<int64_t> first_edge(nv + 1, 0);
  for (size_t i = 0; i < nv; ++i) first_edge[i + 1] = first_edge[i] + verts[i].deg;
  std::vector<size_t> interior, boundary;
  for (size_t i = 0; i < nv; ++i) {
    bool remote = false;
    for (int64_t e = first_edge[i]; e < first_edge[i + 1] && !remote; ++e)
      remote = src_part[src_index(srcs[size_t(e)])] != me;
    (remote ? boundary : interior).push_back(i);
  }
  std::vector<size_t> order(interior);
  order.insert(order.end(), boundary.begin(), boundary.end());
  lp.n_owned = int64_t(nv);
  // Local ids: owned by gid (binary search over verts' ascending gids), halo after.
  std::vector<int64_t> local_of_owned(nv);
  for (size_t k = 0; k < order.size(); ++k) local_of_owned[order[k]] = int64_t(k);
  std::vector<int64_t> halo;
  for (size_t i : boundary)
    for (int64_t e = first_edge[i]; e < first_edge[i + 1]; ++e)
      if (src_part[src_index(srcs[size_t(e)])] != me) halo.push_back(srcs[size_t(e)]);
  std::sort(halo.begin(), halo.end());
  halo.erase(std::unique(halo.begin(), halo.end()), halo.end());
  std::stable_sort(halo.begin(), halo.end(), [&](int64_t a, int64_t c) {
    return src_part[src_index(a)] < src_part[src_index(c)];
  });
  std::vector<std::pair<int64_t, int32_t>> halo_local(halo.size());
  for (size_t h = 0; h < halo.size(); ++h)
    halo_local[h] = {halo[h], int32_t(lp.n_owned + int64_t(h))};
  std::sort(halo_local.begin(), halo_local.end());
  auto owned_local = [&](int64_t u) -> int32_t {
    const auto it = std::lower_bound(verts.begin(), verts.end(), u,
                                     [](const VRec& r, int64_t x) { return r.gid < x; });
    DGNN_CHECK(it != verts.end() && it->gid == u, Error,
               "sharded load: vertex " + std::to_string(u) + " is not owned here");
    return int32_t(local_of_owned[size_t(it - verts.begin())]);
  };
  auto local_of = [&](int64_t u) -> int32_t {
    if (src_part[src_index(u)] == me) return owned_local(u);
    return std::lower_bound(halo_local.begin(), halo_local.end(), std::make_pair(u, int32_t(-1)))
        ->second;
  };
  for (size_t i : order) lp.global_ids.push_back(verts[i].gid);
  lp.global_ids.insert(lp.global_ids.end(), halo.begin(), halo.end());
  for (size_t i : order) lp.original_ids.push_back(verts[i].orig);

  Csr& in = lp.local_in;
  in.rows = lp.n_owned;
  in.cols = lp.n_owned + int64_t(halo.size());
  in.offsets.assign(size_t(in.rows) + 1, 0);
  for (size_t k = 0; k < order.size(); ++k) in.offsets[k + 1] = in.offsets[k] + verts[order[k]].deg;
  in.indices.resize(size_t(in.offsets.back()));
  if (weighted) in.values.resize(in.indices.size());
  std::vector<std::pair<int32_t, float>> row;
  for (size_t k = 0; k < order.size(); ++k) {
    const size_t i = order[k];
    row.clear();
    for (int64_t e = first_edge[i]; e < first_edge[i + 1]; ++e)
      row.emplace_back(local_of(srcs[size_t(e)]), weighted ? ws[size_t(e)] : 1.0f);
    std::sort(row.begin(), row.end());
    for (size_t j = 0; j < row.size(); ++j) {
      in.indices[size_t(in.offsets[k]) + j] = row[j].first;
      if (weighted) in.values[size_t(in.offsets[k]) + j] = row[j].second;
    }
  }
  for (int64_t u : halo) lp.halo_in_degree.push_back(src_deg[src_index(u)]);

  // The halo plan: each rank tells each peer which of the peer's vertices it needs (its halo
  // rows from there, ascending gid), and the peer sends those rows.
  {
    std::vector<std::vector<int64_t>> need(static_cast<size_t>(p));
    std::vector<std::vector<int32_t>> recv(static_cast<size_t>(p));
    for (size_t h = 0; h < halo.size(); ++h) {
      const size_t q = size_t(src_part[src_index(halo[h])]);
      need[q].push_back(halo[h]);
      recv[q].push_back(int32_t(lp.n_owned + int64_t(h)));
    }
    std::vector<int64_t> from;
    const std::vector<int64_t> asked = route(comm, need, &from);
    size_t at = 0;
    for (int q = 0; q < p; ++q) {
      std::vector<int32_t> send;
      for (int64_t k = 0; k < from[size_t(q)]; ++k, ++at) send.push_back(owned_local(asked[at]));
      if (send.empty() && recv[size_t(q)].empty()) continue;
      lp.plan.peers.push_back(q);
      lp.plan.send_rows.push_back(std::move(send));
      lp.plan.recv_rows.push_back(std::move(recv[size_t(q)]));
    }
  }

  lp.feature_dim = dim;
  lp.features.resize(size_t(lp.n_owned * dim));
  for (size_t k = 0; k < order.size(); ++k)
    std::copy_n(feats.begin() + int64_t(order[k]) * dim, dim, lp.features.begin() + int64_t(k) * dim);
  if (has_labels)
    for (size_t i : order) lp.labels.push_back(verts[i].label);
  for (size_t k = 0; k < order.size(); ++k) {
    const int32_t s = verts[order[k]].split;
    if (s == 1) lp.train.push_back(int32_t(k));
    if (s == 2) lp.val.push_back(int32_t(k));
    if (s == 3) lp.test.push_back(int32_t(k));
  }
  return lp;
}

}  // namespace

std::vector<int64_t> ordered_positions(const std::vector<int64_t>& ids, Communicator& comm,
                                       int64_t* total) {
  std::vector<std::pair<int64_t, uint8_t>> tagged;
  tagged.reserve(ids.size());
  for (int64_t id : ids) tagged.push_back({id, 1});
  const IdSpace space = number_ids(std::move(tagged), 0, comm);
  if (total) *total = space.n;
  return lookup(space, ids, comm);
}

LocalPart load_sharded_part(const DatasetOptions& opt, const PartitionOptions& popt_in,
                            Communicator& comm, ShardedLoad* info) {
  const int p = comm.size(), me = comm.rank();
  const DatasetFiles files = dataset_files(opt);
  const EdgeListOptions& eo = opt.edges;
  int64_t text_bytes = 0;
  std::string desc = "graph " + files.edges;

  // Read. Features first: a plain .npy's header fixes the vertex set (ids 0..rows-1).
  std::optional<NpyFeatures> npy;
  if (!files.features.empty() && is_npy_file(files.features))
    npy = read_npy_shape(files.features, comm);
  const int64_t npy_rows = npy ? npy->layout.rows : 0;
  if (opt.generate_given && !files.features.empty())
    throw OptionError(
        "--generate-features and --feature-dim make features when none are given, but " +
        files.features + " gives them");
  const bool split_files = !files.train.empty() || !files.val.empty() || !files.test.empty();
  if (split_files && opt.fracs_given)
    throw OptionError(
        "--train-frac and --val-frac split the labelled vertices at random, but the split comes "
        "from files here (" +
        (!files.train.empty() ? files.train : !files.val.empty() ? files.val : files.test) + ")");
  EdgeList edges = read_edges(files.edges, eo, comm, &text_bytes);
  std::vector<LabelRow> label_rows;
  if (!files.labels.empty()) {
    const std::vector<TextChunk> chunks = my_chunks(files.labels, comm, &text_bytes);
    label_rows = files.by_row ? parse_row_labels(files.labels, chunks, opt.num_classes, comm)
                              : parse_labels(files.labels, chunks, opt.num_classes, comm);
  }
  TextRows text;
  if (!files.features.empty() && !npy) {
    const std::vector<TextChunk> chunks = my_chunks(files.features, comm, &text_bytes);
    text = files.by_row ? parse_row_matrix(files.features, chunks, comm)
                        : parse_text_features(files.features, chunks, comm);
  }
  if (npy) check_npy_rows_named(files, npy->layout, edges, label_rows, comm);
  // The OGB layout: ids 0..count-1 are the vertices (count: num-node-list.csv, else the feature
  // rows), as a .npy's rows are.
  const int64_t bound = files.by_row ? check_ogb_rows(files, edges, label_rows, text, comm) : npy_rows;

  // Number the ids, and build this rank's block: its in-edges, the symmetrised structure the
  // partitioner cuts, and its vertices' labels, features and split.
  const IdSpace ids = number_inputs(edges, label_rows, text, bound, comm);
  const int64_t n = ids.n;
  Block b = block_of(ids, me);
  build_in_edges(std::move(edges), eo, ids, b, comm);
  const int64_t stored_edges = global_sum(comm, int64_t(b.g.in_src.size()));
  symmetrise_blocks(b.g, eo.directed, comm);
  int32_t num_classes = 0;
  if (!files.labels.empty())
    num_classes = place_labels(files.labels, label_rows, opt.num_classes, ids, b, comm, &desc);
  // A plain .npy's rows are read after the partition (below), so that they are not held beside
  // the partitioner's working memory (PT-Scotch's is the load's peak: SBM 1M x 128 features at 8
  // ranks, 64 of a rank's 700 MB). Any other is dealt out from rank 0 now, which frees it.
  const bool npy_later = npy && npy->plain;
  if (npy) {
    if (!npy_later) npy_block_features(files.features, *npy, ids, b, comm);
    desc += "; features " + files.features + " (" + std::to_string(npy_rows) + " x " +
            std::to_string(npy->layout.cols) + ")";
  } else if (!files.features.empty()) {
    text_block_features(files.features, std::move(text), ids, b, comm);
    desc += "; features " + files.features + " (" + std::to_string(b.dim) + " columns)";
  } else {
    desc += "; features generated (" + generated_block_features(opt, n, b, comm) + ")";
  }
  b.split.assign(size_t(b.size), 0);
  int64_t split_count[3] = {0, 0, 0};
  if (split_files) {
    split_from_files(files, ids, b, comm, &text_bytes, split_count);
    desc += "; split from files";
  } else if (!b.labels.empty()) {
    random_split(opt, ids, b, comm, split_count);
    desc += "; split random (seed " + std::to_string(opt.seed) + ")";
  }
  comm.allreduce_sum(split_count, 3);
  if (split_files || !b.labels.empty())
    desc += " " + std::to_string(split_count[0]) + "/" + std::to_string(split_count[1]) + "/" +
            std::to_string(split_count[2]);
  desc += "; " + std::to_string(n) + " vertices, " + std::to_string(stored_edges) +
          " stored edges (" + (eo.directed ? "directed" : "undirected") + ")";
  if (!files.labels.empty() && num_classes <= 0)
    throw AgreedInputError(files.labels, 0, "no labelled vertex (every label is -1)");

  // Partition the blocks.
  PartitionOptions popt = popt_in;
  popt.parts = p;
  if (p > n)
    throw OptionError("--parts " + std::to_string(p) + " exceeds the " + std::to_string(n) +
                      " vertices");
  std::vector<std::vector<int64_t>> balance;
  if (popt.balance_train) {  // the training vertices as a balance column
    balance.emplace_back(size_t(b.size), 0);
    for (int64_t v = 0; v < b.size; ++v) balance[0][size_t(v)] = b.split[size_t(v)] == 1;
    popt.balance_train = false;
  }
  if (info) info->partition_gather_bytes =
      popt.method == Partitioner::metis ? metis_gather_bytes(b.g, comm, popt, balance.size()) : 0;
  const std::vector<int32_t> part = partition_blocks_releasing(b.g, popt, comm, balance);
  if (npy_later) npy_block_features(files.features, *npy, ids, b, comm);

  // Route every vertex to its part's rank, learn its sources' parts and degrees, and cut the
  // LocalPart.
  const bool weighted = eo.weight_col >= 0;
  const PartShard shard = route_to_parts(b, part, weighted, comm);
  const Sources sources = source_info(shard.srcs, b, part, ids, comm);
  LocalPart lp = cut_local_part(shard, sources, weighted, !files.labels.empty(), n, comm);
  lp.num_classes = num_classes;
  lp.global_train = split_count[0];
  lp.global_val = split_count[1];
  lp.global_test = split_count[2];

  if (info) {
    info->description = desc;
    info->vertices = n;
    info->stored_edges = stored_edges;
    info->text_bytes = text_bytes;
    info->max_text_bytes = global_max(comm, text_bytes);
  }
  return lp;
}

}  // namespace dgnn
