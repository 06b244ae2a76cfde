// One vertex partition for every snapshot of a temporal graph (the vertex strategy), balanced
// per group of snapshots, and how balanced each snapshot's share is.
#include <algorithm>
#include <cmath>
#include <string>

#include "dgnn/common/error.hpp"
#include "dgnn/partition/partition.hpp"

namespace dgnn {

namespace {

// Per snapshot, each vertex's in-edges and the events it is the source of: what its owner
// aggregates and scores in that step under the vertex strategy.
struct SnapshotWork {
  std::vector<std::vector<int32_t>> edges, events;  // [t][v]
};

SnapshotWork snapshot_work(const TemporalGraph& g) {
  SnapshotWork w;
  const int64_t n = g.num_vertices;
  SnapshotCursor cur(g);
  do {
    const Csr& a = cur.current();
    std::vector<int32_t> e(static_cast<size_t>(n), 0);
    for (int64_t v = 0; v < a.rows; ++v)
      for (int64_t k = a.offsets[size_t(v)]; k < a.offsets[size_t(v) + 1]; ++k)
        e[size_t(v)] += a.indices[size_t(k)] != v;
    w.edges.push_back(std::move(e));
  } while (cur.next());
  for (const SnapshotEvents& ev : g.events) {
    std::vector<int32_t> c(static_cast<size_t>(n), 0);
    for (size_t i = 0; i < ev.src.size(); ++i)
      if (ev.src[i] != ev.dst[i]) ++c[size_t(ev.src[i])];
    w.events.push_back(std::move(c));
  }
  return w;
}

// The union of all snapshots' events, each (dst, src) pair once (METIS symmetrises it).
}  // namespace

Csr temporal_union(const TemporalGraph& g) {
  std::vector<std::pair<int32_t, int32_t>> pairs;
  for (const auto& ev : g.events)
    for (size_t i = 0; i < ev.src.size(); ++i)
      if (ev.src[i] != ev.dst[i]) pairs.emplace_back(ev.dst[i], ev.src[i]);
  std::sort(pairs.begin(), pairs.end());
  pairs.erase(std::unique(pairs.begin(), pairs.end()), pairs.end());
  std::vector<int32_t> rows, cols;
  for (auto [d, s] : pairs) {
    rows.push_back(d);
    cols.push_back(s);
  }
  return csr_from_coo(g.num_vertices, g.num_vertices, rows, cols, {});
}

namespace {

double ratio(double max, double total, int parts) {
  return total > 0 ? max / (total / parts) : 0.0;
}

}  // namespace

int auto_snapshot_groups(int snapshots) { return std::min(snapshots, 16); }

int snapshot_group_count(int t, const PartitionOptions& opt) {
  if (opt.snapshot_groups < -1)
    throw OptionError("--snapshot-groups must be >= 0 (0: balance the union graph only), got " +
                      std::to_string(opt.snapshot_groups));
  return std::min(t, opt.snapshot_groups < 0 ? auto_snapshot_groups(t) : opt.snapshot_groups);
}

std::vector<int> snapshot_groups_of(const std::vector<int64_t>& step, int groups) {
  int64_t total = 0;
  for (int64_t x : step) total += x;
  std::vector<int> group(step.size(), 0);
  int64_t before = 0;
  for (size_t s = 0; s < step.size(); ++s) {
    // The group of the snapshot's midpoint in the cumulative work.
    const double mid = double(before) + 0.5 * double(step[s]);
    group[s] = total > 0 ? std::min(groups - 1, int(mid * groups / double(total))) : 0;
    before += step[s];
  }
  return group;
}

std::vector<std::vector<int64_t>> snapshot_group_work(const TemporalGraph& g,
                                                      const PartitionOptions& opt) {
  const int t = g.num_snapshots();
  const int groups = snapshot_group_count(t, opt);
  if (groups == 0) return {};
  // Groups of consecutive snapshots with about equal work; each group's per-vertex work is one
  // METIS constraint beside the vertex count, so that every group (and so, roughly, every
  // snapshot in it) is spread over the ranks.
  const SnapshotWork w = snapshot_work(g);
  std::vector<int64_t> step(size_t(t), 0);
  for (int s = 0; s < t; ++s)
    for (int64_t v = 0; v < g.num_vertices; ++v)
      step[size_t(s)] += w.edges[size_t(s)][size_t(v)] + w.events[size_t(s)][size_t(v)];
  const std::vector<int> group = snapshot_groups_of(step, groups);
  std::vector<std::vector<int64_t>> columns(size_t(groups),
                                            std::vector<int64_t>(size_t(g.num_vertices), 0));
  for (int s = 0; s < t; ++s)
    for (int64_t v = 0; v < g.num_vertices; ++v)
      columns[size_t(group[size_t(s)])][size_t(v)] +=
          w.edges[size_t(s)][size_t(v)] + w.events[size_t(s)][size_t(v)];
  return columns;
}

std::vector<int32_t> partition_temporal(const TemporalGraph& g, const PartitionOptions& opt) {
  if (!opt.from_dir.empty())
    return read_temporal_partition(opt.from_dir, g.num_vertices, g.original_ids, opt.parts,
                                   nullptr);
  const int groups = snapshot_group_count(g.num_snapshots(), opt);
  const Csr u = temporal_union(g);
  // Scotch balances one weight: the vertex count and the groups' work, each normalised to its
  // total, summed (partition_vertices).
  const bool weighted = opt.method == Partitioner::metis || opt.method == Partitioner::ptscotch;
  if (!weighted || groups == 0 || opt.parts < 2) return partition_vertices(u, opt);
  return partition_vertices(u, opt, {}, snapshot_group_work(g, opt));
}

TemporalBalance temporal_balance(const TemporalGraph& g, const std::vector<int32_t>& part,
                                 int parts) {
  DGNN_CHECK(int64_t(part.size()) == g.num_vertices, ShapeError,
             "temporal_balance: the partition must assign every vertex");
  const SnapshotWork w = snapshot_work(g);
  TemporalBalance b;
  double max_e = 0, sum_e = 0, max_v = 0, sum_v = 0, max_s = 0, sum_s = 0;
  for (int s = 0; s < g.num_snapshots(); ++s) {
    std::vector<double> e(size_t(parts), 0), v(size_t(parts), 0), src(size_t(parts), 0);
    for (int64_t x = 0; x < g.num_vertices; ++x) {
      const size_t p = size_t(part[size_t(x)]);
      e[p] += w.edges[size_t(s)][size_t(x)];
      v[p] += w.edges[size_t(s)][size_t(x)] > 0;
      src[p] += w.events[size_t(s)][size_t(x)];
    }
    TemporalBalance::Snapshot row;
    double te = 0, tv = 0, ts = 0;
    for (int p = 0; p < parts; ++p) {
      te += e[size_t(p)];
      tv += v[size_t(p)];
      ts += src[size_t(p)];
    }
    const double me = *std::max_element(e.begin(), e.end());
    const double mv = *std::max_element(v.begin(), v.end());
    const double ms = *std::max_element(src.begin(), src.end());
    row.edges = int64_t(te);
    row.active = int64_t(tv);
    row.events = int64_t(ts);
    row.edge_balance = ratio(me, te, parts);
    row.vertex_balance = ratio(mv, tv, parts);
    row.event_balance = ratio(ms, ts, parts);
    b.snapshots.push_back(row);
    max_e += me;
    sum_e += te / parts;
    max_v += mv;
    sum_v += tv / parts;
    max_s += ms;
    sum_s += ts / parts;
  }
  b.edge_makespan = sum_e > 0 ? max_e / sum_e : 0;
  b.vertex_makespan = sum_v > 0 ? max_v / sum_v : 0;
  b.event_makespan = sum_s > 0 ? max_s / sum_s : 0;
  return b;
}

}  // namespace dgnn
