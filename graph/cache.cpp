// Binary graph cache. A file is: fixed header (magic, version, source size and mtime, counts),
// the key text, the raw arrays, and a checksum of the arrays. Anything that does not check out
// (magic, version, key, sizes, checksum, CSR structure) makes the load a miss, never an error.
#include "dgnn/graph/cache.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "dgnn/common/hash_rng.hpp"
#include "dgnn/common/io_stats.hpp"

namespace dgnn {

namespace {

namespace fs = std::filesystem;

constexpr char kMagic[8] = {'D', 'G', 'N', 'N', 'G', 'R', 'P', 'H'};
// 2: a file with bare '\r' line ends (old Mac text) is refused; version 1 cached it as one line.
constexpr uint32_t kVersion = 2;

struct Header {
  char magic[8];
  uint32_t version;
  uint32_t key_bytes;
  int64_t source_size;
  int64_t source_mtime_ns;
  int64_t n;
  int64_t nnz;
  int64_t weighted;
  int64_t directed;
  int64_t input_edges;
  int64_t self_loops_removed;
  int64_t duplicates_merged;
};

struct SourceStamp {
  int64_t size = -1;
  int64_t mtime_ns = 0;
};

bool stamp_of(const std::string& path, SourceStamp& s) {
  struct stat st;
  // Only a regular file has a stamp: a pipe's size and time say nothing about its bytes.
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return false;
  s.size = st.st_size;
  s.mtime_ns = int64_t(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
  return true;
}

std::string absolute_of(const std::string& source) {
  std::error_code ec;
  fs::path p = fs::weakly_canonical(fs::absolute(source, ec), ec);
  return ec ? source : p.string();
}

// Everything that changes the parsed graph, as text: stored in the file to rule out hash
// collisions between different sources or options.
std::string key_of(const std::string& source, const EdgeListOptions& o, int64_t min_vertices) {
  return absolute_of(source) + "|cols=" + std::to_string(o.src_col) + "," +
         std::to_string(o.dst_col) + "," + std::to_string(o.weight_col) + "," +
         std::to_string(o.time_col) + "|directed=" + std::to_string(o.directed) +
         "|self_loops=" + std::to_string(int(o.self_loops)) +
         "|duplicates=" + std::to_string(int(o.duplicates)) +
         "|min_vertices=" + std::to_string(min_vertices) + (o.bipartite ? "|bipartite" : "");
}

uint64_t hash_bytes(const void* data, size_t bytes, uint64_t h) {
  const unsigned char* p = static_cast<const unsigned char*>(data);
  size_t i = 0;
  // Four independent lanes keep the multiply chains from serialising (~GB/s).
  uint64_t lane[4] = {h, h ^ 1, h ^ 2, h ^ 3};
  for (; i + 32 <= bytes; i += 32) {
    for (int k = 0; k < 4; ++k) {
      uint64_t w;
      std::memcpy(&w, p + i + 8 * k, 8);
      lane[k] = (lane[k] ^ w) * 0x9e3779b97f4a7c15ull;
      lane[k] ^= lane[k] >> 29;
    }
  }
  for (; i < bytes; ++i) lane[0] = (lane[0] ^ p[i]) * 0x100000001b3ull;
  return hash_combine(hash_combine(lane[0], lane[1]), hash_combine(lane[2], lane[3])) ^ bytes;
}

std::string cache_dir(const EdgeListOptions& opt) {
  if (!opt.cache_dir.empty()) return opt.cache_dir;
  if (const char* d = std::getenv("DGNN_CACHE_DIR"); d && *d) return d;
  if (const char* d = std::getenv("XDG_CACHE_HOME"); d && *d) return std::string(d) + "/dgnn";
  if (const char* d = std::getenv("HOME"); d && *d) return std::string(d) + "/.cache/dgnn";
  std::error_code ec;
  return (fs::temp_directory_path(ec) / "dgnn-cache").string();
}

bool read_all(int fd, void* dst, size_t bytes) {
  char* p = static_cast<char*>(dst);
  while (bytes > 0) {
    ssize_t got = ::read(fd, p, bytes);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return false;
    count_input_bytes(got);
    p += got;
    bytes -= size_t(got);
  }
  return true;
}

bool write_all(int fd, const void* src, size_t bytes) {
  const char* p = static_cast<const char*>(src);
  while (bytes > 0) {
    ssize_t put = ::write(fd, p, bytes);
    if (put < 0 && errno == EINTR) continue;
    if (put <= 0) return false;
    p += put;
    bytes -= size_t(put);
  }
  return true;
}

struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

// The arrays' sizes in bytes, in file order.
int64_t payload_bytes(int64_t n, int64_t nnz, bool weighted) {
  return (n + 1) * 8 + nnz * 4 + (weighted ? nnz * 4 : 0) + n * 8;
}

bool valid_structure(const Graph& g) {
  const Csr& c = g.in;
  if (c.offsets[0] != 0 || c.offsets[c.rows] != int64_t(c.indices.size())) return false;
  for (int64_t r = 0; r < c.rows; ++r) {
    const int64_t b = c.offsets[r], e = c.offsets[r + 1];
    if (e < b || e > int64_t(c.indices.size())) return false;
    for (int64_t k = b; k < e; ++k) {
      if (uint32_t(c.indices[k]) >= uint64_t(c.cols)) return false;
      if (k > b && c.indices[k] < c.indices[k - 1]) return false;
    }
  }
  for (size_t i = 1; i < g.original_ids.size(); ++i)
    if (g.original_ids[i] <= g.original_ids[i - 1]) return false;
  return g.original_ids.empty() || g.original_ids[0] >= 0;
}

}  // namespace

std::string cache_path_for(const std::string& source, const EdgeListOptions& opt,
                           int64_t min_vertices) {
  const std::string key = key_of(source, opt, min_vertices);
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx",
                (unsigned long long)hash_bytes(key.data(), key.size(), 0x64676e6e));
  std::string stem = fs::path(source).filename().string();
  for (char& ch : stem)
    if (!std::isalnum((unsigned char)ch) && ch != '.' && ch != '-' && ch != '_') ch = '_';
  return (fs::path(cache_dir(opt)) / (stem + "-" + hex + ".dgnn")).string();
}

std::optional<Graph> cache_load(const std::string& source, const EdgeListOptions& opt,
                                int64_t min_vertices) {
  SourceStamp stamp;
  if (!stamp_of(source, stamp)) return std::nullopt;
  const std::string path = cache_path_for(source, opt, min_vertices);
  Fd f;
  f.fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (f.fd < 0) return std::nullopt;
  struct stat st;
  Header h;
  if (::fstat(f.fd, &st) != 0 || !read_all(f.fd, &h, sizeof h)) return std::nullopt;
  if (std::memcmp(h.magic, kMagic, 8) != 0 || h.version != kVersion ||
      h.source_size != stamp.size || h.source_mtime_ns != stamp.mtime_ns)
    return std::nullopt;
  const std::string key = key_of(source, opt, min_vertices);
  if (h.key_bytes != key.size() || h.n < 0 || h.nnz < 0 || h.n > (int64_t(1) << 31) ||
      h.nnz > (int64_t(1) << 40) || (h.weighted != 0 && h.weighted != 1))
    return std::nullopt;
  // The exact file size must match before anything is allocated from the header's counts.
  const int64_t payload = payload_bytes(h.n, h.nnz, h.weighted);
  if (st.st_size != int64_t(sizeof h) + int64_t(key.size()) + payload + 8) return std::nullopt;
  std::string stored_key(key.size(), '\0');
  if (!read_all(f.fd, stored_key.data(), key.size()) || stored_key != key) return std::nullopt;

  Graph g;
  Csr& c = g.in;
  c.rows = c.cols = h.n;
  c.offsets.resize(size_t(h.n + 1));
  c.indices.resize(size_t(h.nnz));
  if (h.weighted) c.values.resize(size_t(h.nnz));
  g.original_ids.resize(size_t(h.n));
  uint64_t sum = 0, stored_sum = 0;
  auto take = [&](void* dst, size_t bytes) {
    if (!read_all(f.fd, dst, bytes)) return false;
    sum = hash_bytes(dst, bytes, sum);
    return true;
  };
  if (!take(c.offsets.data(), c.offsets.size() * 8) ||
      !take(c.indices.data(), c.indices.size() * 4) ||
      !take(c.values.data(), c.values.size() * 4) ||
      !take(g.original_ids.data(), g.original_ids.size() * 8) || !read_all(f.fd, &stored_sum, 8) ||
      stored_sum != sum || !valid_structure(g))
    return std::nullopt;
  g.directed = h.directed != 0;
  g.input_edges = h.input_edges;
  g.self_loops_removed = h.self_loops_removed;
  g.duplicates_merged = h.duplicates_merged;
  return g;
}

void cache_store(const std::string& source, const EdgeListOptions& opt, int64_t min_vertices,
                 const Graph& g) {
  SourceStamp stamp;
  if (!stamp_of(source, stamp)) return;
  const std::string path = cache_path_for(source, opt, min_vertices);
  std::error_code ec;
  fs::create_directories(fs::path(path).parent_path(), ec);
  if (ec) return;
  const std::string key = key_of(source, opt, min_vertices);
  Header h{};
  std::memcpy(h.magic, kMagic, 8);
  h.version = kVersion;
  h.key_bytes = uint32_t(key.size());
  h.source_size = stamp.size;
  h.source_mtime_ns = stamp.mtime_ns;
  h.n = g.in.rows;
  h.nnz = g.in.nnz();
  h.weighted = g.in.weighted();
  h.directed = g.directed;
  h.input_edges = g.input_edges;
  h.self_loops_removed = g.self_loops_removed;
  h.duplicates_merged = g.duplicates_merged;

  // A unique temp name in the same folder, renamed over the target once complete: readers see
  // the old file or the new one, never a partial one (also across concurrent ranks).
  static std::atomic<uint64_t> counter{0};
  const std::string tmp =
      path + ".tmp." + std::to_string(::getpid()) + "." +
      std::to_string(mix64(reinterpret_cast<uintptr_t>(&g) ^ (counter++ << 48)) & 0xffffffff);
  Fd f;
  f.fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (f.fd < 0) return;
  uint64_t sum = 0;
  auto put = [&](const void* src, size_t bytes) {
    sum = hash_bytes(src, bytes, sum);
    return write_all(f.fd, src, bytes);
  };
  bool ok = write_all(f.fd, &h, sizeof h) && write_all(f.fd, key.data(), key.size()) &&
            put(g.in.offsets.data(), g.in.offsets.size() * 8) &&
            put(g.in.indices.data(), g.in.indices.size() * 4) &&
            put(g.in.values.data(), g.in.values.size() * 4) &&
            put(g.original_ids.data(), g.original_ids.size() * 8) && write_all(f.fd, &sum, 8);
  ok = ::close(f.fd) == 0 && ok;
  f.fd = -1;
  if (!ok || ::rename(tmp.c_str(), path.c_str()) != 0) ::unlink(tmp.c_str());
}

}  // namespace dgnn
