// Moving a temporal graph from the rank that read it to the others: its events and ids to every
// rank, and to each rank the snapshots it needs, each as the difference from the previous one
// that rank got when that is smaller (Chakaravarthy et al., SC'21: graph-difference transfers).
#include <string>

#include "dgnn/common/bytes.hpp"
#include "dgnn/common/error.hpp"
#include "dgnn/gnn/temporal/temporal_dist.hpp"

namespace dgnn {

namespace {

// Record kinds in a rank's message: a snapshot whole (as a CSR, or as its entries when that is
// smaller), or as the change from the previous record.
constexpr uint8_t kWhole = 0, kEntries = 2, kDifference = 1;

// Sends `bytes` (significant on rank 0) to every rank.
std::string broadcast_bytes(std::string bytes, Communicator& comm) {
  int64_t size = int64_t(bytes.size());
  comm.broadcast(&size, 8, 0);
  bytes.resize(size_t(size));
  if (size > 0) comm.broadcast(bytes.data(), size, 0);
  return bytes;
}

void put_csr(ByteWriter& w, const Csr& c) {
  w.array(c.offsets);
  w.array(c.indices);
  w.array(c.values);
}

// The entries alone: each one's row (destination), then the CSR's indices and values.
void put_entries(ByteWriter& w, const Csr& c) {
  std::vector<int32_t> rows(size_t(c.nnz()));
  for (int64_t v = 0; v < c.rows; ++v)
    for (int64_t e = c.offsets[size_t(v)]; e < c.offsets[size_t(v) + 1]; ++e)
      rows[size_t(e)] = int32_t(v);
  w.array(rows);
  w.array(c.indices);
  w.array(c.values);
}

Csr get_entries(ByteReader& r, int64_t n) {
  const std::vector<int32_t> rows = r.array<int32_t>();
  Csr c;
  c.rows = c.cols = n;
  c.indices = r.array<int32_t>();
  c.values = r.array<float>();
  if (rows.size() != c.indices.size() || (!c.values.empty() && c.values.size() != rows.size()))
    r.fail("a snapshot whose arrays disagree in length");
  c.offsets.assign(size_t(n) + 1, 0);
  for (size_t e = 0; e < rows.size(); ++e) {
    if (rows[e] < 0 || rows[e] >= n || (e > 0 && rows[e] < rows[e - 1]))
      r.fail("a snapshot with entries out of row order");
    ++c.offsets[size_t(rows[e]) + 1];
  }
  for (int64_t v = 0; v < n; ++v) c.offsets[size_t(v) + 1] += c.offsets[size_t(v)];
  for (int32_t i : c.indices)
    if (i < 0 || i >= n) r.fail("a snapshot with an entry outside the vertices");
  return c;
}

Csr get_csr(ByteReader& r, int64_t n) {
  Csr c;
  c.rows = c.cols = n;
  c.offsets = r.array<int64_t>();
  c.indices = r.array<int32_t>();
  c.values = r.array<float>();
  if (int64_t(c.offsets.size()) != n + 1 || c.offsets.front() != 0 ||
      c.offsets.back() != int64_t(c.indices.size()) ||
      (!c.values.empty() && c.values.size() != c.indices.size()))
    r.fail("a snapshot whose arrays disagree in length");
  for (int64_t v = 0; v < n; ++v)
    if (c.offsets[size_t(v)] > c.offsets[size_t(v) + 1]) r.fail("a snapshot with falling offsets");
  for (int32_t i : c.indices)
    if (i < 0 || i >= n) r.fail("a snapshot with an entry outside the vertices");
  return c;
}

void put_diff(ByteWriter& w, const SnapshotDiff& d) {
  w.array(d.add_src);
  w.array(d.add_dst);
  w.array(d.add_weight);
  w.array(d.del_src);
  w.array(d.del_dst);
}

SnapshotDiff get_diff(ByteReader& r) {
  SnapshotDiff d;
  d.add_src = r.array<int32_t>();
  d.add_dst = r.array<int32_t>();
  d.add_weight = r.array<float>();
  d.del_src = r.array<int32_t>();
  d.del_dst = r.array<int32_t>();
  return d;
}

}  // namespace

void broadcast_temporal_meta(TemporalGraph& g, std::vector<int64_t>& nnz, Communicator& comm,
                             SnapshotMoves& moves) {
  const bool root = comm.rank() == 0;
  ByteWriter w;
  if (root) {
    nnz = snapshot_nnz(g);
    w.scalar(g.num_vertices);
    w.scalar(uint8_t(g.directed));
    w.scalar(uint8_t(g.weighted));
    w.array(g.original_ids);
    w.array(nnz);
    w.scalar(int64_t(g.events.size()));
    for (const SnapshotEvents& ev : g.events) {
      w.array(ev.src);
      w.array(ev.dst);
      w.array(ev.weight);
      w.scalar(ev.start_time);
      w.scalar(ev.end_time);
    }
  }
  const std::string bytes = broadcast_bytes(w.take(), comm);
  if (root) {
    moves.meta_bytes += int64_t(bytes.size()) * (comm.size() - 1);
    return;
  }
  ByteReader r(bytes, "the temporal graph rank 0 sent to rank " + std::to_string(comm.rank()));
  TemporalGraph m;
  m.num_vertices = r.scalar<int64_t>();
  m.directed = r.scalar<uint8_t>() != 0;
  m.weighted = r.scalar<uint8_t>() != 0;
  m.original_ids = r.array<int64_t>();
  nnz = r.array<int64_t>();
  const int64_t t = r.scalar<int64_t>();
  if (t < 1 || int64_t(nnz.size()) != t) r.fail("snapshot counts disagree");
  m.events.resize(size_t(t));
  for (SnapshotEvents& ev : m.events) {
    ev.src = r.array<int32_t>();
    ev.dst = r.array<int32_t>();
    ev.weight = r.array<float>();
    ev.start_time = r.scalar<int64_t>();
    ev.end_time = r.scalar<int64_t>();
  }
  if (!r.at_end()) r.fail("trailing bytes");
  g = std::move(m);  // base.rows = 0: no topology yet
}

namespace {

// Rank 0's per-rank messages to every other rank (one alltoallv); returns this rank's.
std::string send_messages(std::vector<ByteWriter>& msg, Communicator& comm) {
  const int p = comm.size(), me = comm.rank();
  std::vector<int64_t> sizes(size_t(p), 0);
  std::string send;
  std::vector<int64_t> send_counts(size_t(p), 0), send_displs(size_t(p), 0);
  if (me == 0) {
    for (int r = 0; r < p; ++r) {
      send_displs[size_t(r)] = int64_t(send.size());
      send_counts[size_t(r)] = int64_t(msg[size_t(r)].bytes().size());
      sizes[size_t(r)] = send_counts[size_t(r)];
      send += msg[size_t(r)].take();
    }
  }
  comm.broadcast(sizes.data(), int64_t(sizes.size()) * 8, 0);
  std::vector<int64_t> recv_counts(size_t(p), 0), recv_displs(size_t(p), 0);
  recv_counts[0] = me == 0 ? 0 : sizes[size_t(me)];
  std::string mine(static_cast<size_t>(recv_counts[0]), '\0');
  comm.alltoallv(send.data(), send_counts, send_displs, mine.data(), recv_counts, recv_displs);
  return mine;
}

// One record: snapshot `s` as the difference `d` from the receiver's previous one when there is
// one (d non-null) and it is smaller than the snapshot whole, else whole.
void put_record(ByteWriter& w, int s, const Csr& now, const SnapshotDiff* d, SnapshotMoves& moves) {
  const int64_t whole = whole_wire_bytes(now);
  w.scalar(int32_t(s));
  if (d && !d->whole && d->bytes() < whole) {
    w.scalar(kDifference);
    put_diff(w, *d);
    moves.bytes += d->bytes();
    ++moves.as_difference;
  } else {
    const bool as_csr = csr_wire_bytes(now) <= entries_wire_bytes(now);
    w.scalar(as_csr ? kWhole : kEntries);
    as_csr ? put_csr(w, now) : put_entries(w, now);
    moves.bytes += whole;
  }
  moves.whole_bytes += whole;
  ++moves.snapshots;
}

// Replays rank 0's records on a receiver: each whole snapshot or difference yields the next
// snapshot this rank needs. `all` (it needs every step): kept as g's base + differences;
// otherwise in `held`.
void replay(const std::string& mine, TemporalGraph& g, std::vector<Csr>& held, bool all,
            const std::function<bool(int rank, int step)>& need, int me) {
  const int t = g.num_snapshots();
  ByteReader r(mine, "the snapshots rank 0 sent to rank " + std::to_string(me));
  held.assign(all ? 0 : size_t(t), Csr{});
  Csr now;
  int prev = -1;
  const int64_t n = g.num_vertices;
  while (!r.at_end()) {
    const int s = r.scalar<int32_t>();
    if (s <= prev || s >= t || !need(me, s) || (all && s != prev + 1))
      r.fail("a snapshot out of order or not asked for");
    const uint8_t kind = r.scalar<uint8_t>();
    if (kind == kWhole || kind == kEntries) {
      Csr c = kind == kWhole ? get_csr(r, n) : get_entries(r, n);
      if (all && prev >= 0) g.diffs.push_back(snapshot_step(now, c));
      now = std::move(c);
    } else if (kind == kDifference && prev >= 0) {
      SnapshotDiff d = get_diff(r);
      now = apply_diff(now, d);
      if (all) g.diffs.push_back(std::move(d));
    } else {
      r.fail("an unknown record");
    }
    if (all && prev < 0) g.base = now;
    if (!all) held[size_t(s)] = now;
    prev = s;
  }
  for (int s = 0; s < t; ++s)
    if (need(me, s) && (all ? s > prev : held[size_t(s)].rows != n))
      r.fail("snapshot " + std::to_string(s) + " is missing");
}

}  // namespace

void move_snapshots(TemporalGraph& g, std::vector<Csr>& held, Communicator& comm,
                    const std::function<bool(int rank, int step)>& need, SnapshotMoves& moves) {
  const int p = comm.size(), me = comm.rank();
  const int t = g.num_snapshots();
  std::vector<ByteWriter> msg(static_cast<size_t>(p));
  if (me == 0) {
    // One pass over the snapshots in order; per receiver, the snapshot it got last (kept only
    // while the next one it needs is not the very next step, whose difference g already has).
    std::vector<int> last(size_t(p), -1);
    std::vector<Csr> kept(static_cast<size_t>(p));
    SnapshotCursor cur(g);
    do {
      const int s = cur.index();
      const Csr& now = cur.current();
      for (int r = 1; r < p; ++r) {
        if (!need(r, s)) continue;
        SnapshotDiff computed;
        const SnapshotDiff* d = nullptr;
        if (last[size_t(r)] >= 0) {
          d = &g.diffs[size_t(s) - 1];
          if (last[size_t(r)] != s - 1) {
            computed = csr_difference(kept[size_t(r)], now);
            d = &computed;
          }
        }
        put_record(msg[size_t(r)], s, now, d, moves);
        last[size_t(r)] = s;
        if (s + 1 < t && !need(r, s + 1))
          kept[size_t(r)] = now;
        else
          kept[size_t(r)] = Csr{};
      }
    } while (cur.next());
  }
  const std::string mine = send_messages(msg, comm);
  if (me == 0) return;
  bool all = true;
  for (int s = 0; s < t && all; ++s) all = need(me, s);
  replay(mine, g, held, all, need, me);
}

Csr vertex_share(const Csr& a, const std::vector<int32_t>& part, int rank, bool directed) {
  DGNN_CHECK(int64_t(part.size()) == a.rows, ShapeError, "the partition must assign every vertex");
  Csr c;
  c.rows = a.rows;
  c.cols = a.cols;
  c.offsets.assign(size_t(a.rows) + 1, 0);
  for (int64_t v = 0; v < a.rows; ++v) {
    const bool row_mine = part[size_t(v)] == rank;
    for (int64_t e = a.offsets[size_t(v)]; e < a.offsets[size_t(v) + 1]; ++e)
      if (row_mine || (directed && part[size_t(a.indices[size_t(e)])] == rank)) {
        c.indices.push_back(a.indices[size_t(e)]);
        if (!a.values.empty()) c.values.push_back(a.values[size_t(e)]);
      }
    c.offsets[size_t(v) + 1] = int64_t(c.indices.size());
  }
  return c;
}

SnapshotDiff vertex_share_step(const Csr& prev, const Csr& now, int rank) {
  if (rank == 0) return snapshot_step(prev, now);
  // put_record's choice, then replay's: a difference smaller than the share whole travels as
  // itself and is kept as such.
  SnapshotDiff d = csr_difference(prev, now);
  if (!d.whole && d.bytes() < whole_wire_bytes(now)) return d;
  return snapshot_step(prev, now);
}

void move_vertex_shares(TemporalGraph& g, const std::vector<int32_t>& part, Communicator& comm,
                        SnapshotMoves& moves) {
  const int p = comm.size(), me = comm.rank();
  DGNN_CHECK(int64_t(part.size()) == g.num_vertices, ShapeError,
             "the partition must assign every vertex");
  std::vector<ByteWriter> msg(static_cast<size_t>(p));
  if (me == 0) {
    // One pass over the whole snapshots; per rank, its previous share, which its next share's
    // difference is taken from. Rank 0 keeps its own shares as base + differences, as the
    // receivers do, and then drops the whole graph.
    TemporalGraph own;
    std::vector<Csr> last(static_cast<size_t>(p));
    SnapshotCursor cur(g);
    do {
      const int s = cur.index();
      for (int r = 0; r < p; ++r) {
        Csr share = vertex_share(cur.current(), part, r, g.directed);
        if (r == 0) {
          if (s == 0)
            own.base = share;
          else
            own.diffs.push_back(vertex_share_step(last[0], share, 0));
        } else {
          SnapshotDiff d;
          if (s > 0) d = csr_difference(last[size_t(r)], share);
          put_record(msg[size_t(r)], s, share, s > 0 ? &d : nullptr, moves);
        }
        last[size_t(r)] = std::move(share);
      }
    } while (cur.next());
    g.base = std::move(own.base);
    g.diffs = std::move(own.diffs);
  }
  const std::string mine = send_messages(msg, comm);
  if (me == 0) return;
  std::vector<Csr> held;
  replay(mine, g, held, true, [](int, int) { return true; }, me);
}

}  // namespace dgnn
