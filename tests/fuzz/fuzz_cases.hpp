#pragma once
// The harnesses' bodies, one function per reader, shared by the libFuzzer entry points
// (fuzz_*.cpp, built by scripts/fuzz.sh) and by the replay test (test_fuzz_replay.cpp, in the
// ordinary test suite), which runs every seed and every past finding through the same code.
#include <zlib.h>

#include <cstring>
#include <vector>

#include "dgnn/gnn/train/checkpoint.hpp"
#include "dgnn/graph/graph.hpp"
#include "dgnn/graph/npy.hpp"
#include "dgnn/graph/temporal.hpp"
#include "dgnn/partition/partition.hpp"
#include "fuzz_input.hpp"

namespace dgnn::fuzz {

// The edge-list reader (text and .gz) and the snapshot builder behind it. The first byte picks
// the options (directed, weight and time columns, self loops, duplicates, snapshot mode and
// count, whether the rest is gzipped by the harness first, so the parser behind the inflater
// is reached too); the rest is the file.
inline void edge_list(const uint8_t* data, size_t size) {
  if (size < 2) return;
  static fuzz::MemFile file;
  const uint8_t pick = data[0], more = data[1];
  data += 2;
  size -= 2;
  // the harness gzips the text, so the inflater hands the reader real text
  std::vector<uint8_t> gz;
  if (pick & 0x80) {
    gz = gzip_bytes(data, size);
    data = gz.data();
    size = gz.size();
  }
  const std::string& path = file.hold(data, size);
  EdgeListOptions opt;
  opt.use_cache = false;
  opt.directed = pick & 1;
  opt.weight_col = pick & 2 ? 2 : -1;
  const bool temporal = pick & 4;
  if (temporal) opt.time_col = opt.weight_col >= 0 ? 3 : 2;
  opt.self_loops = pick & 8 ? SelfLoops::keep : SelfLoops::remove;
  opt.duplicates = pick & 16 ? Duplicates::keep : Duplicates::merge;
  if (pick & 32) std::swap(opt.src_col, opt.dst_col);
  fuzz::expect_clean([&] {
    if (!temporal) {
      const Graph g = load_graph(path, opt, more & 64 ? int64_t(more & 63) : 0);
      (void)g;
      return;
    }
    SnapshotOptions snap;
    if (more & 1) {
      snap.seconds = double((more >> 1 & 15) + 1) * (more & 32 ? 1000.0 : 1.0);
    } else {
      snap.count = (more >> 1 & 15) + 1;
    }
    snap.mode = more & 64 ? SnapshotMode::sliding : SnapshotMode::window;
    snap.window = more & 128 ? 3 : 1;
    const EdgeList e = read_edge_list(path, opt);
    const TemporalGraph t = build_temporal(e, opt, snap, path, pick & 64 ? 20 : 0);
    (void)t;
  });
}

// The .npy reader: headers (v1-v3, any dict text), shapes that overflow or exceed the file,
// float32 / float64 data, plain or gzipped (the first byte's low bit gzips the rest first).
inline void npy(const uint8_t* data, size_t size) {
  if (size < 1) return;
  static fuzz::MemFile file;
  const bool gzip = data[0] & 1;
  ++data;
  --size;
  std::vector<uint8_t> gz;
  if (gzip) {
    gz = gzip_bytes(data, size);
    data = gz.data();
    size = gz.size();
  }
  const std::string& path = file.hold(data, size);
  fuzz::expect_clean([&] {
    const NpyMatrix m = read_npy(path);
    if (m.data.size() != size_t(m.rows * m.cols)) std::abort();  // what the reader promises
  });
}

// The checkpoint reader. Mutated bytes mostly fail the checksum, so when the first byte's low
// bit is set the harness makes the checksum right (a version-2 file's last 4 bytes), and the
// header and layout checks behind it are what the input reaches.
inline void checkpoint(const uint8_t* data, size_t size) {
  if (size < 1) return;
  static fuzz::MemFile file;
  const bool fix_crc = data[0] & 1;
  std::vector<uint8_t> b(data + 1, data + size);
  if (fix_crc && b.size() >= 24) {
    const uint32_t crc = uint32_t(crc32(0, b.data() + 12, uInt(b.size() - 4 - 12)));
    std::memcpy(b.data() + b.size() - 4, &crc, 4);
  }
  const std::string& path = file.hold(b.data(), b.size());
  fuzz::expect_clean([&] {
    const Checkpoint c = load_checkpoint(path);
    for (const auto& [name, t] : c.tensors) (void)t.numel();
  });
}

// Partition part files (what `dgnn partition --out` writes per rank and ranks send each
// other): decode_part must refuse every damaged or crafted file with InputError. The part's
// checksum is over everything before it; with the first byte's low bit set the harness makes
// it right, so the decoder's structural checks are reached.
inline void part(const uint8_t* data, size_t size) {
  if (size < 1) return;
  const bool fix = data[0] & 1;
  std::string b(reinterpret_cast<const char*>(data) + 1, size - 1);
  if (fix && b.size() >= 8) {
    ContentHash h;
    h.update(b.data(), b.size() - 8);
    const uint64_t sum = h.digest();
    std::memcpy(b.data() + b.size() - 8, &sum, 8);
  }
  fuzz::expect_clean([&] {
    const LocalPart p = decode_part(b, "fuzz.part");
    (void)p;
  });
}

// By harness name, for the replay test.
inline void run(const std::string& harness, const uint8_t* data, size_t size) {
  if (harness == "edge_list") edge_list(data, size);
  if (harness == "npy") npy(data, size);
  if (harness == "checkpoint") checkpoint(data, size);
  if (harness == "part") part(data, size);
}

}  // namespace dgnn::fuzz
