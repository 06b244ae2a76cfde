// The vertex strategy's share of a temporal graph's events (shard_events): each rank keeps the
// events with an end it owns, numbered as the whole step numbers them, so that its sources'
// positives, draws and loss weights are those of one process without any rank holding the
// whole step.
#include <algorithm>
#include <tuple>

#include "dgnn/comm/collectives.hpp"
#include "dgnn/common/error.hpp"
#include "dgnn/gnn/temporal/temporal_dist.hpp"

namespace dgnn {

namespace {

// A source's distinct pairs in one step (to the rank that numbers its range of ids), or, on the
// way back, the ordinal of its first one.
struct SourceCount {
  int32_t step, u;
  int64_t count;
};

// Whether the step's (sorted) list holds the event (u, v).
bool holds(const SnapshotEvents& ev, int32_t u, int32_t v) {
  const auto lo = std::lower_bound(ev.src.begin(), ev.src.end(), u);
  const auto hi = std::upper_bound(lo, ev.src.end(), u);
  const auto d0 = ev.dst.begin() + (lo - ev.src.begin());
  const auto d1 = ev.dst.begin() + (hi - ev.src.begin());
  return std::binary_search(d0, d1, v);
}

constexpr int kCounts = kEventCounts;

}  // namespace

bool count_event(const SnapshotEvents& ev, size_t i, bool directed, int64_t* c) {
  const int32_t u = ev.src[i], v = ev.dst[i];
  const bool negative = !ev.weight.empty() && ev.weight[i] < 0;
  ++c[0];
  c[3] += negative;
  if (u == v) return false;
  ++c[1];
  c[2] += negative;
  // (u, v) after (v, u) in (src, dst) order is the same undirected pair: counted at (v, u).
  const bool distinct = directed || u < v || !holds(ev, v, u);
  c[4] += distinct;
  return distinct;
}

void shard_events(TemporalGraph& g, const std::vector<int32_t>& part, Communicator& comm) {
  const int me = comm.rank(), p = comm.size(), t = g.num_snapshots();
  const int64_t n = g.num_vertices;
  DGNN_CHECK(int64_t(part.size()) == n, ShapeError, "shard_events: a partition of another graph");
  auto mine = [&](int32_t v) { return part[size_t(v)] == me; };
  // Each step's counts from the events whose source this rank owns (each event counted once),
  // and per owned source with distinct pairs, their count, to the rank numbering its ids.
  std::vector<int64_t> counts(size_t(t) * kCounts, 0);
  std::vector<std::vector<SourceCount>> out(static_cast<size_t>(p));
  // Per step and event, kRepeat or (after the numbering) its ordinal; kept compactly at the end
  // (SnapshotEvents::set_ordinals).
  std::vector<std::vector<uint32_t>> ordinals(static_cast<size_t>(t));
  auto ranger = [&](int64_t u) { return int(u * p / std::max<int64_t>(n, 1)); };
  for (int s = 0; s < t; ++s) {
    SnapshotEvents& ev = g.events[size_t(s)];
    DGNN_CHECK(!ev.sharded(), Error, "shard_events: the events are a share already");
    DGNN_CHECK(std::is_sorted(ev.src.begin(), ev.src.end()), Error,
               "shard_events: events not sorted by source");
    const bool weighted = !ev.weight.empty();
    size_t k = 0;
    for (size_t i = 0; i < ev.src.size(); ++i) {
      // A directed graph's events into this rank's vertices from elsewhere serve nothing here
      // (their pairs are scored, drawn for and checked on their sources' ranks): not kept.
      if (!mine(ev.src[i]) && (g.directed || !mine(ev.dst[i]))) continue;
      ev.src[k] = ev.src[i], ev.dst[k] = ev.dst[i];
      if (weighted) ev.weight[k] = ev.weight[i];
      ++k;
    }
    ev.src.resize(k), ev.dst.resize(k);
    if (weighted) ev.weight.resize(k);
    std::vector<int32_t>(ev.src).swap(ev.src);  // the whole list's capacity goes
    std::vector<int32_t>(ev.dst).swap(ev.dst);
    std::vector<float>(ev.weight).swap(ev.weight);
    ordinals[size_t(s)].assign(k, SnapshotEvents::kRepeat);
    int64_t* c = counts.data() + size_t(s) * kCounts;
    for (size_t i = 0; i < k;) {
      const int32_t u = ev.src[i];
      size_t end = i;
      while (end < k && ev.src[end] == u) ++end;
      if (!mine(u)) {
        i = end;
        continue;
      }
      int64_t distinct = 0;
      // (v, u) of a pair has an end here (u), so this rank holds it: count_event sees it.
      for (; i < end; ++i)
        if (count_event(ev, i, g.directed, c)) {
          ordinals[size_t(s)][i] = 0;  // numbered below
          ++distinct;
        }
      if (distinct > 0) out[size_t(ranger(u))].push_back({s, u, distinct});
    }
  }
  comm.allreduce_sum(counts.data(), int64_t(counts.size()));

  // The ranks numbering ranges of ids: each source's first ordinal in the step is the distinct
  // pairs of the smaller ids, in this range and in the ranges before it.
  std::vector<SourceCount> got = route(comm, out);
  std::sort(got.begin(), got.end(), [](const SourceCount& a, const SourceCount& b) {
    return std::tie(a.step, a.u) < std::tie(b.step, b.u);
  });
  std::vector<int64_t> before(size_t(p) * size_t(t), 0);  // [rank][step]: its range's pairs
  for (const SourceCount& r : got) before[size_t(me) * size_t(t) + size_t(r.step)] += r.count;
  comm.allreduce_sum(before.data(), int64_t(before.size()));
  std::vector<int64_t> next(size_t(t), 0);
  for (int r = 0; r < me; ++r)
    for (int s = 0; s < t; ++s) next[size_t(s)] += before[size_t(r) * size_t(t) + size_t(s)];
  for (auto& v : out) v.clear();
  for (SourceCount& r : got) {
    const int64_t c = r.count;
    r.count = next[size_t(r.step)];
    next[size_t(r.step)] += c;
    out[size_t(part[size_t(r.u)])].push_back(r);
  }
  std::vector<SourceCount>().swap(got);
  std::vector<SourceCount> firsts = route(comm, out);
  std::vector<std::vector<SourceCount>>().swap(out);
  std::sort(firsts.begin(), firsts.end(), [](const SourceCount& a, const SourceCount& b) {
    return std::tie(a.step, a.u) < std::tie(b.step, b.u);
  });
  size_t f = 0;
  for (int s = 0; s < t; ++s) {
    SnapshotEvents& ev = g.events[size_t(s)];
    const int64_t* c = counts.data() + size_t(s) * kCounts;
    ev.whole = SnapshotEvents::Whole{c[0], c[1], c[2], c[3], c[4]};
    DGNN_CHECK(c[4] < int64_t(SnapshotEvents::kRepeat), Error,
               "shard_events: more than 2^32-1 distinct pairs in one step");
    std::vector<uint32_t>& ordinal = ordinals[size_t(s)];
    for (size_t i = 0; i < ordinal.size();) {
      if (ordinal[i] == SnapshotEvents::kRepeat) {
        ++i;
        continue;
      }
      const int32_t u = ev.src[i];
      DGNN_CHECK(f < firsts.size() && firsts[f].step == s && firsts[f].u == u, Error,
                 "shard_events: no ordinal came back for a source");
      int64_t at = firsts[f++].count;
      for (; i < ordinal.size() && ev.src[i] == u; ++i)
        if (ordinal[i] != SnapshotEvents::kRepeat) ordinal[i] = uint32_t(at++);
    }
    ev.set_ordinals(ordinal);
    std::vector<uint32_t>().swap(ordinal);
  }
  DGNN_CHECK(f == firsts.size(), Error, "shard_events: an ordinal came back for no source");
}

}  // namespace dgnn
