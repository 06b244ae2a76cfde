#pragma once
// A node-classification dataset: graph + features + labels + train/val/test vertex lists,
// loaded from files or a dataset directory (edges.txt|edges.csv[.gz], features.npy|features.txt,
// labels.txt, train.txt, val.txt, test.txt — the layout of shared/datasets/cora).
#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "dgnn/graph/graph.hpp"

namespace dgnn {

// The edge list of a dataset folder: its edges.txt, edges.csv, edges.txt.gz or edges.csv.gz, the
// first that is a file. IoError naming the folder when there is none, or naming the entry when
// one of those names is a folder or another kind of file.
std::string find_edges_file(const std::string& dir);

enum class GeneratedFeatures : uint8_t { degree, onehot, random };

struct DatasetOptions {
  std::string graph;     // an edge-list file or a dataset directory
  std::string features;  // .npy (row i = vertex id i) or text ("vertex f1 f2 ..."); overrides dir
  std::string labels;    // text, "vertex label" per line, -1 = unlabelled; overrides dir
  std::string train, val, test;  // text, one vertex id per line; override dir
  EdgeListOptions edges;
  // When no features are found: what to generate.
  GeneratedFeatures generated = GeneratedFeatures::degree;
  int64_t generated_dim = 64;  // random: columns; degree: one-hot degree buckets (log2)
  // --generate-features or --feature-dim was given: an error when features are found, since
  // nothing would be generated.
  bool generate_given = false;
  // When labels exist but no split files: a random split of labelled vertices by fractions.
  double train_frac = 0.6;
  double val_frac = 0.2;
  bool fracs_given = false;  // an error when the split comes from files
  uint64_t seed = 0;
  // 0 = max label + 1, with labels >= kMaxInferredClasses refused as likely mistakes (an id
  // column read as labels); otherwise labels >= this are errors.
  int32_t num_classes = 0;
};

// Largest label count inferred from the labels alone; more needs DatasetOptions::num_classes.
inline constexpr int32_t kMaxInferredClasses = 1'000'000;

// The files a dataset is read from: a folder's files by name, then the explicit options on top;
// empty = none. The one definition of "what the loader reads", shared with the source hash.
struct DatasetFiles {
  std::string edges, features, labels, train, val, test;
  // The OGB node-property layout (raw/edge.csv.gz, raw/node-feat.csv.gz, raw/node-label.csv.gz,
  // split/<name>/{train,valid,test}.csv.gz): features and labels are one row per vertex in id
  // order, without an id column, and raw/num-node-list.csv.gz (when present) holds the vertex
  // count, so ids 0..count-1 are vertices.
  bool by_row = false;
  std::string vertex_count;
};

// OGB's num-node-list.csv (DatasetFiles::vertex_count): one number, the vertex count, checked
// against 32-bit ids and this machine's memory. InputError naming the file and line otherwise.
int64_t read_vertex_count(const std::string& path);

// A folder's files: edges.txt / .csv (or .gz) with features.npy / .txt, labels.txt, train.txt,
// val.txt, test.txt (each may be .gz), or the OGB layout (DatasetFiles::by_row); the options
// replace any of them. OptionError without a graph; IoError for a folder without edges, or an
// OGB folder with several splits. Checks no file contents.
DatasetFiles dataset_files(const DatasetOptions& opt);

struct Dataset {
  Graph graph;
  int64_t feature_dim = 0;
  std::vector<float> features;  // num_vertices x feature_dim, row-major, dense ids
  std::vector<int32_t> labels;  // per dense id, -1 = unlabelled; empty = no labels
  int32_t num_classes = 0;
  std::vector<int32_t> train, val, test;  // dense ids
  std::string description;                // where each part came from (for `info` and logs)
  // Vertices named in the labels file but in no edge (without a .npy, which fixes the vertex
  // set): added as isolated vertices. Legitimate, but worth showing in case the ids mismatch.
  int64_t labelled_isolated = 0;

  int64_t num_vertices() const { return graph.num_vertices(); }
};

// Throws InputError (path:LINE: what was expected) for bad contents, IoError for missing files,
// OptionError for contradictory options.
Dataset load_dataset(const DatasetOptions& opt);

// The vertices [0, k) of `d` with the edges among them, their features, labels and splits, k the
// most rows whose in-edges number at most `max_entries` (at least one row): a smaller graph of
// the same kind, for timing what a whole epoch of `d` would not fit (dgnn plan's GAT probe).
Dataset head_subgraph(const Dataset& d, int64_t max_entries);

// A seeded random split of the labelled vertices (labels[v] >= 0) into train / val / test by
// fractions (rounded), each list ascending: the split load_dataset makes when no split files
// are given. OptionError for fractions that are negative or sum past 1.
using LabelSplit = std::array<std::vector<int32_t>, 3>;
// OptionError when a random split left a set empty that its fraction asks for (training always;
// validation when val_frac > 0; test when train_frac + val_frac < 1).
void require_split(int64_t train, int64_t val, int64_t test, double train_frac, double val_frac);
LabelSplit split_labelled(const std::vector<int32_t>& labels, double train_frac, double val_frac,
                          uint64_t seed);

// The features load_dataset generates when none are given (opt.generated), for rows
// [first, first + count) of a graph of n vertices: original_id(i) and in_degree(i) of row
// first + i, max_in_degree over the whole graph (degree buckets). Fills *out (count x *dim) and
// returns what was made, for descriptions. OptionError for impossible sizes.
std::string generated_feature_rows(const DatasetOptions& opt, int64_t n, int64_t first,
                                   int64_t count,
                                   const std::function<int64_t(int64_t)>& original_id,
                                   const std::function<int64_t(int64_t)>& in_degree,
                                   int64_t max_in_degree, std::vector<float>* out,
                                   int64_t* dim);

// A features file for vertices whose original ids are `original_ids` (ascending; dense id =
// position): .npy (row i = vertex id i) or text ('vertex f1 f2 ...', every vertex once), as a
// row-major original_ids.size() x *dim matrix in dense ids. InputError for a vertex without a
// row, a row for a vertex not among them, or a value that is not finite.
std::vector<float> read_vertex_features(const std::string& path,
                                        const std::vector<int64_t>& original_ids, int64_t* dim);
// Rows `rows` (dense ids, ascending) of that matrix only, rows.size() x *dim: a plain .npy is read
// at those rows alone (its header checked as above, their values checked finite); text and a
// gzipped .npy are read whole and cut.
std::vector<float> read_vertex_feature_rows(const std::string& path,
                                            const std::vector<int64_t>& original_ids,
                                            const std::vector<int64_t>& rows, int64_t* dim);

// A labels file ("vertex label" per line, -1 = unlabelled) for vertices whose original ids are
// `original_ids` (ascending; dense id = position): one label per dense id, -1 where the file
// names none. InputError (path:LINE) for a vertex id not among them or a bad line. *classes
// receives max label + 1 (or num_classes when > 0).
std::vector<int32_t> read_vertex_labels(const std::string& path,
                                        const std::vector<int64_t>& original_ids,
                                        int32_t num_classes, int32_t* classes);

}  // namespace dgnn
