// Sharded loading (partition/dist_load.hpp): each rank parses its share of every input file,
// vertex ids are numbered by a sample sort, each rank keeps one block of dense ids, the blocks
// are partitioned, and every vertex moves to its part's rank with its edges, features, label and
// split. No step holds more than a rank's share, except where the file format forbids it: a
// gzipped .npy is inflated whole on rank 0, and a random split gathers the labels (4 bytes a
// vertex) on rank 0.
#include "dgnn/partition/dist_load.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <tuple>

#include "dgnn/comm/collectives.hpp"
#include "dgnn/common/error.hpp"
#include "dgnn/common/hash_rng.hpp"
#include "dgnn/common/io_stats.hpp"
#include "dgnn/graph/dataset_rows.hpp"
#include "dgnn/graph/input_files.hpp"
#include "dgnn/graph/npy.hpp"
#include "dgnn/partition/dist_graph.hpp"

namespace dgnn {

namespace {

// ---- collectives on typed values -----------------------------------------------------------

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

// Chunk size for the files one rank deals out (a .gz or a pipe); small values exercise the
// chunked paths in tests (DGNN_CHUNK_BYTES).
int64_t chunk_bytes() {
  if (const char* e = std::getenv("DGNN_CHUNK_BYTES")) {
    const long long v = std::atoll(e);
    if (v >= 16) return v;
  }
  return int64_t(8) << 20;
}

struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

void pread_all(int fd, const std::string& path, char* to, int64_t bytes, int64_t at) {
  while (bytes > 0) {
    const ssize_t got = ::pread(fd, to, size_t(std::min<int64_t>(bytes, int64_t(1) << 30)), at);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) throw IoError("cannot read '" + path + "': " + std::strerror(got < 0 ? errno : EIO));
    count_input_bytes(got);
    to += got, at += got, bytes -= got;
  }
}

// Whether every rank can read its own byte range of `path`: a regular file that is not gzipped.
// Decided on rank 0 (one answer for all).
bool splittable(const std::string& path, Communicator& comm) {
  int64_t ok = 0;
  if (comm.rank() == 0) {
    struct stat st {};
    if (::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && !is_stream(path)) {
      Fd f;
      f.fd = ::open(path.c_str(), O_RDONLY);
      unsigned char magic[2] = {0, 0};
      ok = f.fd >= 0 && !(::pread(f.fd, magic, 2, 0) == 2 && magic[0] == 0x1f && magic[1] == 0x8b);
    }
  }
  comm.broadcast(&ok, 8, 0);
  return ok != 0;
}

// This rank's byte range of a plain file: the lines whose first byte lies in
// [size * rank / P, size * (rank + 1) / P). Reads the range and at most one line past each end.
TextChunk my_range(const std::string& path, Communicator& comm) {
  Fd f;
  f.fd = ::open(path.c_str(), O_RDONLY);
  if (f.fd < 0) throw IoError("cannot open '" + path + "': " + std::strerror(errno));
  note_input(f.fd, path);
  struct stat st {};
  if (::fstat(f.fd, &st) != 0) throw IoError("cannot read '" + path + "': " + std::strerror(errno));
  const int64_t size = st.st_size, p = comm.size(), r = comm.rank();
  // The first line start at or after x: x itself when byte x - 1 ends a line.
  auto line_start = [&](int64_t x) -> int64_t {
    if (x <= 0) return 0;
    char buf[4096];
    for (int64_t at = x - 1; at < size; at += int64_t(sizeof buf)) {
      const int64_t n = std::min<int64_t>(int64_t(sizeof buf), size - at);
      pread_all(f.fd, path, buf, n, at);
      if (const void* nl = std::memchr(buf, '\n', size_t(n)))
        return at + (static_cast<const char*>(nl) - buf) + 1;
    }
    return size;
  };
  const int64_t lo = size * r / p, hi = size * (r + 1) / p;
  const int64_t begin = line_start(lo), end = r + 1 == p ? size : line_start(hi);
  TextChunk c;
  c.index = r;
  if (end > begin) {
    c.text.resize(size_t(end - begin));
    pread_all(f.fd, path, c.text.data(), end - begin, begin);
    if (c.text.back() != '\n') c.text.push_back('\n');
  }
  const std::vector<int64_t> lines =
      all_values(comm, int64_t(std::count(c.text.begin(), c.text.end(), '\n')));
  c.line0 = std::accumulate(lines.begin(), lines.begin() + r, int64_t(0));
  return c;
}

// A file no rank can split (gzipped, or a pipe): rank 0 inflates it (stream_file: the same
// checks of the gzip data as one process makes) and deals chunks of whole lines round-robin, P
// at a time, so it holds about P + 1 chunks at most.
std::vector<TextChunk> dealt_chunks(const std::string& path, Communicator& comm) {
  const int p = comm.size(), me = comm.rank();
  const size_t want = size_t(chunk_bytes());
  std::vector<TextChunk> mine;
  int64_t round = 0, lines_before = 0;
  // One round: rank 0's chunks (significant there) to their ranks; true when it was the last.
  auto run_round = [&](std::vector<std::string>& deal, bool last) {
    std::vector<int64_t> meta(size_t(2 * p + 1), 0);  // sizes, first lines, last
    if (me == 0) {
      for (int k = 0; k < p; ++k) {
        const std::string& c = deal[size_t(k)];
        meta[size_t(k)] = int64_t(c.size());
        meta[size_t(p + k)] = lines_before;
        lines_before += std::count(c.begin(), c.end(), '\n');
      }
      meta[size_t(2 * p)] = last;
    }
    comm.broadcast(meta.data(), int64_t(meta.size()) * 8, 0);
    std::vector<int64_t> sc(size_t(p), 0), sd(size_t(p), 0), rc(size_t(p), 0), rd(size_t(p), 0);
    std::string send;
    if (me == 0)
      for (int k = 0; k < p; ++k) {
        sd[size_t(k)] = int64_t(send.size());
        sc[size_t(k)] = meta[size_t(k)];
        send += deal[size_t(k)];
        std::string().swap(deal[size_t(k)]);
      }
    TextChunk c;
    c.text.resize(size_t(meta[size_t(me)]));
    c.line0 = meta[size_t(p + me)];
    c.index = round * p + me;
    rc[0] = meta[size_t(me)];
    comm.alltoallv(send.data(), sc, sd, c.text.data(), rc, rd);
    if (!c.text.empty()) mine.push_back(std::move(c));
    ++round;
    return meta[size_t(2 * p)] != 0;
  };
  if (me != 0) {
    std::vector<std::string> none(static_cast<size_t>(p));
    while (!run_round(none, false)) {
    }
    return mine;
  }
  // Rank 0: whole lines of about `want` bytes off the front of what was inflated so far.
  std::string pending;
  size_t start = 0;  // pending's first byte not yet dealt
  auto take = [&](std::string& c, bool final) {
    const size_t left = pending.size() - start;
    if (left == 0) return false;
    size_t cut = pending.size();
    if (left > want) {
      const size_t nl = pending.find('\n', start + want - 1);
      if (nl != std::string::npos) cut = nl + 1;
      else if (!final) return false;
    } else if (!final) {
      return false;
    }
    c.assign(pending, start, cut - start);
    if (c.back() != '\n') c.push_back('\n');
    start = cut;
    return true;
  };
  auto deal_rounds = [&](bool final) {
    // Full rounds while P chunks are ready (and, at the end, what is left, then the last round).
    while (final ? start < pending.size() : pending.size() - start > size_t(p + 1) * want) {
      std::vector<std::string> deal(static_cast<size_t>(p));
      int took = 0;
      while (took < p && take(deal[size_t(took)], final)) ++took;
      if (took == 0) break;  // a line longer than what is inflated yet: wait for more
      run_round(deal, final && start == pending.size());
    }
    pending.erase(0, start);
    start = 0;
  };
  try {
    stream_file(path, [&](const char* data, size_t n) {
      pending.append(data, n);
      if (pending.size() - start > size_t(p + 1) * want) deal_rounds(false);
    });
  } catch (...) {
    // The others wait for a round: end them with an empty last one; rank 0 reports the error.
    std::vector<std::string> none(static_cast<size_t>(p));
    run_round(none, true);
    throw;
  }
  const int64_t before = round;
  deal_rounds(true);  // its last round says so
  if (round == before) {  // nothing was left to deal: an empty last round
    std::vector<std::string> none(static_cast<size_t>(p));
    run_round(none, true);
  }
  return mine;
}

// This rank's share of a text file, in file order, each chunk checked for bare '\r's.
std::vector<TextChunk> my_chunks(const std::string& path, Communicator& comm, int64_t* bytes) {
  std::vector<TextChunk> chunks;
  if (splittable(path, comm)) {
    chunks.push_back(my_range(path, comm));
    if (chunks.back().text.empty()) chunks.clear();
  } else {
    chunks = dealt_chunks(path, comm);
  }
  agreed(comm, [&] {
    for (const TextChunk& c : chunks)
      check_line_ends(c.text.data(), c.text.data() + c.text.size(), path, c.line0);
  });
  for (const TextChunk& c : chunks) *bytes += int64_t(c.text.size());
  return chunks;
}

// The single-process rule that a header is only the file's first data line, applied once every
// chunk is parsed: a chunk that skipped a header line after a chunk with data is an error.
void check_headers(const std::string& path, const std::vector<TextChunk>& chunks,
                   const std::vector<ChunkHeader>& notes, Communicator& comm) {
  constexpr int64_t kNone = std::numeric_limits<int64_t>::max();
  int64_t first = kNone;
  for (size_t i = 0; i < chunks.size(); ++i)
    if (notes[i].line > 0 || notes[i].first_data > 0) first = std::min(first, chunks[i].index);
  first = global_min(comm, first);
  agreed(comm, [&] {
    for (size_t i = 0; i < chunks.size(); ++i)
      if (notes[i].line > 0 && chunks[i].index > first) {
        // The note holds the whole message; the error keeps its line for agreed().
        const std::string prefix = InputError::format(path, notes[i].line, "");
        const std::string& m = notes[i].error;
        throw InputError(path, notes[i].line,
                         m.compare(0, prefix.size(), prefix) == 0 ? m.substr(prefix.size()) : m);
      }
  });
}

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
IdSpace number_ids(std::vector<std::pair<int64_t, uint8_t>> ids, int64_t min_vertices,
                   Communicator& comm) {
  const int p = comm.size();
  IdSpace s;
  if (min_vertices > 0) {
    s.identity = true;
    s.n = min_vertices;
    for (int r = 0; r <= p; ++r) s.vtxdist.push_back(s.n * r / p);
    return s;
  }
  std::sort(ids.begin(), ids.end());
  // Distinct ids, an edge flag each (the pair sort puts the edge one last).
  std::vector<std::pair<int64_t, uint8_t>> uniq;
  for (const auto& [id, e] : ids) {
    if (!uniq.empty() && uniq.back().first == id) {
      uniq.back().second |= e;
      continue;
    }
    uniq.push_back({id, e});
  }
  std::vector<std::pair<int64_t, uint8_t>>().swap(ids);
  // Regular sampling: p samples of each rank's sorted ids, p - 1 splitters among them all.
  std::vector<std::vector<int64_t>> samples(static_cast<size_t>(p));
  for (int k = 0; k < p && !uniq.empty(); ++k)
    for (int r = 0; r < p; ++r)
      samples[size_t(r)].push_back(uniq[uniq.size() * size_t(k) / size_t(p)].first);
  std::vector<int64_t> all = route(comm, samples);
  std::sort(all.begin(), all.end());
  for (int k = 1; k < p; ++k)
    s.splitters.push_back(all.empty() ? std::numeric_limits<int64_t>::max()
                                      : all[all.size() * size_t(k) / size_t(p)]);
  std::vector<std::vector<std::pair<int64_t, uint8_t>>> out(static_cast<size_t>(p));
  for (const auto& u : uniq) out[size_t(s.owner_of_id(u.first))].push_back(u);
  std::vector<std::pair<int64_t, uint8_t>>().swap(uniq);
  std::vector<std::pair<int64_t, uint8_t>> got = route(comm, out);
  std::sort(got.begin(), got.end());
  for (const auto& [id, e] : got) {
    if (!s.mine.empty() && s.mine.back() == id) {
      s.in_edges.back() |= e;
      continue;
    }
    s.mine.push_back(id);
    s.in_edges.push_back(e);
  }
  const std::vector<int64_t> counts = all_values(comm, int64_t(s.mine.size()));
  s.vtxdist.assign(size_t(p) + 1, 0);
  for (int r = 0; r < p; ++r) s.vtxdist[size_t(r) + 1] = s.vtxdist[size_t(r)] + counts[size_t(r)];
  s.n = s.vtxdist.back();
  if (s.n > int64_t(std::numeric_limits<int32_t>::max()))
    throw Error("the graph has more than 2^31-1 vertices");
  return s;
}

// Dense ids of original ids every one of which was numbered; *in_edges (optional) whether each
// was met in an edge. Collective.
std::vector<int64_t> lookup(const IdSpace& s, const std::vector<int64_t>& ids, Communicator& comm,
                            std::vector<uint8_t>* in_edges = nullptr) {
  if (s.identity) {
    if (in_edges) in_edges->assign(ids.size(), 1);
    return ids;
  }
  const int p = comm.size(), me = comm.rank();
  std::vector<int64_t> q = ids;
  std::sort(q.begin(), q.end());
  q.erase(std::unique(q.begin(), q.end()), q.end());
  std::vector<std::vector<int64_t>> ask(static_cast<size_t>(p));
  for (int64_t id : q) ask[size_t(s.owner_of_id(id))].push_back(id);
  std::vector<int64_t> from;
  const std::vector<int64_t> asked = route(comm, ask, &from);
  std::vector<std::vector<int64_t>> answer(static_cast<size_t>(p));
  size_t at = 0;
  for (int r = 0; r < p; ++r)
    for (int64_t k = 0; k < from[size_t(r)]; ++k, ++at) {
      const auto it = std::lower_bound(s.mine.begin(), s.mine.end(), asked[at]);
      DGNN_CHECK(it != s.mine.end() && *it == asked[at], Error,
                 "sharded load: id " + std::to_string(asked[at]) + " was never numbered");
      const int64_t i = it - s.mine.begin();
      answer[size_t(r)].push_back((s.vtxdist[size_t(me)] + i) * 2 + s.in_edges[size_t(i)]);
    }
  // Answers come back in the order asked: q grouped by owner, ascending within.
  const std::vector<int64_t> dense = route(comm, answer);
  std::vector<int64_t> q_dense(q.size());
  {
    std::vector<size_t> pos(static_cast<size_t>(p) + 1, 0);
    for (int r = 0; r < p; ++r) pos[size_t(r) + 1] = pos[size_t(r)] + ask[size_t(r)].size();
    std::vector<size_t> next(pos.begin(), pos.end() - 1);
    for (size_t i = 0; i < q.size(); ++i) q_dense[i] = dense[next[size_t(s.owner_of_id(q[i]))]++];
  }
  std::vector<int64_t> out(ids.size());
  if (in_edges) in_edges->resize(ids.size());
  for (size_t i = 0; i < ids.size(); ++i) {
    const int64_t v = q_dense[size_t(std::lower_bound(q.begin(), q.end(), ids[i]) - q.begin())];
    out[i] = v / 2;
    if (in_edges) (*in_edges)[i] = uint8_t(v & 1);
  }
  return out;
}

// ---- per-file readers over this rank's chunks -------------------------------------------------

struct LabelRow {
  int64_t id, line;
  int32_t label;
};

std::vector<LabelRow> parse_labels(const std::string& path, const std::vector<TextChunk>& chunks,
                                   int32_t num_classes, Communicator& comm) {
  std::vector<LabelRow> rows;
  std::vector<ChunkHeader> notes(chunks.size());
  agreed(comm, [&] {
    for (size_t c = 0; c < chunks.size(); ++c)
      rows::for_each_row_in(
          chunks[c].text.data(), chunks[c].text.data() + chunks[c].text.size(), path,
          chunks[c].line0, &notes[c], [&](int64_t line, const std::vector<std::string_view>& f) {
            rows::expect_fields(f.size(), 2, path, line, "'vertex label'", true);
            const int64_t v = rows::parse_vertex(f[0], path, line);
            const int32_t y = rows::parse_label(f[1], path, line, num_classes, false);
            rows.push_back({v, line, y});
          });
  });
  check_headers(path, chunks, notes, comm);
  if (global_sum(comm, int64_t(rows.size())) == 0)
    throw AgreedInputError(path, 0, "no labels found (expected 'vertex label' lines)");
  return rows;
}

struct TextRows {
  std::vector<int64_t> ids, lines;
  std::vector<float> values;  // ids.size() x dim
  int64_t dim = 0;
};

TextRows parse_text_features(const std::string& path, const std::vector<TextChunk>& chunks,
                             Communicator& comm) {
  TextRows t;
  int64_t dim = -1, first_line = 0;
  std::vector<ChunkHeader> notes(chunks.size());
  agreed(comm, [&] {
    for (size_t c = 0; c < chunks.size(); ++c)
      rows::for_each_row_in(
          chunks[c].text.data(), chunks[c].text.data() + chunks[c].text.size(), path,
          chunks[c].line0, &notes[c], [&](int64_t line, const std::vector<std::string_view>& f) {
            if (dim < 0) {
              rows::expect_fields(f.size(), 2, path, line, "'vertex f1 f2 ...'");
              dim = int64_t(f.size()) - 1;
              first_line = line;
            } else if (int64_t(f.size()) - 1 != dim) {
              throw InputError(path, line,
                               "expected " + std::to_string(dim) +
                                   " feature values after the vertex id (as on line " +
                                   std::to_string(first_line) + "), found " +
                                   std::to_string(f.size() - 1));
            }
            t.ids.push_back(rows::parse_vertex(f[0], path, line));
            t.lines.push_back(line);
            for (size_t k = 1; k < f.size(); ++k) {
              const float x = rows::parse_number<float>(f[k], path, line, "a number as feature value");
              if (!std::isfinite(x))
                throw InputError(path, line,
                                 "expected a finite feature value, found '" + std::string(f[k]) + "'");
              t.values.push_back(x);
            }
          });
  });
  check_headers(path, chunks, notes, comm);
  // Every rank's first row sets its width; the file's first row is the one all must match.
  const int64_t big = std::numeric_limits<int64_t>::max();
  const int64_t file_first = global_min(comm, dim >= 0 ? first_line : big);
  if (file_first == big) throw AgreedInputError(path, 0, "no feature rows found (expected 'vertex f1 f2 ...')");
  const std::vector<int64_t> dims = all_values(comm, first_line == file_first && dim >= 0 ? dim : 0);
  t.dim = *std::max_element(dims.begin(), dims.end());
  agreed(comm, [&] {
    if (dim >= 0 && dim != t.dim)
      throw InputError(path, first_line,
                     "expected " + std::to_string(t.dim) +
                         " feature values after the vertex id (as on line " +
                         std::to_string(file_first) + "), found " + std::to_string(dim));
  });
  return t;
}

struct SplitRow {
  int64_t id, line;
};

std::vector<SplitRow> parse_split(const std::string& path, const std::vector<TextChunk>& chunks,
                                  Communicator& comm) {
  std::vector<SplitRow> out;
  std::vector<ChunkHeader> notes(chunks.size());
  agreed(comm, [&] {
    for (size_t c = 0; c < chunks.size(); ++c)
      rows::for_each_row_in(
          chunks[c].text.data(), chunks[c].text.data() + chunks[c].text.size(), path,
          chunks[c].line0, &notes[c], [&](int64_t line, const std::vector<std::string_view>& f) {
            rows::expect_fields(f.size(), 1, path, line, "one vertex id per line", true);
            out.push_back({rows::parse_vertex(f[0], path, line), line});
          });
  });
  check_headers(path, chunks, notes, comm);
  if (global_sum(comm, int64_t(out.size())) == 0)
    throw AgreedInputError(path, 0, "no vertex ids found (expected one per line)");
  return out;
}

// ---- the block of dense ids this rank keeps ----------------------------------------------------

struct Block {
  int64_t begin = 0, size = 0;
  DistGraph g;
  std::vector<int64_t> original;  // per vertex
  std::vector<float> features;    // size x dim
  int64_t dim = 0;
  std::vector<int32_t> labels;    // -1 unlabelled (empty: no labels)
  std::vector<int8_t> split;      // 0 none, 1 train, 2 val, 3 test
};

struct InRec {
  int32_t row, col;
  int64_t line;
  float w;
};

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

bool can_load_sharded(const DatasetOptions& opt, std::string* why) {
  const DatasetFiles p = dataset_files(opt);
  if (p.by_row) {
    if (why) *why = "the OGB layout (row-numbered gzipped tables) is read on rank 0";
    return false;
  }
  return true;
}

LocalPart load_sharded_part(const DatasetOptions& opt, const PartitionOptions& popt_in,
                            Communicator& comm, ShardedLoad* info) {
  const int p = comm.size(), me = comm.rank();
  const DatasetFiles files = dataset_files(opt);
  std::string why;
  if (!can_load_sharded(opt, &why)) throw OptionError("sharded loading: " + why);
  const EdgeListOptions& eo = opt.edges;
  int64_t text_bytes = 0;
  std::string desc = "graph " + files.edges;

  // Features first: a plain .npy's header fixes the vertex set (ids 0..rows-1).
  const bool npy = !files.features.empty() && is_npy_file(files.features);
  const bool npy_plain = npy && splittable(files.features, comm);
  NpyLayout layout;
  NpyMatrix npy_whole;  // a gzipped .npy, on rank 0 only
  int64_t npy_rows = 0;
  if (npy) {
    std::vector<int64_t> shape(3, 0);
    if (npy_plain) {
      layout = read_npy_layout(files.features);
    } else if (me == 0) {
      npy_whole = read_npy(files.features);
      layout.rows = npy_whole.rows, layout.cols = npy_whole.cols, layout.shape = npy_whole.shape;
    }
    if (me == 0) shape = {layout.rows, layout.cols, int64_t(layout.shape.size())};
    comm.broadcast(shape.data(), 24, 0);
    layout.rows = shape[0], layout.cols = shape[1];
    layout.shape.resize(size_t(shape[2]), 0);
    npy_rows = layout.rows;
    if (npy_rows == 0)
      throw AgreedInputError(files.features, 0, "expected at least one row, the matrix is empty");
    if (layout.cols == 0)
      throw AgreedInputError(files.features, 0,
                       "expected at least one feature column, the matrix is " +
                           std::to_string(npy_rows) + " x 0");
  }
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

  // This rank's share of the text files.
  EdgeList edges;
  {
    const std::vector<TextChunk> chunks = my_chunks(files.edges, comm, &text_bytes);
    std::vector<ChunkHeader> notes(chunks.size());
    agreed(comm, [&] {
      for (size_t c = 0; c < chunks.size(); ++c)
        parse_edge_chunk(chunks[c].text.data(), chunks[c].text.data() + chunks[c].text.size(),
                         files.edges, eo, chunks[c].line0, edges, &notes[c]);
    });
    check_headers(files.edges, chunks, notes, comm);
  }
  const int64_t input_edges = global_sum(comm, int64_t(edges.src.size()));
  if (input_edges == 0)
    throw AgreedInputError(files.edges, 0,
                     "no edges found (expected lines of 'src dst', after any comments)");
  if (eo.bipartite) {
    int64_t top = -1;
    for (int64_t s : edges.src) top = std::max(top, s);
    const int64_t shift = global_max(comm, top) + 1;
    agreed(comm, [&] {
      for (size_t i = 0; i < edges.dst.size(); ++i) {
        if (edges.dst[i] > std::numeric_limits<int64_t>::max() - shift)
          throw InputError(files.edges, edges.line[i],
                           "--bipartite: destination id " + std::to_string(edges.dst[i]) +
                               " shifted past the largest source id does not fit 64 bits");
        edges.dst[i] += shift;
      }
    });
  }
  std::vector<LabelRow> label_rows;
  if (!files.labels.empty())
    label_rows = parse_labels(files.labels, my_chunks(files.labels, comm, &text_bytes),
                              opt.num_classes, comm);
  TextRows text;
  if (!files.features.empty() && !npy)
    text = parse_text_features(files.features, my_chunks(files.features, comm, &text_bytes), comm);

  // A .npy bounds every id; its rows must all be named somewhere (check_unnamed_rows).
  if (npy) {
    int64_t named = -1;
    agreed(comm, [&] {
      for (size_t i = 0; i < edges.src.size(); ++i) {
        const int64_t hi = std::max(edges.src[i], edges.dst[i]);
        if (hi >= npy_rows)
          throw InputError(files.edges, edges.line[i],
                           "expected vertex ids below " + std::to_string(npy_rows) + " (the rows of " +
                               files.features + ", which is " + std::to_string(npy_rows) + " x " +
                               std::to_string(layout.cols) + "; row i = vertex i), found " +
                               std::to_string(hi));
        named = std::max(named, hi);
      }
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

  // Number the ids.
  IdSpace ids;
  {
    std::vector<std::pair<int64_t, uint8_t>> all;
    if (!npy) {
      all.reserve(2 * edges.src.size() + label_rows.size() + text.ids.size());
      for (size_t i = 0; i < edges.src.size(); ++i)
        all.push_back({edges.src[i], 1}), all.push_back({edges.dst[i], 1});
      for (const LabelRow& r : label_rows) all.push_back({r.id, 0});
      for (int64_t id : text.ids) all.push_back({id, 0});
    }
    ids = number_ids(std::move(all), npy_rows, comm);
  }
  const int64_t n = ids.n;
  Block b;
  b.begin = ids.vtxdist[size_t(me)];
  b.size = ids.vtxdist[size_t(me) + 1] - b.begin;
  auto owner = [&](int64_t v) { return ids.owner_of_dense(v); };
  if (ids.identity) {
    b.original.resize(size_t(b.size));
    std::iota(b.original.begin(), b.original.end(), b.begin);
  } else {
    b.original = ids.mine;
  }

  // Edges to the owners of their destinations (and, undirected, of their sources).
  {
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
    g.num_vertices = n;
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
  const int64_t stored_edges = global_sum(comm, int64_t(b.g.in_src.size()));

  // The symmetrised structure the partitioner cuts: in- and out-neighbours, each pair weighted by
  // the stored entries between the two (partitioners.cpp's symmetrise, on the blocks).
  {
    DistGraph& g = b.g;
    std::vector<std::vector<int64_t>> out_lists;  // per block vertex: out-neighbours
    std::vector<int64_t> out_off(size_t(b.size) + 1, 0), out_dst;
    if (eo.directed) {
      std::vector<std::vector<std::pair<int64_t, int64_t>>> send(static_cast<size_t>(p));
      for (int64_t v = 0; v < b.size; ++v)
        for (int64_t e = g.in_offsets[size_t(v)]; e < g.in_offsets[size_t(v) + 1]; ++e)
          send[size_t(owner(g.in_src[size_t(e)]))].push_back({g.in_src[size_t(e)], b.begin + v});
      std::vector<std::pair<int64_t, int64_t>> got = route(comm, send);
      std::sort(got.begin(), got.end());
      for (const auto& [src, dst] : got) ++out_off[size_t(src - b.begin) + 1], out_dst.push_back(dst);
      for (int64_t v = 0; v < b.size; ++v) out_off[size_t(v) + 1] += out_off[size_t(v)];
    }
    g.adj_offsets.assign(size_t(b.size) + 1, 0);
    for (int64_t v = 0; v < b.size; ++v) {
      const int64_t gv = b.begin + v;
      int64_t a = g.in_offsets[size_t(v)], a_end = g.in_offsets[size_t(v) + 1];
      int64_t c = eo.directed ? out_off[size_t(v)] : a, c_end = eo.directed ? out_off[size_t(v) + 1] : a_end;
      const std::vector<int64_t>& cl = eo.directed ? out_dst : g.in_src;
      while (a < a_end || c < c_end) {
        int64_t u;
        if (c >= c_end || (a < a_end && g.in_src[size_t(a)] <= cl[size_t(c)]))
          u = g.in_src[size_t(a++)];
        else
          u = cl[size_t(c++)];
        if (u == gv) continue;
        if (int64_t(g.adj.size()) > g.adj_offsets[size_t(v)] && g.adj.back() == u) {
          ++g.adj_weight.back();
          continue;
        }
        g.adj.push_back(u);
        g.adj_weight.push_back(1);
      }
      g.adj_offsets[size_t(v) + 1] = int64_t(g.adj.size());
    }
  }

  // Labels to the owners of their vertices.
  int32_t num_classes = 0;
  int64_t labelled = 0, labelled_isolated = 0;
  if (!files.labels.empty()) {
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
          throw InputError(files.labels, got[k].line,
                           "expected one label per vertex, vertex " + std::to_string(got[k].id) +
                               " already has one (line " + std::to_string(got[k - 1].line) + ")");
        b.labels[size_t(got[k].v - b.begin)] = got[k].y;
        labelled += got[k].y >= 0;
      }
    });
    labelled = global_sum(comm, labelled);
    labelled_isolated = global_sum(comm, labelled_isolated);
    num_classes = opt.num_classes > 0 ? opt.num_classes : int32_t(global_max(comm, max_label)) + 1;
    desc += "; labels " + files.labels + " (" + std::to_string(num_classes) + " classes, " +
            std::to_string(labelled) + " labelled)";
    if (labelled_isolated > 0)
      desc += "; " + std::to_string(labelled_isolated) + " vert" +
              (labelled_isolated == 1 ? "ex" : "ices") +
              " of the labels in no edge (added without edges)";
  }

  // Features of the block.
  if (npy) {
    b.dim = layout.cols;
    if (npy_plain) {
      b.features = read_npy_rows(files.features, layout, b.begin, b.begin + b.size);
    } else {
      std::vector<std::vector<float>> out(static_cast<size_t>(p));
      if (me == 0)
        for (int r = 0; r < p; ++r)
          out[size_t(r)].assign(npy_whole.data.begin() + ids.vtxdist[size_t(r)] * b.dim,
                                npy_whole.data.begin() + ids.vtxdist[size_t(r) + 1] * b.dim);
      npy_whole = NpyMatrix{};
      b.features = route(comm, out);
    }
    agreed(comm, [&] {
      for (size_t i = 0; i < b.features.size(); ++i)
        if (!std::isfinite(b.features[i])) {
          const int64_t row = b.begin + int64_t(i) / b.dim;
          throw InputError(files.features, 0,
                           "expected finite feature values, row " + std::to_string(row) +
                               " (vertex " + std::to_string(row) + ") column " +
                               std::to_string(int64_t(i) % b.dim) + " holds " +
                               (std::isnan(b.features[i]) ? "NaN"
                                                          : "infinity (or a float64 beyond float32 range)"));
        }
    });
    desc += "; features " + files.features + " (" + std::to_string(npy_rows) + " x " +
            std::to_string(b.dim) + ")";
  } else if (!files.features.empty()) {
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
          throw InputError(files.features, std::max(line, line_of[size_t(v)]),
                           "vertex " + std::to_string(h[3 * k + 2]) + " has a second feature row");
        line_of[size_t(v)] = line;
        std::copy_n(vals.begin() + int64_t(k) * b.dim, b.dim, b.features.begin() + v * b.dim);
      }
    });
    agreed(comm, [&] {  // the lowest rank's first: the lowest id without a row
      for (int64_t v = 0; v < b.size; ++v)
        if (line_of[size_t(v)] == 0)
          throw InputError(files.features, 0,
                           "expected a feature row for every vertex, vertex " +
                               std::to_string(b.original[size_t(v)]) + " has none");
    });
    desc += "; features " + files.features + " (" + std::to_string(b.dim) + " columns)";
  } else {
    // Generated, as load_dataset makes them, for this block's rows.
    int64_t max_deg = 0;
    for (int64_t v = 0; v < b.size; ++v)
      max_deg = std::max(max_deg, b.g.in_offsets[size_t(v) + 1] - b.g.in_offsets[size_t(v)]);
    max_deg = global_max(comm, max_deg);
    desc += "; features generated (" +
            generated_feature_rows(
                opt, n, b.begin, b.size, [&](int64_t v) { return b.original[size_t(v)]; },
                [&](int64_t v) {
                  return b.g.in_offsets[size_t(v) + 1] - b.g.in_offsets[size_t(v)];
                },
                max_deg, &b.features, &b.dim) +
            ")";
  }

  // The split: from files (checked at the vertices' owners), or at random over the labels.
  b.split.assign(size_t(b.size), 0);
  int64_t split_count[3] = {0, 0, 0};
  if (split_files) {
    const std::string* paths[3] = {&files.train, &files.val, &files.test};
    struct Seen {
      int64_t v, line, id, file;
    };
    std::vector<std::vector<Seen>> out(static_cast<size_t>(p));
    for (int f = 0; f < 3; ++f) {
      if (paths[f]->empty()) continue;
      const std::vector<SplitRow> rows_f =
          parse_split(*paths[f], my_chunks(*paths[f], comm, &text_bytes), comm);
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
    desc += "; split from files";
  } else if (!b.labels.empty()) {
    // split_labelled shuffles the labelled vertices with one stream: rank 0 runs it on every
    // vertex's label (4 bytes a vertex) and hands each block its membership back.
    std::vector<std::vector<int32_t>> up(static_cast<size_t>(p));
    up[0] = b.labels;
    const std::vector<int32_t> all = route(comm, up);
    std::vector<std::vector<int8_t>> down(static_cast<size_t>(p));
    if (me == 0) {
      const LabelSplit sets = split_labelled(all, opt.train_frac, opt.val_frac, opt.seed);
      std::vector<int8_t> which(size_t(n), 0);
      for (int s = 0; s < 3; ++s)
        for (int32_t v : sets[size_t(s)]) which[size_t(v)] = int8_t(1 + s);
      for (int r = 0; r < p; ++r)
        down[size_t(r)].assign(which.begin() + ids.vtxdist[size_t(r)],
                               which.begin() + ids.vtxdist[size_t(r) + 1]);
    }
    b.split = route(comm, down);
    for (int8_t s : b.split)
      if (s > 0) ++split_count[s - 1];
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
  const std::vector<int32_t> part = partition_blocks(b.g, popt, comm, balance);

  // Every vertex to its part's rank: (gid, original id, label, split, in-degree), its in-edges
  // (source gid, weight) and its feature row.
  struct VRec {
    int64_t gid, orig, deg;
    int32_t label;
    int32_t split;
  };
  const bool weighted = eo.weight_col >= 0;
  std::vector<VRec> verts;
  std::vector<int64_t> srcs;
  std::vector<float> ws, feats;
  {
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
    verts = route(comm, vo);
    srcs = route(comm, so);
    ws = route(comm, wo);
    feats = route(comm, fo);
  }
  const int64_t dim = b.dim;

  // The part and the in-degree (self loops left out: GCN weights) of every source, from its
  // block's rank; the block answers for its own vertices.
  std::vector<int64_t> src_ids(srcs);
  std::sort(src_ids.begin(), src_ids.end());
  src_ids.erase(std::unique(src_ids.begin(), src_ids.end()), src_ids.end());
  std::vector<int64_t> src_part(src_ids.size()), src_deg(src_ids.size());
  {
    std::vector<std::vector<int64_t>> ask(static_cast<size_t>(p));
    for (int64_t u : src_ids) ask[size_t(owner(u))].push_back(u);
    std::vector<int64_t> from;
    const std::vector<int64_t> asked = route(comm, ask, &from);
    std::vector<std::vector<int64_t>> answer(static_cast<size_t>(p));
    size_t at = 0;
    for (int r = 0; r < p; ++r)
      for (int64_t k = 0; k < from[size_t(r)]; ++k, ++at) {
        const int64_t v = asked[at] - b.begin;
        int64_t deg = 0;
        for (int64_t e = b.g.in_offsets[size_t(v)]; e < b.g.in_offsets[size_t(v) + 1]; ++e)
          deg += b.g.in_src[size_t(e)] != asked[at];
        answer[size_t(r)].insert(answer[size_t(r)].end(), {int64_t(part[size_t(v)]), deg});
      }
    const std::vector<int64_t> got = route(comm, answer);
    // Answers in the order asked: grouped by block, ascending within; src_ids is ascending and
    // blocks are ascending ranges, so that is src_ids' order.
    for (size_t i = 0; i < src_ids.size(); ++i) src_part[i] = got[2 * i], src_deg[i] = got[2 * i + 1];
  }
  auto src_index = [&](int64_t u) {
    return size_t(std::lower_bound(src_ids.begin(), src_ids.end(), u) - src_ids.begin());
  };

  // Cut the LocalPart as extract_part does: owned (interior, then boundary), halo by (part, id).
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
  if (!files.labels.empty())
    for (size_t i : order) lp.labels.push_back(verts[i].label);
  lp.num_classes = num_classes;
  for (size_t k = 0; k < order.size(); ++k) {
    const int32_t s = verts[order[k]].split;
    if (s == 1) lp.train.push_back(int32_t(k));
    if (s == 2) lp.val.push_back(int32_t(k));
    if (s == 3) lp.test.push_back(int32_t(k));
  }
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
