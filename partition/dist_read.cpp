// The reading machinery of the sharded loaders (partition/dist_read.hpp): byte ranges and dealt
// chunks of text files, the sample-sort numbering of vertex ids, and the small tables' row
// parsers.
#include "dgnn/partition/dist_read.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <numeric>
#include <optional>

#include "dgnn/common/io_stats.hpp"
#include "dgnn/graph/dataset.hpp"
#include "dgnn/graph/npy.hpp"
#include "dgnn/graph/dataset_rows.hpp"
#include "dgnn/graph/input_files.hpp"

namespace dgnn::dist_read {

namespace {

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

}  // namespace

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

namespace {

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

}  // namespace

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

std::vector<int64_t> lookup(const IdSpace& s, const std::vector<int64_t>& ids, Communicator& comm,
                            std::vector<uint8_t>* in_edges) {
  if (s.identity) {
    if (in_edges) in_edges->assign(ids.size(), 1);
    return ids;
  }
  const int me = comm.rank();
  std::vector<int64_t> q = ids;
  std::sort(q.begin(), q.end());
  q.erase(std::unique(q.begin(), q.end()), q.end());
  q.shrink_to_fit();  // an edge list's ends repeat: its distinct ids are far fewer
  // Each id's owner answers its dense id and whether it is in an edge, as dense * 2 + in_edge.
  const std::vector<int64_t> q_dense = ask_owners(
      q, 1, [&](int64_t id) { return s.owner_of_id(id); },
      [&](int64_t id, int64_t* out) {
        const auto it = std::lower_bound(s.mine.begin(), s.mine.end(), id);
        DGNN_CHECK(it != s.mine.end() && *it == id, Error,
                   "sharded load: id " + std::to_string(id) + " was never numbered");
        const int64_t i = it - s.mine.begin();
        *out = (s.vtxdist[size_t(me)] + i) * 2 + s.in_edges[size_t(i)];
      },
      comm);
  std::vector<int64_t> out(ids.size());
  if (in_edges) in_edges->resize(ids.size());
  for (size_t i = 0; i < ids.size(); ++i) {
    const int64_t v = q_dense[size_t(std::lower_bound(q.begin(), q.end(), ids[i]) - q.begin())];
    out[i] = v / 2;
    if (in_edges) (*in_edges)[i] = uint8_t(v & 1);
  }
  return out;
}

std::vector<LabelRow> parse_labels(const std::string& path, const std::vector<TextChunk>& chunks,
                                   int32_t num_classes, Communicator& comm) {
  std::vector<LabelRow> rows;
  for_each_chunk_row(path, chunks, comm, [&](int64_t line, const std::vector<std::string_view>& f) {
    rows::expect_fields(f.size(), 2, path, line, "'vertex label'", true);
    const int64_t v = rows::parse_vertex(f[0], path, line);
    const int32_t y = rows::parse_label(f[1], path, line, num_classes, false);
    rows.push_back({v, line, y});
  });
  if (global_sum(comm, int64_t(rows.size())) == 0)
    throw AgreedInputError(path, 0, "no labels found (expected 'vertex label' lines)");
  return rows;
}

namespace {

// A text matrix's rows over this rank's chunks, an id column first (`id_column`) or not, with
// one process's error: the first bad row in file order, where a row whose width differs from
// the file's first row is named against that row (each rank parses on past a row of another
// width, and learns the file's first row only once all have parsed). Collective.
TextRows parse_matrix_rows(const std::string& path, const std::vector<TextChunk>& chunks,
                           Communicator& comm, bool id_column) {
  TextRows t;
  std::vector<int64_t> widths;
  std::optional<InputError> bad;  // why parsing stopped, at which row
  for_each_chunk_row(path, chunks, comm, [&](int64_t line, const std::vector<std::string_view>& f) {
    if (bad) return;
    widths.push_back(int64_t(f.size()));
    t.lines.push_back(line);
    try {
      if (id_column && f.size() >= 2) t.ids.push_back(rows::parse_vertex(f[0], path, line));
      for (size_t k = id_column ? 1 : 0; k < f.size(); ++k) {
        const float x = rows::parse_number<float>(f[k], path, line, "a number as feature value");
        if (!std::isfinite(x))
          throw InputError(path, line,
                           "expected a finite feature value, found '" + std::string(f[k]) + "'");
        t.values.push_back(x);
      }
    } catch (const InputError& e) {
      bad = e;
    }
  });
  const int64_t big = std::numeric_limits<int64_t>::max();
  const int64_t mine_first = t.lines.empty() ? big : t.lines[0];
  const int64_t file_first = global_min(comm, mine_first);
  const char* expect = id_column ? "'vertex f1 f2 ...'" : "one row per vertex";
  if (file_first == big)
    throw AgreedInputError(path, 0, std::string("no feature rows found (") +
                                        (id_column ? "expected " : "") + expect + ")");
  const std::vector<int64_t> firsts =
      all_values(comm, mine_first == file_first ? widths[0] : int64_t(0));
  const int64_t width = *std::max_element(firsts.begin(), firsts.end());
  const int64_t skip = id_column ? 1 : 0;  // the id column is no feature value
  agreed(comm, [&] {
    for (size_t i = 0; i < widths.size(); ++i) {
      const int64_t line = t.lines[i];
      if (id_column && line == file_first)
        rows::expect_fields(size_t(widths[i]), 2, path, line, expect);
      if (widths[i] != width)
        throw InputError(path, line,
                         "expected " + std::to_string(width - skip) + " feature values" +
                             (id_column ? " after the vertex id" : "") + " (as on line " +
                             std::to_string(file_first) + "), found " +
                             std::to_string(widths[i] - skip));
      if (bad && line == bad->line()) throw *bad;
    }
  });
  t.dim = width - skip;
  return t;
}

}  // namespace

TextRows parse_text_features(const std::string& path, const std::vector<TextChunk>& chunks,
                             Communicator& comm) {
  return parse_matrix_rows(path, chunks, comm, true);
}

namespace {

// The file-order number of each of this rank's data rows, from their lines (ascending, as
// for_each_chunk_row gives them over `chunks`): the rows of every earlier chunk, on any rank,
// come first. Collective.
std::vector<int64_t> row_numbers(const std::vector<TextChunk>& chunks,
                                 const std::vector<int64_t>& lines, Communicator& comm) {
  struct Count {
    int64_t index, rows;
  };
  std::vector<Count> mine;
  for (const TextChunk& c : chunks) mine.push_back({c.index, 0});
  std::vector<size_t> chunk_of(lines.size());
  size_t c = 0;
  for (size_t i = 0; i < lines.size(); ++i) {
    // A chunk's rows have lines in (line0, next chunk's line0].
    while (c + 1 < chunks.size() && lines[i] > chunks[c + 1].line0) ++c;
    chunk_of[i] = c;
    ++mine[c].rows;
  }
  std::vector<Count> all = allgather_records(mine, comm);
  std::sort(all.begin(), all.end(), [](const Count& a, const Count& b) { return a.index < b.index; });
  std::vector<int64_t> first(chunks.size(), 0);
  int64_t before = 0;
  size_t k = 0;
  for (const Count& a : all) {
    while (k < chunks.size() && chunks[k].index < a.index) ++k;
    if (k < chunks.size() && chunks[k].index == a.index) first[k] = before;
    before += a.rows;
  }
  std::vector<int64_t> out(lines.size());
  std::vector<int64_t> seen(chunks.size(), 0);
  for (size_t i = 0; i < lines.size(); ++i) out[i] = first[chunk_of[i]] + seen[chunk_of[i]]++;
  return out;
}

}  // namespace

TextRows parse_row_matrix(const std::string& path, const std::vector<TextChunk>& chunks,
                          Communicator& comm) {
  TextRows t = parse_matrix_rows(path, chunks, comm, false);
  t.ids = row_numbers(chunks, t.lines, comm);
  return t;
}

std::vector<LabelRow> parse_row_labels(const std::string& path, const std::vector<TextChunk>& chunks,
                                       int32_t num_classes, Communicator& comm) {
  std::vector<LabelRow> out;
  std::vector<int64_t> lines;
  for_each_chunk_row(path, chunks, comm, [&](int64_t line, const std::vector<std::string_view>& f) {
    if (f.size() != 1)
      throw InputError(path, line,
                       "expected one label per line (row i = vertex i), found " +
                           std::to_string(f.size()) + " columns");
    out.push_back({0, line, rows::parse_label(f[0], path, line, num_classes, true)});
    lines.push_back(line);
  });
  if (global_sum(comm, int64_t(out.size())) == 0)
    throw AgreedInputError(path, 0, "no labels found (expected one per line, row i = vertex i)");
  const std::vector<int64_t> ids = row_numbers(chunks, lines, comm);
  for (size_t i = 0; i < out.size(); ++i) out[i].id = ids[i];
  return out;
}

std::vector<SplitRow> parse_split(const std::string& path, const std::vector<TextChunk>& chunks,
                                  Communicator& comm) {
  std::vector<SplitRow> out;
  for_each_chunk_row(path, chunks, comm, [&](int64_t line, const std::vector<std::string_view>& f) {
    rows::expect_fields(f.size(), 1, path, line, "one vertex id per line", true);
    out.push_back({rows::parse_vertex(f[0], path, line), line});
  });
  if (global_sum(comm, int64_t(out.size())) == 0)
    throw AgreedInputError(path, 0, "no vertex ids found (expected one per line)");
  return out;
}

// This rank's share of the edge list, --bipartite's shift applied.
EdgeList read_edges(const std::string& path, const EdgeListOptions& eo, Communicator& comm,
                    int64_t* text_bytes) {
  EdgeList edges;
  parse_chunks(path, my_chunks(path, comm, text_bytes), comm,
               [&](const TextChunk& c, ChunkHeader* note) {
                 parse_edge_chunk(c.text.data(), c.text.data() + c.text.size(), path, eo, c.line0,
                                  edges, note);
               });
  const int64_t input_edges = global_sum(comm, int64_t(edges.src.size()));
  if (input_edges == 0)
    throw AgreedInputError(path, 0,
                     "no edges found (expected lines of 'src dst', after any comments)");
  if (eo.bipartite) {
    int64_t top = -1;
    for (int64_t s : edges.src) top = std::max(top, s);
    const int64_t shift = global_max(comm, top) + 1;
    agreed(comm, [&] {
      for (size_t i = 0; i < edges.dst.size(); ++i) {
        if (edges.dst[i] > std::numeric_limits<int64_t>::max() - shift)
          throw InputError(path, edges.line[i],
                           "--bipartite: destination id " + std::to_string(edges.dst[i]) +
                               " shifted past the largest source id does not fit 64 bits");
        edges.dst[i] += shift;
      }
    });
  }
  return edges;
}

std::vector<float> vertex_feature_rows(const std::string& path,
                                       const std::vector<int64_t>& original_ids,
                                       const std::vector<int64_t>& rows, Communicator& comm,
                                       int64_t* dim) {
  const int p = comm.size(), me = comm.rank();
  const bool npy = is_npy_file(path);
  if (npy && splittable(path, comm)) {
    std::vector<float> out;
    agreed(comm, [&] { out = read_vertex_feature_rows(path, original_ids, rows, dim); });
    *dim = global_max(comm, *dim);  // a rank with no rows read the header all the same
    return out;
  }
  const int64_t n = int64_t(original_ids.size());
  auto block = [&](int64_t v) { return int(v * p / std::max<int64_t>(n, 1)); };
  // block(v) == q exactly for v in [first(q), first(q + 1)): v * p / n >= q from
  // v = ceil(q * n / p) on.
  auto first = [&](int64_t q) { return (q * n + p - 1) / p; };
  const int64_t lo = first(me), hi = first(me + 1);
  // Each rank asks the blocks for its rows, and gets them (row_of(v): vertex v's row in this
  // rank's block) in `rows`' order: blocks in rank order hold ascending ids, each asked in
  // ascending order.
  const auto answer = [&](const std::function<const float*(int64_t)>& row_of, int64_t d) {
    std::vector<std::vector<int64_t>> ask(size_t(p), std::vector<int64_t>{});
    for (int64_t v : rows) ask[size_t(block(v))].push_back(v);
    std::vector<int64_t> asked_from;
    const std::vector<int64_t> asked = route(comm, ask, &asked_from);
    std::vector<std::vector<float>> reply(size_t(p), std::vector<float>{});
    size_t k = 0;
    for (int q = 0; q < p; ++q)
      for (int64_t c = 0; c < asked_from[size_t(q)]; ++c, ++k) {
        const float* r = row_of(asked[k]);
        reply[size_t(q)].insert(reply[size_t(q)].end(), r, r + d);
      }
    return route(comm, reply);
  };
  // The rows this rank read: dense ids (-1: an id in no edge), lines, values.
  std::vector<int64_t> dense, lines, unknown_id;
  std::vector<float> values;
  if (npy) {
    // Gzipped (or a pipe): inflated and checked on rank 0, as one process reads it, then each
    // block of rows (contiguous in the dense order of rank 0's matrix) sent from it in place.
    agreed(comm, [&] {
      if (me == 0) values = read_vertex_features(path, original_ids, dim);
    });
    comm.broadcast(dim, 8, 0);
    const int64_t row = *dim * int64_t(sizeof(float));
    std::vector<int64_t> sc(size_t(p), 0), sd(size_t(p), 0), rc(size_t(p), 0), rd(size_t(p), 0);
    if (me == 0)
      for (int q = 0; q < p; ++q) sc[size_t(q)] = (first(q + 1) - first(q)) * row, sd[size_t(q)] = first(q) * row;
    rc[0] = (hi - lo) * row;
    std::vector<float> block_rows(size_t((hi - lo) * *dim));
    comm.alltoallv(values.data(), sc, sd, block_rows.data(), rc, rd);
    std::vector<float>().swap(values);
    return answer([&](int64_t v) { return block_rows.data() + (v - lo) * *dim; }, *dim);
  }
  {
    int64_t bytes = 0;
    TextRows t = parse_text_features(path, my_chunks(path, comm, &bytes), comm);
    *dim = t.dim;
    for (size_t i = 0; i < t.ids.size(); ++i) {
      const auto it = std::lower_bound(original_ids.begin(), original_ids.end(), t.ids[i]);
      const bool known = it != original_ids.end() && *it == t.ids[i];
      dense.push_back(known ? it - original_ids.begin() : -1);
      if (!known) unknown_id.push_back(t.ids[i]);
    }
    lines = std::move(t.lines);
    values = std::move(t.values);
  }
  const int64_t d = *dim;
  // The rows to the ranks numbering their blocks (a row of an id in no edge to rank 0, with
  // its id), with what asks for them.
  std::vector<int64_t> got_head;
  std::vector<float> got_vals;
  {
    std::vector<std::vector<int64_t>> head(size_t(p), std::vector<int64_t>{});
    std::vector<std::vector<float>> out(size_t(p), std::vector<float>{});
    size_t u = 0;
    for (size_t i = 0; i < dense.size(); ++i) {
      const size_t b = dense[i] >= 0 ? size_t(block(dense[i])) : 0;
      head[b].insert(head[b].end(), {dense[i], lines[i], dense[i] >= 0 ? 0 : unknown_id[u++]});
      if (dense[i] >= 0)
        out[b].insert(out[b].end(), values.begin() + int64_t(i) * d,
                      values.begin() + int64_t(i + 1) * d);
    }
    std::vector<int64_t>().swap(dense);
    std::vector<int64_t>().swap(lines);
    std::vector<float>().swap(values);
    got_head = route(comm, head);
    got_vals = route(comm, out);
  }
  // The block's rows in file order, as one process walks them: an id in no edge, or a second
  // row of a vertex, is an error at its line (the job's: the lowest line of all blocks).
  std::vector<int64_t> at(size_t(hi - lo), -1);
  {
    const size_t rows_here = got_head.size() / 3;
    std::vector<size_t> order(rows_here);
    std::iota(order.begin(), order.end(), size_t(0));
    std::sort(order.begin(), order.end(),
              [&](size_t a, size_t b) { return got_head[3 * a + 1] < got_head[3 * b + 1]; });
    // Value rows arrive in got_head's order, skipping ids in no edge.
    std::vector<int64_t> value_row(rows_here, -1);
    int64_t next = 0;
    for (size_t k = 0; k < rows_here; ++k)
      if (got_head[3 * k] >= 0) value_row[k] = next++;
    agreed(comm, [&] {
      for (size_t k : order) {
        const int64_t v = got_head[3 * k], line = got_head[3 * k + 1];
        if (v < 0)
          throw InputError(path, line,
                           "vertex " + std::to_string(got_head[3 * k + 2]) +
                               " is in no edge of the graph");
        const size_t i = size_t(v - lo);
        if (at[i] >= 0)
          throw InputError(path, line,
                           "vertex " + std::to_string(original_ids[size_t(v)]) +
                               " has a second feature row");
        at[i] = value_row[k];
      }
    });
  }
  // A vertex without a row: the smallest (blocks are in rank order), as one process names it.
  agreed(comm, [&] {
    for (int64_t v = lo; v < hi; ++v)
      if (at[size_t(v - lo)] < 0)
        throw InputError(path, 0,
                         "no feature row for vertex " + std::to_string(original_ids[size_t(v)]) +
                             ", which appears in the edges");
  });
  return answer([&](int64_t v) { return got_vals.data() + at[size_t(v - lo)] * d; }, d);
}

std::vector<int32_t> vertex_labels_on_root(const std::string& path,
                                           const std::vector<int64_t>& original_ids,
                                           int32_t num_classes, Communicator& comm,
                                           int32_t* classes) {
  int64_t bytes = 0;
  const std::vector<LabelRow> rows =
      parse_labels(path, my_chunks(path, comm, &bytes), num_classes, comm);
  // (id, dense id or -1, line, label) of each row, to rank 0.
  std::vector<std::vector<int64_t>> up(size_t(comm.size()), std::vector<int64_t>{});
  for (const LabelRow& r : rows) {
    const auto it = std::lower_bound(original_ids.begin(), original_ids.end(), r.id);
    const int64_t v = it != original_ids.end() && *it == r.id ? it - original_ids.begin() : -1;
    up[0].insert(up[0].end(), {r.id, v, r.line, int64_t(r.label)});
  }
  const std::vector<int64_t> got = route(comm, up);
  std::vector<std::vector<int64_t>>().swap(up);
  std::vector<int32_t> labels;
  int32_t top = -1;
  agreed(comm, [&] {
    if (comm.rank() != 0) return;
    // In file order, as one process reads them: the first bad row is the error.
    std::vector<size_t> order(got.size() / 4);
    std::iota(order.begin(), order.end(), size_t(0));
    std::sort(order.begin(), order.end(),
              [&](size_t a, size_t b) { return got[4 * a + 2] < got[4 * b + 2]; });
    labels.assign(original_ids.size(), -1);
    std::vector<int64_t> line_of(original_ids.size(), 0);
    for (size_t k : order) {
      const int64_t id = got[4 * k], v = got[4 * k + 1], line = got[4 * k + 2];
      if (v < 0)
        throw InputError(path, line, "vertex " + std::to_string(id) + " is in no edge of the graph");
      if (line_of[size_t(v)] > 0)
        throw InputError(path, line,
                         "expected one label per vertex, vertex " + std::to_string(id) +
                             " is already on line " + std::to_string(line_of[size_t(v)]));
      line_of[size_t(v)] = line;
      labels[size_t(v)] = int32_t(got[4 * k + 3]);
      top = std::max(top, labels[size_t(v)]);
    }
  });
  comm.broadcast(&top, 4, 0);
  *classes = num_classes > 0 ? num_classes : top + 1;
  return labels;
}

}  // namespace dgnn::dist_read
