#pragma once
// How many input bytes this process has read from files: what `dgnn train` reports per rank
// (the startup line, --log-json's rank_read_bytes), to show that no rank reads the whole input.
// Every reader of input files counts the bytes it takes from the file as it reads them: a .gz
// counts its compressed bytes (what came off the disk), a pipe what was drained from it, the
// binary parse cache and partition folders what was read of them. Format probes re-read later
// (a file's first two bytes, a .gz's last four) are not counted. Checkpoints are not input.
#include <atomic>
#include <cstdint>

namespace dgnn {

namespace detail {
inline std::atomic<int64_t>& input_bytes_counter() {
  static std::atomic<int64_t> bytes{0};
  return bytes;
}
}  // namespace detail

// Adds `n` bytes read from an input file. Thread-safe (readers may run on several threads).
inline void count_input_bytes(int64_t n) {
  if (n > 0) detail::input_bytes_counter().fetch_add(n, std::memory_order_relaxed);
}

// The input bytes this process has read so far.
inline int64_t input_bytes_read() {
  return detail::input_bytes_counter().load(std::memory_order_relaxed);
}

}  // namespace dgnn
