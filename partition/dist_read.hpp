#pragma once
// The reading machinery of the sharded loaders (partition/dist_load.cpp): each rank's share of a
// text file, errors agreed across ranks, the dense numbering of vertex ids by a sample sort, and
// the row parsers of the small tables. Internal to the library; kept apart from the static
// loader so that a sharded temporal loader can reuse it.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "dgnn/comm/collectives.hpp"
#include "dgnn/common/error.hpp"
#include "dgnn/graph/dataset_rows.hpp"
#include "dgnn/graph/graph.hpp"

namespace dgnn::dist_read {

// ---- errors of the job -----------------------------------------------------------------------

// Runs `local` (work whose collectives, if any, all come before anything it throws) on every
// rank, and makes the InputErrors it throws one error of the job: each rank's first, the one
// with the lowest line (then the lowest rank) raised on every rank alike (AgreedError), so
// that a file wrong on every rank's share prints one line, not P.
template <class Fn>
void agreed(Communicator& comm, Fn&& local) {
  constexpr int64_t kNone = std::numeric_limits<int64_t>::max();
  int64_t line = kNone;
  std::string message;
  try {
    local();
  } catch (const InputError& e) {
    line = e.line();
    message = e.what();
  }
  const std::vector<int64_t> lines = all_values(comm, line);
  const auto first = std::min_element(lines.begin(), lines.end());
  if (*first == kNone) return;
  const int from = int(first - lines.begin());
  int64_t len = int64_t(message.size());
  comm.broadcast(&len, 8, from);
  message.resize(size_t(len));
  comm.broadcast(message.data(), len, from);
  throw AgreedError(message);
}

// ---- text files in parts -------------------------------------------------------------------

struct TextChunk {
  std::string text;    // whole lines, the last ending in '\n'
  int64_t line0 = 0;   // lines of the file before it
  int64_t index = 0;   // its place among all chunks (file order)
};

// Whether every rank can read its own byte range of `path`: a regular file that is not gzipped.
// Decided on rank 0 (one answer for all).
bool splittable(const std::string& path, Communicator& comm);

// This rank's share of a text file, in file order, each chunk checked for bare '\r's; adds its
// bytes to *bytes. A plain file is cut in byte ranges at line boundaries; a .gz or a pipe is
// inflated by rank 0 and dealt out in bounded chunks of whole lines.
std::vector<TextChunk> my_chunks(const std::string& path, Communicator& comm, int64_t* bytes);

// The single-process rule that a header is only the file's first data line, applied once every
// chunk is parsed: a chunk that skipped a header line after a chunk with data is an error.
void check_headers(const std::string& path, const std::vector<TextChunk>& chunks,
                   const std::vector<ChunkHeader>& notes, Communicator& comm);

// The loop of every reader of a text file in parts: parse(chunk, &note) on each of this rank's
// chunks in file order as one agreed step (the first bad line is the job's one error), then
// check_headers on the notes.
template <class Parse>
void parse_chunks(const std::string& path, const std::vector<TextChunk>& chunks, Communicator& comm,
                  Parse&& parse) {
  std::vector<ChunkHeader> notes(chunks.size());
  agreed(comm, [&] {
    for (size_t c = 0; c < chunks.size(); ++c) parse(chunks[c], &notes[c]);
  });
  check_headers(path, chunks, notes, comm);
}

// parse_chunks for a small table: fn(line, fields) for every data row of the chunks
// (rows::for_each_row_in).
template <class Fn>
void for_each_chunk_row(const std::string& path, const std::vector<TextChunk>& chunks,
                        Communicator& comm, Fn&& fn) {
  parse_chunks(path, chunks, comm, [&](const TextChunk& c, ChunkHeader* note) {
    rows::for_each_row_in(c.text.data(), c.text.data() + c.text.size(), path, c.line0, note, fn);
  });
}

// This rank's share of an edge list (`line` filled: each edge's line of the file), --bipartite's
// shift applied; "no edges found" (AgreedInputError) when no rank has one. Collective.
EdgeList read_edges(const std::string& path, const EdgeListOptions& eo, Communicator& comm,
                    int64_t* text_bytes);

// ---- vertex ids ------------------------------------------------------------------------------

// The dense numbering: ascending original id, as the single-process loader numbers. Rank r
// numbers the ids in [splitters[r - 1], splitters[r]) and holds dense ids
// [vtxdist[r], vtxdist[r + 1]), which are its block.
struct IdSpace {
  bool identity = false;           // a .npy fixes the vertices: dense id == original id
  std::vector<int64_t> splitters;  // P - 1 (not identity)
  std::vector<int64_t> mine;       // this rank's original ids, ascending (not identity)
  std::vector<uint8_t> in_edges;   // per id of mine: met in an edge (not identity)
  std::vector<int64_t> vtxdist;
  int64_t n = 0;
  int owner_of_id(int64_t id) const {
    return int(std::upper_bound(splitters.begin(), splitters.end(), id) - splitters.begin());
  }
  int owner_of_dense(int64_t v) const {
    return int(std::upper_bound(vtxdist.begin(), vtxdist.end(), v) - vtxdist.begin()) - 1;
  }
};

// ids: this rank's ids (any order, repeats allowed), each with whether it came from an edge.
// min_vertices > 0: the vertices are 0..min_vertices-1 (identity). Collective.
IdSpace number_ids(std::vector<std::pair<int64_t, uint8_t>> ids, int64_t min_vertices,
                   Communicator& comm);

// Dense ids of original ids every one of which was numbered; *in_edges (optional) whether each
// was met in an edge. Collective.
std::vector<int64_t> lookup(const IdSpace& s, const std::vector<int64_t>& ids, Communicator& comm,
                            std::vector<uint8_t>* in_edges = nullptr);

// ---- per-file readers over this rank's chunks -------------------------------------------------

struct LabelRow {
  int64_t id, line;
  int32_t label;
};
std::vector<LabelRow> parse_labels(const std::string& path, const std::vector<TextChunk>& chunks,
                                   int32_t num_classes, Communicator& comm);

struct TextRows {
  std::vector<int64_t> ids, lines;
  std::vector<float> values;  // ids.size() x dim
  int64_t dim = 0;
};
TextRows parse_text_features(const std::string& path, const std::vector<TextChunk>& chunks,
                             Communicator& comm);

// OGB's one-row-per-vertex tables (DatasetFiles::by_row), over this rank's chunks: the file's
// data rows are numbered in file order across all ranks, row i being vertex i. A matrix without
// an id column (node-feat.csv): ids = the rows' numbers, every row as wide as the file's first.
TextRows parse_row_matrix(const std::string& path, const std::vector<TextChunk>& chunks,
                          Communicator& comm);
// One label a row (node-label.csv; "nan" = unlabelled, as in ogbn-papers100M).
std::vector<LabelRow> parse_row_labels(const std::string& path, const std::vector<TextChunk>& chunks,
                                       int32_t num_classes, Communicator& comm);

struct SplitRow {
  int64_t id, line;
};
std::vector<SplitRow> parse_split(const std::string& path, const std::vector<TextChunk>& chunks,
                                  Communicator& comm);

// Rows `rows` (dense ids, ascending; this rank's vertices) of a vertex feature file for the
// vertices `original_ids` (every vertex's input id, ascending: dense id = position), as
// rows.size() x *dim, with read_vertex_features' checks made for the whole job (one error):
// a plain .npy's rows are read alone on each rank (read_vertex_feature_rows); a text file is
// parsed in shares (my_chunks: 1/P of it on each rank) and a gzipped .npy is inflated on rank 0
// alone, and each row then travels to the rank numbering its dense id's block, which hands it to
// the rank that asked for it. No rank holds more than its share of the matrix besides rank 0's
// inflated .npy.gz. Collective.
std::vector<float> vertex_feature_rows(const std::string& path,
                                       const std::vector<int64_t>& original_ids,
                                       const std::vector<int64_t>& rows, Communicator& comm,
                                       int64_t* dim);

// Every vertex's label from a 'vertex label' file (-1 = unlabelled) for the vertices
// `original_ids` (ascending: dense id = position), on rank 0 alone (empty elsewhere): each rank
// parses its share of the file (my_chunks), and the rows go to rank 0, which places them.
// *classes on every rank: num_classes when > 0, else the largest label + 1. read_vertex_labels'
// checks and messages (a vertex in no edge, a second label of a vertex), one error for the job.
// Collective.
std::vector<int32_t> vertex_labels_on_root(const std::string& path,
                                           const std::vector<int64_t>& original_ids,
                                           int32_t num_classes, Communicator& comm,
                                           int32_t* classes);

}  // namespace dgnn::dist_read
