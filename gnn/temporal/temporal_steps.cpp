// How a snapshot sequence's steps split by time and what each scores: the windows of steps,
// link prediction's positives and sampled non-edges, edge classification's signed edges.
#include <algorithm>
#include <cmath>
#include <functional>
#include <numeric>

#include "dgnn/common/error.hpp"
#include "dgnn/common/fast_mod.hpp"
#include "dgnn/common/format.hpp"
#include "dgnn/common/hash_rng.hpp"
#include "dgnn/common/key_set.hpp"
#include "dgnn/common/memory.hpp"
#include "dgnn/common/radix_sort.hpp"
#include "dgnn/gnn/temporal/temporal_trainer.hpp"
#include "dgnn/kernels/kernels.hpp"

namespace dgnn {

TemporalTask parse_temporal_task(const std::string& name) {
  if (name == "link") return TemporalTask::link;
  if (name == "edge") return TemporalTask::edge;
  throw OptionError("--task: unknown temporal task '" + name + "' (expected link or edge)");
}

EvalProtocol parse_eval_protocol(const std::string& name) {
  if (name == "evolvegcn") return EvalProtocol::evolvegcn;
  if (name == "tgb") return EvalProtocol::tgb;
  throw OptionError("--eval-protocol: unknown protocol '" + name + "' (expected evolvegcn or tgb)");
}

TemporalSplit temporal_split(const TemporalGraph& g, const TemporalOptions& opt) {
  const int t = g.num_snapshots();
  TemporalSplit sp;
  // Link prediction: step s predicts the edges of snapshot s + 1; edge classification: step s
  // labels the edges of snapshot s itself.
  sp.steps = opt.task == TemporalTask::link ? t - 1 : t;
  if (opt.eval_all_pairs && opt.task != TemporalTask::link)
    throw OptionError("--neg-eval all scores every vertex pair: it is for --task link");
  if (opt.eval_protocol == EvalProtocol::tgb && opt.task != TemporalTask::link)
    throw OptionError("--eval-protocol tgb ranks predicted links: it is for --task link");
  if (opt.eval_protocol == EvalProtocol::tgb && opt.eval_all_pairs)
    throw OptionError(
        "--eval-protocol tgb ranks each edge against --neg-eval N sampled negatives, not all "
        "pairs (--neg-eval all is the evolvegcn protocol's)");
  if (opt.task == TemporalTask::edge && !g.weighted)
    throw OptionError(
        "--task edge classifies edges by the sign of their weight: give the "
        "weight column (--weight-col)");
  if (opt.task == TemporalTask::edge) {
    bool negative = false, positive = false;
    for (const SnapshotEvents& ev : g.events) {
      if (ev.sharded()) {  // a share: the whole step's counts
        negative |= ev.whole->negative_weights > 0;
        positive |= ev.whole->events > ev.whole->negative_weights;
        continue;
      }
      for (float w : ev.weight) (w < 0 ? negative : positive) = true;
    }
    if (!negative || !positive)
      throw OptionError(std::string("--task edge classifies edges by the sign of their weight, "
                                    "but every weight is ") +
                        (negative ? "negative" : "positive") + ": one class, nothing to learn");
  }
  sp.train = int(std::floor(opt.train_frac * sp.steps));
  sp.val = int(std::floor(opt.val_frac * sp.steps));
  // Rounding down may leave a set empty (7 steps at 0.7 / 0.1: 4 / 0 / 3): when the fractions
  // ask for all three sets and there are steps enough, an empty set takes one step from the
  // largest. Splits with every set filled stay as floor() makes them.
  if (opt.train_frac > 0 && opt.val_frac > 0 && opt.train_frac + opt.val_frac < 1 &&
      sp.steps >= 3) {
    int sizes[3] = {sp.train, sp.val, sp.steps - sp.train - sp.val};
    for (int& empty : sizes)
      if (empty < 1) {
        int* largest = std::max_element(sizes, sizes + 3);
        --*largest;
        ++empty;
      }
    sp.train = sizes[0];
    sp.val = sizes[1];
  }
  if (sp.train < 1 || sp.val < 1 || sp.steps - sp.train - sp.val < 1)
    throw OptionError(
        std::string(opt.task == TemporalTask::link ? "link prediction" : "edge classification") +
        " needs at least one training, validation and test step: " + std::to_string(t) +
        " snapshots give " + std::to_string(sp.steps) + " steps, split " +
        std::to_string(sp.train) + " / " + std::to_string(sp.val) + " / " +
        std::to_string(sp.steps - sp.train - sp.val) + " by --train-frac " +
        fmt_double(opt.train_frac) + " and --val-frac " + fmt_double(opt.val_frac) +
        " (use more snapshots: --snapshots or a shorter --snapshot-seconds; or other fractions)");
  if (opt.bptt < 0) throw OptionError("--bptt must be >= 0");
  if (opt.neg_train < 1)
    throw OptionError("--neg-train: sampled non-edges per edge must be >= 1, got " +
                      std::to_string(opt.neg_train));
  if (opt.neg_eval < 1)
    throw OptionError("--neg-eval: sampled non-edges per edge must be >= 1 (or all), got " +
                      std::to_string(opt.neg_eval));
  // Every step's pairs are scored: the negatives of its largest step, at 8 bytes a pair (score
  // and key) at least, must fit in memory (--neg-eval 1e9 on bitcoin-alpha asked for 19 TB).
  int64_t widest = 0;
  for (const SnapshotEvents& e : g.events) widest = std::max(widest, e.total_events());
  for (const auto& [flag, per] : {std::pair{"--neg-train", opt.neg_train},
                                  std::pair{"--neg-eval", opt.eval_all_pairs ? 0 : opt.neg_eval}}) {
    const double bytes = double(per) * double(widest) * 8;
    if (exceeds_memory(bytes))
      throw OptionError(std::string(flag) + " " + std::to_string(per) + ": " + std::to_string(per) +
                        " non-edges for each of a step's " + std::to_string(widest) +
                        " edges need " + memory_str(bytes) + more_than_usable());
  }
  return sp;
}

std::vector<int> temporal_windows(const TemporalGraph& g, const TemporalOptions& opt) {
  const TemporalSplit sp = temporal_split(g, opt);
  std::vector<int> bounds{0};
  for (int end : {sp.train, sp.train + sp.val, sp.steps}) {
    const int window = opt.bptt > 0 ? opt.bptt : end - bounds.back();
    for (int s = bounds.back() + window; s < end; s += window) bounds.push_back(s);
    bounds.push_back(end);
  }
  return bounds;
}

namespace {

// The edges of snapshot `step`, target 1 for a negative weight (the minority class in signed
// networks such as bitcoin ratings), weighted so that both classes count equally.
PairBatch edge_pairs(const TemporalGraph& g, int step, const std::function<bool(int32_t)>& keep) {
  const SnapshotEvents& ev = g.events[size_t(step)];
  DGNN_CHECK(keep || !ev.sharded(), Error,
             "edge_pairs: a share of the events needs the rank's sources (keep)");
  PairBatch b;
  size_t neg = 0, all = 0;  // over the whole batch: the weights are its
  for (size_t i = 0; i < ev.src.size(); ++i) {
    if (ev.src[i] == ev.dst[i]) continue;
    const bool negative = ev.weight[i] < 0;
    neg += negative;
    ++all;
    if (keep && !keep(ev.src[i])) continue;
    b.src.push_back(ev.src[i]);
    b.dst.push_back(ev.dst[i]);
    b.target.push_back(negative ? 1.f : 0.f);
  }
  if (ev.sharded()) neg = size_t(ev.whole->negative_targets), all = size_t(ev.whole->targets);
  const size_t pos = all - neg;
  for (float t : b.target)
    b.weight.push_back(t > 0 ? 0.5f / float(std::max<size_t>(neg, 1))
                             : 0.5f / float(std::max<size_t>(pos, 1)));
  return b;
}

}  // namespace

namespace {

// An edge's key in the step's edge set: (u, v), or for an undirected graph (min, max), so that
// either direction finds it.
uint64_t edge_key(bool directed, int64_t u, int64_t v) {
  if (!directed && v < u) std::swap(u, v);
  return uint64_t(u) << 32 | uint64_t(v);
}

// Every edge of link step `step` into `edges`; the distinct ones `keep` accepts (in event order)
// and their ordinals among all distinct ones.
StepPositives collect_positives(const TemporalGraph& g, int step,
                                const std::function<bool(int32_t)>& keep, KeySet& edges) {
  const SnapshotEvents& ev = g.events[size_t(step + 1)];
  StepPositives p;
  if (ev.sharded()) {
    // A share: the ordinals came with it, on the ranks of the sources (one that holds another
    // rank's source has no positive of it).
    // The compact ordinals listed for this step alone (SnapshotEvents::ordinals()).
    const std::vector<uint32_t> ordinal = ev.ordinals();
    for (size_t i = 0; i < ordinal.size(); ++i)
      if (ordinal[i] != SnapshotEvents::kRepeat && (!keep || keep(ev.src[i]))) {
        p.event.push_back(uint32_t(i));
        p.index.push_back(ordinal[i]);
      }
    p.total = size_t(ev.whole->distinct);
    return p;
  }
  for (size_t i = 0; i < ev.src.size(); ++i) {
    const int32_t u = ev.src[i], v = ev.dst[i];
    if (u == v || !edges.insert(edge_key(g.directed, u, v))) continue;
    if (!keep || keep(u)) {
      p.event.push_back(uint32_t(i));
      p.index.push_back(uint32_t(p.total));
    }
    ++p.total;
  }
  return p;
}

}  // namespace

StepPositives step_positives(const TemporalGraph& g, int step,
                             const std::function<bool(int32_t)>& keep) {
  KeySet edges(g.events[size_t(step + 1)].sharded() ? 1 : g.events[size_t(step + 1)].src.size());
  return collect_positives(g, step, keep, edges);
}

// What a step's draws start from: the positives it scores, and the step's edges the draws avoid
// (all of them, or with `known` only those a kept vertex's draws can meet: its own, and on an
// undirected graph those into it), as sorted (u, v) keys: a positive's draws all test one
// source's short run of them (found once per positive), which stays in cache where a hash
// table's probes did not. Outside the anonymous namespace: LinkStepPlan (declared in the
// header) holds one.
struct StepSetup {
  StepPositives found;                   // when no positives were known
  const StepPositives* known = nullptr;  // the caller's, if any
  std::vector<uint64_t> linked;          // (u << 32 | v), both directions when undirected
  const StepPositives& positives() const { return known ? *known : found; }
};

namespace {

// Whether w is linked to u in the step (or is u), from the run of u's links, found when u
// changes. One per thread.
class LinkCursor {
 public:
  explicit LinkCursor(const std::vector<uint64_t>& linked) : linked_(linked) {}
  bool operator()(int32_t u, int32_t w) {
    if (w == u) return true;
    seek(u);
    const uint64_t key = uint64_t(uint32_t(u)) << 32 | uint32_t(w);
    // A typical run is a few links: a scan without branches beats a binary search's
    // mispredicted ones (most draws are not linked).
    if (end_ - begin_ > 32) return std::binary_search(begin_, end_, key);
    bool found = false;
    for (const uint64_t* p = begin_; p != end_; ++p) found |= *p == key;
    return found;
  }
  // u's links as keys (u << 32 | v), ascending.
  std::pair<const uint64_t*, const uint64_t*> run(int32_t u) {
    seek(u);
    return {begin_, end_};
  }

 private:
  void seek(int32_t u) {
    if (u == u_) return;
    const uint64_t lo = uint64_t(uint32_t(u)) << 32;
    const uint64_t* end = linked_.data() + linked_.size();
    begin_ = std::lower_bound(linked_.data(), end, lo);
    end_ = std::lower_bound(begin_, end, lo + (uint64_t(1) << 32));
    u_ = u;
  }
  const std::vector<uint64_t>& linked_;
  int32_t u_ = -1;
  const uint64_t *begin_ = nullptr, *end_ = nullptr;
};

// The draws of positive i from source u into out[0, count).
template <class Draw>
void draw_into(Draw& draw, int32_t u, uint64_t i, int count, int32_t* out) {
  if constexpr (requires { draw.fill(u, i, count, out); })
    draw.fill(u, i, count, out);
  else
    for (int k = 0; k < count; ++k) out[k] = draw(u, i, k);
}

StepSetup step_setup(const TemporalGraph& g, int step, const std::function<bool(int32_t)>& keep,
                     const StepPositives* known) {
  const SnapshotEvents& ev = g.events[size_t(step + 1)];
  StepSetup st;
  st.known = known;
  if (!known) {
    KeySet edges(ev.sharded() ? 1 : ev.src.size());
    st.found = collect_positives(g, step, keep, edges);
  }
  for (size_t i = 0; i < ev.src.size(); ++i) {
    const int32_t u = ev.src[i], v = ev.dst[i];
    if (u == v) continue;
    if (!keep || keep(u)) st.linked.push_back(uint64_t(uint32_t(u)) << 32 | uint32_t(v));
    if (!g.directed && (!keep || keep(v)))
      st.linked.push_back(uint64_t(uint32_t(v)) << 32 | uint32_t(u));
  }
  std::vector<uint64_t> scratch;  // (a radix sort: std::sort was most of a step's setup)
  radix_sort_bits(st.linked, scratch, 0, 64);
  return st;
}

// Each kept positive j of the step with its `negatives` draws (u, draw(u, ordinal, k)):
// visit(j, u, v, drawn), in parallel, each thread with a draw of its own from make_draw() (draws
// depend only on the positive and k: the same on any thread count).
template <class MakeDraw, class Visit>
void for_each_positive(const TemporalGraph& g, int step, int negatives, const StepSetup& st,
                       MakeDraw&& make_draw, Visit&& visit) {
  const SnapshotEvents& ev = g.events[size_t(step + 1)];
  const StepPositives& known = st.positives();
  const size_t kept = known.event.size();
#pragma omp parallel if (kept * size_t(negatives) > 100000)
  {
    auto draw = make_draw();
    std::vector<int32_t> drawn(static_cast<size_t>(negatives));
#pragma omp for schedule(dynamic, 256)
    for (int64_t j = 0; j < int64_t(kept); ++j) {
      const uint32_t e = known.event[size_t(j)];
      const int32_t u = ev.src[e];
      const uint64_t i = known.index[size_t(j)];
      draw_into(draw, u, i, negatives, drawn.data());
      visit(size_t(j), u, ev.dst[e], drawn.data());
    }
  }
}

// The kept positives, then `negatives` pairs per positive, and the weights: each class half of
// the whole step's loss.
template <class MakeDraw>
PairBatch pairs_with(const TemporalGraph& g, int step, int negatives, const StepSetup& st,
                     MakeDraw&& make_draw) {
  const StepPositives& known = st.positives();
  const size_t kept = known.event.size(), per = size_t(negatives);
  const size_t total = kept * (1 + per);
  PairBatch b;
  b.src.resize(total);
  b.dst.resize(total);
  b.target.assign(total, 0.f);
  for_each_positive(g, step, negatives, st, make_draw,
                    [&](size_t j, int32_t u, int32_t v, const int32_t* drawn) {
                      b.src[j] = u;
                      b.dst[j] = v;
                      b.target[j] = 1.f;
                      const size_t at = kept + j * per;
                      std::fill_n(b.src.begin() + int64_t(at), per, u);
                      std::copy(drawn, drawn + per, b.dst.begin() + int64_t(at));
                    });
  const LinkWeights w = link_weights(known.total, per);
  b.weight.resize(total);
  for (size_t j = 0; j < total; ++j) b.weight[j] = j < kept ? w.positive : w.negative;
  return b;
}

// The uniform draws of step_pairs: a hashed vertex, redrawn (16 times at most) while it is u or
// linked to u in the step.
struct UniformDraw {
  FastMod mod_n;
  uint64_t n, step_seed;
  LinkCursor linked;
  bool vector;  // kernels::vector_draws_pay()
  int32_t operator()(int32_t u, uint64_t i, int k) {
    uint64_t h = hash_combine(step_seed, i * 1315423911u + k);
    int32_t w = int32_t(mod_n(h));
    for (int tries = 0; linked(u, w) && tries < 16; ++tries) w = int32_t(mod_n(h = mix64(h)));
    return w;
  }
  // out[k] = (*this)(u, i, k) for k < count: the first draws eight at a time, a draw that meets
  // u or its links (rare) again one by one.
  void fill(int32_t u, uint64_t i, int count, int32_t* out) {
    const auto [begin, end] = linked.run(u);
    if (vector && kernels::hashed_draws(Device::cpu, step_seed, i * 1315423911u, count, n, u, begin,
                                        int64_t(end - begin), out)) {
      for (int k = 0; k < count; ++k)
        if (out[k] < 0) out[k] = (*this)(u, i, k);
    } else {
      for (int k = 0; k < count; ++k) out[k] = (*this)(u, i, k);
    }
  }
};

auto uniform_draws(const TemporalGraph& g, const StepSetup& st, int step, uint64_t seed,
                   uint64_t salt) {
  const uint64_t n = uint64_t(std::max<int64_t>(g.num_vertices, 1));  // (no draws when 0)
  const uint64_t step_seed = hash_combine(seed ^ salt, uint64_t(step));
  return [&st, n, step_seed, vector = kernels::vector_draws_pay()] {
    return UniformDraw{FastMod(n), n, step_seed, LinkCursor(st.linked), vector};
  };
}

// One positive's draws under the tgb protocol, made when its first is asked for and handed out
// in order.
struct TgbDraw {
  const TemporalGraph& g;
  const EdgeHistory& history;
  LinkCursor linked;
  uint64_t seed;
  int step, negatives, historical;
  std::vector<int32_t> drawn, eligible;
  KeySet taken{1};
  int32_t operator()(int32_t u, uint64_t i, int k) {
    if (k == 0) draw_all(u, i);
    return drawn[size_t(k)];
  }
  void draw_all(int32_t u, uint64_t i) {
    const int64_t n = g.num_vertices;
    const uint64_t base = hash_combine(hash_combine(seed ^ 0x7462ull, uint64_t(step)), i);
    drawn.clear();
    taken = KeySet(size_t(std::max(negatives, 1)));
    eligible.clear();
    const auto [first, last] = history.of(u);
    for (const int32_t* w = first; w != last; ++w)
      if (!linked(u, *w)) eligible.push_back(*w);
    // Historical: a partial Fisher-Yates shuffle of u's eligible destinations.
    const size_t m = eligible.size(), take = std::min(m, size_t(historical));
    for (size_t j = 0; j < take; ++j) {
      const size_t r = j + size_t(hash_combine(base, j) % uint64_t(m - j));
      std::swap(eligible[j], eligible[r]);
      drawn.push_back(eligible[j]);
      taken.insert(uint64_t(uint32_t(eligible[j])));
    }
    // Random: the rest, uniform over the vertices.
    for (int j = int(take); j < negatives; ++j) {
      uint64_t h = hash_combine(base ^ 0x72616e64ull, uint64_t(j));
      int32_t w = int32_t(h % uint64_t(n));
      for (int tries = 0; (linked(u, w) || taken.contains(uint64_t(uint32_t(w)))) && tries < 16;
           ++tries)
        w = int32_t((h = mix64(h)) % uint64_t(n));
      drawn.push_back(w);
      taken.insert(uint64_t(uint32_t(w)));
    }
  }
};

auto tgb_draws(const TemporalGraph& g, const StepSetup& st, int step, int negatives, uint64_t seed,
               uint64_t salt, const EdgeHistory& history) {
  DGNN_CHECK(history.num_vertices == g.num_vertices &&
                 history.offsets.size() == history.src.size() + 1,
             ShapeError, "tgb_step_pairs: a history of another graph");
  return [&g, &st, &history, step, negatives, seed, salt] {
    return TgbDraw{g,  history, LinkCursor(st.linked), seed ^ salt, step, negatives, negatives / 2,
                   {}, {}};
  };
}

}  // namespace

LinkWeights link_weights(size_t positives, size_t negatives_each) {
  // Every positive of the whole batch has exactly `negatives_each` negatives.
  return {0.5f / float(std::max<size_t>(positives, 1)),
          0.5f / float(std::max<size_t>(positives * negatives_each, 1))};
}

PairBatch step_pairs(const TemporalGraph& g, TemporalTask task, int step, int negatives,
                     uint64_t seed, uint64_t salt, const std::function<bool(int32_t)>& keep,
                     const StepPositives* known) {
  if (task == TemporalTask::edge) return edge_pairs(g, step, keep);
  const StepSetup st = step_setup(g, step, keep, known);
  // Each positive (u, v) gets `negatives` corrupted pairs (u, w): MRR ranks v among them.
  return pairs_with(g, step, negatives, st, uniform_draws(g, st, step, seed, salt));
}

// A step's setup and its positives grouped by source: sources ascending, source si's positives
// order[start[si] .. start[si + 1]) (positions in the kept positives, in ordinal order).
struct LinkStepPlan {
  StepSetup st;
  std::vector<uint32_t> start, order;
  std::vector<int32_t> sources;
};

std::shared_ptr<const LinkStepPlan> plan_link_step(const TemporalGraph& g, int step,
                                                   const std::function<bool(int32_t)>& keep) {
  auto plan = std::make_shared<LinkStepPlan>();
  plan->st = step_setup(g, step, keep, nullptr);
  const SnapshotEvents& ev = g.events[size_t(step + 1)];
  const StepPositives& known = plan->st.positives();
  const size_t kept = known.event.size();
  // The events are sorted by source and the positives keep their order, so this sort (stable:
  // ordinals ascend within a source) only guards that order.
  plan->order.resize(kept);
  std::iota(plan->order.begin(), plan->order.end(), 0u);
  auto src_of = [&](uint32_t j) { return ev.src[known.event[j]]; };
  std::stable_sort(plan->order.begin(), plan->order.end(),
                   [&](uint32_t a, uint32_t b) { return src_of(a) < src_of(b); });
  for (size_t c = 0; c < kept; ++c)
    if (c == 0 || src_of(plan->order[c]) != src_of(plan->order[c - 1])) {
      plan->sources.push_back(src_of(plan->order[c]));
      plan->start.push_back(uint32_t(c));
    }
  plan->start.push_back(uint32_t(kept));
  return plan;
}

const std::vector<int32_t>& link_step_sources(const LinkStepPlan& plan) { return plan.sources; }
size_t link_step_positives(const LinkStepPlan& plan) { return plan.order.size(); }

namespace {

// visit(u, count, js, vs, drawn) per source of the plan on all threads, each with a draw of its
// own from make_draw() (draws depend only on the positive and k: the same as
// for_each_positive's, on any thread count).
template <class MakeDraw>
void for_each_source(const TemporalGraph& g, int step, int negatives, const LinkStepPlan& plan,
                     MakeDraw&& make_draw, const SourceVisit& visit,
                     const std::function<bool(int32_t)>& keep) {
  const SnapshotEvents& ev = g.events[size_t(step + 1)];
  const StepPositives& known = plan.st.positives();
  const size_t per = size_t(negatives);
#pragma omp parallel if (known.event.size() * (1 + per) > 100000)
  {
    auto draw = make_draw();
    std::vector<int32_t> cand;  // the positives' destinations, then their draws
    std::vector<uint32_t> ords;  // the positives' ordinals in the step
#pragma omp for schedule(dynamic, 16)
    for (int64_t si = 0; si < int64_t(plan.sources.size()); ++si) {
      const int32_t u = plan.sources[size_t(si)];
      if (keep && !keep(u)) continue;
      const uint32_t* js = plan.order.data() + plan.start[size_t(si)];
      const size_t count = plan.start[size_t(si) + 1] - plan.start[size_t(si)];
      cand.resize(count * (1 + per));
      ords.resize(count);
      int32_t* vs = cand.data();
      int32_t* drawn = vs + count;
      for (size_t c = 0; c < count; ++c) {
        const uint32_t e = known.event[js[c]];
        const uint64_t i = known.index[js[c]];
        ords[c] = uint32_t(i);
        vs[c] = ev.dst[e];
        draw_into(draw, u, i, int(per), drawn + c * per);
      }
      visit(u, count, ords.data(), vs, drawn);
    }
  }
}

}  // namespace

size_t visit_link_sources(const TemporalGraph& g, int step, int negatives, uint64_t seed,
                          uint64_t salt, const EdgeHistory* history,
                          const std::function<void(size_t kept, size_t total)>& sized,
                          const SourceVisit& visit, const LinkStepPlan* plan,
                          const std::function<bool(int32_t)>& keep) {
  std::shared_ptr<const LinkStepPlan> own;
  if (!plan) plan = (own = plan_link_step(g, step, g.events[size_t(step + 1)].sharded() ? keep : nullptr)).get();
  const StepSetup& st = plan->st;
  const StepPositives& known = st.positives();
  sized(known.event.size(), known.total);
  if (history)
    for_each_source(g, step, negatives, *plan,
                    tgb_draws(g, st, step, negatives, seed, salt, *history), visit, keep);
  else
    for_each_source(g, step, negatives, *plan, uniform_draws(g, st, step, seed, salt), visit, keep);
  return known.event.size();
}

EdgeHistory edge_history(const TemporalGraph& g, int last_snapshot) {
  const int64_t n = g.num_vertices;
  std::vector<std::pair<int32_t, int32_t>> e;
  for (int t = 0; t <= last_snapshot && t < g.num_snapshots(); ++t) {
    const SnapshotEvents& ev = g.events[size_t(t)];
    for (size_t i = 0; i < ev.src.size(); ++i) {
      if (ev.src[i] == ev.dst[i]) continue;
      e.emplace_back(ev.src[i], ev.dst[i]);
      if (!g.directed) e.emplace_back(ev.dst[i], ev.src[i]);
    }
  }
  std::sort(e.begin(), e.end());
  e.erase(std::unique(e.begin(), e.end()), e.end());
  EdgeHistory h;
  h.num_vertices = n;
  h.dst.reserve(e.size());
  for (size_t i = 0; i < e.size(); ++i) {
    if (i == 0 || e[i].first != e[i - 1].first) {
      h.src.push_back(e[i].first);
      h.offsets.push_back(int64_t(i));
    }
    h.dst.push_back(e[i].second);
  }
  h.offsets.push_back(int64_t(e.size()));
  return h;
}

std::pair<const int32_t*, const int32_t*> EdgeHistory::of(int32_t u) const {
  const auto it = std::lower_bound(src.begin(), src.end(), u);
  if (it == src.end() || *it != u) return {nullptr, nullptr};
  const size_t i = size_t(it - src.begin());
  return {dst.data() + offsets[i], dst.data() + offsets[i + 1]};
}

PairBatch tgb_step_pairs(const TemporalGraph& g, int step, int negatives, uint64_t seed,
                         uint64_t salt, const EdgeHistory& history,
                         const std::function<bool(int32_t)>& keep, const StepPositives* known) {
  const StepSetup st = step_setup(g, step, keep, known);
  return pairs_with(g, step, negatives, st, tgb_draws(g, st, step, negatives, seed, salt, history));
}

}  // namespace dgnn
