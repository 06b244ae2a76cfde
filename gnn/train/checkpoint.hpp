#pragma once
// Checkpoint files: named float32 tensors plus a JSON metadata string, written atomically
// (temp file + rename) so an interrupted save never leaves a half-written checkpoint.
// Layout: "DGNNCKPT" | u32 version | u64 header bytes | JSON header | raw tensors in order.
#include <string>
#include <utility>
#include <vector>

#include "dgnn/gnn/core/tensor.hpp"

namespace dgnn {

struct Checkpoint {
  std::string meta_json;  // free-form metadata (the trainer's settings and progress)
  std::vector<std::pair<std::string, Tensor>> tensors;

  // The tensor called `name`, or nullptr.
  const Tensor* find(const std::string& name) const;
};

void save_checkpoint(const std::string& path, const std::string& meta_json,
                     const std::vector<std::pair<std::string, const Tensor*>>& tensors);
// IoError for a missing file; InputError for a file that is not a valid dgnn checkpoint.
Checkpoint load_checkpoint(const std::string& path);

}  // namespace dgnn
