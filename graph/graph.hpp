#pragma once
// Reading graphs from edge-list files into a relabelled CSR, with the id mapping kept.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "dgnn/graph/csr.hpp"

namespace dgnn {

enum class SelfLoops : uint8_t { keep, remove };
enum class Duplicates : uint8_t { keep, merge };  // merge: one edge, weights summed

// Progress of a long load: a stage name ("read", "parse", "build") and the fraction done.
using ProgressFn = std::function<void(const char* stage, double fraction)>;

struct EdgeListOptions {
  // 0-based columns; -1 = absent. Columns are separated by whitespace or commas.
  int src_col = 0;
  int dst_col = 1;
  int weight_col = -1;
  // Times are int64. A fractional or exponent-written time (1.5, 1.7e9) is rounded down
  // (floor, so -0.5 is -1 and buckets stay half-open); one outside int64 is an InputError.
  int time_col = -1;
  // For messages only: what set time_col when it was not --time-col (a dataset's snapshots.txt).
  std::string time_col_from;
  bool directed = false;  // false: every edge is stored both ways (symmetrised)
  // The source and destination columns are two id spaces (JODIE's and TGB's users and items,
  // both numbered from 0): destination ids are shifted past the largest source id, so item i
  // is vertex max_user + 1 + i.
  bool bipartite = false;
  SelfLoops self_loops = SelfLoops::remove;
  Duplicates duplicates = Duplicates::merge;
  // Binary cache of the parsed graph (see graph/cache.hpp). Empty dir = default location.
  bool use_cache = true;
  std::string cache_dir;
  // Called now and then during a load (not part of the cache key); may be empty.
  ProgressFn progress;
};

// Raw edges as read, in original ids, in file order.
struct EdgeList {
  std::vector<int64_t> src;
  std::vector<int64_t> dst;
  std::vector<float> weight;  // empty unless a weight column was read
  std::vector<int64_t> time;  // empty unless a time column was read
  int64_t lines = 0;          // lines in the file (for messages)
  std::vector<int64_t> line;  // per edge, its line (filled by parse_edge_chunk only)
};

// What a chunk of a text file parsed apart from the rest (ranks reading a file in parts) met
// that depends on the chunks before it: a non-numeric first data line is the file's header only
// when no chunk before holds data, which the reader learns once every chunk is parsed.
struct ChunkHeader {
  int64_t line = 0;        // a non-numeric line skipped as a header (0: none)
  std::string error;       // the InputError that line is when data comes before it
  int64_t first_data = 0;  // the chunk's first data line (0: none)
};

// Parses the edges of [begin, end) (whole lines, ending in '\n' followed by a NUL), lines
// numbered from line0 + 1, appending to `out` (its `line` too); --bipartite is not applied.
// Returns the lines read. InputError as read_edge_list.
int64_t parse_edge_chunk(const char* begin, const char* end, const std::string& path,
                         const EdgeListOptions& opt, int64_t line0, EdgeList& out,
                         ChunkHeader* note);

// InputError (path:LINE, lines numbered from line0 + 1) for a bare '\r' in [begin, end), as
// read_text_file refuses one.
void check_line_ends(const char* begin, const char* end, const std::string& path, int64_t line0);

// Parses an edge-list file (plain or .gz). Lines starting with '#' or '%' are comments; a first
// non-comment line that is not numeric is a header and skipped. Throws InputError naming
// path:LINE for a malformed line, a non-numeric or negative id, or too few columns; IoError for
// a missing or unreadable file; InputError for a file with no edges. Lines end in '\n' or
// "\r\n"; a bare '\r' (old Mac text) is an InputError naming path:LINE, as read_text_file says.
EdgeList read_edge_list(const std::string& path, const EdgeListOptions& opt);

// The whole file, gunzipped when it starts with the gzip magic (what the parser reads).
// IoError when missing or unreadable; InputError for corrupt gzip data. A pipe, FIFO or device
// (`<(zcat g.txt.gz)`, /dev/stdin) is read to its end, as stream_bytes keeps it.
std::string read_file(const std::string& path, const ProgressFn& progress = {});

// The same bytes as read_file, handed to sink() a piece at a time as they are read (inflated),
// so that a reader can pass them on without holding the whole file: InputError for the same
// corrupt or trailing gzip data, IoError as read_file.
void stream_file(const std::string& path,
                 const std::function<void(const char* data, size_t bytes)>& sink);

// read_file for the text formats: lines end in '\n' or "\r\n" (whose '\r' reads as a space). A
// bare '\r' (old Mac line ends) followed by more text is an InputError naming path:LINE: read as
// a space, it would join the whole file into one line and drop all but its first fields.
std::string read_text_file(const std::string& path, const ProgressFn& progress = {});

// True for a path that exists and is neither a regular file nor a directory: a pipe, a FIFO, a
// character device. Such a source can be read only once, so it is never cached by its stamp.
bool is_stream(const std::string& path);

// The raw bytes of such a source (not gunzipped), read to its end on the first call and kept
// for the life of the process, so every reader of the path (parser, input hash) sees the same.
const std::string& stream_bytes(const std::string& path);

// The first edge of `path` with an endpoint id >= limit: its line and that id (line 0 when there
// is none). Names the offending line after a (cached) load shows that some id is out of range.
struct EdgeLocation {
  int64_t line = 0;
  int64_t id = -1;
};
EdgeLocation find_edge_id_at_least(const std::string& path, const EdgeListOptions& opt,
                                   int64_t limit);

struct Graph {
  Csr in;                             // n x n, row = destination; values = weights if weighted
  std::vector<int64_t> original_ids;  // dense id -> id in the file, ascending
  bool directed = false;
  int64_t input_edges = 0;  // edge lines read
  int64_t self_loops_removed = 0;
  int64_t duplicates_merged = 0;

  int64_t num_vertices() const { return in.rows; }
  // Stored directed edges (an undirected edge counts twice).
  int64_t num_edges() const { return in.nnz(); }
  // Dense id of an original id, or -1 when it is not a vertex.
  int64_t dense_id(int64_t original) const;
};

// Relabels to dense ids (ascending original id order) and builds the CSR, applying the
// direction / self-loop / duplicate policies. `extra_ids` are further vertices (e.g. labelled
// vertices without edges) to include; `min_vertices` > 0 makes ids 0..min_vertices-1 vertices
// (the rows of a feature matrix).
Graph build_graph(const EdgeList& edges, const EdgeListOptions& opt,
                  const std::vector<int64_t>& extra_ids = {}, int64_t min_vertices = 0);

// Adds `ids` (original ids, any order, existing ones ignored) as vertices without edges,
// renumbering the dense ids so that they stay in ascending original-id order.
void add_isolated_vertices(Graph& g, std::vector<int64_t> ids);

// read_edge_list + build_graph, through the binary cache when opt.use_cache.
Graph load_graph(const std::string& path, const EdgeListOptions& opt, int64_t min_vertices = 0);

}  // namespace dgnn
