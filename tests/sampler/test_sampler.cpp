// Neighbour sampling: the draws (distinct, the asked number, uniform, keyed by seed / epoch /
// layer / vertex and independent of the thread count), the blocks (destinations first, real
// in-edges, compact numbering, chained layer to layer), the epoch shuffle and --fanouts parsing.
#include <catch2/catch.hpp>
#include <map>
#include <set>

#include "dgnn/common/error.hpp"
#include "dgnn/datasets/sbm.hpp"
#include "dgnn/sampler/sampler.hpp"

using namespace dgnn;

namespace {

const Csr& sbm_graph() {
  static const Dataset d = [] {
    SbmConfig cfg;
    cfg.vertices = 3000;
    cfg.classes = 4;
    cfg.avg_degree = 12;
    cfg.seed = 5;
    return generate_sbm(cfg).to_dataset();
  }();
  return d.graph.in;
}

bool has_edge(const Csr& g, int64_t src, int64_t dst) {
  for (int64_t e = g.offsets[dst]; e < g.offsets[dst + 1]; ++e)
    if (g.indices[e] == src) return true;
  return false;
}

std::vector<int64_t> iota_ids(int64_t n, int64_t step = 1) {
  std::vector<int64_t> v;
  for (int64_t i = 0; i < n; ++i) v.push_back(i * step);
  return v;
}

}  // namespace

TEST_CASE("parse_fanouts: integers >= 1 or -1; anything else names --fanouts") {
  CHECK(parse_fanouts("10,25") == std::vector<int>{10, 25});
  CHECK(parse_fanouts(" 5 , -1 ") == std::vector<int>{5, -1});
  CHECK(parse_fanouts("3") == std::vector<int>{3});
  for (const char* bad : {"", "10,", "a,b", "10,0", "-2", "1.5", "10;25", "99999999999"}) {
    INFO(bad);
    try {
      parse_fanouts(bad);
      FAIL("accepted");
    } catch (const OptionError& e) {
      CHECK(std::string(e.what()).find("--fanouts") != std::string::npos);
    }
  }
}

TEST_CASE("sample_positions: distinct and sorted without replacement, exact counts, all for -1") {
  for (int64_t deg : {0, 1, 5, 9, 40, 100, 1000}) {
    for (int fanout : {-1, 1, 3, 10, 25}) {
      for (bool replace : {false, true}) {
        INFO("deg " << deg << " fanout " << fanout << " replace " << replace);
        const int64_t k = sample_count(deg, fanout, replace);
        if (fanout < 0 || deg == 0)
          CHECK(k == deg);
        else
          CHECK(k == (replace ? fanout : std::min<int64_t>(fanout, deg)));
        std::vector<int64_t> a(static_cast<size_t>(k)), b(static_cast<size_t>(k));
        sample_positions(deg, fanout, replace, 77, a.data());
        sample_positions(deg, fanout, replace, 77, b.data());
        CHECK(a == b);  // a pure function of the key
        CHECK(std::is_sorted(a.begin(), a.end()));
        for (int64_t p : a) CHECK((p >= 0 && p < deg));
        if (!replace) CHECK(std::set<int64_t>(a.begin(), a.end()).size() == a.size());
      }
    }
  }
}

TEST_CASE("sample_positions draws every neighbour equally often") {
  // 10 of 40 (Floyd's branch) and 30 of 40 (selection branch), with and without replacement:
  // each position's frequency over 20,000 keys is k/deg within 6 standard deviations.
  const int64_t deg = 40, trials = 20000;
  for (int fanout : {10, 30}) {
    for (bool replace : {false, true}) {
      std::vector<int64_t> hits(static_cast<size_t>(deg), 0), pos(static_cast<size_t>(fanout));
      for (int64_t t = 0; t < trials; ++t) {
        sample_positions(deg, fanout, replace, uint64_t(t) * 7919 + 1, pos.data());
        for (int64_t p : pos) ++hits[size_t(p)];
      }
      const double expect = double(trials) * fanout / double(deg);
      const double sd = std::sqrt(expect);
      for (int64_t p = 0; p < deg; ++p) {
        INFO("fanout " << fanout << " replace " << replace << " position " << p);
        CHECK(std::abs(double(hits[size_t(p)]) - expect) < 6 * sd);
      }
    }
  }
}

TEST_CASE("blocks: destinations first, real in-edges, fanout respected, layers chained") {
  const Csr& g = sbm_graph();
  LocalNeighborSource src(g);
  SamplerOptions opt;
  opt.fanouts = {4, 7};
  opt.seed = 3;
  NeighborSampler sampler(src, opt);
  const std::vector<int64_t> seeds = iota_ids(50, 37);
  SampledBatch b = sampler.sample(seeds, 0);
  REQUIRE(b.blocks.size() == 2);
  CHECK(b.seeds == seeds);
  CHECK(b.blocks[1].n_dst == 50);
  for (int l = 0; l < 2; ++l) {
    const Block& blk = b.blocks[size_t(l)];
    INFO("layer " << l);
    REQUIRE(blk.adj.rows == blk.n_dst);
    REQUIRE(blk.adj.cols == blk.n_src());
    CHECK(std::set<int64_t>(blk.src.begin(), blk.src.end()).size() == blk.src.size());
    std::vector<bool> used(size_t(blk.n_src()), false);
    for (int64_t v = 0; v < blk.n_dst; ++v) used[size_t(v)] = true;
    for (int64_t v = 0; v < blk.n_dst; ++v) {
      const int64_t gv = blk.src[size_t(v)];
      const int64_t deg = g.degree(gv);
      std::set<int64_t> seen;
      for (int64_t e = blk.adj.offsets[v]; e < blk.adj.offsets[v + 1]; ++e) {
        const int64_t gu = blk.src[size_t(blk.adj.indices[e])];
        CHECK(has_edge(g, gu, gv));
        seen.insert(gu);
        used[size_t(blk.adj.indices[e])] = true;
      }
      CHECK(int64_t(seen.size()) == blk.adj.degree(v));  // without replacement: distinct
      CHECK(blk.adj.degree(v) == std::min<int64_t>(deg, opt.fanouts[size_t(l)]));
      CHECK(blk.src_degree[size_t(v)] == deg);
    }
    // Compact: every source beyond the destinations is some row's neighbour.
    CHECK(std::count(used.begin(), used.end(), false) == 0);
  }
  // Layer 0's destinations are exactly layer 1's sources, in order.
  CHECK(std::vector<int64_t>(b.blocks[0].src.begin(),
                             b.blocks[0].src.begin() + b.blocks[0].n_dst) == b.blocks[1].src);
  CHECK(b.edges() == b.blocks[0].adj.nnz() + b.blocks[1].adj.nnz());
}

TEST_CASE("sampling is keyed by (seed, epoch, layer, vertex), not by thread count or batch") {
  const Csr& g = sbm_graph();
  LocalNeighborSource src(g);
  SamplerOptions opt;
  opt.fanouts = {5, 5};
  opt.seed = 9;
  auto draw = [&](int threads, uint64_t epoch, uint64_t seed, const std::vector<int64_t>& seeds) {
    SamplerOptions o = opt;
    o.threads = threads;
    o.seed = seed;
    NeighborSampler s(src, o);
    return s.sample(seeds, epoch);
  };
  const std::vector<int64_t> seeds = iota_ids(200, 13);
  SampledBatch one = draw(1, 2, 9, seeds);
  SampledBatch four = draw(4, 2, 9, seeds);
  for (size_t l = 0; l < 2; ++l) {
    CHECK(one.blocks[l].src == four.blocks[l].src);
    CHECK(one.blocks[l].adj.offsets == four.blocks[l].adj.offsets);
    CHECK(one.blocks[l].adj.indices == four.blocks[l].adj.indices);
  }
  CHECK(draw(1, 3, 9, seeds).blocks[0].src != one.blocks[0].src);   // another epoch
  CHECK(draw(1, 2, 10, seeds).blocks[0].src != one.blocks[0].src);  // another seed
  // A seed's neighbours do not depend on the rest of its batch.
  SampledBatch alone = draw(1, 2, 9, {seeds[7]});
  const Block& a = alone.blocks[1];
  const Block& o = one.blocks[1];
  std::vector<int64_t> na, no;
  for (int64_t e = a.adj.offsets[0]; e < a.adj.offsets[1]; ++e)
    na.push_back(a.src[size_t(a.adj.indices[e])]);
  for (int64_t e = o.adj.offsets[7]; e < o.adj.offsets[8]; ++e)
    no.push_back(o.src[size_t(o.adj.indices[e])]);
  CHECK(na == no);
}

TEST_CASE("with replacement a row has exactly fanout entries; -1 takes the whole row") {
  const Csr& g = sbm_graph();
  LocalNeighborSource src(g);
  SamplerOptions opt;
  opt.fanouts = {-1, 6};
  opt.replace = true;
  NeighborSampler s(src, opt);
  SampledBatch b = s.sample(iota_ids(30, 11), 0);
  for (int64_t v = 0; v < b.blocks[1].n_dst; ++v)
    CHECK(b.blocks[1].adj.degree(v) == (g.degree(b.blocks[1].src[size_t(v)]) ? 6 : 0));
  for (int64_t v = 0; v < b.blocks[0].n_dst; ++v)
    CHECK(b.blocks[0].adj.degree(v) == g.degree(b.blocks[0].src[size_t(v)]));
}

TEST_CASE("a self loop is kept and not counted in the fanout") {
  // Vertex 0 has a self loop and neighbours 1..6; weights follow their edges.
  std::vector<int32_t> rows, cols;
  std::vector<float> w;
  for (int u = 0; u <= 6; ++u) {
    rows.push_back(0);
    cols.push_back(u);
    w.push_back(float(u + 1));
  }
  Csr g = csr_from_coo(7, 7, rows, cols, w);
  LocalNeighborSource src(g);
  CHECK(src.degree(0) == 6);
  SamplerOptions opt;
  opt.fanouts = {3};
  NeighborSampler s(src, opt);
  for (uint64_t epoch = 0; epoch < 20; ++epoch) {
    SampledBatch b = s.sample({0}, epoch);
    const Block& blk = b.blocks[0];
    REQUIRE(blk.adj.degree(0) == 4);
    int self = 0;
    for (int64_t e = 0; e < 4; ++e) {
      const int64_t u = blk.src[size_t(blk.adj.indices[size_t(e)])];
      self += u == 0;
      CHECK(blk.adj.values[size_t(e)] == float(u + 1));
    }
    CHECK(self == 1);
  }
}

TEST_CASE("epoch batches: a shuffled partition of the training set, new order every epoch") {
  const std::vector<int64_t> train = iota_ids(103, 3);
  auto e0 = epoch_batches(train, 10, 1, 0);
  REQUIRE(e0.size() == 11);
  CHECK(e0.back().size() == 3);
  std::vector<int64_t> all;
  for (auto& b : e0) all.insert(all.end(), b.begin(), b.end());
  CHECK(all != train);
  std::sort(all.begin(), all.end());
  CHECK(all == train);
  CHECK(epoch_batches(train, 10, 1, 0) == e0);
  CHECK(epoch_batches(train, 10, 1, 1) != e0);
  CHECK(epoch_batches(train, 10, 2, 0) != e0);
  CHECK_THROWS_AS(epoch_batches(train, 0, 1, 0), OptionError);
}

TEST_CASE("repeated seeds are refused, and the sampler stays usable") {
  const Csr& g = sbm_graph();
  LocalNeighborSource src(g);
  SamplerOptions opt;
  opt.fanouts = {2};
  NeighborSampler s(src, opt);
  CHECK_THROWS_AS(s.sample({4, 8, 4}, 0), OptionError);
  SampledBatch b = s.sample({4, 8}, 0);
  CHECK(b.blocks[0].src[0] == 4);
  CHECK(b.blocks[0].src[1] == 8);
}
