#include "datasets/dataset_dir.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>

#include "common/error.hpp"
#include "common/hash_rng.hpp"

namespace dgnn::dataset_dir {

namespace {

const char* const kDatasetFiles[] = {"edges.txt", "features.npy", "labels.txt",   "train.txt",
                                     "val.txt",   "test.txt",     "snapshots.txt"};

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

void write_ids(const std::string& path, const std::vector<int32_t>& ids) {
  TextWriter w(path);
  for (int32_t v : ids) w.integer(v), w.put('\n');
  w.close();
}

std::string fmt_double(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", x);
  return buf;
}

void write_atomically(const std::string& dir, const std::string& who, uint64_t tag_seed,
                      const std::function<void(const std::string& tmp)>& fill) {
  namespace fs = std::filesystem;
  fs::path target = fs::path(dir).lexically_normal();
  if (!target.has_filename()) target = target.parent_path();  // "out/" -> "out"
  if (target.empty()) throw IoError(who + ": empty output directory name");
  fs::path parent = target.parent_path().empty() ? fs::path(".") : target.parent_path();
  const std::string name = target.filename().string();
  std::error_code ec;

  // Replacing a folder that holds anything else could destroy a user's files.
  if (fs::exists(target, ec)) {
    if (!fs::is_directory(target, ec))
      throw IoError(target.string() + ": exists and is not a directory");
    for (const auto& entry : fs::directory_iterator(target, ec)) {
      std::string f = entry.path().filename().string();
      if (std::find(std::begin(kDatasetFiles), std::end(kDatasetFiles), f) ==
          std::end(kDatasetFiles))
        throw IoError(target.string() + ": refusing to replace a directory that holds '" + f +
                      "', which is not part of a dataset");
    }
  }
  fs::create_directories(parent, ec);
  if (ec) throw IoError(parent.string() + ": cannot create directory: " + ec.message());

  // Same parent, so the final rename is atomic; pid + tag keep concurrent runs apart.
  const std::string tag =
      std::to_string(::getpid()) + "-" + std::to_string(mix64(tag_seed) & 0xffffff);
  const fs::path tmp = parent / ("." + name + ".tmp-" + tag);
  fs::remove_all(tmp, ec);
  if (!fs::create_directory(tmp, ec) || ec)
    throw IoError(tmp.string() + ": cannot create directory: " + ec.message());
  try {
    fill(tmp.string());
  } catch (...) {
    fs::remove_all(tmp, ec);
    throw;
  }

  // An existing dataset is moved aside first: rename() cannot replace a non-empty directory.
  const fs::path old = parent / ("." + name + ".old-" + tag);
  const bool had_old = fs::exists(target, ec);
  if (had_old) {
    fs::rename(target, old, ec);
    if (ec) {
      fs::remove_all(tmp, ec);
      throw IoError(target.string() + ": cannot replace: " + ec.message());
    }
  }
  fs::rename(tmp, target, ec);
  if (ec) {
    std::string msg = ec.message();
    if (had_old) fs::rename(old, target, ec);
    fs::remove_all(tmp, ec);
    throw IoError(target.string() + ": cannot rename the written dataset into place: " + msg);
  }
  if (had_old) fs::remove_all(old, ec);
}

}  // namespace dgnn::dataset_dir
