// Temporal graphs: cutting timestamped edges into buckets, turning the buckets into snapshots
// (window / cumulative / sliding) stored as a base plus per-step differences, and replaying them.
#include "dgnn/graph/temporal.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <limits>

#include "dgnn/common/error.hpp"
#include "dgnn/common/format.hpp"
#include "dgnn/graph/dataset.hpp"

namespace dgnn {

namespace {

namespace fs = std::filesystem;

// A snapshot count beyond this is a mistake (seconds far too short for the time span), and its
// per-snapshot bookkeeping alone would take gigabytes.
constexpr int64_t kMaxSnapshots = 100000;

// Edges are keyed (dst << 32 | src): ascending keys are the CSR order (row = destination).
inline uint64_t edge_key(int32_t src, int32_t dst) { return uint64_t(dst) << 32 | uint32_t(src); }
inline int32_t key_src(uint64_t k) { return int32_t(k & 0xffffffffu); }
inline int32_t key_dst(uint64_t k) { return int32_t(k >> 32); }

struct Relabelled {
  std::vector<int64_t> original;  // dense -> original, ascending
  std::vector<int32_t> src, dst;
};

// Dense ids in ascending original-id order: a direct map when ids are small, sort otherwise.
Relabelled relabel(const EdgeList& e, int64_t min_vertices) {
  const size_t m = e.src.size();
  int64_t max_id = min_vertices - 1;
  for (size_t i = 0; i < m; ++i) max_id = std::max({max_id, e.src[i], e.dst[i]});
  Relabelled r;
  r.src.resize(m);
  r.dst.resize(m);
  const int64_t id_count = int64_t(2 * m) + std::max<int64_t>(min_vertices, 0);
  if (max_id < 4 * id_count + (1 << 20)) {
    std::vector<int32_t> map(size_t(max_id + 1), 0);
    for (size_t i = 0; i < m; ++i) map[e.src[i]] = map[e.dst[i]] = 1;
    for (int64_t v = 0; v < min_vertices; ++v) map[v] = 1;
    int64_t n = 0;
    for (int64_t v = 0; v <= max_id; ++v) n += map[v];
    DGNN_CHECK(n <= std::numeric_limits<int32_t>::max(), Error, "more than 2^31-1 vertices");
    r.original.reserve(size_t(n));
    for (int64_t v = 0; v <= max_id; ++v)
      if (map[v]) {
        map[v] = int32_t(r.original.size());
        r.original.push_back(v);
      }
    for (size_t i = 0; i < m; ++i) r.src[i] = map[e.src[i]], r.dst[i] = map[e.dst[i]];
    return r;
  }
  std::vector<int64_t>& ids = r.original;
  ids.reserve(size_t(id_count));
  ids.insert(ids.end(), e.src.begin(), e.src.end());
  ids.insert(ids.end(), e.dst.begin(), e.dst.end());
  for (int64_t v = 0; v < min_vertices; ++v) ids.push_back(v);
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  DGNN_CHECK(int64_t(ids.size()) <= std::numeric_limits<int32_t>::max(), Error,
             "more than 2^31-1 vertices");
  auto find = [&](int64_t v) {
    return int32_t(std::lower_bound(ids.begin(), ids.end(), v) - ids.begin());
  };
  for (size_t i = 0; i < m; ++i) r.src[i] = find(e.src[i]), r.dst[i] = find(e.dst[i]);
  return r;
}

}  // namespace

SnapshotCut make_snapshot_cut(int64_t t_min, int64_t t_max, const SnapshotOptions& snap,
                              const std::string& path) {
  SnapshotCut c;
  c.t_min = t_min;
  c.t_max = t_max;
  // Differences of times, and the end of the last bucket (t_max + 1), must fit in 64 bits.
  if (__int128(c.t_max) - __int128(c.t_min) > (__int128(1) << 62) ||
      c.t_max == std::numeric_limits<int64_t>::max())
    throw InputError(path, 0,
                     "the times span " + std::to_string(c.t_min) + ".." + std::to_string(c.t_max) +
                         ", more than 2^62 time units: shift or rescale the time column");
  const double span = double(c.t_max) - double(c.t_min);
  if (snap.seconds > 0) {
    c.seconds = snap.seconds;
    if (span / snap.seconds >= double(kMaxSnapshots))
      throw OptionError("--snapshot-seconds " + fmt_double(snap.seconds) + " cuts the times " +
                        std::to_string(c.t_min) + ".." + std::to_string(c.t_max) + " into over " +
                        std::to_string(kMaxSnapshots) + " snapshots; use a longer duration");
    c.count = c.bucket(c.t_max) + 1;
  } else {
    // Narrower buckets than one time unit would be empty by construction, not by the data.
    if (double(snap.count) > span + 1)
      throw OptionError("--snapshots " + std::to_string(snap.count) +
                        ": more snapshots than the times " + std::to_string(c.t_min) + ".." +
                        std::to_string(c.t_max) + " allow (at most " + fmt_double(span + 1) + ")");
    c.count = snap.count;
  }
  return c;
}

namespace {

// One bucket's edges as the CSRs store them: keys ascending, duplicates merged.
struct Bucket {
  std::vector<uint64_t> keys;
  std::vector<float> w;  // empty when unweighted
  // Position of `k`, or -1.
  int64_t find(uint64_t k) const {
    auto it = std::lower_bound(keys.begin(), keys.end(), k);
    return it != keys.end() && *it == k ? int64_t(it - keys.begin()) : -1;
  }
};

struct KeyW {
  uint64_t key;
  float w;
};

// Sorts by key keeping input order among equals (so weights sum in file order), then merges.
void sort_merge(std::vector<KeyW>& v, bool weighted, std::vector<uint64_t>& keys,
                std::vector<float>& w) {
  std::stable_sort(v.begin(), v.end(), [](const KeyW& a, const KeyW& b) { return a.key < b.key; });
  keys.clear();
  w.clear();
  for (const KeyW& x : v) {
    if (!keys.empty() && keys.back() == x.key) {
      if (weighted) w.back() += x.w;
      continue;
    }
    keys.push_back(x.key);
    if (weighted) w.push_back(x.w);
  }
}

Csr csr_from_keys(int64_t n, const std::vector<uint64_t>& keys, const std::vector<float>& w) {
  Csr c;
  c.rows = c.cols = n;
  c.offsets.assign(size_t(n) + 1, 0);
  for (uint64_t k : keys) ++c.offsets[size_t(key_dst(k)) + 1];
  for (int64_t r = 0; r < n; ++r) c.offsets[r + 1] += c.offsets[r];
  c.indices.resize(keys.size());
  for (size_t i = 0; i < keys.size(); ++i) c.indices[i] = key_src(keys[i]);
  c.values = w;
  return c;
}

// prev changed by d into out (whose arrays are reused). Rows without changes are block copies.
void apply_diff_into(const Csr& prev, const SnapshotDiff& d, Csr& out) {
  if (d.whole) {
    DGNN_CHECK(d.whole->rows == prev.rows && d.whole->cols == prev.cols, ShapeError,
               "apply_diff: a snapshot stored whole of another shape");
    out = *d.whole;
    return;
  }
  const bool weighted = prev.weighted() || !d.add_weight.empty();
  DGNN_CHECK(d.add_src.size() == d.add_dst.size() && d.del_src.size() == d.del_dst.size(),
             ShapeError, "apply_diff: source and destination lists differ in length");
  DGNN_CHECK(!weighted || d.add_weight.size() == d.add_src.size(), ShapeError,
             "apply_diff: a weighted graph needs one weight per added edge");
  DGNN_CHECK(!weighted || prev.weighted() || prev.nnz() == 0, ShapeError,
             "apply_diff: weighted additions to an unweighted graph");
  const int64_t n = prev.rows;
  const size_t nd = d.del_src.size(), na = d.add_src.size();
  const int64_t nnz = prev.nnz() - int64_t(nd) + int64_t(na);
  DGNN_CHECK(nnz >= 0, Error, "apply_diff: deletes more edges than the snapshot holds");
  out.rows = n;
  out.cols = prev.cols;
  out.offsets.resize(size_t(n) + 1);
  out.indices.resize(size_t(nnz));
  out.values.resize(weighted ? size_t(nnz) : 0);
  out.offsets[0] = 0;
  size_t di = 0, ai = 0;
  int64_t w = 0;  // write position in out
  int64_t r = 0;
  auto bad = [](const char* what, int32_t s, int32_t t) {
    throw Error(std::string("apply_diff: ") + what + " " + std::to_string(s) + " -> " +
                std::to_string(t));
  };
  while (r < n) {
    const int64_t next =
        std::min<int64_t>(di < nd ? d.del_dst[di] : n, ai < na ? d.add_dst[ai] : n);
    if (next < r || next > n) throw Error("apply_diff: a difference out of order or range");
    if (next > r) {  // rows r..next-1 unchanged: one block copy, offsets shifted
      const int64_t a = prev.offsets[r], b = prev.offsets[next];
      if (b > a) {  // (memcpy of an empty, null vector's data is undefined even for 0 bytes)
        std::memcpy(out.indices.data() + w, prev.indices.data() + a, size_t(b - a) * 4);
        if (weighted && prev.weighted())
          std::memcpy(out.values.data() + w, prev.values.data() + a, size_t(b - a) * 4);
      }
      const int64_t shift = w - a;
      for (int64_t x = r; x < next; ++x) out.offsets[x + 1] = prev.offsets[x + 1] + shift;
      w += b - a;
      r = next;
      if (r >= n) break;
    }
    // Row r changes: prev's entries minus deletions, merged with additions by source.
    for (int64_t e = prev.offsets[r]; e < prev.offsets[r + 1]; ++e) {
      const int32_t s = prev.indices[e];
      if (di < nd && d.del_dst[di] == r && d.del_src[di] <= s) {
        if (d.del_src[di] < s) bad("deletes a missing edge", d.del_src[di], int32_t(r));
        ++di;
        continue;
      }
      while (ai < na && d.add_dst[ai] == r && d.add_src[ai] <= s) {
        if (d.add_src[ai] == s) bad("adds an edge already present", s, int32_t(r));
        out.indices[w] = d.add_src[ai];
        if (weighted) out.values[w] = d.add_weight[ai];
        ++w, ++ai;
      }
      out.indices[w] = s;
      if (weighted) out.values[w] = prev.values[e];
      ++w;
    }
    if (di < nd && d.del_dst[di] == r) bad("deletes a missing edge", d.del_src[di], int32_t(r));
    while (ai < na && d.add_dst[ai] == r) {
      out.indices[w] = d.add_src[ai];
      if (weighted) out.values[w] = d.add_weight[ai];
      ++w, ++ai;
    }
    out.offsets[r + 1] = w;
    ++r;
  }
  if (di < nd || ai < na || w != nnz) throw Error("apply_diff: a difference out of order");
}

}  // namespace

void SnapshotEvents::set_ordinals(const std::vector<uint32_t>& per_event) {
  DGNN_CHECK(per_event.size() == src.size(), ShapeError,
             "SnapshotEvents::set_ordinals: one ordinal an event");
  Ordinals o;
  o.counted.assign((per_event.size() + 63) / 64, 0);
  uint32_t next = 0;  // the ordinal the current run's next counted event must hold
  bool in_run = false;
  for (size_t i = 0; i < per_event.size(); ++i) {
    if (i > 0 && src[i] != src[i - 1]) in_run = false;
    if (per_event[i] == kRepeat) continue;
    o.counted[i / 64] |= uint64_t(1) << (i % 64);
    if (!in_run) {
      o.first.push_back(per_event[i]);
      in_run = true;
    } else {
      DGNN_CHECK(per_event[i] == next, Error,
                 "SnapshotEvents::set_ordinals: a source's ordinals are not consecutive");
    }
    next = per_event[i] + 1;
  }
  o.first.shrink_to_fit();
  ordinal = std::move(o);
}

std::vector<uint32_t> SnapshotEvents::ordinals() const {
  if (ordinal.empty()) return {};
  std::vector<uint32_t> out(src.size(), kRepeat);
  size_t run = 0;
  uint32_t next = 0;
  bool in_run = false;
  for (size_t i = 0; i < src.size(); ++i) {
    if (i > 0 && src[i] != src[i - 1]) in_run = false;
    if (!(ordinal.counted[i / 64] >> (i % 64) & 1)) continue;
    if (!in_run) next = ordinal.first[run++], in_run = true;
    out[i] = next++;
  }
  return out;
}

int64_t SnapshotDiff::bytes() const {
  if (whole) return csr_wire_bytes(*whole);
  return 4 * int64_t(add_src.size() + add_dst.size() + add_weight.size() + del_src.size() +
                     del_dst.size());
}

SnapshotDiff snapshot_step(const Csr& prev, const Csr& now) {
  SnapshotDiff d = csr_difference(prev, now);
  if (d.bytes() > csr_wire_bytes(now)) {
    d = SnapshotDiff{};
    d.whole = now;
  }
  return d;
}

Csr apply_diff(const Csr& prev, const SnapshotDiff& d) {
  Csr out;
  apply_diff_into(prev, d, out);
  return out;
}

SnapshotDiff csr_difference(const Csr& from, const Csr& to, bool weights) {
  DGNN_CHECK(from.rows == to.rows && from.cols == to.cols, ShapeError,
             "csr_difference: " + std::to_string(from.rows) + "x" + std::to_string(from.cols) +
                 " against " + std::to_string(to.rows) + "x" + std::to_string(to.cols));
  const bool weighted = weights && to.weighted();
  SnapshotDiff d;
  auto del = [&](int32_t s, int64_t r) {
    d.del_src.push_back(s);
    d.del_dst.push_back(int32_t(r));
  };
  auto add = [&](int32_t s, int64_t r, int64_t e) {
    d.add_src.push_back(s);
    d.add_dst.push_back(int32_t(r));
    if (weighted) d.add_weight.push_back(to.values[size_t(e)]);
  };
  for (int64_t r = 0; r < to.rows; ++r) {
    int64_t a = from.offsets[r], b = to.offsets[r];
    const int64_t ae = from.offsets[r + 1], be = to.offsets[r + 1];
    // Sources ascend within a row for deletions and additions alike: the order apply_diff reads.
    while (a < ae || b < be) {
      const int32_t fa = a < ae ? from.indices[size_t(a)] : std::numeric_limits<int32_t>::max();
      const int32_t tb = b < be ? to.indices[size_t(b)] : std::numeric_limits<int32_t>::max();
      if (a < ae && (b >= be || fa < tb)) {
        del(fa, r), ++a;
      } else if (b < be && (a >= ae || tb < fa)) {
        add(tb, r, b), ++b;
      } else {  // in both: unchanged unless its weight differs
        if (!weights) {
          ++a, ++b;
          continue;
        }
        const float wa = from.weighted() ? from.values[size_t(a)] : 1.f;
        const float wb = weighted ? to.values[size_t(b)] : 1.f;
        if (wa != wb || from.weighted() != weighted) del(fa, r), add(tb, r, b);
        ++a, ++b;
      }
    }
  }
  return d;
}

int64_t csr_wire_bytes(const Csr& c) { return csr_bytes(c.rows, c.nnz(), c.weighted()); }

int64_t entries_wire_bytes(const Csr& c) { return (c.weighted() ? 12 : 8) * c.nnz(); }

Csr TemporalGraph::snapshot(int t) const {
  DGNN_CHECK(t >= 0 && t < num_snapshots(), Error,
             "snapshot " + std::to_string(t) + " of " + std::to_string(num_snapshots()));
  if (t == 0) return base;
  // From the last snapshot stored whole (or the base), compose the differences after it into one
  // net difference, then rebuild once: the first operation on an edge says whether the start
  // holds it, the last whether snapshot t does.
  int from = t - 1;
  while (from >= 0 && !diffs[size_t(from)].whole) --from;
  const Csr& start = from >= 0 ? *diffs[size_t(from)].whole : base;
  struct Op {
    uint64_t key;
    int32_t seq;  // 2 * step + (1 for an addition): deletions of a step come first
    float w;
  };
  std::vector<Op> ops;
  for (int s = from + 1; s < t; ++s) {
    const SnapshotDiff& d = diffs[s];
    for (size_t i = 0; i < d.del_src.size(); ++i)
      ops.push_back({edge_key(d.del_src[i], d.del_dst[i]), 2 * s, 0.0f});
    for (size_t i = 0; i < d.add_src.size(); ++i)
      ops.push_back({edge_key(d.add_src[i], d.add_dst[i]), 2 * s + 1,
                     d.add_weight.empty() ? 1.0f : d.add_weight[i]});
  }
  std::sort(ops.begin(), ops.end(), [](const Op& a, const Op& b) {
    return a.key != b.key ? a.key < b.key : a.seq < b.seq;
  });
  SnapshotDiff net;
  for (size_t i = 0; i < ops.size();) {
    size_t j = i;
    while (j + 1 < ops.size() && ops[j + 1].key == ops[i].key) ++j;
    const uint64_t k = ops[i].key;
    if ((ops[i].seq & 1) == 0) net.del_src.push_back(key_src(k)), net.del_dst.push_back(key_dst(k));
    if (ops[j].seq & 1) {
      net.add_src.push_back(key_src(k));
      net.add_dst.push_back(key_dst(k));
      if (weighted) net.add_weight.push_back(ops[j].w);
    }
    i = j + 1;
  }
  return apply_diff(start, net);
}

int64_t TemporalGraph::full_bytes() const {
  int64_t nnz = base.nnz(), total = csr_bytes(num_vertices, nnz, weighted);
  for (const SnapshotDiff& d : diffs) {
    nnz = d.whole ? d.whole->nnz() : nnz + int64_t(d.add_src.size()) - int64_t(d.del_src.size());
    total += csr_bytes(num_vertices, nnz, weighted);
  }
  return total;
}

int64_t TemporalGraph::diff_bytes() const {
  int64_t total = csr_bytes(num_vertices, base.nnz(), weighted);
  for (const SnapshotDiff& d : diffs) total += d.bytes();
  return total;
}

std::vector<int64_t> snapshot_nnz(const TemporalGraph& g) {
  std::vector<int64_t> nnz;
  SnapshotCursor cur(g);
  do nnz.push_back(cur.current().nnz());
  while (cur.next());
  return nnz;
}

std::vector<SnapshotStats> snapshot_stats(const TemporalGraph& g) {
  std::vector<SnapshotStats> out;
  std::vector<uint8_t> seen(size_t(g.num_vertices));
  SnapshotCursor cur(g);
  do {
    const Csr& c = cur.current();
    const int t = cur.index();
    SnapshotStats s;
    std::fill(seen.begin(), seen.end(), 0);
    int64_t loops = 0;
    for (int64_t r = 0; r < c.rows; ++r) {
      if (c.degree(r) > 0) seen[r] = 1;
      for (int64_t e = c.offsets[r]; e < c.offsets[r + 1]; ++e) loops += c.indices[e] == r;
    }
    for (int32_t i : c.indices) seen[i] = 1;
    for (uint8_t x : seen) s.active_vertices += x;
    s.stored_edges = c.nnz();
    s.edges = g.directed ? c.nnz() : (c.nnz() + loops) / 2;
    s.events = t < g.num_snapshots() ? g.events[t].size() : 0;
    s.bytes = csr_bytes(g.num_vertices, c.nnz(), g.weighted);
    s.diff_bytes = t == 0 ? s.bytes : g.diffs[t - 1].bytes();
    out.push_back(s);
  } while (cur.next());
  if (g.num_snapshots() == 0) out.clear();
  return out;
}

SnapshotCursor::SnapshotCursor(const TemporalGraph& g) : g_(g), csr_(g.base) {}

bool SnapshotCursor::next() {
  if (t_ + 1 >= g_.num_snapshots()) return false;
  apply_diff_into(csr_, g_.diffs[t_], spare_);
  std::swap(csr_, spare_);
  ++t_;
  return true;
}

void validate(const SnapshotOptions& snap) {
  if (!(snap.seconds >= 0) || !std::isfinite(snap.seconds))
    throw OptionError("--snapshot-seconds must be a positive duration, got " +
                      fmt_double(snap.seconds));
  if (snap.count < 0)
    throw OptionError("--snapshots must be at least 1, got " + std::to_string(snap.count));
  if (snap.seconds > 0 && snap.count > 0)
    throw OptionError("--snapshot-seconds and --snapshots exclude each other: give one");
  if (snap.seconds == 0 && snap.count == 0)
    throw OptionError(
        "a temporal graph is cut into snapshots by --snapshot-seconds S (bucket length) or "
        "--snapshots T (equal buckets): give one");
  if (snap.count > kMaxSnapshots)
    throw OptionError("--snapshots " + std::to_string(snap.count) + ": at most " +
                      std::to_string(kMaxSnapshots));
  if (snap.window < 1)
    throw OptionError("--window must be at least 1, got " + std::to_string(snap.window));
  if (snap.mode == SnapshotMode::cumulative && snap.window > 1)
    throw OptionError("--window and --cumulative exclude each other");
}

TemporalGraph build_temporal(const EdgeList& edges, const EdgeListOptions& opt,
                             const SnapshotOptions& snap, const std::string& path,
                             int64_t min_vertices) {
  if (opt.time_col < 0 || edges.time.size() != edges.src.size())
    throw InputError(path, 0, "no time column: a temporal graph needs one (--time-col, 0-based)");
  validate(snap);
  DGNN_CHECK(edges.src.size() == edges.dst.size(), ShapeError, "build_temporal: src/dst differ");
  const bool weighted = !edges.weight.empty();
  DGNN_CHECK(!weighted || edges.weight.size() == edges.src.size(), ShapeError,
             "build_temporal: one weight per edge expected");
  if (edges.src.empty()) throw InputError(path, 0, "no edges found");

  TemporalGraph g;
  {
    Relabelled r = relabel(edges, min_vertices);
    const int64_t n = int64_t(r.original.size());
    auto [lo, hi] = std::minmax_element(edges.time.begin(), edges.time.end());
    const SnapshotCut cut = make_snapshot_cut(*lo, *hi, snap, path);
    std::vector<int32_t> bucket(r.src.size());
    for (size_t i = 0; i < bucket.size(); ++i) bucket[i] = cut.bucket(edges.time[i]);
    g = build_snapshots(n, r.src, r.dst, bucket, edges.weight, cut, opt, snap);
    g.original_ids = std::move(r.original);
  }
  return g;
}

TemporalGraph build_snapshots(int64_t n, const std::vector<int32_t>& src,
                              const std::vector<int32_t>& dst, const std::vector<int32_t>& bucket,
                              const std::vector<float>& weight, const SnapshotCut& cut,
                              const EdgeListOptions& opt, const SnapshotOptions& snap) {
  DGNN_CHECK(src.size() == dst.size() && src.size() == bucket.size() &&
                 (weight.empty() || weight.size() == src.size()),
             ShapeError, "build_snapshots: one source, destination, bucket (and weight) per edge");
  const bool weighted = !weight.empty();
  TemporalGraph g;
  g.directed = opt.directed;
  g.weighted = weighted;
  g.num_vertices = n;
  const int64_t T = cut.count;
  const size_t m = src.size();
  // Edges grouped by bucket, in file order within a bucket (a stable counting sort).
  std::vector<int64_t> off(size_t(T) + 1, 0);
  for (size_t i = 0; i < m; ++i) ++off[size_t(bucket[i]) + 1];
  for (int64_t b = 0; b < T; ++b) off[b + 1] += off[b];
  std::vector<int64_t> order(m);
  {
    std::vector<int64_t> fill(off.begin(), off.end() - 1);
    for (size_t i = 0; i < m; ++i) order[size_t(fill[bucket[i]]++)] = int64_t(i);
  }

  const bool drop_loops = opt.self_loops == SelfLoops::remove;
  g.events.resize(size_t(T));
  std::vector<Bucket> buckets(static_cast<size_t>(T));
#pragma omp parallel for schedule(dynamic, 1)
  for (int64_t b = 0; b < T; ++b) {
    std::vector<KeyW> ev, st;
    for (int64_t j = off[b]; j < off[b + 1]; ++j) {
      const int64_t i = order[j];
      const int32_t s = src[i], d = dst[i];
      if (s == d && drop_loops) continue;
      const float w = weighted ? weight[i] : 1.0f;
      ev.push_back({edge_key(d, s), w});  // (src, dst) order: src in the high half
      st.push_back({edge_key(s, d), w});
      if (!opt.directed && s != d) st.push_back({edge_key(d, s), w});
    }
    SnapshotEvents& e = g.events[b];
    std::vector<uint64_t> keys;
    sort_merge(ev, weighted, keys, e.weight);
    e.src.resize(keys.size());
    e.dst.resize(keys.size());
    for (size_t i = 0; i < keys.size(); ++i)
      e.src[i] = key_dst(keys[i]), e.dst[i] = key_src(keys[i]);
    e.start_time = cut.start(b);
    e.end_time = cut.start(b + 1);
    sort_merge(st, weighted, buckets[b].keys, buckets[b].w);
  }

  // Sweep: the current snapshot as sorted keys; each step merges in the bucket that enters and
  // the one that leaves (sliding), recording what changed.
  const bool cumulative = snap.mode == SnapshotMode::cumulative;
  const int64_t k = snap.mode == SnapshotMode::sliding ? snap.window : 1;
  std::vector<uint64_t> cur_k, next_k;
  std::vector<float> cur_w, next_w;
  g.diffs.resize(size_t(std::max<int64_t>(T - 1, 0)));
  for (int64_t t = 0; t < T; ++t) {
    const Bucket& in = buckets[t];
    static const Bucket kNone;
    const Bucket& out = !cumulative && t - k >= 0 ? buckets[t - k] : kNone;
    SnapshotDiff* diff = t > 0 ? &g.diffs[t - 1] : nullptr;
    next_k.clear();
    next_w.clear();
    size_t ci = 0, ii = 0, oi = 0;
    const uint64_t kEnd = std::numeric_limits<uint64_t>::max();
    for (;;) {
      const uint64_t ck = ci < cur_k.size() ? cur_k[ci] : kEnd;
      const uint64_t ik = ii < in.keys.size() ? in.keys[ii] : kEnd;
      const uint64_t ok = oi < out.keys.size() ? out.keys[oi] : kEnd;
      const uint64_t key = std::min({ck, ik, ok});
      if (key == kEnd) break;
      const bool was = ck == key, entering = ik == key, leaving = ok == key;
      const float old_w = was && weighted ? cur_w[ci] : 0.0f;
      bool now = was;
      float new_w = old_w;
      if (cumulative) {
        now = true;
        if (entering && weighted) new_w = was ? old_w + in.w[ii] : in.w[ii];
      } else if (entering || leaving) {
        // Recomputed over the window in time order, so the sum does not drift by subtraction.
        now = false;
        new_w = 0.0f;
        for (int64_t b = std::max<int64_t>(0, t - k + 1); b <= t; ++b) {
          const int64_t p = b == t ? (entering ? int64_t(ii) : -1) : buckets[b].find(key);
          if (p < 0) continue;
          new_w = now ? new_w + (weighted ? buckets[b].w[p] : 0.0f)
                      : (weighted ? buckets[b].w[p] : 0.0f);
          now = true;
        }
      }
      const bool changed_w = was && now && weighted && new_w != old_w;
      if (diff && was && (!now || changed_w))
        diff->del_src.push_back(key_src(key)), diff->del_dst.push_back(key_dst(key));
      if (diff && now && (!was || changed_w)) {
        diff->add_src.push_back(key_src(key));
        diff->add_dst.push_back(key_dst(key));
        if (weighted) diff->add_weight.push_back(new_w);
      }
      if (now) {
        next_k.push_back(key);
        if (weighted) next_w.push_back(new_w);
      }
      ci += was, ii += entering, oi += leaving;
    }
    std::swap(cur_k, next_k);
    std::swap(cur_w, next_w);
    if (t == 0) g.base = csr_from_keys(n, cur_k, cur_w);
    // A snapshot that shares little with the previous one is cheaper stored whole.
    if (diff && diff->bytes() > csr_bytes(n, int64_t(cur_k.size()), weighted)) {
      *diff = SnapshotDiff{};
      diff->whole = csr_from_keys(n, cur_k, cur_w);
    }
    // A bucket is read for the last time when it leaves (when it enters, for cumulative).
    if (cumulative) {
      buckets[t] = Bucket();
    } else if (t - k >= 0) {
      buckets[t - k] = Bucket();
    }
  }
  return g;
}

std::string TemporalLayout::to_text() const {
  std::string s = "# dgnn temporal dataset: how the edge list is cut into snapshots\n";
  s += "time-col " + std::to_string(time_col) + "\n";
  if (seconds > 0) s += "snapshot-seconds " + fmt_double(seconds) + "\n";
  if (snapshots > 0) s += "snapshots " + std::to_string(snapshots) + "\n";
  if (vertices > 0) s += "vertices " + std::to_string(vertices) + "\n";
  return s;
}

std::optional<TemporalLayout> read_temporal_layout(const std::string& path) {
  std::error_code ec;
  const fs::path dir(path), file = dir / "snapshots.txt";
  if (!fs::is_directory(dir, ec) || !fs::is_regular_file(file, ec)) return std::nullopt;
  TemporalLayout lay;
  lay.edges = find_edges_file(path);
  const std::string text = read_text_file(file.string());
  int64_t line = 0;
  std::vector<std::string> seen;
  size_t start = text.compare(0, 3, "\xEF\xBB\xBF") == 0 ? 3 : 0;  // a byte-order mark
  for (size_t pos = start; pos < text.size();) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string::npos) nl = text.size();
    std::string l = text.substr(pos, nl - pos);
    pos = nl + 1;
    ++line;
    if (const size_t h = l.find('#'); h != std::string::npos) l.resize(h);
    char key[64] = {0}, value[64] = {0}, extra[8] = {0};
    const int got = std::sscanf(l.c_str(), "%63s %63s %7s", key, value, extra);
    if (got <= 0) continue;
    auto fail = [&](const std::string& what) { throw InputError(file.string(), line, what); };
    if (got != 2) fail("expected 'key value', found '" + l + "'");
    const std::string k = key, v = value;
    if (std::find(seen.begin(), seen.end(), k) != seen.end()) fail("a second '" + k + "' line");
    seen.push_back(k);
    auto integer = [&](int64_t lo, int64_t hi) {
      int64_t x = 0;
      auto res = std::from_chars(v.data(), v.data() + v.size(), x);
      if (res.ec != std::errc() || res.ptr != v.data() + v.size() || x < lo || x > hi)
        fail("expected an integer from " + std::to_string(lo) + " to " + std::to_string(hi) +
             " for " + k + ", found '" + v + "'");
      return x;
    };
    if (k == "time-col") {
      // Columns 0 and 1 are the edge's vertices ('src dst [weight] time').
      lay.time_col = int(integer(2, 1000));
    } else if (k == "snapshot-seconds") {
      char* endp = nullptr;
      lay.seconds = std::strtod(v.c_str(), &endp);
      if (*endp || !(lay.seconds > 0) || !std::isfinite(lay.seconds))
        fail("expected a positive number for snapshot-seconds, found '" + v + "'");
    } else if (k == "snapshots") {
      lay.snapshots = int(integer(1, kMaxSnapshots));
    } else if (k == "vertices") {
      lay.vertices = integer(0, std::numeric_limits<int32_t>::max());
    } else {
      fail("unknown key '" + k + "' (expected time-col, snapshot-seconds, snapshots, vertices)");
    }
  }
  if (lay.time_col < 0) throw InputError(file.string(), 0, "no time-col line");
  return lay;
}

TemporalInput resolve_temporal_input(const std::string& path, const EdgeListOptions& opt,
                                     const SnapshotOptions& snap, int64_t min_vertices) {
  std::string file = path;
  EdgeListOptions o = opt;
  SnapshotOptions s = snap;
  std::error_code ec;
  if (auto lay = read_temporal_layout(path)) {
    file = lay->edges;
    const std::string layout_file = (fs::path(path) / "snapshots.txt").string();
    // The folder says how its edge list reads ('src dst [weight] time'): a column option that
    // disagrees would read another column as the time or as a vertex.
    std::string other;
    if (o.time_col >= 0 && o.time_col != lay->time_col) {
      other = "--time-col " + std::to_string(o.time_col);
    } else if (o.src_col > 1) {
      other = "--src-col " + std::to_string(o.src_col);
    } else if (o.dst_col > 1) {
      other = "--dst-col " + std::to_string(o.dst_col);
    }
    if (!other.empty())
      throw OptionError(other + ": " + path +
                        " is a temporal dataset already cut into snapshots (" + layout_file +
                        ": vertex ids in columns 0 and 1, times in column " +
                        std::to_string(lay->time_col) +
                        "); --time-col, --src-col and --dst-col do not apply to it");
    if (o.time_col < 0) {
      o.time_col = lay->time_col;
      o.time_col_from = layout_file;
    }
    if (s.seconds == 0 && s.count == 0) {
      // Its bucket length; else the count it was made with, as equal buckets.
      s.seconds = lay->seconds;
      if (s.seconds == 0) s.count = lay->snapshots;
      if (s.seconds == 0 && s.count == 0)
        throw InputError(layout_file, 0,
                         "neither a snapshot-seconds nor a snapshots line: the folder does not "
                         "say how its edges are cut into snapshots (add one, or give "
                         "--snapshot-seconds S or --snapshots T)");
    }
    min_vertices = std::max(min_vertices, lay->vertices);
  } else if (fs::is_directory(path, ec)) {
    file = find_edges_file(path);
  }
  if (o.time_col < 0)
    throw InputError(file, 0, "no time column: a temporal graph needs one (--time-col, 0-based)");
  validate(s);  // before reading: a bad option should not wait for a large file
  return {file, o, s, min_vertices};
}

TemporalGraph load_temporal(const std::string& path, const EdgeListOptions& opt,
                            const SnapshotOptions& snap, int64_t min_vertices) {
  const TemporalInput in = resolve_temporal_input(path, opt, snap, min_vertices);
  const std::string& file = in.file;
  const EdgeListOptions& o = in.opt;
  const SnapshotOptions& s = in.snap;
  const EdgeList edges = read_edge_list(file, o);
  if (o.progress) o.progress("build", 0.0);
  TemporalGraph g = build_temporal(edges, o, s, file, in.min_vertices);
  if (o.progress) o.progress("build", 1.0);
  return g;
}

}  // namespace dgnn
