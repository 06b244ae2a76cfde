#pragma once
// This machine's physical memory, for refusing a size option up front (a clear line naming the
// option) rather than letting the allocator fail, or the kernel kill the run, after minutes of
// swapping; and this process's peak resident memory, which runs report per rank.
#include <sys/resource.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "dgnn/common/error.hpp"

namespace dgnn {

// The most resident memory (RSS) this process has held so far, in bytes (getrusage's ru_maxrss,
// which Linux gives in KiB); 0 when the system does not say. Host memory only: a GPU's is not in it.
inline int64_t peak_resident_bytes() {
  struct rusage ru;
  if (::getrusage(RUSAGE_SELF, &ru) != 0 || ru.ru_maxrss < 0) return 0;
  return int64_t(ru.ru_maxrss) * 1024;
}

// Bytes of physical memory; 0 when the system does not say.
inline double physical_memory_bytes() {
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGE_SIZE);
  return pages > 0 && page > 0 ? double(pages) * double(page) : 0.0;
}

// The memory this process may use: the machine's, or less under an address-space limit
// (ulimit -v) or a cgroup's memory.max (a container, a batch job); 0 when nothing says.
// *what (optional) names where the bound comes from, for messages.
inline double usable_memory_bytes(std::string* what = nullptr) {
  double best = physical_memory_bytes();
  std::string why = "this machine's memory";
  struct rlimit rl;
  if (::getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
      (best == 0 || double(rl.rlim_cur) < best)) {
    best = double(rl.rlim_cur);
    why = "the address-space limit (ulimit -v)";
  }
  if (std::FILE* f = std::fopen("/sys/fs/cgroup/memory.max", "r")) {
    unsigned long long v = 0;
    if (std::fscanf(f, "%llu", &v) == 1 && v > 0 && (best == 0 || double(v) < best)) {
      best = double(v);
      why = "the cgroup's memory.max";
    }
    std::fclose(f);
  }
  if (what) *what = why;
  return best;
}

// True when `bytes` (a lower bound of what a run will hold) is more than this process may use.
inline bool exceeds_memory(double bytes) {
  const double have = usable_memory_bytes();
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

// ", more than the 25.3 GB of this machine's memory": the tail of a message refusing a size.
inline std::string more_than_usable() {
  std::string what;
  const double have = usable_memory_bytes(&what);
  return ", more than the " + memory_str(have) + " of " + what;
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
  if (exceeds_memory(bytes)) {
    std::string widths;
    for (size_t i = 0; i < dims.size(); ++i) {
      if (dims.size() > 6 && i >= 3 && i + 2 < dims.size()) {  // a deep model: its ends
        if (i == 3) widths += " -> ...";
        continue;
      }
      widths += (widths.empty() ? "" : " -> ") + std::to_string(dims[i]);
    }
    throw OptionError("a model of widths " + widths + " (the input's features, --hidden " +
                      std::to_string(hidden) + " x --layers " + std::to_string(layers) +
                      ", the output: classes or --num-classes) over " + std::to_string(rows) +
                      " vertices needs at least " + memory_str(bytes) +
                      " for its weights and one pass" + more_than_usable());
  }
}

}  // namespace dgnn
