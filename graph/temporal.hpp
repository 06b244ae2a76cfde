#pragma once
// Temporal graphs: timestamped edges cut into T snapshots over one shared vertex set, stored as a
// base snapshot plus per-step differences (moving snapshot t+1 given t costs the change only).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "dgnn/graph/csr.hpp"
#include "dgnn/graph/graph.hpp"

namespace dgnn {

enum class SnapshotMode : uint8_t {
  window,      // snapshot t holds the edges whose time falls in bucket t
  cumulative,  // snapshot t holds every edge up to the end of bucket t
  sliding,     // snapshot t holds buckets t-k+1 .. t (k = window)
};

struct SnapshotOptions {
  double seconds = 0;  // bucket length in time units; 0: use `count`
  int count = 0;       // number of equal-length buckets over [min time, max time]
  SnapshotMode mode = SnapshotMode::window;
  int window = 1;  // k for sliding
};

// One snapshot's change from the previous one: edges (dense ids, src -> dst) added and removed.
// An undirected graph lists each edge once per direction, as the CSRs store it.
// Both lists are sorted by (dst, src), the CSR order. Deletions apply before additions, so an
// edge whose weight changes is deleted and added again with its new weight.
// A snapshot that changes more than its difference saves is stored whole instead (`whole`, the
// lists empty): a graph whose snapshots share few edges then costs no more than its snapshots.
struct SnapshotDiff {
  std::vector<int32_t> add_src, add_dst;
  std::vector<float> add_weight;  // empty when unweighted
  std::vector<int32_t> del_src, del_dst;
  std::optional<Csr> whole;  // the next snapshot itself, instead of the lists
  // What holding or moving it costs: 4 bytes per list entry, or the whole CSR's bytes
  // (csr_wire_bytes).
  int64_t bytes() const;
};

// The step from snapshot `prev` to `now` in the cheaper form: their difference
// (csr_difference), or `now` whole when its CSR takes fewer bytes.
SnapshotDiff snapshot_step(const Csr& prev, const Csr& now);

// The edges whose time falls in one bucket (the events of that step), dense ids, each undirected
// event once (src, dst as in the file). Targets for link prediction / edge classification.
// Repeats of one (src, dst) pair within the bucket are one event, weights summed; (u, v) and
// (v, u) stay two events. Sorted by (src, dst); self loops follow EdgeListOptions::self_loops.
struct SnapshotEvents {
  std::vector<int32_t> src, dst;
  std::vector<float> weight;             // empty when unweighted
  int64_t start_time = 0, end_time = 0;  // the bucket's times: [start_time, end_time)
  int64_t size() const { return int64_t(src.size()); }

  // A rank's share under the vertex strategy on several ranks (shard_events): the lists above
  // then hold only the events whose source the rank owns (undirected: or destination),
  // `ordinal` numbers them in the whole step, and `whole` counts what the whole step holds.
  static constexpr uint32_t kRepeat = 0xffffffffu;  // a self loop, or (u, v) after (v, u)
  // Per event: its ordinal among the whole step's distinct pairs (no self loops, an undirected
  // pair once, the first of (u, v) and (v, u) in (src, dst) order), or kRepeat. Only on the
  // rank that owns its source: kRepeat elsewhere. A source's counted events (those not kRepeat)
  // hold consecutive ordinals (the whole step numbers pairs by source), so they are kept as a
  // bit per event and the first ordinal of each source's run: about 2 bytes an event of the
  // rank's sources and 1 bit an event, not 4 bytes an event (ordinals() lists them).
  struct Ordinals {
    std::vector<uint64_t> counted;  // bit i: event i is not kRepeat
    std::vector<uint32_t> first;    // per run of one source with a counted event, in order
    bool empty() const { return counted.empty(); }
  };
  Ordinals ordinal;
  // Keeps `per_event` (one entry per event, kRepeat or an ordinal; consecutive within a source's
  // run of events) in the form above. Error if a run's ordinals are not consecutive.
  void set_ordinals(const std::vector<uint32_t>& per_event);
  std::vector<uint32_t> ordinals() const;
  struct Whole {
    int64_t events = 0;            // every event of the step (size() of the whole list)
    int64_t targets = 0;           // of which not self loops
    int64_t negative_targets = 0;  // of those, with a negative weight
    int64_t negative_weights = 0;  // events with a negative weight, self loops too
    int64_t distinct = 0;          // distinct pairs (link prediction's positives)
  };
  std::optional<Whole> whole;  // set when this is a share
  bool sharded() const { return whole.has_value(); }
  int64_t total_events() const { return whole ? whole->events : size(); }
};

struct TemporalGraph {
  int64_t num_vertices = 0;
  std::vector<int64_t> original_ids;  // dense id -> id in the file, ascending
  bool directed = false;
  bool weighted = false;
  std::vector<SnapshotEvents> events;  // per snapshot (T entries)
  Csr base;                            // snapshot 0, in-CSR (row = destination), merged duplicates
  std::vector<SnapshotDiff> diffs;     // diffs[t - 1] turns snapshot t - 1 into snapshot t

  int num_snapshots() const { return int(events.size()); }
  // Snapshot t as a CSR (applies diffs from the base; O(total change up to t)).
  Csr snapshot(int t) const;
  // Bytes to hold every snapshot as its own CSR (8 per row + 8, 4 per entry, 4 more per entry
  // when weighted), and as base + differences (the base's CSR + every SnapshotDiff::bytes(),
  // some of them snapshots stored whole): never more than full_bytes().
  int64_t full_bytes() const;
  int64_t diff_bytes() const;
};

// Snapshot `prev` changed by `d` (O(rows + nnz) copying, O(diff) work: a CSR cannot grow in
// place), or d.whole. Error when `d` deletes an edge `prev` does not hold.
Csr apply_diff(const Csr& prev, const SnapshotDiff& d);

// The difference that turns `from` into `to` (both in-CSRs of one shape, rows sorted, no
// duplicate entries): apply_diff(from, csr_difference(from, to)) == to. An entry whose weight
// changes is deleted and added again, unless `weights` is false: then only the structure counts
// (no weights in the difference, an entry in both is unchanged). O(rows + nnz of both).
SnapshotDiff csr_difference(const Csr& from, const Csr& to, bool weights = true);

// What sending a snapshot whole costs: as a CSR (8 bytes per row + 8, 4 per entry, 4 more per
// entry when weighted; the unit TemporalGraph::full_bytes() adds up), or as its entries alone
// (destination and source per entry, and the weight), whichever is smaller — a sparse snapshot
// over many vertices is mostly row offsets.
int64_t csr_wire_bytes(const Csr& c);
// That unit for a CSR of `rows` rows and `nnz` entries: 8 (rows + 1) + (8 or 4) nnz.
inline int64_t csr_bytes(int64_t rows, int64_t nnz, bool weighted) {
  return 8 * (rows + 1) + (weighted ? 8 : 4) * nnz;
}
int64_t entries_wire_bytes(const Csr& c);
inline int64_t whole_wire_bytes(const Csr& c) {
  const int64_t a = csr_wire_bytes(c), b = entries_wire_bytes(c);
  return a < b ? a : b;
}

// Per-snapshot sizes, as `dgnn info` shows them.
struct SnapshotStats {
  int64_t active_vertices = 0;  // vertices with at least one edge (either direction)
  int64_t stored_edges = 0;     // CSR entries (an undirected edge counts twice)
  int64_t edges = 0;            // as a user counts them: undirected edges once
  int64_t events = 0;           // events[t].size()
  int64_t bytes = 0;            // this snapshot as its own CSR
  int64_t diff_bytes = 0;       // the difference that produces it (the base for t = 0)
};
std::vector<SnapshotStats> snapshot_stats(const TemporalGraph& g);

// Walks snapshots in order, applying one difference per step (the way training consumes them).
class SnapshotCursor {
 public:
  explicit SnapshotCursor(const TemporalGraph& g);
  int index() const { return t_; }
  const Csr& current() const { return csr_; }
  // Moves to snapshot t + 1; false past the last.
  bool next();

 private:
  const TemporalGraph& g_;
  int t_ = 0;
  Csr csr_;
  Csr spare_;  // the previous step's arrays, reused so a step allocates nothing once warm
};

// Every snapshot's entry count, in order (a walk of the differences).
std::vector<int64_t> snapshot_nnz(const TemporalGraph& g);

// How times map to buckets: from the smallest and largest time and the options. Count mode uses
// exact integer arithmetic so that equal-length buckets do not depend on floating-point rounding
// at their edges.
struct SnapshotCut {
  int64_t t_min = 0, t_max = 0;
  double seconds = 0;
  int64_t count = 0;  // buckets

  int32_t bucket(int64_t t) const {
    const int64_t d = t - t_min;
    if (seconds > 0) return int32_t(std::floor(double(d) / seconds));
    const int64_t span = t_max - t_min;
    if (span == 0) return 0;
    return int32_t(std::min<__int128>(count - 1, __int128(d) * count / span));
  }
  // First integer time of bucket b (so [start(b), start(b + 1)) are its times).
  int64_t start(int64_t b) const {
    if (b >= count) return t_max + 1;
    if (seconds > 0) return t_min + int64_t(std::ceil(double(b) * seconds));
    const __int128 span = t_max - t_min;
    return t_min + int64_t((__int128(b) * span + count - 1) / count);
  }
};
// The cut of times t_min..t_max (validated options): InputError (path) for a span past 2^62,
// OptionError for more snapshots than allowed or than the times allow.
SnapshotCut make_snapshot_cut(int64_t t_min, int64_t t_max, const SnapshotOptions& snap,
                              const std::string& path);

// The snapshots of edges with dense ids over `n` vertices, in file order (src, dst, their buckets
// under `cut`, weights or empty): build_temporal once the ids are numbered (the result has no
// original_ids). A key's snapshots depend only on that key's edges and their order, so a subset
// of the edges that holds all of some keys' edges in file order gives those keys' entries and
// events exactly as the whole list does (the sharded loader relies on it).
TemporalGraph build_snapshots(int64_t n, const std::vector<int32_t>& src,
                              const std::vector<int32_t>& dst, const std::vector<int32_t>& bucket,
                              const std::vector<float>& weight, const SnapshotCut& cut,
                              const EdgeListOptions& opt, const SnapshotOptions& snap);

// What load_temporal reads for `path`: the edge-list file, its options and the snapshot options
// once a dataset folder's snapshots.txt applied, and the least vertex count. The time column and
// the snapshot options are checked (errors as load_temporal's) before anything is read.
struct TemporalInput {
  std::string file;
  EdgeListOptions opt;
  SnapshotOptions snap;
  int64_t min_vertices = 0;
};
TemporalInput resolve_temporal_input(const std::string& path, const EdgeListOptions& opt,
                                     const SnapshotOptions& snap, int64_t min_vertices = 0);

// Builds snapshots from edges read with a time column (opt.time_col >= 0): InputError naming the
// file when it has none. Edge weights are merged by sum within a snapshot (always, whatever
// opt.duplicates says: a diff adds or removes an edge, not one of its copies); a snapshot that
// spans several buckets sums the buckets' weights in time order. `min_vertices` > 0 makes ids
// 0..min_vertices-1 vertices even when they have no edge (rows of a feature matrix).
TemporalGraph build_temporal(const EdgeList& edges, const EdgeListOptions& opt,
                             const SnapshotOptions& snap, const std::string& path,
                             int64_t min_vertices = 0);
// read_edge_list + build_temporal. OptionError for impossible snapshot options (both or neither
// of seconds / count, a window < 1, more snapshots than distinct times allow, ...).
// `path` may be a dataset directory: its edges.txt (.csv, .gz) and, when present, snapshots.txt
// (TemporalLayout), whose bucket length (or, without one, its snapshot count) and vertex count
// apply unless snap sets its own. Its columns are fixed: opt's time column must be the file's or
// unset, its vertex columns 0 and 1 (OptionError otherwise).
// `min_vertices`: as build_temporal's (the larger of it and snapshots.txt's count applies).
TemporalGraph load_temporal(const std::string& path, const EdgeListOptions& opt,
                            const SnapshotOptions& snap, int64_t min_vertices = 0);

// Throws OptionError (naming the command-line flag) unless exactly one of seconds / count is set,
// both are finite and positive, and window >= 1.
void validate(const SnapshotOptions& snap);

// snapshots.txt of a temporal dataset directory: lines "key value" ('#' comments), keys
// time-col, snapshot-seconds, snapshots (the count it was generated with: equal buckets when
// there is no snapshot-seconds) and vertices (ids 0..vertices-1 are vertices).
struct TemporalLayout {
  std::string edges;  // the directory's edge-list file
  int time_col = -1;
  double seconds = 0;
  int snapshots = 0;
  int64_t vertices = 0;
  std::string to_text() const;  // the file's contents
};
// The layout of `path` when it is a directory holding snapshots.txt; nullopt otherwise.
// InputError (snapshots.txt:LINE) for a malformed file.
std::optional<TemporalLayout> read_temporal_layout(const std::string& path);

}  // namespace dgnn
