// Host memory: 64-byte aligned so rows start on cache lines and vector loads never split.
#include "dgnn/common/memory.hpp"

#include <unistd.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "dgnn/common/error.hpp"
#include "dgnn/kernels/cpu/cpu_kernels.hpp"

namespace dgnn::kernels::cpu {

namespace {
constexpr size_t kAlign = 64;
// Below this many elements the OpenMP fork costs more than the loop.
constexpr int64_t kParallelMin = 1 << 15;
}  // namespace

// Large blocks are cached by exact size after free: a training step allocates the same shapes
// every epoch, and a fresh multi-megabyte block costs an mmap plus a page fault and kernel
// zeroing per 4 KiB on first touch (measured: half of a 100k-vertex GCN epoch). Each block
// carries a 64-byte header holding its size, so free() knows which bucket it belongs to.
// Blocks from 128 KB are pooled, not only multi-megabyte ones: a rank's share of a graph, or a
// small graph, makes rows of 0.1-1 MB, and malloc's heap, interleaving them with the tape's
// longer-lived blocks, kept a step's freed ones resident in holes no later request fitted
// (CollegeMsg GCRN one process: 80 MB in use, 50 MB free in the heap at the peak; peak 144 ->
// 112 MB with them pooled; the 100k x 30 SBM on 8 ranks: 14-25 MB free a rank -> 7-10).
namespace {

constexpr size_t kPoolMin = size_t(1) << 17;

// Pooled sizes are rounded up to one of four classes per power of two (at most 25% unused): a
// mini-batch step's shapes differ from batch to batch, and an exact-size cache would fill with
// blocks no later request fits (every step then paying fresh pages, the cache growing to its
// limit).
size_t size_class(size_t bytes) {
  if (bytes < kPoolMin) return bytes;
  size_t p = kPoolMin;
  while (p * 2 <= bytes) p *= 2;
  const size_t step = p / 4;
  return (bytes + step - 1) / step * step;
}

struct HostPool {
  std::mutex mu;
  std::unordered_map<size_t, std::vector<void*>> free_blocks;
  size_t cached = 0;
  size_t limit = default_limit();

  static size_t default_limit() {
    if (const char* env = std::getenv("DGNN_HOST_POOL_MB")) return size_t(std::atoll(env)) << 20;
    const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
    return pages > 0 && page > 0 ? size_t(pages) * size_t(page) / 4 : size_t(1) << 30;
  }
};

HostPool& pool() {
  static HostPool* p = new HostPool;  // never destroyed: tensors may be freed during exit
  return *p;
}

// Host tensor bytes handed out and not yet freed. A request that would take them past 90% of the
// memory this process may use (usable_memory_bytes) is refused with a line saying so: the allocator
// would grant it (overcommit), and the run would swap for minutes, then be killed, when the pages
// are touched.
std::atomic<size_t> g_in_use{0};

size_t in_use_limit() {
  static const size_t limit = [] {
    const double have = usable_memory_bytes();
    return have > 0 ? size_t(have * 0.9) : SIZE_MAX;
  }();
  return limit;
}

void reserve_in_use(size_t rounded, size_t bytes) {
  const size_t before = g_in_use.fetch_add(rounded);
  if (before + rounded <= in_use_limit()) return;
  g_in_use.fetch_sub(rounded);
  throw Error("out of memory: " + std::to_string(bytes >> 20) +
              " MB more for this run's tensors (" + std::to_string(before >> 20) +
              " MB in use) is past 90% of" +
              more_than_usable().substr(std::string(", more than").size()) +
              "; a size option (--hidden, --layers, --feature-dim, --batch-size, --fanouts, "
              "--neg-train, --neg-eval) or the graph is too large for it");
}

}  // namespace

size_t bytes_in_use() noexcept { return g_in_use.load(); }

void* alloc(size_t bytes) {
  // aligned_alloc wants a size that is a multiple of the alignment, and a 0-byte request may
  // return null, which the contract forbids.
  size_t rounded = (bytes + kAlign - 1) / kAlign * kAlign;
  if (rounded == 0) rounded = kAlign;
  rounded = size_class(rounded);
  reserve_in_use(rounded, bytes);
  if (rounded >= kPoolMin) {
    HostPool& hp = pool();
    std::lock_guard<std::mutex> lock(hp.mu);
    auto it = hp.free_blocks.find(rounded);
    if (it != hp.free_blocks.end() && !it->second.empty()) {
      void* raw = it->second.back();
      it->second.pop_back();
      hp.cached -= rounded;
      return static_cast<char*>(raw) + kAlign;
    }
  }
  void* raw = std::aligned_alloc(kAlign, rounded + kAlign);
  if (!raw) {
    g_in_use.fetch_sub(rounded);
    throw Error("out of host memory allocating " + std::to_string(bytes) + " bytes");
  }
  *static_cast<size_t*>(raw) = rounded;
  return static_cast<char*>(raw) + kAlign;
}

void free(void* p) noexcept {
  if (!p) return;
  void* raw = static_cast<char*>(p) - kAlign;
  const size_t size = *static_cast<size_t*>(raw);
  g_in_use.fetch_sub(size);
  if (size >= kPoolMin) {
    HostPool& hp = pool();
    std::lock_guard<std::mutex> lock(hp.mu);
    if (hp.cached + size <= hp.limit) {
      try {
        hp.free_blocks[size].push_back(raw);
        hp.cached += size;
        return;
      } catch (...) {
        // Bookkeeping failed to allocate: fall through and really free the block.
      }
    }
  }
  std::free(raw);
}

void release_cached() noexcept {
  HostPool& hp = pool();
  std::lock_guard<std::mutex> lock(hp.mu);
  for (auto& [size, blocks] : hp.free_blocks)
    for (void* b : blocks) std::free(b);
  hp.free_blocks.clear();
  hp.cached = 0;
#ifdef __GLIBC__
  // The blocks freed here, and whatever the program freed before, may sit in malloc's heap
  // below blocks still in use, where free() alone never returns their pages: hand them back.
  malloc_trim(0);
#endif
}

bool trim_free_heap() noexcept {
#ifdef __GLIBC__
  const struct mallinfo2 m = mallinfo2();
  if (m.fordblks < (size_t(4) << 20) || m.fordblks * 8 < m.uordblks) return false;
  malloc_trim(0);
  return true;
#else
  return false;
#endif
}

void copy(void* dst, const void* src, size_t bytes) {
  if (bytes > 0) std::memcpy(dst, src, bytes);
}

void fill(float* x, int64_t n, float value) {
#pragma omp parallel for simd if (n >= kParallelMin)
  for (int64_t i = 0; i < n; ++i) x[i] = value;
}

void copy_view(ConstMatView src, MatView dst, bool accumulate) {
  const int64_t cols = src.cols;
#pragma omp parallel for if (src.rows * cols >= kParallelMin)
  for (int64_t r = 0; r < src.rows; ++r) {
    const float* s = src.row(r);
    float* d = dst.row(r);
    if (accumulate) {
#pragma omp simd
      for (int64_t c = 0; c < cols; ++c) d[c] += s[c];
    } else {
      std::memcpy(d, s, size_t(cols) * sizeof(float));
    }
  }
}

}  // namespace dgnn::kernels::cpu
