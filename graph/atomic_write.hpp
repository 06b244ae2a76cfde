#pragma once
// Atomic writes of files and whole directories: readers (and a later run) see the old content or
// the complete new one, never a partial one left by a crash, a full disk or a concurrent writer.
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>

namespace dgnn {

// A file written aside and renamed over `path` by commit(). It is written as an unnamed file
// (O_TMPFILE) in the same folder, so nothing of it is visible until commit links it in as
// `path.tmp.<pid>` and renames that over `path` (atomic: same folder; per process: two runs never
// share one); a run killed before then leaves nothing. Where the file system has no unnamed
// files, `path.tmp.<pid>` itself is written, and one left by a killed process is removed by the
// next AtomicFile on `path`. Not committed (an exception while writing), nothing is left. IoError,
// naming `path`, when it cannot be created, is a directory, or commit() fails; write errors on
// get() need not be checked one by one: commit() sees them. A symbolic link is followed: the file
// it names is replaced, the link stays. A target that is not a regular file (/dev/null, a FIFO) is
// written in place: a rename would replace the device or pipe with a plain file.
class AtomicFile {
 public:
  explicit AtomicFile(std::string path);
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  std::FILE* get() { return f_; }
  void commit();

 private:
  std::string path_, target_;  // as given; with symbolic links followed
  std::string tmp_;            // a named temporary (none: unnamed, or written in place)
  int anonymous_fd_ = -1;      // the unnamed (O_TMPFILE) file's descriptor, owned by f_
  std::FILE* f_ = nullptr;
};

// A log of one line per event (a JSON-lines file such as --log-json): each line reaches the file
// whole, in one write(), as soon as it is written, so that a reader tailing it, or a run that
// crashes or is killed, has every line so far and never half of one. The file is created (or
// truncated) by the first line, so a run that fails before it leaves none, and one that fails
// later the lines it wrote. IoError naming the file when it cannot be written.
class LineLog {
 public:
  explicit LineLog(const std::string& path);
  ~LineLog();
  LineLog(const LineLog&) = delete;
  LineLog& operator=(const LineLog&) = delete;
  void line(const std::string& text);  // text and a newline

 private:
  std::string path_;
  int fd_ = -1;
};

// `path` with its symbolic links followed to the file they name (which may not exist yet): the
// file an AtomicFile on `path` replaces. IoError for a loop of links.
std::filesystem::path follow_links(const std::string& path);

// `bytes` written to `path` through an AtomicFile.
void write_file_atomically(const std::string& path, std::string_view bytes);

// Writes the directory `dir` atomically: `fill(tmp)` writes the files into a fresh folder next to
// `dir`, which is then renamed over it. An existing `dir` is replaced only if every name in it
// passes `is_ours` (a folder holding anything else could be a user's, and would be destroyed)
// and, when `marker` is given and `dir` is not empty, it holds `marker`: a file that `fill`
// writes into every folder of this kind, so that a user's folder whose files merely have our
// names (a copy of a real dataset) is refused too, unless `force`. IoError otherwise and for any
// failure, after which no temporary folder is left. `what` ("dataset", "partition") names the
// content in messages; `tag_seed` keeps concurrent writers' temporary names apart (with the pid).
void write_dir_atomically(const std::string& dir, const std::string& what,
                          const std::function<bool(const std::string& name)>& is_ours,
                          uint64_t tag_seed,
                          const std::function<void(const std::string& tmp)>& fill,
                          const std::string& marker = "", bool force = false);

}  // namespace dgnn
