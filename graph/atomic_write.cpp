#include "dgnn/graph/atomic_write.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "dgnn/common/error.hpp"
#include "dgnn/common/hash_rng.hpp"

namespace dgnn {

std::filesystem::path follow_links(const std::string& path) {
  namespace fs = std::filesystem;
  fs::path p = path;
  std::error_code ec;
  for (int hops = 0; fs::is_symlink(fs::symlink_status(p, ec)); ++hops) {
    if (hops == 40) throw IoError(path + ": too many levels of symbolic links");
    const fs::path link = fs::read_symlink(p, ec);
    if (ec) throw IoError(path + ": cannot read the symbolic link (" + ec.message() + ")");
    p = link.is_absolute() ? link : p.parent_path() / link;
  }
  return p;
}

AtomicFile::AtomicFile(std::string path) : path_(std::move(path)) {
  namespace fs = std::filesystem;
  const fs::path target = follow_links(path_);
  std::error_code ec;
  const fs::file_status st = fs::status(target, ec);
  if (fs::is_directory(st)) throw IoError(path_ + ": cannot write: it is a directory");
  const bool in_place = fs::exists(st) && !fs::is_regular_file(st);
  if (!in_place) tmp_ = target.string() + ".tmp." + std::to_string(::getpid());
  f_ = std::fopen(in_place ? target.c_str() : tmp_.c_str(), "wb");
  if (!f_) throw IoError(path_ + ": cannot write (" + std::strerror(errno) + ")");
  target_ = target.string();
}

AtomicFile::~AtomicFile() {
  if (f_) {
    std::fclose(f_);
    if (!tmp_.empty()) std::remove(tmp_.c_str());
  }
}

void AtomicFile::commit() {
  // fclose flushes: its failure (disk full) is a failed write too.
  const bool ok = std::fflush(f_) == 0 && !std::ferror(f_);
  const bool closed = std::fclose(f_) == 0;
  const int err = errno;
  f_ = nullptr;
  if (!ok || !closed) {
    if (!tmp_.empty()) std::remove(tmp_.c_str());
    throw IoError(path_ + ": write failed (" + std::strerror(err) + ")");
  }
  if (tmp_.empty()) return;  // written in place
  if (std::rename(tmp_.c_str(), target_.c_str()) != 0) {
    const int rename_err = errno;
    std::remove(tmp_.c_str());
    throw IoError(path_ + ": cannot move the written file into place (" +
                  std::strerror(rename_err) + ")");
  }
}

void write_file_atomically(const std::string& path, std::string_view bytes) {
  AtomicFile out(path);
  std::fwrite(bytes.data(), 1, bytes.size(), out.get());
  out.commit();
}

void write_dir_atomically(const std::string& dir, const std::string& what,
                          const std::function<bool(const std::string& name)>& is_ours,
                          uint64_t tag_seed,
                          const std::function<void(const std::string& tmp)>& fill) {
  namespace fs = std::filesystem;
  fs::path target = fs::path(dir).lexically_normal();
  if (!target.has_filename()) target = target.parent_path();  // "out/" -> "out"
  if (target.empty()) throw IoError("empty " + what + " directory name");
  // A link to a folder: the folder it names is replaced, the link stays.
  target = follow_links(target.string()).lexically_normal();
  const fs::path parent = target.parent_path().empty() ? fs::path(".") : target.parent_path();
  const std::string name = target.filename().string();
  std::error_code ec;

  // Replacing a folder that holds anything else could destroy a user's files.
  if (fs::exists(target, ec)) {
    if (!fs::is_directory(target, ec))
      throw IoError(target.string() + ": exists and is not a directory");
    for (const auto& entry : fs::directory_iterator(target, ec)) {
      const std::string f = entry.path().filename().string();
      // Ours are plain files: a folder (or a link) by one of our names holds someone else's.
      if (!is_ours(f) || !entry.is_regular_file(ec) || entry.is_symlink(ec))
        throw IoError(target.string() + ": refusing to replace a directory that holds '" + f +
                      "', which is not part of a " + what);
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

  // rename() cannot replace a non-empty directory: the old one is moved aside first.
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
    const std::string msg = ec.message();
    if (had_old) fs::rename(old, target, ec);
    fs::remove_all(tmp, ec);
    throw IoError(target.string() + ": cannot rename the written " + what + " into place: " + msg);
  }
  if (had_old) fs::remove_all(old, ec);
}

}  // namespace dgnn
