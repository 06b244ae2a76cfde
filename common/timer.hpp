#pragma once
// Wall-clock stopwatch in milliseconds, and a scope guard that adds a scope's time to a counter.
#include <chrono>

namespace dgnn {

class Timer {
 public:
  Timer() : start_(std::chrono::steady_clock::now()) {}
  void reset() { start_ = std::chrono::steady_clock::now(); }
  double ms() const {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start_)
        .count();
  }

 private:
  std::chrono::steady_clock::time_point start_;
};

// Adds the wall time of its scope to `into` (a stats field), also when the scope exits by an
// exception, so the counters stay right on error paths.
class ScopedMs {
 public:
  explicit ScopedMs(double& into) : into_(into) {}
  ~ScopedMs() { into_ += timer_.ms(); }
  ScopedMs(const ScopedMs&) = delete;
  ScopedMs& operator=(const ScopedMs&) = delete;

 private:
  double& into_;
  Timer timer_;
};

}  // namespace dgnn
