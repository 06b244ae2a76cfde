// Edge-list parsing and the binary cache, against reading (decompressing) the same bytes.
// Usage: bench_parse [edge-list file] [repeats]. Without a file: soc-Slashdot0902 from the
// shared datasets next to the source tree, else a generated 1M-edge text file in /tmp.
// Prints times (best of N) and ratios measured in this run; asserts nothing.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <string>

#include "dgnn/common/hash_rng.hpp"
#include "dgnn/common/timer.hpp"
#include "dgnn/graph/cache.hpp"
#include "dgnn/graph/graph.hpp"

namespace fs = std::filesystem;
using namespace dgnn;

namespace {

double best_ms(int repeats, const std::function<void()>& fn) {
  double best = 1e300;
  for (int i = 0; i < repeats; ++i) {
    Timer t;
    fn();
    best = std::min(best, t.ms());
  }
  return best;
}

std::string default_input() {
  // bench/ is one level below the source root; the shared datasets sit beside the checkout.
  const fs::path src = fs::path(__FILE__).parent_path().parent_path();
  const fs::path shared =
      src.parent_path() / "shared/datasets/soc-slashdot0902/soc-Slashdot0902.txt.gz";
  std::error_code ec;
  if (fs::exists(shared, ec)) return shared.string();
  const std::string gen = "/tmp/dgnn_bench_parse_1m.txt";
  if (!fs::exists(gen, ec)) {
    std::FILE* f = std::fopen(gen.c_str(), "w");
    if (!f) return gen;
    std::fprintf(f, "# generated: 1,000,000 random edges over 100,000 vertices\n");
    Rng rng(42);
    for (int i = 0; i < 1000000; ++i)
      std::fprintf(f, "%llu\t%llu\n", (unsigned long long)rng.below(100000),
                   (unsigned long long)rng.below(100000));
    std::fclose(f);
  }
  return gen;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const std::string path = argc > 1 && *argv[1] ? argv[1] : default_input();
    const int repeats = argc > 2 ? std::max(1, std::atoi(argv[2])) : 5;
    EdgeListOptions opt;
    opt.directed = false;
    opt.cache_dir =
        (fs::temp_directory_path() / ("dgnn_bench_cache_" + std::to_string(getpid()))).string();

    size_t bytes = 0;
    const double read_ms = best_ms(repeats, [&] { bytes = read_file(path).size(); });
    EdgeList edges;
    const double parse_ms = best_ms(repeats, [&] { edges = read_edge_list(path, opt); });
    Graph g;
    const double build_ms = best_ms(repeats, [&] { g = build_graph(edges, opt); });
    opt.use_cache = false;
    const double load_ms = best_ms(repeats, [&] { g = load_graph(path, opt); });
    opt.use_cache = true;
    const double store_ms = best_ms(1, [&] { cache_store(path, opt, 0, g); });
    bool hit = true;
    const double cache_ms = best_ms(repeats, [&] {
      auto c = cache_load(path, opt, 0);
      hit = hit && c.has_value() && c->num_edges() == g.num_edges();
    });
    std::error_code ec;
    fs::remove_all(opt.cache_dir, ec);

    const double m = double(edges.src.size());
    std::printf("input            %s\n", path.c_str());
    std::printf("bytes            %zu (decompressed)\n", bytes);
    std::printf("edges            %.0f input lines -> %lld vertices, %lld stored (undirected)\n", m,
                (long long)g.num_vertices(), (long long)g.num_edges());
    std::printf("best of %d runs\n", repeats);
    std::printf("plain read       %8.2f ms  (%.0f MB/s)\n", read_ms, bytes / read_ms / 1e3);
    std::printf("parse            %8.2f ms  %6.1f M edges/s  (read_edge_list, incl. read)\n",
                parse_ms, m / parse_ms / 1e3);
    std::printf("build            %8.2f ms  (relabel + CSR)\n", build_ms);
    std::printf("parse + build    %8.2f ms  %6.1f M edges/s  (load_graph, no cache)\n", load_ms,
                m / load_ms / 1e3);
    std::printf("cache store      %8.2f ms  (%lld bytes in memory)\n", store_ms,
                (long long)(g.in.memory_bytes() + 8 * int64_t(g.original_ids.size())));
    std::printf("cache load       %8.2f ms  %s\n", cache_ms, hit ? "" : "(MISS: cache not used!)");
    std::printf("ratio parse / plain read          %6.2f\n", parse_ms / read_ms);
    std::printf("ratio parse+build / cache load    %6.2f\n", load_ms / cache_ms);
    return hit ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_parse: %s\n", e.what());
    return 1;
  }
}
