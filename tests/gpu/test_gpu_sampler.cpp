// The GPU neighbour sampler (sampler/device_sampler.hpp) against the CPU one: the same blocks,
// entry for entry — same draws, same numbering of sources, same degrees and weights — on a random
// graph with empty rows, self loops (some doubled), duplicate edges and a hub.
#include <catch2/catch.hpp>
#include <vector>

#include "dgnn/common/error.hpp"
#include "dgnn/common/hash_rng.hpp"
#include "dgnn/sampler/device_sampler.hpp"
#include "dgnn/sampler/sampler.hpp"

using namespace dgnn;

namespace {

Csr random_graph(bool weighted) {
  const int64_t n = 2000;
  Rng rng(31);
  std::vector<int32_t> row, col;
  std::vector<float> w;
  auto add = [&](int64_t dst, int64_t src) {
    row.push_back(int32_t(dst));
    col.push_back(int32_t(src));
    if (weighted) w.push_back(0.25f + rng.uniform());
  };
  for (int64_t v = 0; v < n; ++v) {
    if (v % 7 == 3) continue;  // empty rows
    const int64_t deg = int64_t(rng.below(v % 5 == 0 ? 40 : 9));
    for (int64_t i = 0; i < deg; ++i) add(v, int64_t(rng.below(uint64_t(n))));
    if (v % 11 == 0) add(v, v);  // self loops, some twice
    if (v % 22 == 0) add(v, v);
  }
  for (int64_t u = 0; u < n; u += 2) add(0, u);  // a hub with 1000+ in-neighbours
  for (int64_t v = 98; v < n; v += 97)  // rows of 70-odd: taken whole by fanout 100 (a warp each)
    for (int64_t i = 0; i < 70; ++i) add(v, int64_t(rng.below(uint64_t(n))));
  for (int64_t v = 1; v < n; v += 13) add(v, 0);  // ... that many rows point at
  return csr_from_coo(n, n, row, col, w);
}

void require_same(const SampledBatch& cpu, const SampledBatch& gpu) {
  REQUIRE(gpu.seeds == cpu.seeds);
  REQUIRE(gpu.blocks.size() == cpu.blocks.size());
  for (size_t l = 0; l < cpu.blocks.size(); ++l) {
    INFO("layer " << l);
    const Block &c = cpu.blocks[l], &g = gpu.blocks[l];
    REQUIRE(g.n_dst == c.n_dst);
    REQUIRE(g.adj.rows == c.adj.rows);
    REQUIRE(g.adj.cols == c.adj.cols);
    REQUIRE(g.adj.offsets == c.adj.offsets);
    REQUIRE(g.adj.indices == c.adj.indices);
    REQUIRE(g.adj.values == c.adj.values);
    REQUIRE(g.src == c.src);
    REQUIRE(g.src_degree == c.src_degree);
  }
}

}  // namespace

TEST_CASE("GPU sampler: the CPU sampler's blocks, bit for bit", "[gpu]") {
  for (bool weighted : {false, true}) {
    const Csr g = random_graph(weighted);
    LocalNeighborSource local(g);
    for (const std::vector<int>& fanouts :
         std::vector<std::vector<int>>{{3, 5}, {-1}, {2, -1, 4}, {100, 3}})
      for (bool replace : {false, true}) {
        INFO("weighted " << weighted << " fanouts " << fanouts.size() << " layers, first "
                         << fanouts[0] << ", replace " << replace);
        SamplerOptions opt;
        opt.fanouts = fanouts;
        opt.replace = replace;
        opt.seed = 17;
        NeighborSampler cpu(local, opt);
        DeviceNeighborSampler gpu(Device::cuda, g, opt);
        // Seeds with the hub, empty rows and self loops among them; two epochs; one batch of 1.
        std::vector<int64_t> seeds{0, 3, 10, 11, 22, 98, 195, 292};
        for (int64_t v = 1999; v > 1000; v -= 37) seeds.push_back(v);
        for (uint64_t epoch : {0ull, 5ull}) {
          INFO("epoch " << epoch);
          const SampledBatch want = cpu.sample(seeds, epoch);
          const SampledBatch got = to_host(gpu.sample(seeds, epoch));
          require_same(want, got);
          CHECK(want.edges() > 0);
        }
        require_same(cpu.sample({0}, 2), to_host(gpu.sample({0}, 2)));
        require_same(cpu.sample({3}, 2), to_host(gpu.sample({3}, 2)));  // an empty row
      }
  }
}

TEST_CASE("GPU sampler: repeated seeds are refused, and it stays usable", "[gpu]") {
  Csr g = random_graph(false);
  SamplerOptions opt;
  opt.fanouts = {4};
  DeviceNeighborSampler gpu(Device::cuda, g, opt);
  CHECK_THROWS_AS(gpu.sample({5, 6, 5}, 0), OptionError);
  LocalNeighborSource local(g);
  NeighborSampler cpu(local, opt);
  require_same(cpu.sample({5, 6}, 0), to_host(gpu.sample({5, 6}, 0)));
}
