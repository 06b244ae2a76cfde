#pragma once
// The files this process has read as input, by identity (device, inode), not by name: an output
// that would replace or truncate one of them, under its own name, through a symbolic link or
// through a hard link, is refused before a byte of it is written.
#include <cstdint>
#include <string>
#include <utility>

namespace dgnn {

// A file's identity: (device, inode). Two names of one file (hard or symbolic links) share it.
using FileId = std::pair<uint64_t, uint64_t>;

// The identity of the file `path` names, links followed; false when it does not exist.
bool file_id(const std::string& path, FileId* id);

// Records that this process reads `fd`, opened on `path`, as input (readers call it right after
// opening: graphs, features, labels, splits, signals, partitions). Thread-safe.
void note_input(int fd, const std::string& path);

// IoError when `path` (links followed) is a file this process has read as input, naming the
// output, what it was read as (its first name) and `option` when given ("--log-json"). Called by
// every writer of outputs (AtomicFile, LineLog) before it creates or truncates anything.
void refuse_overwriting_input(const std::string& path, const std::string& option = "");

}  // namespace dgnn
