// Content hash of a dataset's inputs: a partition directory records it, and a training job
// compares it with its own inputs before trusting the directory's parts.
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dgnn/comm/communicator.hpp"
#include "dgnn/common/error.hpp"
#include "dgnn/common/hash_rng.hpp"
#include "dgnn/common/io_stats.hpp"
#include "dgnn/graph/dataset.hpp"
#include "dgnn/graph/npy.hpp"
#include "dgnn/partition/partition.hpp"

namespace dgnn {

ContentHash::ContentHash(uint64_t seed) {
  for (int k = 0; k < kLanes; ++k) lane_[k] = mix64(seed + uint64_t(k));
}

void ContentHash::update(const void* data, size_t bytes) {
  const unsigned char* p = static_cast<const unsigned char*>(data);
  size_t have = size_t(bytes_ % kBlock);
  bytes_ += bytes;
  auto block = [this](const unsigned char* b) {
    // Independent chains: the multiplies of one word overlap those of the next ones.
    for (int k = 0; k < kLanes; ++k) {
      uint64_t w;
      std::memcpy(&w, b + 8 * k, 8);
      lane_[k] = mix64(lane_[k] ^ w);
    }
  };
  if (have > 0) {
    const size_t take = std::min(bytes, kBlock - have);
    std::memcpy(pending_ + have, p, take);
    p += take, bytes -= take, have += take;
    if (have < kBlock) return;
    block(pending_);
  }
  for (; bytes >= kBlock; p += kBlock, bytes -= kBlock) block(p);
  std::memcpy(pending_, p, bytes);
}

uint64_t ContentHash::digest() const {
  uint64_t l[kLanes];
  std::copy_n(lane_, kLanes, l);
  const size_t rest = size_t(bytes_ % kBlock);
  for (size_t i = 0; i < rest; i += 8) {
    uint64_t w = 0;
    std::memcpy(&w, pending_ + i, std::min<size_t>(8, rest - i));
    l[i / 8] = mix64(l[i / 8] ^ w);
  }
  uint64_t h = bytes_;
  for (uint64_t x : l) h = hash_combine(h, x);
  return h;
}

namespace {

namespace fs = std::filesystem;

// The file's bytes as stored (a .gz is not inflated: reading it is the cost, not inflating it).
void hash_file(ContentHash& h, const std::string& path) {
  if (is_stream(path)) {  // the very bytes the loader parses, read once for both
    const std::string& bytes = stream_bytes(path);
    h.update(bytes.data(), bytes.size());
    return;
  }
  struct Closer {
    void operator()(std::FILE* f) const { std::fclose(f); }
  };
  std::unique_ptr<std::FILE, Closer> f(std::fopen(path.c_str(), "rb"));
  if (!f) throw IoError(path + ": cannot open: " + std::strerror(errno));
  std::vector<unsigned char> buf(size_t(1) << 20);
  size_t got;
  while ((got = std::fread(buf.data(), 1, buf.size(), f.get())) > 0) {
    h.update(buf.data(), got);
    count_input_bytes(int64_t(got));
  }
  if (std::ferror(f.get())) throw IoError(path + ": read error");
}

constexpr int64_t kTreeBlock = int64_t(1) << 20;

// Collective when comm has several ranks: if any rank has an error, every rank raises the one of
// the lowest such rank (AgreedError: reported once); on one rank, the error itself (IoError).
void agree_error(Communicator* comm, const std::string& local) {
  if (!comm || comm->size() == 1) {
    if (!local.empty()) throw IoError(local);
    return;
  }
  double v = local.empty() ? -1e18 : -double(comm->rank());
  comm->allreduce_max(&v, 1);
  if (v < -1e17) return;
  const int from = int(-v);
  std::string msg = local;
  int64_t len = int64_t(msg.size());
  comm->broadcast(&len, 8, from);
  msg.resize(size_t(len));
  comm->broadcast(msg.data(), len, from);
  throw AgreedError(msg);
}

// The size of a plain file that is hashed by blocks (over kTreeBlock bytes), else -1 (a pipe, a
// small file: hashed whole by hash_file).
int64_t tree_size(const std::string& path) {
  if (is_stream(path)) return -1;
  struct stat st;
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return -1;  // hash_file says why
  return st.st_size > kTreeBlock ? int64_t(st.st_size) : -1;
}

// The digest of a file of `size` bytes hashed by blocks: block i's own digest (seeded by i), then
// the size and every block's digest in order. This rank reads blocks [r n / P, (r + 1) n / P).
// Collective when comm has several ranks (one sum of the block digests); an unreadable file on
// any rank is an IoError on every rank.
uint64_t tree_digest(const std::string& path, int64_t size, Communicator* comm,
                     const std::string& earlier) {
  const int p = comm ? comm->size() : 1, r = comm ? comm->rank() : 0;
  const int64_t n = (size + kTreeBlock - 1) / kTreeBlock;
  std::vector<int64_t> digest(size_t(n), 0);
  std::string error = earlier;  // rank 0's error on a file before this one
  if (error.empty()) try {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) throw IoError(path + ": cannot open: " + std::strerror(errno));
    struct Close {
      int fd;
      ~Close() { ::close(fd); }
    } close{fd};
    std::vector<unsigned char> buf(static_cast<size_t>(kTreeBlock));
    for (int64_t i = n * r / p; i < n * (r + 1) / p; ++i) {
      const int64_t at = i * kTreeBlock, want = std::min(kTreeBlock, size - at);
      int64_t got = 0;
      while (got < want) {
        const ssize_t k = ::pread(fd, buf.data() + got, size_t(want - got), at + got);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) throw IoError(path + ": read error (or the file shrank while it was hashed)");
        got += k;
      }
      count_input_bytes(want);
      ContentHash b{uint64_t(i)};
      b.update(buf.data(), size_t(want));
      digest[size_t(i)] = int64_t(b.digest());
    }
  } catch (const Error& e) {
    error = e.what();
  }
  agree_error(comm, error);
  // Each block's digest comes from one rank, zeros from the others: the sum is the list.
  if (p > 1) comm->allreduce_sum(digest.data(), n);
  ContentHash h(0x74726565);  // "tree"
  h.update(&size, sizeof size);
  h.update(digest.data(), digest.size() * sizeof(int64_t));
  return h.digest();
}

void hash_value(ContentHash& h, int64_t v) { h.update(&v, sizeof v); }

void hash_text(ContentHash& h, const std::string& s) {
  hash_value(h, int64_t(s.size()));
  h.update(s.data(), s.size());
}

}  // namespace

std::string dataset_source_hash(const DatasetOptions& opt, Communicator* comm) {
  // Every rank walks the same files; a large plain file is hashed by all of them together
  // (tree_digest), everything else by rank 0, whose digest is the answer.
  const bool root = !comm || comm->rank() == 0;
  std::string failure;
  // The very files load_dataset reads: one resolution, so the hash covers exactly those.
  const DatasetFiles in = dataset_files(opt);
  ContentHash h(0x736f75726365);  // "source"
  // Each role is tagged, so moving a file from one role to another changes the hash.
  for (auto [role, path] : {std::pair{"edges", &in.edges},
                            {"features", &in.features},
                            {"labels", &in.labels},
                            {"train", &in.train},
                            {"val", &in.val},
                            {"test", &in.test},
                            {"vertex_count", &in.vertex_count}}) {
    // (Absent vertex counts are not hashed: folders partitioned before OGB support keep their
    // hash.)
    if (path == &in.vertex_count && path->empty()) continue;
    hash_text(h, role);
    if (path->empty()) {
      hash_value(h, -1);
      continue;
    }
    int64_t size = tree_size(*path);
    if (comm && comm->size() > 1) {
      // Every rank must take the same branch (tree_digest is collective) with the same size.
      double v[2] = {double(size), -double(size)};
      comm->allreduce_max(v, 2);
      if (v[0] != -v[1])
        throw AgreedError(*path + ": not the same file on every rank (its size or kind differs; "
                          "the ranks need one shared file system)");
    }
    if (size >= 0) {
      const uint64_t d = tree_digest(*path, size, comm, failure);
      h.update(&d, sizeof d);
    } else if (root && failure.empty()) {
      // Rank 0 alone: its error waits for the next collective (the others are not reading).
      try {
        hash_file(h, *path);
      } catch (const IoError& e) {
        if (!comm || comm->size() == 1) throw;
        failure = e.what();
      }
    }
    if (path == &in.features) hash_value(h, in.by_row ? 2 : int64_t(is_npy_file(*path)));
  }
  const EdgeListOptions& e = opt.edges;
  for (int64_t v : {int64_t(e.src_col), int64_t(e.dst_col), int64_t(e.weight_col),
                    int64_t(e.time_col), int64_t(e.directed), int64_t(e.self_loops),
                    int64_t(e.duplicates), int64_t(opt.num_classes)})
    hash_value(h, v);
  if (e.bipartite) hash_text(h, "bipartite");  // (only then: earlier hashes stay valid)
  if (in.features.empty()) {
    hash_value(h, int64_t(opt.generated));
    if (opt.generated != GeneratedFeatures::onehot) hash_value(h, opt.generated_dim);
    if (opt.generated == GeneratedFeatures::random) hash_value(h, int64_t(opt.seed));
  }
  if (!in.labels.empty() && in.train.empty() && in.val.empty() && in.test.empty()) {
    hash_value(h, int64_t(std::llround(opt.train_frac * 1e9)));
    hash_value(h, int64_t(std::llround(opt.val_frac * 1e9)));
    hash_value(h, int64_t(opt.seed));
  }
  agree_error(comm, failure);
  int64_t digest = int64_t(h.digest());
  if (comm && comm->size() > 1) comm->broadcast(&digest, 8, 0);
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", (unsigned long long)digest);
  return hex;
}

}  // namespace dgnn
