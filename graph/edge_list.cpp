// Edge-list reading: the whole file in one buffer (gunzipped in big chunks), then a hand-rolled
// single pass over it. Speed matters here (10M+ edges/s), so no iostreams and no per-field
// allocation; std::from_chars only for the rarer weight and time columns.
#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <climits>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <utility>

#include "dgnn/common/error.hpp"
#include "dgnn/common/io_stats.hpp"
#include "dgnn/graph/graph.hpp"
#include "dgnn/graph/input_files.hpp"

namespace dgnn {

namespace {

struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

[[noreturn]] void io_fail(const std::string& path, const char* what) {
  throw IoError("cannot " + std::string(what) + " '" + path + "': " + std::strerror(errno));
}

// One read(2) of up to `want` bytes (0 at the end of the file), retried on EINTR. Every byte this
// file reads from an input goes through here, and is counted here (common/io_stats.hpp).
size_t read_some(int fd, const std::string& path, char* to, size_t want) {
  for (;;) {
    const ssize_t got = ::read(fd, to, want);
    if (got >= 0) {
      count_input_bytes(got);
      return size_t(got);
    }
    if (errno != EINTR) io_fail(path, "read");
  }
}

// Inflates a gzip file: one member or several (concatenated .gz files, as gzip -d reads them).
// Any other bytes after the last member are an error naming their offset, since gzip's own
// reader would drop them silently (a file appended to a .gz by mistake); zero bytes (padding to
// a block, as tar and dd leave) are allowed.
// inflate_gz: the same, each inflated piece handed to sink(data, bytes) as it comes (a reader
// that deals the text out in chunks holds no more than it deals); read_gz collects them.
template <class Next, class Sink>
void inflate_gz(Next&& next, const std::string& path, int64_t file_size, Sink&& sink,
                const ProgressFn& progress) {
  z_stream zs{};
  if (inflateInit2(&zs, 16 + MAX_WBITS) != Z_OK)  // 16: gzip wrapper only
    throw IoError("cannot read '" + path + "': zlib could not start (out of memory)");
  std::unique_ptr<z_stream, int (*)(z_streamp)> guard(&zs, inflateEnd);
  auto fail = [&](const std::string& what) { throw InputError(path, 0, what); };
  constexpr size_t kIn = size_t(1) << 20, kOut = size_t(1) << 22;
  std::unique_ptr<char[]> in(new char[kIn]), out(new char[kOut]);
  size_t consumed = 0;  // file bytes handed to inflate so far (for offsets and progress)
  size_t next_report = size_t(1) << 26, inflated = 0;
  bool in_member = true, eof = false;
  for (;;) {
    if (zs.avail_in == 0 && !eof) {
      const size_t got = next(in.get(), kIn);
      eof = got == 0;
      zs.next_in = reinterpret_cast<Bytef*>(in.get());
      zs.avail_in = uInt(got);
      consumed += got;
    }
    if (!in_member) {
      // Between members: another gzip header, zero padding, or trailing bytes.
      while (zs.avail_in > 0 && *zs.next_in == 0) {
        ++zs.next_in;
        --zs.avail_in;
      }
      if (zs.avail_in == 0) {
        if (eof) break;
        continue;
      }
      if (*zs.next_in != 0x1f) {
        const size_t at = consumed - zs.avail_in;
        fail("data after the end of the gzip stream, at byte " + std::to_string(at) +
             " (not gzip: a file appended to it?)");
      }
      if (inflateReset(&zs) != Z_OK) fail("corrupt gzip data (zlib could not restart)");
      in_member = true;
      continue;
    }
    if (zs.avail_in == 0 && eof) fail("truncated gzip data (unexpected end of file)");
    zs.next_out = reinterpret_cast<Bytef*>(out.get());
    zs.avail_out = uInt(kOut);
    const int rc = inflate(&zs, Z_NO_FLUSH);
    if (kOut > zs.avail_out) sink(out.get(), kOut - zs.avail_out);
    inflated += kOut - zs.avail_out;
    if (rc == Z_STREAM_END) {
      in_member = false;
    } else if (rc == Z_NEED_DICT || rc == Z_DATA_ERROR) {
      fail(std::string("corrupt gzip data (") + (zs.msg ? zs.msg : "invalid data") + ")");
    } else if (rc == Z_MEM_ERROR) {
      throw std::bad_alloc();
    } else if (rc != Z_OK && rc != Z_BUF_ERROR) {
      fail("corrupt gzip data (zlib error " + std::to_string(rc) + ")");
    }
    if (progress && inflated >= next_report) {  // every 64 MiB, so a long read reports
      progress("read", double(consumed) / double(std::max<int64_t>(file_size, 1)));
      next_report = inflated + (size_t(1) << 26);
    }
  }
  if (progress) progress("read", 1.0);
}

template <class Next>
std::string read_gz(Next&& next, const std::string& path, int64_t file_size, uint32_t isize_hint,
                    const ProgressFn& progress) {
  // ISIZE (the last 4 bytes) is the size mod 2^32 of the last member: a good first guess, but
  // any 4 bytes in a cut or damaged file, so never more than deflate can expand the file to.
  // Only reserved (never zero-filled): untouched capacity costs address space, not memory.
  constexpr size_t kMaxRatio = 1032;
  const size_t fsize = size_t(std::max<int64_t>(file_size, 0));
  const size_t ceiling = fsize > SIZE_MAX / kMaxRatio ? SIZE_MAX : fsize * kMaxRatio;
  std::string buf;
  buf.reserve(std::max<size_t>(std::min<size_t>(isize_hint, ceiling), size_t(1) << 16) + 1);
  // Inflated a chunk at a time and appended: the string grows geometrically by itself, and
  // copying a chunk is cheap next to inflating it.
  inflate_gz(next, path, file_size, [&](const char* d, size_t n) { buf.append(d, n); }, progress);
  return buf;
}

uint32_t le32(const unsigned char* b) {
  return b[0] | b[1] << 8 | b[2] << 16 | uint32_t(b[3]) << 24;
}

// A named FIFO (a node in a file system, made by mkfifo) opened for reading waits until a writer
// opens it, forever if none does. It is opened without waiting and polled instead: for
// DGNN_FIFO_WAIT seconds (default 60) until something comes (data, or a writer's end), then read
// as usual; a line on a terminal says what it waits for. A pipe (`<(zcat g.gz)`, /dev/stdin) has
// its writer from the start, however slow, and is read as it is.
bool is_named_fifo(const std::string& path) {
  char real[PATH_MAX];
  struct stat st;
  // A pipe's /dev/fd/N names "pipe:[inode]", which resolves to no path.
  return ::realpath(path.c_str(), real) != nullptr && ::stat(real, &st) == 0 &&
         S_ISFIFO(st.st_mode);
}

int open_fifo(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) io_fail(path, "open");
  double limit_s = 60;
  if (const char* w = std::getenv("DGNN_FIFO_WAIT"); w && *w) limit_s = std::max(0.0, std::atof(w));
  const auto start = std::chrono::steady_clock::now();
  bool told = false;
  for (;;) {
    struct pollfd p = {fd, POLLIN, 0};
    const int ready = ::poll(&p, 1, 250);
    if (ready > 0) break;
    if (ready < 0 && errno != EINTR) {
      ::close(fd);
      io_fail(path, "poll");
    }
    const double waited =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (!told && waited >= 1 && ::isatty(STDERR_FILENO)) {
      std::fprintf(stderr, "dgnn: waiting for a writer on the FIFO %s (at most %.0f s)\n",
                   path.c_str(), limit_s);
      told = true;
    }
    if (waited >= limit_s) {
      ::close(fd);
      throw IoError("cannot read '" + path + "': nothing came through the FIFO within " +
                    std::to_string(int(limit_s)) +
                    " s (no writer opened it?): start its writer first, or set DGNN_FIFO_WAIT");
    }
  }
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);  // a writer is there: read as usual
  return fd;
}

// Every byte of a pipe, FIFO or character device (`<(zcat g.gz)`, /dev/stdin), read to its end
// once per process and kept: a source that cannot be read twice is still read by the hash of
// the inputs and by the parser, and gives both the same bytes.
// Kept by the pipe's or FIFO's identity (device, inode), not its name: /dev/fd/63 names
// another pipe in the next run of a loop, and a FIFO already drained must not be opened again
// (that waits for a new writer).
const std::string& spool(const std::string& path) {
  static std::mutex mu;
  static std::map<std::pair<uint64_t, uint64_t>, std::string> spooled;  // references stay valid
  std::lock_guard<std::mutex> lock(mu);
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) io_fail(path, "stat");
  const std::pair<uint64_t, uint64_t> key{uint64_t(st.st_dev), uint64_t(st.st_ino)};
  if (auto it = spooled.find(key); it != spooled.end()) return it->second;
  Fd f;
  f.fd = is_named_fifo(path) ? open_fifo(path) : ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (f.fd < 0) io_fail(path, "open");
  std::string bytes;
  constexpr size_t kChunk = size_t(1) << 20;
  for (;;) {
    const size_t at = bytes.size();
    bytes.resize(at + kChunk);
    const size_t got = read_some(f.fd, path, bytes.data() + at, kChunk);
    bytes.resize(at + got);
    if (got == 0) break;
  }
  bytes.shrink_to_fit();
  return spooled.emplace(key, std::move(bytes)).first->second;
}

// A file (not a stream) opened to read and noted as an input (note_input), with its size and
// whether it is gzipped (its first bytes are gzip's magic). A directory is refused here, where
// read(2) would fail with a less clear EISDIR.
struct OpenedInput {
  Fd f;
  int64_t size = 0;
  bool gz = false;
  explicit OpenedInput(const std::string& path) {
    f.fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (f.fd < 0) io_fail(path, "open");
    note_input(f.fd, path);
    struct stat st;
    if (::fstat(f.fd, &st) != 0) io_fail(path, "stat");
    if (S_ISDIR(st.st_mode)) throw IoError("cannot read '" + path + "': it is a directory");
    size = st.st_size;
    unsigned char magic[2] = {0, 0};
    gz = size >= 2 && ::pread(f.fd, magic, 2, 0) == 2 && magic[0] == 0x1f && magic[1] == 0x8b;
  }
};

}  // namespace

bool is_stream(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode);
}

const std::string& stream_bytes(const std::string& path) { return spool(path); }

void stream_file(const std::string& path,
                 const std::function<void(const char* data, size_t bytes)>& sink) {
  if (is_stream(path)) {  // a pipe is read once, whole (spool keeps it for every reader)
    const std::string text = read_file(path);
    sink(text.data(), text.size());
    return;
  }
  const OpenedInput in(path);
  auto next = [&](char* to, size_t want) { return read_some(in.f.fd, path, to, want); };
  if (in.gz) {
    inflate_gz(next, path, in.size, sink, {});
    return;
  }
  std::unique_ptr<char[]> buf(new char[size_t(1) << 22]);
  for (size_t got; (got = next(buf.get(), size_t(1) << 22)) > 0;) sink(buf.get(), got);
}

std::string read_file(const std::string& path, const ProgressFn& progress) {
  if (is_stream(path)) {  // before any open: a drained FIFO opened again waits for a writer
    const std::string& raw = spool(path);
    if (raw.size() < 2 || uint8_t(raw[0]) != 0x1f || uint8_t(raw[1]) != 0x8b) return raw;
    size_t pos = 0;
    auto next = [&](char* to, size_t want) {
      const size_t n = std::min(want, raw.size() - pos);
      std::memcpy(to, raw.data() + pos, n);
      pos += n;
      return n;
    };
    const uint32_t hint =
        raw.size() >= 18 ? le32(reinterpret_cast<const unsigned char*>(raw.data()) + raw.size() - 4)
                         : 0;
    return read_gz(next, path, int64_t(raw.size()), hint, progress);
  }
  const OpenedInput in(path);
  const int64_t size = in.size;
  if (in.gz) {
    unsigned char tail[4];
    uint32_t hint = 0;
    if (size >= 18 && ::pread(in.f.fd, tail, 4, size - 4) == 4) hint = le32(tail);
    auto next = [&](char* to, size_t want) { return read_some(in.f.fd, path, to, want); };
    return read_gz(next, path, size, hint, progress);
  }
  std::string buf(size_t(size), '\0');
  size_t len = 0;
  while (len < buf.size()) {
    const size_t got = read_some(in.f.fd, path, buf.data() + len, std::min<size_t>(buf.size() - len, 1 << 26));
    if (got == 0) break;
    len += got;
    if (progress) progress("read", double(len) / double(buf.size()));
  }
  buf.resize(len);
  return buf;
}

namespace {

inline bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}
inline bool is_digit(char c) { return unsigned(c - '0') < 10u; }
inline bool ends_field(char c) { return is_space(c) || c == ',' || c == '\n'; }

std::string token_at(const char* q) {
  const char* e = q;
  while (!ends_field(*e) && e - q < 40) ++e;
  if (e == q) return "nothing";
  std::string t(1, '\'');  // built by appends: "'" + std::string trips GCC 12's -Wrestrict
  for (const char* c = q; c < e; ++c) {
    const auto u = static_cast<unsigned char>(*c);
    if (u >= 0x20 && u < 0x7f) {
      t.push_back(*c);
    } else {  // binary or non-ASCII bytes: escaped, so the message stays one readable line
      static const char hex[] = "0123456789abcdef";
      t += "\\x";
      t.push_back(hex[u >> 4]);
      t.push_back(hex[u & 15]);
    }
  }
  t.push_back('\'');
  return t;
}

// The time column's option, for messages: "--time-col 3", or the dataset's snapshots.txt that
// set it.
std::string time_option(const EdgeListOptions& opt) {
  const std::string n = std::to_string(opt.time_col);
  return opt.time_col_from.empty() ? "--time-col " + n
                                   : "time-col " + n + " (" + opt.time_col_from + ")";
}

// The option that asks for column `c`, with its value ("--src-col 5"), for messages.
std::string column_option(const EdgeListOptions& opt, int64_t c) {
  const std::string n = std::to_string(c);
  if (c == opt.src_col) return "--src-col " + n;
  if (c == opt.dst_col) return "--dst-col " + n;
  if (c == opt.weight_col) return "--weight-col " + n;
  return time_option(opt);
}

struct AnyEdge {
  bool operator()(int64_t, int64_t, float, int64_t, int64_t) const { return true; }
};

// Parses [begin, end), calling sink(src, dst, weight, time, line) per edge; the sink returns
// false to stop early. The text must end with '\n' followed by a NUL. Lines are numbered from
// line0 + 1 (a chunk of a file read in parts). `note` (optional): the text is a chunk that may
// not hold the file's first data line, so a non-numeric first data line may not be a header;
// it is skipped and reported there, for the caller to decide once it knows the chunks before.
template <class Sink>
int64_t parse_edges(const char* const buf_begin, const char* const end, const std::string& path,
                    const EdgeListOptions& opt, int64_t line0, ChunkHeader* note, Sink&& sink,
                    bool header_allowed = true) {
  // 64 bits: the column count is want + 1, and a column may be INT_MAX.
  const int64_t want = std::max<int64_t>({opt.src_col, opt.dst_col, opt.weight_col, opt.time_col});
  if (opt.src_col < 0 || opt.dst_col < 0 || opt.src_col == opt.dst_col)
    throw OptionError("--src-col " + std::to_string(opt.src_col) + " and --dst-col " +
                      std::to_string(opt.dst_col) +
                      ": the source and destination ids must be two different columns >= 0");
  for (int c : {opt.weight_col, opt.time_col})
    if (c >= 0 && (c == opt.src_col || c == opt.dst_col))
      throw OptionError(
          (c == opt.weight_col ? "--weight-col " + std::to_string(c) : time_option(opt)) +
          ": the column of a vertex id (--src-col " + std::to_string(opt.src_col) + ", --dst-col " +
          std::to_string(opt.dst_col) + ")");
  if (opt.weight_col >= 0 && opt.weight_col == opt.time_col)
    throw OptionError("--weight-col and --time-col name the same column " +
                      std::to_string(opt.time_col));
  const char* p = buf_begin;
  // A UTF-8 byte order mark (editors on Windows write one) is not part of the first line: read
  // as text it would make the first edge look like a header.
  if (line0 == 0 && end - p >= 3 && std::memcmp(p, "\xEF\xBB\xBF", 3) == 0) p += 3;
  int64_t line = line0;
  bool seen_data = !header_allowed;
  auto fail = [&](const std::string& what) -> void { throw InputError(path, line, what); };
  // Progress every 64 MiB of text: one compare per line otherwise.
  const char* next_report = opt.progress ? p + (size_t(1) << 26) : end;
  while (p < end) {
    if (p >= next_report) {
      opt.progress("parse", double(p - buf_begin) / double(end - buf_begin));
      next_report = p + (size_t(1) << 26);
    }
    ++line;
    const char* q = p;
    while (is_space(*q)) ++q;
    if (*q == '\n') {
      p = q + 1;
      continue;
    }
    if (*q == '#' || *q == '%' ||
        (!seen_data && !is_digit(*q) && *q != '-' && *q != '+' && *q != '.')) {
      const char* nl = static_cast<const char*>(std::memchr(q, '\n', size_t(end - q)));
      if (note && *q != '#' && *q != '%') {
        // What this line is if the file has data before it: parsed as an edge on its own.
        note->line = line;
        const std::string one(p, size_t(nl + 1 - p));
        try {
          parse_edges(one.data(), one.data() + one.size(), path, opt, line - 1, nullptr,
                      AnyEdge{}, false);
        } catch (const InputError& e) {
          note->error = e.what();
        }
      }
      seen_data = seen_data || (*q != '#' && *q != '%');  // a header only as first data line
      p = nl + 1;
      continue;
    }
    if (note && note->first_data == 0) note->first_data = line;
    seen_data = true;
    int64_t id[2] = {0, 0};
    float w = 1.0f;
    int64_t t = 0;
    for (int64_t col = 0; col <= want; ++col) {
      if (col > 0) {
        const char* s = q;
        while (is_space(*q)) ++q;
        if (*q == ',') {
          ++q;
          while (is_space(*q)) ++q;
        }
        if (*q == '\n' || *q == '#' || q == s) {
          if (q == s && *q != '\n')
            fail("expected a separator (space, tab or comma) before " + token_at(q));
          // Named by the option that asks for the furthest column (the defaults by the format).
          const std::string found = std::to_string(col) + (col == 1 ? " column" : " columns");
          if (want == 1) fail(found + ", but an edge needs at least 2 ('src dst')");
          fail(found + ", but " + column_option(opt, want) + " needs at least " +
               std::to_string(want + 1));
        }
      }
      if (col == opt.src_col || col == opt.dst_col) {
        if (!is_digit(*q)) {
          if (*q == '-' && is_digit(q[1]))
            fail("expected a non-negative vertex id, found " + token_at(q));
          fail("expected an integer vertex id, found " + token_at(q));
        }
        const char* s = q;
        uint64_t v = 0;
        while (is_digit(*q)) v = v * 10 + uint64_t(*q++ - '0');
        if (q - s > 18) {  // possible overflow: let from_chars decide exactly
          int64_t exact;
          auto r = std::from_chars(s, q, exact);
          if (r.ec != std::errc()) fail("vertex id " + token_at(s) + " does not fit in 63 bits");
          v = uint64_t(exact);
        }
        if (!ends_field(*q)) fail("expected an integer vertex id, found " + token_at(s));
        id[col == opt.dst_col] = int64_t(v);
      } else if (col == opt.weight_col) {
        auto r = std::from_chars(q, end, w);
        if (r.ec != std::errc() || !ends_field(*r.ptr) || !std::isfinite(w))
          fail("expected a number for the weight, found " + token_at(q));
        q = r.ptr;
      } else if (col == opt.time_col) {
        auto r = std::from_chars(q, end, t);
        if (r.ec != std::errc() || !ends_field(*r.ptr)) {
          // Not a plain int64: fractional or exponent-written times are rounded down, as long
          // as the result fits (int64_t(d) of a double outside that range is undefined).
          double d = 0;
          const auto rd = std::from_chars(q, end, d);
          if (rd.ec == std::errc::invalid_argument || !ends_field(*rd.ptr) ||
              (rd.ec == std::errc() && std::isnan(d)))
            fail("expected an integer time, found " + token_at(q));
          d = std::floor(d);
          if (rd.ec != std::errc() || !(d >= -0x1p63 && d < 0x1p63))
            fail("time " + token_at(q) + " does not fit a 64-bit integer");
          t = int64_t(d);
          r = {rd.ptr, std::errc()};
        }
        q = r.ptr;
      } else {
        while (!ends_field(*q)) ++q;
      }
    }
    if (!sink(id[0], id[1], w, t, line)) return line;
    p = static_cast<const char*>(std::memchr(q, '\n', size_t(end - q))) + 1;
  }
  return line;
}

std::string read_for_parse(const std::string& path, const ProgressFn& progress = {}) {
  std::string buf = read_text_file(path, progress);
  if (buf.empty() || buf.back() != '\n') buf.push_back('\n');
  return buf;  // c_str() supplies the NUL after the final '\n'
}

}  // namespace

std::string read_text_file(const std::string& path, const ProgressFn& progress) {
  std::string text = read_file(path, progress);
  check_line_ends(text.data(), text.data() + text.size(), path, 0);
  return text;
}

void check_line_ends(const char* const begin, const char* const end, const std::string& path,
                     int64_t line0) {
  // One memchr per '\r': nothing to do in a Unix file, one short step per line in a CRLF one.
  for (const char* p = begin; (p = static_cast<const char*>(std::memchr(p, '\r', size_t(end - p))));
       ++p) {
    if (p + 1 < end && p[1] == '\n') continue;
    // A bare '\r' with only blanks after it ends nothing: a file of '\r's alone reads as empty.
    const char* rest = p + 1;
    while (rest < end && (is_space(*rest) || *rest == '\n')) ++rest;
    if (rest == end) break;
    throw InputError(path, line0 + 1 + std::count(begin, p, '\n'),
                     "a carriage return without a line feed (old Mac line ends?): dgnn reads LF "
                     "or CRLF line ends; convert the file, e.g. tr '\\r' '\\n' < IN > OUT");
  }
}

EdgeList read_edge_list(const std::string& path, const EdgeListOptions& opt) {
  const std::string buf = read_for_parse(path, opt.progress);
  const size_t guess = size_t(std::count(buf.begin(), buf.end(), '\n'));
  EdgeList e;
  e.src.reserve(guess);
  e.dst.reserve(guess);
  if (opt.weight_col >= 0) e.weight.reserve(guess);
  if (opt.time_col >= 0) e.time.reserve(guess);
  const bool want_w = opt.weight_col >= 0, want_t = opt.time_col >= 0;
  e.lines = parse_edges(buf.data(), buf.data() + buf.size(), path, opt, 0, nullptr, [&](int64_t s, int64_t d, float w, int64_t t, int64_t) {
    e.src.push_back(s);
    e.dst.push_back(d);
    if (want_w) e.weight.push_back(w);
    if (want_t) e.time.push_back(t);
    return true;
  });
  if (e.src.empty())
    throw InputError(path, 0, "no edges found (expected lines of 'src dst', after any comments)");
  if (opt.bipartite) {
    const int64_t shift = *std::max_element(e.src.begin(), e.src.end()) + 1;
    for (int64_t& d : e.dst) {
      if (d > std::numeric_limits<int64_t>::max() - shift)
        throw InputError(path, 0,
                         "--bipartite: destination id " + std::to_string(d) +
                             " shifted past the largest source id does not fit 64 bits");
      d += shift;
    }
  }
  return e;
}

int64_t parse_edge_chunk(const char* begin, const char* end, const std::string& path,
                         const EdgeListOptions& opt, int64_t line0, EdgeList& out,
                         ChunkHeader* note) {
  const bool want_w = opt.weight_col >= 0, want_t = opt.time_col >= 0;
  const int64_t last = parse_edges(begin, end, path, opt, line0, note,
                                   [&](int64_t s, int64_t d, float w, int64_t t, int64_t line) {
                                     out.src.push_back(s);
                                     out.dst.push_back(d);
                                     if (want_w) out.weight.push_back(w);
                                     if (want_t) out.time.push_back(t);
                                     out.line.push_back(line);
                                     return true;
                                   });
  return last - line0;
}

EdgeLocation find_edge_id_at_least(const std::string& path, const EdgeListOptions& opt,
                                   int64_t limit) {
  const std::string buf = read_for_parse(path);
  EdgeLocation found;
  int64_t shift = 0;  // --bipartite: destinations as read_edge_list shifts them
  if (opt.bipartite)
    parse_edges(buf.data(), buf.data() + buf.size(), path, opt, 0, nullptr,
                [&](int64_t s, int64_t, float, int64_t, int64_t) {
      shift = std::max(shift, s + 1);
      return true;
    });
  parse_edges(buf.data(), buf.data() + buf.size(), path, opt, 0, nullptr,
              [&](int64_t s, int64_t d, float, int64_t, int64_t line) {
    d += shift;
    if (s < limit && d < limit) return true;
    found = {line, s >= limit ? s : d};
    return false;
  });
  return found;
}

}  // namespace dgnn
