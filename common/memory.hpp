#pragma once
// This machine's physical memory, for refusing a size option up front (a clear line naming the
// option) rather than letting the allocator fail, or the kernel kill the run, after minutes of
// swapping.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "dgnn/common/error.hpp"

namespace dgnn {

// Bytes of physical memory; 0 when the system does not say.
inline double physical_memory_bytes() {
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGE_SIZE);
  return pages > 0 && page > 0 ? double(pages) * double(page) : 0.0;
}

// True when `bytes` (a lower bound of what a run will hold) is more than this machine has.
inline bool exceeds_memory(double bytes) {
  const double have = physical_memory_bytes();
  return have > 0 && bytes > have;
}

// "12.3 GB" / "512 MB": sizes in messages.
inline std::string memory_str(double bytes) {
  char buf[48];
  if (bytes >= 1e12)
    std::snprintf(buf, sizeof buf, "%.3g TB", bytes / 1e12);
  else if (bytes >= 1e9)
    std::snprintf(buf, sizeof buf, "%.3g GB", bytes / 1e9);
  else
    std::snprintf(buf, sizeof buf, "%.0f MB", bytes / 1e6);
  return buf;
}

// Refuses a model of layer widths `dims` (input first) over `rows` vertices, up front, when its
// weights with their gradients and, for the backward, each layer's input aggregation and output
// (a lower bound of what any layer keeps) need more than this machine has: OptionError naming
// --hidden and --layers, not the allocator after minutes of swapping.
inline void refuse_model_past_memory(const std::vector<int64_t>& dims, int64_t rows, int64_t hidden,
                                     int layers) {
  double weights = 0, activations = 0;
  for (size_t i = 0; i + 1 < dims.size(); ++i) {
    weights += double(dims[i]) * double(dims[i + 1]);
    activations += double(rows) * double(dims[i + 1]);
  }
  const double bytes = 4 * (2 * weights + 2 * activations);
  if (exceeds_memory(bytes))
    throw OptionError("--hidden " + std::to_string(hidden) + " with --layers " +
                      std::to_string(layers) + ": the model's weights and one pass over " +
                      std::to_string(rows) + " vertices need at least " + memory_str(bytes) +
                      ", more than this machine's " + memory_str(physical_memory_bytes()));
}

}  // namespace dgnn
