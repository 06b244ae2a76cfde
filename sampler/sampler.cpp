#include "dgnn/sampler/sampler.hpp"

#include <omp.h>

#include <algorithm>
#include <charconv>
#include <cstdint>

#include "dgnn/common/error.hpp"
#include "dgnn/common/hash_rng.hpp"
#include "dgnn/kernels/sample_draw.hpp"

namespace dgnn {

std::vector<int> parse_fanouts(const std::string& text) {
  auto bad = [&](const std::string& why) {
    return OptionError("--fanouts '" + text + "': " + why +
                       " (expected comma-separated integers, each >= 1 or -1 for all "
                       "neighbours, one per layer, e.g. 10,25)");
  };
  std::vector<int> out;
  size_t begin = 0;
  while (true) {
    const size_t end = std::min(text.find(',', begin), text.size());
    std::string tok = text.substr(begin, end - begin);
    tok.erase(0, tok.find_first_not_of(" \t"));
    tok.erase(tok.find_last_not_of(" \t") + 1);
    int v = 0;
    auto [p, ec] = std::from_chars(tok.data(), tok.data() + tok.size(), v);
    if (ec == std::errc::result_out_of_range)
      throw bad("'" + tok + "' is too large (at most " + std::to_string(INT32_MAX) + ")");
    if (tok.empty() || ec != std::errc() || p != tok.data() + tok.size())
      throw bad("'" + tok + "' is not an integer");
    if (v == 0 || v < -1) throw bad(std::to_string(v) + " is not >= 1 or -1");
    out.push_back(v);
    if (end == text.size()) break;
    begin = end + 1;
  }
  return out;
}

int64_t SampledBatch::edges() const {
  int64_t n = 0;
  for (const Block& b : blocks) n += b.adj.nnz();
  return n;
}

// The draws themselves live in kernels/sample_draw.hpp, shared with the GPU sampler.
int64_t sample_count(int64_t deg, int fanout, bool replace) {
  return draw::count(deg, fanout, replace);
}

uint64_t sample_key(uint64_t seed, uint64_t epoch, int layer, int64_t v) {
  return draw::key(seed, epoch, layer, v);
}

void sample_positions(int64_t deg, int fanout, bool replace, uint64_t key, int64_t* out) {
  draw::positions(deg, fanout, replace, key, out);
}

int64_t sample_row_count(const int32_t* row, int64_t deg, int64_t v, bool self_loops, int fanout,
                         bool replace) {
  return draw::row_count(row, deg, v, self_loops, fanout, replace);
}

void sample_row(const int32_t* row, const float* w, int64_t deg, int64_t v, bool self_loops,
                int fanout, bool replace, uint64_t key, int64_t* out_ids, float* out_w) {
  draw::row(row, w, deg, v, self_loops, fanout, replace, key, out_ids, out_w);
}

namespace {

// Below this many frontier vertices a parallel region costs more than the draws (a batch's last
// layer has only its seeds).
constexpr int64_t kParallelRows = 4096;

}  // namespace

LocalNeighborSource::LocalNeighborSource(const Csr& in) : in_(in), degree_(size_t(in.rows)) {
  DGNN_CHECK(in.rows == in.cols, ShapeError, "neighbour sampling needs a square graph");
#pragma omp parallel for schedule(static, 4096)
  for (int64_t v = 0; v < in.rows; ++v) {
    const int64_t deg = in.degree(v);
    int64_t lo, hi;
    draw::self_range(in.indices.data() + in.offsets[v], deg, v, true, &lo, &hi);
    degree_[size_t(v)] = deg - (hi - lo);
  }
  for (int64_t v = 0; v < in.rows && !self_loops_; ++v)
    self_loops_ = degree_[size_t(v)] != in.degree(v);
}

void LocalNeighborSource::sample(const std::vector<int64_t>& frontier, int layer, uint64_t epoch,
                                 const SamplerOptions& opt, SampledRows& out) {
  const int64_t n = int64_t(frontier.size());
  const int fanout = opt.fanouts[size_t(layer)];
  const int threads = opt.threads > 0 ? opt.threads : omp_get_max_threads();
  out.offsets.assign(size_t(n) + 1, 0);
  const int32_t* idx = in_.indices.data();
#pragma omp parallel for schedule(static, 1024) num_threads(threads) if (n >= kParallelRows)
  for (int64_t i = 0; i < n; ++i) {
    const int64_t v = frontier[size_t(i)];
    out.offsets[size_t(i) + 1] =
        sample_row_count(idx + in_.offsets[v], in_.degree(v), v, self_loops_, fanout, opt.replace);
  }
  for (int64_t i = 0; i < n; ++i) out.offsets[size_t(i) + 1] += out.offsets[size_t(i)];
  out.nbrs.resize(size_t(out.offsets.back()));
  out.weights.resize(in_.weighted() ? out.nbrs.size() : 0);
#pragma omp parallel for schedule(dynamic, 256) num_threads(threads) if (n >= kParallelRows)
  for (int64_t i = 0; i < n; ++i) {
    const int64_t v = frontier[size_t(i)];
    const int64_t b = in_.offsets[v];
    const int64_t o = out.offsets[size_t(i)];
    sample_row(idx + b, in_.weighted() ? in_.values.data() + b : nullptr, in_.degree(v), v,
               self_loops_, fanout, opt.replace, sample_key(opt.seed, epoch, layer, v),
               out.nbrs.data() + o, in_.weighted() ? out.weights.data() + o : nullptr);
  }
}

NeighborSampler::NeighborSampler(NeighborSource& source, SamplerOptions opt)
    : source_(source), opt_(std::move(opt)) {
  if (opt_.fanouts.empty()) throw OptionError("--fanouts: need one fanout per layer");
  for (int f : opt_.fanouts)
    if (f == 0 || f < -1)
      throw OptionError("--fanouts: " + std::to_string(f) + " is not >= 1 or -1");
}

SampledBatch NeighborSampler::sample(const std::vector<int64_t>& seeds, uint64_t epoch) {
  if (local_of_.empty()) local_of_.assign(size_t(source_.num_vertices()), -1);
  SampledBatch batch;
  batch.seeds = seeds;
  const int layers = int(opt_.fanouts.size());
  batch.blocks.resize(size_t(layers));
  const std::vector<int64_t>* dst = &batch.seeds;  // the frontier: this layer's destinations
  SampledRows rows;
  for (int l = layers - 1; l >= 0; --l) {
    source_.sample(*dst, l, epoch, opt_, rows);
    Block& b = batch.blocks[size_t(l)];
    b.n_dst = int64_t(dst->size());
    b.src = *dst;
    for (size_t i = 0; i < b.src.size(); ++i) {
      int32_t& slot = local_of_[size_t(b.src[i])];
      if (slot >= 0) {
        for (size_t j = 0; j < i; ++j) local_of_[size_t(b.src[j])] = -1;
        throw OptionError("mini-batch seeds must be distinct: vertex " + std::to_string(b.src[i]) +
                          " repeats");
      }
      slot = int32_t(i);
    }
    Csr& a = b.adj;
    a.rows = b.n_dst;
    a.offsets = std::move(rows.offsets);  // the source refills rows for the next layer
    a.indices.resize(rows.nbrs.size());
    for (size_t e = 0; e < rows.nbrs.size(); ++e) {
      const int64_t u = rows.nbrs[e];
      int32_t& slot = local_of_[size_t(u)];
      if (slot < 0) {
        slot = int32_t(b.src.size());
        b.src.push_back(u);
      }
      a.indices[e] = slot;
    }
    a.values = std::move(rows.weights);
    a.cols = b.n_src();
    b.src_degree.resize(b.src.size());
    for (size_t j = 0; j < b.src.size(); ++j) {
      local_of_[size_t(b.src[j])] = -1;
      b.src_degree[j] = source_.degree(b.src[j]);
    }
    dst = &b.src;
  }
  return batch;
}

std::vector<std::vector<int64_t>> epoch_batches(const std::vector<int64_t>& train,
                                                int64_t batch_size, uint64_t seed, uint64_t epoch) {
  DGNN_CHECK(batch_size >= 1, OptionError, "--batch-size must be >= 1");
  std::vector<int64_t> order = train;
  // A stream of its own: the shuffle must not share draws with the neighbour samples.
  Rng rng(hash_combine(hash_combine(seed, 0x5eed0fba7c4e5ull), epoch));
  for (size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[rng.below(i)]);
  std::vector<std::vector<int64_t>> out;
  for (size_t b = 0; b < order.size(); b += size_t(batch_size))
    out.emplace_back(order.begin() + int64_t(b),
                     order.begin() + int64_t(std::min(order.size(), b + size_t(batch_size))));
  return out;
}

}  // namespace dgnn
