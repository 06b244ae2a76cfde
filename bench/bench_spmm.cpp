// SpMM throughput against the machine's copy bandwidth, both measured in this run.
// A random graph (uniform endpoints, seeded) is aggregated at several feature widths; the
// achieved rate counts only the bytes SpMM cannot avoid moving, so 1.0x memcpy is the ceiling
// for a kernel that streams them once (gathered rows hit in cache can push it past that).
// Max aggregation (spmm_extreme: the maximum and the neighbour it came from) and its backward
// are timed beside SpMM on the same graph, with the ratios.
#include <omp.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "dgnn/common/hash_rng.hpp"
#include "dgnn/common/timer.hpp"
#include "dgnn/graph/csr.hpp"
#include "dgnn/kernels/kernels.hpp"

using namespace dgnn;

namespace {

// Edges with uniform random endpoints, bucketed by destination with a counting sort.
Csr random_graph(int64_t n, int64_t m, uint64_t seed) {
  Rng rng(seed);
  std::vector<int32_t> src(static_cast<size_t>(m)), dst(src);
  for (int64_t e = 0; e < m; ++e) {
    src[size_t(e)] = int32_t(rng.below(uint64_t(n)));
    dst[size_t(e)] = int32_t(rng.below(uint64_t(n)));
  }
  Csr g;
  g.rows = g.cols = n;
  g.offsets.assign(size_t(n) + 1, 0);
  for (int32_t d : dst) ++g.offsets[size_t(d) + 1];
  for (int64_t r = 0; r < n; ++r) g.offsets[size_t(r) + 1] += g.offsets[size_t(r)];
  g.indices.resize(size_t(m));
  g.values.resize(size_t(m));
  std::vector<int64_t> next(g.offsets.begin(), g.offsets.end() - 1);
  for (int64_t e = 0; e < m; ++e) {
    const int64_t slot = next[size_t(dst[size_t(e)])]++;
    g.indices[size_t(slot)] = src[size_t(e)];
    g.values[size_t(slot)] = 0.5f + rng.uniform();
  }
  return g;
}

template <typename F>
double best_ms(int reps, F f) {
  f();  // warm-up: first touch, page faults, thread start
  double best = 1e300;
  for (int i = 0; i < reps; ++i) {
    Timer t;
    f();
    best = std::min(best, t.ms());
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  const int64_t n = argc > 1 ? std::atoll(argv[1]) : 100000;
  const int64_t m = argc > 2 ? std::atoll(argv[2]) : 2000000;
  const int reps = argc > 3 ? std::atoi(argv[3]) : 5;
  const Csr g = random_graph(n, m, 42);
  const Csr gt = g.transpose();  // rows ascending, as the backward of an aggregation reads it
  const int threads = omp_get_max_threads();
  std::printf(
      "bench_spmm: %lld vertices, %lld edges (uniform random, seed 42, weighted), "
      "%d OpenMP threads, best of %d\n",
      (long long)n, (long long)m, threads, reps);
  std::printf(
      "floor bytes = (N+1)*8 + nnz*(4+4) + nnz*F*4 + N*F*4 (offsets, indices + values, gathered "
      "rows of X, rows of Y written); memcpy GB/s = bytes copied / time, %d threads\n",
      threads);

  // One copy buffer reused in chunks: a single copy of the F=256 floor (~2 GB) would not fit.
  const size_t chunk = size_t(256) << 20;
  void* copy_src = kernels::alloc(Device::cpu, chunk);
  void* copy_dst = kernels::alloc(Device::cpu, chunk);
  std::memset(copy_src, 1, chunk);
  std::memset(copy_dst, 0, chunk);
  auto parallel_copy = [&](size_t bytes) {
    for (size_t done = 0; done < bytes; done += chunk) {
      const size_t len = std::min(chunk, bytes - done);
      const size_t per = (len + size_t(threads) - 1) / size_t(threads);
#pragma omp parallel for
      for (int t = 0; t < threads; ++t) {
        const size_t lo = std::min(len, size_t(t) * per), hi = std::min(len, lo + per);
        std::memcpy(static_cast<char*>(copy_dst) + lo, static_cast<char*>(copy_src) + lo, hi - lo);
      }
    }
  };

  std::printf("%6s %10s %12s %12s %12s %8s %10s %9s %10s %9s\n", "F", "spmm ms", "floor MB",
              "spmm GB/s", "memcpy GB/s", "ratio", "max ms", "max/spmm", "max bwd ms",
              "bwd/spmm");
  for (int64_t f : {16, 64, 256}) {
    std::vector<float> x(size_t(n * f)), y(size_t(n * f));
    Rng rng(static_cast<uint64_t>(f));
    for (float& v : x) v = rng.uniform();
    const double spmm_ms = best_ms(reps, [&] {
      kernels::spmm(Device::cpu, g.view(), ConstMatView(x.data(), n, f, f), {y.data(), n, f, f});
    });
    // Offsets are read once per row, indices and values once per edge.
    const double bytes = double(n + 1) * 8 + double(m) * (4 + 4) + double(m) * double(f) * 4 +
                         double(n * f) * 4;
    const double copy_ms = best_ms(reps, [&] { parallel_copy(size_t(bytes)); });
    const double spmm_gbs = bytes / (spmm_ms * 1e6), copy_gbs = bytes / (copy_ms * 1e6);
    std::vector<int32_t> arg(size_t(n * f));
    const double max_ms = best_ms(reps, [&] {
      kernels::spmm_extreme(Device::cpu, g.view(), ConstMatView(x.data(), n, f, f),
                            {y.data(), n, f, f}, arg.data(), true);
    });
    // Its backward: each input row gathers the output rows it feeds and their arg rows.
    std::vector<float> gx(size_t(n * f));
    const double bwd_ms = best_ms(reps, [&] {
      kernels::spmm_extreme_backward(Device::cpu, gt.view(), 0, arg.data(),
                                     ConstMatView(y.data(), n, f, f), {gx.data(), n, f, f});
    });
    std::printf("%6lld %10.2f %12.1f %12.2f %12.2f %7.2fx %10.2f %8.2fx %10.2f %8.2fx\n",
                (long long)f, spmm_ms, bytes / 1e6, spmm_gbs, copy_gbs, spmm_gbs / copy_gbs, max_ms,
                max_ms / spmm_ms, bwd_ms, bwd_ms / spmm_ms);
  }
  kernels::free(Device::cpu, copy_src);
  kernels::free(Device::cpu, copy_dst);
  return 0;
}
