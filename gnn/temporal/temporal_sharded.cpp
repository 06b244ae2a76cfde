// The vertex strategy's temporal graph read in shards (load_temporal_sharded): no rank reads,
// holds or partitions the whole edge list. Each rank parses its share of the file (the static
// sharded loader's machinery, partition/dist_read.hpp), the ids are numbered by a sample sort, the
// buckets come from the job's smallest and largest time, and every edge moves twice: to the blocks
// of dense ids of its two ends (which count the partitioner's work and the union graph, and make
// the events), then, once the blocks are partitioned, to the ranks of its two ends' parts (which
// cut their vertex shares). Each move keeps all the edges of a (src, dst) pair on the receiving
// rank in file order, and a pair's snapshots depend on nothing else (build_snapshots), so every
// rank computes exactly the entries, weights and events load_temporal computes.
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <tuple>

#include "dgnn/comm/collectives.hpp"
#include "dgnn/common/error.hpp"
#include "dgnn/common/timer.hpp"
#include "dgnn/gnn/temporal/temporal_run.hpp"
#include "dgnn/partition/dist_graph.hpp"
#include "dgnn/partition/dist_read.hpp"

namespace dgnn {

namespace {

// An edge on its way: its line orders the edges of a pair as the file does.
struct EdgeRec {
  int64_t line;
  int32_t src, dst, bucket;
  float w;
};

// Sends each edge to the ranks `send` names for it (send(e, to) calls to(rank), at most once per
// rank), and builds the snapshots of what arrived, in file order. The edges are laid out by
// destination in one buffer, counted first (a bucket per rank grown edge by edge held up to
// twice its edges, and was then copied whole to be sent). `consumed`: the caller's edges
// themselves, which it needs no more: freed once laid out, before anything arrives.
template <class Send>
TemporalGraph build_sent(const std::vector<EdgeRec>& edges, Send&& send, int64_t n,
                         const SnapshotCut& cut, const TemporalInput& in, bool weighted,
                         Communicator& comm, std::vector<EdgeRec>* consumed = nullptr) {
  std::vector<int64_t> counts(static_cast<size_t>(comm.size()), 0);
  for (const EdgeRec& e : edges) send(e, [&](int q) { ++counts[size_t(q)]; });
  std::vector<int64_t> at(counts.size(), 0);
  for (size_t q = 1; q < counts.size(); ++q) at[q] = at[q - 1] + counts[q - 1];
  std::vector<EdgeRec> flat(size_t(at.back() + counts.back()));
  for (const EdgeRec& e : edges) send(e, [&](int q) { flat[size_t(at[size_t(q)]++)] = e; });
  if (consumed) std::vector<EdgeRec>().swap(*consumed);
  std::vector<EdgeRec> got = route_flat(comm, flat, counts);
  std::vector<EdgeRec>().swap(flat);
  std::sort(got.begin(), got.end(),
            [](const EdgeRec& a, const EdgeRec& b) { return a.line < b.line; });
  std::vector<int32_t> src(got.size()), dst(got.size()), bucket(got.size());
  std::vector<float> w(weighted ? got.size() : 0);
  for (size_t i = 0; i < got.size(); ++i) {
    src[i] = got[i].src, dst[i] = got[i].dst, bucket[i] = got[i].bucket;
    if (weighted) w[i] = got[i].w;
  }
  std::vector<EdgeRec>().swap(got);
  TemporalGraph g = build_snapshots(n, src, dst, bucket, w, cut, in.opt, in.snap);
  g.weighted = weighted;  // a rank that got no edge knows it from the options
  return g;
}

// Sends each edge to the ranks `to` names for its source and destination (once when they are
// the same rank), and builds the snapshots of what arrived, in file order.
template <class To>
TemporalGraph build_routed(const std::vector<EdgeRec>& edges, To&& to, int64_t n,
                           const SnapshotCut& cut, const TemporalInput& in, bool weighted,
                           Communicator& comm, std::vector<EdgeRec>* consumed = nullptr) {
  return build_sent(
      edges,
      [&](const EdgeRec& e, auto&& send_to) {
        const int a = to(e.src), b = to(e.dst);
        send_to(a);
        if (b != a) send_to(b);
      },
      n, cut, in, weighted, comm, consumed);
}

// This rank's edges with dense ids and buckets, the ids' numbering, and the cut.
struct ReadShard {
  std::vector<EdgeRec> edges;
  dist_read::IdSpace ids;
  SnapshotCut cut;
  int64_t text_bytes = 0;
};

ReadShard read_shard(const TemporalInput& in, Communicator& comm) {
  const int p = comm.size(), me = comm.rank();
  ReadShard r;
  EdgeList e = dist_read::read_edges(in.file, in.opt, comm, &r.text_bytes);
  // The ids of the edges, and ids 0..min_vertices-1 (a folder's vertex count) dealt over the
  // ranks: load_temporal numbers their union in ascending order. The ends are made distinct here
  // first (number_ids would, after sorting 16-byte pairs, twice an edge: the load's peak).
  std::vector<int64_t> ends(e.src);
  ends.insert(ends.end(), e.dst.begin(), e.dst.end());
  std::vector<int64_t>().swap(e.src);
  std::vector<int64_t>().swap(e.dst);
  std::vector<std::pair<int64_t, uint8_t>> tagged;
  {
    std::vector<int64_t> distinct(ends);
    std::sort(distinct.begin(), distinct.end());
    distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
    const int64_t from = in.min_vertices * me / p, to = in.min_vertices * (me + 1) / p;
    tagged.reserve(distinct.size() + size_t(to - from));
    for (int64_t v : distinct) tagged.push_back({v, 1});
    for (int64_t v = from; v < to; ++v) tagged.push_back({v, 0});
  }
  r.ids = dist_read::number_ids(std::move(tagged), 0, comm);
  DGNN_CHECK(r.ids.n <= std::numeric_limits<int32_t>::max(), Error, "more than 2^31-1 vertices");
  const std::vector<int64_t> dense = dist_read::lookup(r.ids, ends, comm);
  std::vector<int64_t>().swap(ends);

  int64_t lo = std::numeric_limits<int64_t>::max(), hi = std::numeric_limits<int64_t>::min();
  for (int64_t t : e.time) lo = std::min(lo, t), hi = std::max(hi, t);
  r.cut = make_snapshot_cut(global_min(comm, lo), global_max(comm, hi), in.snap, in.file);

  const size_t m = e.time.size();
  const bool drop_loops = in.opt.self_loops == SelfLoops::remove;
  const bool weighted = in.opt.weight_col >= 0;
  r.edges.reserve(m);
  for (size_t i = 0; i < m; ++i) {
    const int32_t s = int32_t(dense[i]), d = int32_t(dense[m + i]);
    if (s == d && drop_loops) continue;  // build_snapshots would drop it
    r.edges.push_back({e.line[i], s, d, r.cut.bucket(e.time[i]), weighted ? e.weight[i] : 1.0f});
  }
  return r;
}

// What the blocks of dense ids give: the union graph to partition and each block vertex's work
// per snapshot.
struct BlockWork {
  DistGraph union_graph;
  std::vector<std::vector<int32_t>> work;  // [snapshot][block vertex]: in-edges + events sourced
};

BlockWork block_work(const ReadShard& r, const TemporalInput& in, bool weighted,
                     Communicator& comm) {
  const int me = comm.rank();
  const dist_read::IdSpace& ids = r.ids;
  const int64_t n = ids.n, begin = ids.vtxdist[size_t(me)],
                size = ids.vtxdist[size_t(me) + 1] - begin;
  auto block = [&](int64_t v) { return ids.owner_of_dense(v); };
  TemporalGraph lg = build_routed(r.edges, block, n, r.cut, in, weighted, comm);
  const int t = int(r.cut.count);
  BlockWork b;
  b.work.assign(size_t(t), std::vector<int32_t>(size_t(size), 0));
  // In-edges, self loops left out (snapshot_work's count), of the block's rows: every entry of a
  // row comes from an edge with that row as an end, which this rank has.
  {
    SnapshotCursor cur(lg);
    do {
      const Csr& a = cur.current();
      std::vector<int32_t>& w = b.work[size_t(cur.index())];
      for (int64_t v = begin; v < begin + size; ++v)
        for (int64_t k = a.offsets[size_t(v)]; k < a.offsets[size_t(v) + 1]; ++k)
          w[size_t(v - begin)] += a.indices[size_t(k)] != v;
    } while (cur.next());
  }
  // Events count for the block that holds their source (all of a pair's edges are here then);
  // the union's in-rows are the block's destinations' sources.
  std::vector<std::pair<int64_t, int64_t>> pairs;  // (dst, src) of the union, dst in the block
  for (int s = 0; s < t; ++s) {
    const SnapshotEvents& ev = lg.events[size_t(s)];
    for (size_t i = 0; i < ev.src.size(); ++i) {
      const int32_t u = ev.src[i], v = ev.dst[i];
      if (u >= begin && u < begin + size && u != v) ++b.work[size_t(s)][size_t(u - begin)];
      if (v >= begin && v < begin + size && u != v) pairs.push_back({v, u});
    }
  }
  lg = TemporalGraph{};
  std::sort(pairs.begin(), pairs.end());
  pairs.erase(std::unique(pairs.begin(), pairs.end()), pairs.end());
  DistGraph& g = b.union_graph;
  g.num_vertices = n;
  g.vtxdist = ids.vtxdist;
  g.rank = me;
  g.in_offsets.assign(size_t(size) + 1, 0);
  for (const auto& [v, u] : pairs) ++g.in_offsets[size_t(v - begin) + 1], g.in_src.push_back(u);
  for (int64_t v = 0; v < size; ++v) g.in_offsets[size_t(v) + 1] += g.in_offsets[size_t(v)];
  std::vector<std::pair<int64_t, int64_t>>().swap(pairs);
  symmetrise_blocks(g, /*directed=*/true, comm);  // temporal_union holds each pair once

  return b;
}

// partition_temporal's partition, computed on the blocks: the union graph with, for metis and
// ptscotch, one balance column per group of snapshots (snapshot_group_work's, summed per block
// vertex). Every vertex's part on every rank.
// `info` (dgnn partition): the union graph's rows are kept, packed, for its cut and halo,
// measured on the blocks once the parts are known.
std::vector<int32_t> partition_shards(BlockWork& b, PartitionOptions popt, Communicator& comm,
                                      TemporalPartitionInfo* info = nullptr) {
  popt.parts = comm.size();
  const int t = int(b.work.size());
  const int groups = snapshot_group_count(t, popt);
  const bool weighted = popt.method == Partitioner::metis || popt.method == Partitioner::ptscotch;
  std::vector<std::vector<int64_t>> columns;
  if (weighted && groups > 0 && popt.parts >= 2) {
    std::vector<int64_t> step(size_t(t), 0);
    for (int s = 0; s < t; ++s)
      for (int32_t x : b.work[size_t(s)]) step[size_t(s)] += x;
    comm.allreduce_sum(step.data(), t);
    const std::vector<int> group = snapshot_groups_of(step, groups);
    const size_t size = size_t(b.union_graph.block_size());
    columns.assign(size_t(groups), std::vector<int64_t>(size, 0));
    for (int s = 0; s < t; ++s)
      for (size_t v = 0; v < size; ++v)
        columns[size_t(group[size_t(s)])][v] += b.work[size_t(s)][v];
  }
  std::vector<std::vector<int32_t>>().swap(b.work);
  // The partitioners cut the symmetrised rows; the in-edges they were made from are only read
  // to balance in-edges. Freed before PT-Scotch copies the rows (its peak is the load's).
  if (!popt.balance_edges) {
    DistGraph& u = b.union_graph;
    std::vector<int64_t>().swap(u.in_offsets);
    std::vector<int64_t>().swap(u.in_src);
    std::vector<float>().swap(u.in_weight);
  }
  if (!info) {
    const std::vector<int32_t> mine =
        partition_blocks_releasing(b.union_graph, popt, comm, columns);
    return allgather_parts(b.union_graph, mine, comm);
  }
  DistGraph& u = b.union_graph;
  // The rows kept for the cut and halo below, packed (neighbour << 1 | two stored directions:
  // adj_weight is 1 or 2; ids are below 2^31), 4 bytes an entry instead of 16, so that PT-Scotch
  // may free the rows it copies as the training load lets it.
  const std::vector<int64_t> offsets = u.adj_offsets;
  std::vector<uint32_t> packed(u.adj.size());
  for (size_t k = 0; k < packed.size(); ++k)
    packed[k] = uint32_t(u.adj[k]) << 1 | uint32_t(u.adj_weight[k] > 1);
  const int64_t begin = u.begin(), size = u.block_size();
  std::vector<int32_t> part =
      allgather_parts(u, partition_blocks_releasing(u, popt, comm, columns), comm);
  // The union's stored edges (each pair's adj_weight: 1 or 2 stored directions) cut, counted at
  // both ends; halo rows: per vertex, the other parts among its neighbours (the parts that
  // receive its row: in-neighbours of an undirected graph; either direction of a directed one).
  int64_t sums[3] = {0, 0, 0};  // stored edges, cut (twice), halo rows
  std::vector<int32_t> seen;
  for (int64_t i = 0; i < size; ++i) {
    const int32_t mine = part[size_t(begin + i)];
    seen.clear();
    for (int64_t k = offsets[size_t(i)]; k < offsets[size_t(i) + 1]; ++k) {
      const int32_t q = part[size_t(packed[size_t(k)] >> 1)];
      const int64_t w = 1 + int64_t(packed[size_t(k)] & 1u);
      sums[0] += w;
      if (q == mine) continue;
      sums[1] += w;
      seen.push_back(q);
    }
    std::sort(seen.begin(), seen.end());
    sums[2] += std::unique(seen.begin(), seen.end()) - seen.begin();
  }
  comm.allreduce_sum(sums, 3);
  info->union_edges = sums[0] / 2;
  info->edge_cut = sums[1] / 2;
  info->halo_vertices = sums[2];
  return part;
}

}  // namespace

bool can_load_temporal_sharded(const std::string& path, const EdgeListOptions& opt,
                               std::string* why) {
  (void)path;
  (void)opt;
  if (const char* e = std::getenv("DGNN_TEMPORAL_READ"); e && std::strcmp(e, "rank0") == 0) {
    if (why) *why = "DGNN_TEMPORAL_READ=rank0 asks for rank 0's whole read";
    return false;
  }
  return true;
}

std::vector<int32_t> partition_temporal_sharded(const std::string& path, const EdgeListOptions& opt,
                                                const SnapshotOptions& snap, Communicator& comm,
                                                const PartitionOptions& popt,
                                                TemporalPartitionInfo* info) {
  const TemporalInput in = resolve_temporal_input(path, opt, snap);
  ReadShard r = read_shard(in, comm);
  if (comm.size() > r.ids.n)
    throw OptionError("--parts " + std::to_string(comm.size()) + " exceeds the " +
                      std::to_string(r.ids.n) + " vertices");
  TemporalPartitionInfo own;
  TemporalPartitionInfo& i = info ? *info : own;
  i.vertices = r.ids.n;
  i.snapshots = int(r.cut.count);
  i.directed = in.opt.directed;
  i.vertex_ids = temporal_vertex_ids_hash(allgather_records(r.ids.mine, comm), r.ids.n);
  BlockWork b = block_work(r, in, in.opt.weight_col >= 0, comm);
  r = ReadShard{};
  return partition_shards(b, popt, comm, &i);
}

LoadedTemporal load_temporal_sharded(const std::string& path, const EdgeListOptions& opt,
                                     const SnapshotOptions& snap, Communicator& comm,
                                     const PartitionOptions& popt) {
  Timer timer;
  const int me = comm.rank();
  const TemporalInput in = resolve_temporal_input(path, opt, snap);
  const bool weighted = in.opt.weight_col >= 0;
  ReadShard r = read_shard(in, comm);
  const int64_t n = r.ids.n;
  if (comm.size() > n)
    throw OptionError("--parts " + std::to_string(comm.size()) + " exceeds the " +
                      std::to_string(n) + " vertices");

  LoadedTemporal out;
  out.sharded = true;
  out.text_bytes = r.text_bytes;
  out.max_text_bytes = global_max(comm, r.text_bytes);
  TemporalGraph& g = out.g;
  if (!popt.from_dir.empty()) {
    // Parts written once by `dgnn partition`: no union graph, no partitioner.
    g.original_ids = allgather_records(r.ids.mine, comm);
    out.part = read_temporal_partition(popt.from_dir, n, g.original_ids, comm.size(), &comm);
  } else {
    BlockWork b = block_work(r, in, weighted, comm);
    out.part = partition_shards(b, popt, comm);
    g.original_ids = allgather_records(r.ids.mine, comm);
  }
  g.num_vertices = n;
  g.directed = in.opt.directed;
  g.weighted = weighted;
  r.ids = dist_read::IdSpace{};

  // This rank's shares: the edges of its vertices (both ends) arrive, and their snapshots are
  // cut as move_vertex_shares cuts them from the whole ones.
  const std::vector<int32_t>& part = out.part;
  TemporalGraph lg = build_routed(
      r.edges, [&](int32_t v) { return int(part[size_t(v)]); }, n, r.cut, in, weighted, comm,
      &r.edges);
  const int t = lg.num_snapshots();
  out.nnz.assign(size_t(t), 0);
  Csr last;
  SnapshotCursor cur(lg);
  do {
    const int s = cur.index();
    Csr share = vertex_share(cur.current(), part, me, g.directed);
    for (int64_t v = 0; v < share.rows; ++v)
      if (part[size_t(v)] == me) out.nnz[size_t(s)] += share.degree(v);
    if (s == 0)
      g.base = share;
    else
      g.diffs.push_back(vertex_share_step(last, share, me));
    last = std::move(share);
  } while (cur.next());
  comm.allreduce_sum(out.nnz.data(), t);
  // The events of the pairs with an end here are here (each pair's edges in file order, as
  // load_temporal merges them): this rank's share of them.
  g.events = std::move(lg.events);
  lg = TemporalGraph{};
  shard_events(g, part, comm);
  out.ms = timer.ms();
  return out;
}

// An event on its way to every rank: its step, pair and weight.
struct EventRec {
  int32_t step, src, dst;
  float w;
};

LoadedTemporal load_temporal_steps_sharded(
    const std::string& path, const EdgeListOptions& opt, const SnapshotOptions& snap,
    Communicator& comm,
    const std::function<std::function<bool(int, int)>(const LoadedTemporal&)>& make_need,
    const std::function<bool(int, int)>& keep_events) {
  Timer timer;
  const int p = comm.size(), me = comm.rank();
  const TemporalInput in = resolve_temporal_input(path, opt, snap);
  const bool weighted = in.opt.weight_col >= 0;
  ReadShard r = read_shard(in, comm);
  const int64_t n = r.ids.n;

  LoadedTemporal out;
  out.sharded = true;
  out.text_bytes = r.text_bytes;
  out.max_text_bytes = global_max(comm, r.text_bytes);
  TemporalGraph& g = out.g;
  g.num_vertices = n;
  g.directed = in.opt.directed;
  g.weighted = weighted;
  g.original_ids = allgather_records(r.ids.mine, comm);
  const dist_read::IdSpace ids = std::move(r.ids);
  r.ids = dist_read::IdSpace{};

  // Each pair's edges (and its reverse's) on one rank: the snapshots' entries there are the
  // pair's entries of the whole graph's (build_snapshots: a pair depends on nothing else), so
  // the entry counts add up, and the events there are the whole step's events of those pairs,
  // whose SnapshotEvents::Whole counts add up too.
  const int t = int(r.cut.count);
  out.nnz.assign(size_t(t), 0);
  std::vector<EventRec> mine;
  constexpr int kCounts = kEventCounts;
  std::vector<int64_t> counts(size_t(t) * kCounts, 0);
  {
    TemporalGraph lg = build_sent(
        r.edges,
        [&](const EdgeRec& e, auto&& send_to) {
          send_to(int(ids.owner_of_dense(std::min(e.src, e.dst))));
        },
        n, r.cut, in, weighted, comm);  // the edges go out again below
    SnapshotCursor cur(lg);
    do out.nnz[size_t(cur.index())] = cur.current().nnz();
    while (cur.next());
    g.events.resize(size_t(t));
    for (int s = 0; s < t; ++s) {
      const SnapshotEvents& ev = lg.events[size_t(s)];
      g.events[size_t(s)].start_time = ev.start_time;
      g.events[size_t(s)].end_time = ev.end_time;
      int64_t* c = counts.data() + size_t(s) * kCounts;
      for (size_t i = 0; i < ev.src.size(); ++i) {
        mine.push_back({s, ev.src[i], ev.dst[i], weighted ? ev.weight[i] : 1.0f});
        (void)count_event(ev, i, g.directed, c);  // a pair and its reverse are both here
      }
    }
  }
  comm.allreduce_sum(out.nnz.data(), t);
  comm.allreduce_sum(counts.data(), int64_t(counts.size()));
  // Every step a share with the whole step's counts, its lists empty, until its events arrive:
  // enough for the plan (the split and the checks read the counts).
  for (int s = 0; s < t; ++s) {
    const int64_t* c = counts.data() + size_t(s) * kCounts;
    g.events[size_t(s)].whole = SnapshotEvents::Whole{c[0], c[1], c[2], c[3], c[4]};
  }
  const std::function<bool(int, int)> need = make_need(out);
  const std::function<bool(int, int)> keep =
      keep_events ? keep_events : std::function<bool(int, int)>([](int, int) { return true; });
  // The steps' events to the ranks that keep them (every rank: keep_events unset), sorted by
  // (src, dst) as rank 0's read sends them, a batch of steps at a time (about kBatch events):
  // the records are twice the bytes of the events they become.
  {
    constexpr int64_t kBatch = int64_t(1) << 20;
    std::vector<int64_t> first(size_t(t) + 1, 0);
    for (const EventRec& e : mine) ++first[size_t(e.step) + 1];
    for (int s = 0; s < t; ++s) first[size_t(s) + 1] += first[size_t(s)];
    for (int a = 0; a < t;) {
      int b = a;
      int64_t events = 0;
      do events += counts[size_t(b++) * kCounts];
      while (b < t && events + counts[size_t(b) * kCounts] <= kBatch);
      std::vector<std::vector<EventRec>> to(size_t(p), std::vector<EventRec>{});
      for (int s = a; s < b; ++s)
        for (int q = 0; q < p; ++q)
          if (keep(q, s))
            to[size_t(q)].insert(to[size_t(q)].end(), mine.begin() + first[size_t(s)],
                                 mine.begin() + first[size_t(s) + 1]);
      std::vector<EventRec> all = route(comm, to);
      std::vector<std::vector<EventRec>>().swap(to);
      std::sort(all.begin(), all.end(), [](const EventRec& x, const EventRec& y) {
        return std::tie(x.step, x.src, x.dst) < std::tie(y.step, y.src, y.dst);
      });
      for (int s = a; s < b; ++s) {
        if (!keep(me, s)) continue;
        SnapshotEvents& ev = g.events[size_t(s)];
        const size_t k = size_t(counts[size_t(s) * kCounts]);
        ev.whole.reset();  // the whole step, here
        ev.src.reserve(k);
        ev.dst.reserve(k);
        if (weighted) ev.weight.reserve(k);
      }
      for (const EventRec& e : all) {
        SnapshotEvents& ev = g.events[size_t(e.step)];
        ev.src.push_back(e.src);
        ev.dst.push_back(e.dst);
        if (weighted) ev.weight.push_back(e.w);
      }
      a = b;
    }
    std::vector<EventRec>().swap(mine);
  }
  Csr empty;
  empty.rows = 0;  // a snapshot asked of g fails loudly (broadcast_temporal_meta's convention)
  g.base = std::move(empty);

  // The steps each rank needs, and so the buckets whose edges it needs: snapshot s holds bucket
  // s (window), buckets s-k+1..s (sliding) or every bucket up to s (cumulative).
  std::vector<std::vector<char>> wants(size_t(t), std::vector<char>(size_t(p), 0));
  const bool cumulative = in.snap.mode == SnapshotMode::cumulative;
  const int k = in.snap.mode == SnapshotMode::sliding ? std::max(1, in.snap.window) : 1;
  for (int s = t - 1; s >= 0; --s)
    for (int q = 0; q < p; ++q) {
      bool w = need(q, s);
      if (cumulative && s + 1 < t) w = w || wants[size_t(s) + 1][size_t(q)];
      for (int u = s + 1; !cumulative && u < std::min(t, s + k); ++u) w = w || need(q, u);
      wants[size_t(s)][size_t(q)] = w;
    }
  TemporalGraph lg = build_sent(
      r.edges,
      [&](const EdgeRec& e, auto&& send_to) {
        const std::vector<char>& w = wants[size_t(e.bucket)];
        for (int q = 0; q < p; ++q)
          if (w[size_t(q)]) send_to(q);
      },
      n, r.cut, in, weighted, comm, &r.edges);
  r = ReadShard{};
  out.held.assign(size_t(t), Csr{});
  SnapshotCursor cur(lg);
  do
    if (need(me, cur.index())) out.held[size_t(cur.index())] = cur.current();
  while (cur.next());
  out.ms = timer.ms();
  return out;
}

}  // namespace dgnn
