// Outputs are checked against inputs before a run starts, by file identity (device, inode): a
// name, a symbolic link and a hard link of one file are the same file. Inside an input folder
// every file, in every subfolder, counts as an input (an OGB folder keeps its labels in raw/).
#include <unistd.h>

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "dgnn/cli/train_args.hpp"
#include "dgnn/graph/input_files.hpp"

namespace dgnn::cli {

namespace fs = std::filesystem;

void check_writable(const std::string& path, const char* option) {
  if (path.empty()) return;
  fs::path dir = fs::path(path).parent_path();
  if (dir.empty()) dir = ".";
  if (!fs::is_directory(dir))
    throw OptionError(std::string(option) + " " + path + ": folder " + dir.string() +
                      " does not exist");
  if (::access(dir.c_str(), W_OK) != 0)
    throw OptionError(std::string(option) + " " + path + ": folder " + dir.string() +
                      " is not writable");
  if (fs::is_directory(path))
    throw OptionError(std::string(option) + " " + path + ": is a directory (expected a file)");
}

namespace {

struct InputFile {
  const char* option;
  std::string given;  // the path the option gave
  std::string file;   // the file itself (inside `given` when that is a folder)
};

// Every file the inputs name, by identity. A folder is walked to the bottom (links to folders
// are not followed); a walk past kMaxEntries names stops there: no dataset folder holds so many,
// and --graph / must not take minutes to refuse.
std::map<FileId, InputFile> input_files(const std::vector<NamedPath>& inputs) {
  constexpr int kMaxEntries = 200000;
  std::map<FileId, InputFile> ids;
  for (const auto& [option, path] : inputs) {
    if (path.empty()) continue;
    FileId id;
    if (!file_id(path, &id)) continue;  // missing: the reader names it
    std::error_code ec;
    if (!fs::is_directory(path, ec)) {
      ids.emplace(id, InputFile{option, path, path});
      continue;
    }
    int seen = 0;
    for (auto it = fs::recursive_directory_iterator(
             path, fs::directory_options::skip_permission_denied, ec);
         !ec && it != fs::recursive_directory_iterator() && seen < kMaxEntries;
         it.increment(ec), ++seen) {
      if (!it->is_regular_file(ec)) continue;
      const std::string file = it->path().string();
      if (file_id(file, &id)) ids.emplace(id, InputFile{option, path, file});
    }
  }
  return ids;
}

}  // namespace

void check_not_inputs(const std::vector<NamedPath>& inputs, const std::vector<NamedPath>& outputs,
                      const std::string& resumed) {
  const std::map<FileId, InputFile> ids = input_files(inputs);
  FileId resumed_id{};
  const bool resuming = !resumed.empty() && file_id(resumed, &resumed_id);
  std::map<std::string, const char*> written;  // each output's file, links followed
  for (const auto& [option, path] : outputs) {
    if (path.empty()) continue;
    std::error_code ec;
    const fs::path abs = fs::absolute(follow_links(path)).lexically_normal();
    const fs::path canon = fs::weakly_canonical(abs, ec);
    const auto [at, fresh] = written.emplace((ec ? abs : canon).string(), option);
    if (!fresh)
      throw OptionError(std::string(at->second) + " and " + option + " both write " + path +
                        ": give each output a file of its own");
    FileId id;
    if (!file_id(path, &id)) continue;  // a new file cannot be an input
    // --save over --load is resuming in place: the checkpoint is read before it is replaced.
    if (resuming && id == resumed_id && std::string(option) == "--save") continue;
    const auto in = ids.find(id);
    if (in == ids.end()) continue;
    const InputFile& f = in->second;
    if (f.file == f.given)
      throw OptionError(std::string(option) + " " + path + " would overwrite the input given by " +
                        f.option + " " + f.given +
                        (path == f.given ? "" : " (the same file under another name)"));
    throw OptionError(std::string(option) + " " + path +
                      " would overwrite the input folder's file " + f.file + " (" + f.option + " " +
                      f.given + ")");
  }
}

void check_outputs(const std::vector<NamedPath>& inputs, const std::vector<NamedPath>& outputs,
                   const std::string& resumed) {
  for (const auto& [option, path] : outputs) check_writable(path, option);
  check_not_inputs(inputs, outputs, resumed);
}

std::vector<NamedPath> dataset_inputs(const DatasetOptions& data, const std::string& signals) {
  return {{"--graph", data.graph},     {"--features", data.features}, {"--labels", data.labels},
          {"--train-ids", data.train}, {"--val-ids", data.val},       {"--test-ids", data.test},
          {"--signals", signals}};
}

void check_outputs(const TrainArgs& a, const std::vector<NamedPath>& out) {
  std::vector<NamedPath> inputs = dataset_inputs(a.data, a.signals);
  inputs.push_back({"--partition", a.partition_dir});
  inputs.push_back({"--load", a.train.load});
  check_outputs(inputs, out, a.train.load);
}

}  // namespace dgnn::cli
