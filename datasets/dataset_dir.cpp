#include "dgnn/datasets/dataset_dir.hpp"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "dgnn/common/error.hpp"
#include "dgnn/graph/atomic_write.hpp"

namespace dgnn::dataset_dir {

namespace {

const char* const kDatasetFiles[] = {"edges.txt",     "features.npy",  "labels.txt",
                                     "train.txt",     "val.txt",       "test.txt",
                                     "snapshots.txt", "signals.npy",   kGeneratedMarker};

}  // namespace

TextWriter::TextWriter(std::string path) : path_(std::move(path)), buf_(size_t(1) << 20) {
  f_ = std::fopen(path_.c_str(), "wb");
  if (!f_) throw IoError(path_ + ": cannot create: " + std::strerror(errno));
}

TextWriter::~TextWriter() {
  if (f_) std::fclose(f_);
}

void TextWriter::integer(int64_t v) {
  if (buf_.size() - used_ < 24) flush();
  used_ = std::to_chars(buf_.data() + used_, buf_.data() + buf_.size(), v).ptr - buf_.data();
}

void TextWriter::close() {
  flush();
  FILE* f = f_;
  f_ = nullptr;
  if (std::fclose(f) != 0) throw IoError(path_ + ": write failed: " + std::strerror(errno));
}

void TextWriter::flush() {
  if (used_ && std::fwrite(buf_.data(), 1, used_, f_) != used_)
    throw IoError(path_ + ": write failed: " + std::strerror(errno));
  used_ = 0;
}

void write_edges(const std::string& path, const std::string& header,
                 const std::vector<int32_t>& src, const std::vector<int32_t>& dst) {
  TextWriter w(path);
  w.text(header);
  w.put('\n');
  for (size_t i = 0; i < src.size(); ++i) {
    w.integer(src[i]);
    w.put(' ');
    w.integer(dst[i]);
    w.put('\n');
  }
  w.close();
}

void write_ids(const std::string& path, const std::vector<int32_t>& ids) {
  TextWriter w(path);
  for (int32_t v : ids) w.integer(v), w.put('\n');
  w.close();
}

void write_labels(const std::string& path, const std::vector<int32_t>& labels,
                  const std::string& header) {
  TextWriter w(path);
  w.text("# " + header + "\n");
  for (size_t v = 0; v < labels.size(); ++v) {
    w.integer(int64_t(v));
    w.put(' ');
    w.integer(labels[v]);
    w.put('\n');
  }
  w.close();
}

void write_atomically(const std::string& dir, uint64_t tag_seed,
                      const std::function<void(const std::string& tmp)>& fill, bool force) {
  write_dir_atomically(
      dir, "dataset",
      [](const std::string& f) {
        return std::find(std::begin(kDatasetFiles), std::end(kDatasetFiles), f) !=
               std::end(kDatasetFiles);
      },
      tag_seed,
      [&](const std::string& tmp) {
        fill(tmp);
        std::ofstream((std::filesystem::path(tmp) / kGeneratedMarker).string())
            << "written by dgnn generate: `dgnn generate --out` may replace this folder\n";
      },
      kGeneratedMarker, force);
}

}  // namespace dgnn::dataset_dir
