#include "dgnn/graph/input_files.hpp"

#include <sys/stat.h>

#include <map>
#include <mutex>

#include "dgnn/common/error.hpp"

namespace dgnn {

namespace {

struct Registry {
  std::mutex mu;
  std::map<FileId, std::string> read;  // identity -> the name it was first read by
};

Registry& registry() {
  static Registry r;
  return r;
}

}  // namespace

bool file_id(const std::string& path, FileId* id) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return false;
  *id = {uint64_t(st.st_dev), uint64_t(st.st_ino)};
  return true;
}

void note_input(int fd, const std::string& path) {
  struct stat st;
  // Only regular files: a pipe or a device (/dev/stdin, /dev/null) is no file to protect.
  if (fd < 0 || ::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) return;
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  r.read.emplace(FileId{uint64_t(st.st_dev), uint64_t(st.st_ino)}, path);
}

void refuse_overwriting_input(const std::string& path, const std::string& option) {
  FileId id;
  if (!file_id(path, &id)) return;  // a new file cannot be an input
  Registry& r = registry();
  std::string input;
  {
    std::lock_guard<std::mutex> lock(r.mu);
    const auto it = r.read.find(id);
    if (it == r.read.end()) return;
    input = it->second;
  }
  throw IoError((option.empty() ? "" : option + " ") + path + ": refusing to write over " +
                (input == path ? "an input of this run" : "the input " + input) +
                (input == path ? "" : " (the same file)") + "; give the output another name");
}

}  // namespace dgnn
