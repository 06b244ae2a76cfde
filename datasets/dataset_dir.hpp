#pragma once
// What the generators share to write a dataset directory: fast buffered text output and the
// atomic write-into-a-temporary-folder-then-rename of the whole directory.
#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "dgnn/common/format.hpp"

namespace dgnn::dataset_dir {

// Buffered text output: numbers formatted with to_chars into a large buffer, written with
// fwrite in big blocks (iostreams per number are ~10x slower on 10M-edge files). IoError on
// failure; close() must be called for the data to count as written.
class TextWriter {
 public:
  explicit TextWriter(std::string path);
  ~TextWriter();
  TextWriter(const TextWriter&) = delete;
  TextWriter& operator=(const TextWriter&) = delete;

  void text(const std::string& s) {
    for (char ch : s) put(ch);
  }
  void integer(int64_t v);
  void put(char ch) {
    if (used_ == buf_.size()) flush();
    buf_[used_++] = ch;
  }
  void close();

 private:
  void flush();
  std::string path_;
  FILE* f_ = nullptr;
  std::vector<char> buf_;
  size_t used_ = 0;
};

// "src dst" per line after a header line (a static edge list as the generators write it).
void write_edges(const std::string& path, const std::string& header,
                 const std::vector<int32_t>& src, const std::vector<int32_t>& dst);
// One id per line.
void write_ids(const std::string& path, const std::vector<int32_t>& ids);
// "vertex label" per line (vertex = row index), after a "# ..." header line.
void write_labels(const std::string& path, const std::vector<int32_t>& labels,
                  const std::string& header);

// "%g": parameters in file headers and messages (common/format.hpp).
using dgnn::fmt_double;

// The file every folder `dgnn generate` writes holds, so that it may replace it next time.
inline constexpr const char* kGeneratedMarker = ".dgnn-generated";

// Writes `dir` atomically (write_dir_atomically): `fill(tmp)` writes the files into a fresh
// folder that is then renamed over `dir`, with kGeneratedMarker. An existing `dir` is replaced
// only if it holds nothing but dataset files (edges.txt, features.npy, labels.txt,
// train/val/test.txt, snapshots.txt) and the marker: a copy of a real dataset has our file names
// but not the marker, and is refused unless `force`. `tag` keeps concurrent writers' temporary
// names apart.
void write_atomically(const std::string& dir, uint64_t tag,
                      const std::function<void(const std::string& tmp)>& fill, bool force = false);

}  // namespace dgnn::dataset_dir
