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

// A file written under a temporary name and renamed over `path` by commit(). The temporary is
// `path.tmp.<pid>`: in the same folder, so the rename is atomic, and per process, so two runs
// writing the same output never share one. Not committed (an exception while writing), the
// temporary is removed. IoError, naming `path`, when it cannot be created, is a directory, or
// commit() fails; write errors on get() need not be checked one by one: commit() sees them.
// A symbolic link is followed: the file it names is replaced, the link stays. A target that is
// not a regular file (/dev/null, a FIFO) is written in place: a rename would replace the device
// or pipe with a plain file.
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
  std::string tmp_;            // empty: written in place
  std::FILE* f_ = nullptr;
};

// `path` with its symbolic links followed to the file they name (which may not exist yet): the
// file an AtomicFile on `path` replaces. IoError for a loop of links.
std::filesystem::path follow_links(const std::string& path);

// `bytes` written to `path` through an AtomicFile.
void write_file_atomically(const std::string& path, std::string_view bytes);

// Writes the directory `dir` atomically: `fill(tmp)` writes the files into a fresh folder next to
// `dir`, which is then renamed over it. An existing `dir` is replaced only if every name in it
// passes `is_ours` (a folder holding anything else could be a user's, and would be destroyed);
// IoError otherwise and for any failure, after which no temporary folder is left. `what`
// ("dataset", "partition") names the content in messages; `tag_seed` keeps concurrent writers'
// temporary names apart (with the pid).
void write_dir_atomically(const std::string& dir, const std::string& what,
                          const std::function<bool(const std::string& name)>& is_ours,
                          uint64_t tag_seed,
                          const std::function<void(const std::string& tmp)>& fill);

}  // namespace dgnn
