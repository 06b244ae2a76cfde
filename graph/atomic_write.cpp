#include "dgnn/graph/atomic_write.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "dgnn/common/error.hpp"
#include "dgnn/common/hash_rng.hpp"
#include "dgnn/graph/input_files.hpp"

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

namespace {

// Temporary names of this kind left by a process that is gone (killed before it could clean up:
// kill -9, a signal, MPI_Abort) are removed when the next AtomicFile on the same target opens.
void sweep_stale_temporaries(const std::filesystem::path& target) {
  namespace fs = std::filesystem;
  const std::string prefix = target.filename().string() + ".tmp.";
  const fs::path dir = target.parent_path().empty() ? fs::path(".") : target.parent_path();
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.size() <= prefix.size() || name.compare(0, prefix.size(), prefix) != 0) continue;
    const std::string pid = name.substr(prefix.size());
    if (pid.find_first_not_of("0123456789") != std::string::npos || pid.size() > 9) continue;
    const pid_t p = pid_t(std::stol(pid));
    if (p != ::getpid() && ::kill(p, 0) != 0 && errno == ESRCH) fs::remove(entry.path(), ec);
  }
}

// Opens `path` for writing in place. A FIFO opened for writing waits for a reader, forever if
// none comes: it is opened without waiting, again every 0.1 s for DGNN_FIFO_WAIT seconds
// (default 60) while no reader has it open (ENXIO), then written as usual.
int open_in_place(const std::string& path, int flags) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0 || !S_ISFIFO(st.st_mode))
    return ::open(path.c_str(), flags | O_CLOEXEC, 0644);
  double limit_s = 60;
  if (const char* w = std::getenv("DGNN_FIFO_WAIT"); w && *w) limit_s = std::max(0.0, std::atof(w));
  for (double waited = 0;; waited += 0.1) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd >= 0) {
      ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
      return fd;
    }
    if (errno != ENXIO) return -1;
    if (waited >= limit_s)
      throw IoError(path + ": cannot write: no reader opened the FIFO within " +
                    std::to_string(int(limit_s)) +
                    " s (start its reader first, or set DGNN_FIFO_WAIT)");
    ::usleep(100000);
  }
}

}  // namespace

AtomicFile::AtomicFile(std::string path) : path_(std::move(path)) {
  namespace fs = std::filesystem;
  const fs::path target = follow_links(path_);
  refuse_overwriting_input(path_);
  std::error_code ec;
  const fs::file_status st = fs::status(target, ec);
  if (fs::is_directory(st)) throw IoError(path_ + ": cannot write: it is a directory");
  const bool in_place = fs::exists(st) && !fs::is_regular_file(st);
  target_ = target.string();
  if (in_place) {
    const int fd = open_in_place(target.string(), O_WRONLY | O_TRUNC);
    if (fd >= 0) {
      f_ = ::fdopen(fd, "wb");
      if (!f_) ::close(fd);
    }
  } else {
    // An unnamed file in the target's folder (O_TMPFILE): nothing of it is visible until commit
    // links it in, and a run killed before that leaves nothing behind. Where the file system
    // cannot (some network file systems), a named temporary, swept by the next writer.
    const fs::path dir = target.parent_path().empty() ? fs::path(".") : target.parent_path();
    const int fd = ::open(dir.c_str(), O_TMPFILE | O_WRONLY | O_CLOEXEC, 0666);
    if (fd >= 0) {
      anonymous_fd_ = fd;
      f_ = ::fdopen(fd, "wb");
      if (!f_) ::close(fd);
    } else {
      sweep_stale_temporaries(target);
      tmp_ = target_ + ".tmp." + std::to_string(::getpid());
      f_ = std::fopen(tmp_.c_str(), "wb");
    }
  }
  if (!f_) throw IoError(path_ + ": cannot write (" + std::strerror(errno) + ")");
}

AtomicFile::~AtomicFile() {
  if (f_) {
    std::fclose(f_);  // an unnamed file vanishes with its descriptor
    if (!tmp_.empty()) std::remove(tmp_.c_str());
  }
}

void AtomicFile::commit() {
  // fflush: its failure (disk full) is a failed write too.
  bool ok = std::fflush(f_) == 0 && !std::ferror(f_);
  int err = errno;
  if (ok && anonymous_fd_ >= 0) {
    // Link the unnamed file under a temporary name, then rename it over the target (linkat
    // cannot replace a file); the name exists only between the two calls.
    tmp_ = target_ + ".tmp." + std::to_string(::getpid());
    std::remove(tmp_.c_str());
    const std::string fd_path = "/proc/self/fd/" + std::to_string(anonymous_fd_);
    if (::linkat(AT_FDCWD, fd_path.c_str(), AT_FDCWD, tmp_.c_str(), AT_SYMLINK_FOLLOW) != 0) {
      ok = false;
      err = errno;
      tmp_.clear();
    }
  }
  const bool closed = std::fclose(f_) == 0;
  if (ok && !closed) err = errno;
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

LineLog::LineLog(const std::string& path) : path_(path) {}

LineLog::~LineLog() {
  if (fd_ >= 0) ::close(fd_);
}

void LineLog::line(const std::string& text) {
  if (fd_ < 0) {  // opened by the first line: a run that fails before it leaves no file
    refuse_overwriting_input(path_);  // truncating a hard link of an input would destroy it
    fd_ = open_in_place(path_, O_WRONLY | O_CREAT | O_TRUNC);
    if (fd_ < 0) throw IoError(path_ + ": cannot write: " + std::strerror(errno));
  }
  const std::string whole = text + "\n";
  size_t done = 0;
  while (done < whole.size()) {
    const ssize_t n = ::write(fd_, whole.data() + done, whole.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw IoError(path_ + ": cannot write: " + std::strerror(errno));
    done += size_t(n);
  }
}

void write_dir_atomically(const std::string& dir, const std::string& what,
                          const std::function<bool(const std::string& name)>& is_ours,
                          uint64_t tag_seed,
                          const std::function<void(const std::string& tmp)>& fill,
                          const std::string& marker, bool force) {
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
    bool empty = true, marked = false;
    for (const auto& entry : fs::directory_iterator(target, ec)) {
      const std::string f = entry.path().filename().string();
      // Ours are plain files: a folder (or a link) by one of our names holds someone else's.
      if (!is_ours(f) || !entry.is_regular_file(ec) || entry.is_symlink(ec))
        throw IoError(target.string() + ": refusing to replace a directory that holds '" + f +
                      "', which is not part of a " + what);
      empty = false;
      marked = marked || f == marker;
    }
    if (!marker.empty() && !empty && !marked && !force)
      throw IoError(target.string() + ": refusing to replace a " + what +
                    " that dgnn did not write (it has no " + marker +
                    "); give another folder, or --force to replace it");
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
