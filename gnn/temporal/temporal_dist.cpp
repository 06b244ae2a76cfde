#include "dgnn/gnn/temporal/temporal_dist.hpp"

#include <algorithm>

#include "dgnn/common/error.hpp"
#include "dgnn/kernels/kernels.hpp"

namespace dgnn {

namespace {

// One snapshot's local graph for `rank`: rows = owned vertices in `owned` order, columns =
// [owned | halo], halo vertices ordered by (owner, id) so that each peer's rows arrive as one
// block in the order the peer sends them (ascending id).
struct LocalSnapshot {
  Csr local;
  std::vector<int64_t> halo_ids;  // global ids of the halo columns (the owned ones are shared)
  std::vector<int64_t> halo_in_degree;   // filled by exchange_halo_degrees
  std::vector<int64_t> owned_in_degree;  // per owned row
  HaloPlan plan;
};

// Each snapshot's halo in-degrees from their owners, along the halo plans (a peer's send rows
// arrive in the order of its recv rows here): one all-to-all for every snapshot, so that a rank
// holding only its share of each snapshot (no row of a halo vertex) still knows them.
void exchange_halo_degrees(std::vector<LocalSnapshot>& snaps, Communicator& comm) {
  const int p = comm.size();
  std::vector<std::vector<int64_t>> out(static_cast<size_t>(p));
  std::vector<int64_t> recv_counts(size_t(p), 0), recv_displs(size_t(p), 0);
  for (const LocalSnapshot& s : snaps)
    for (size_t k = 0; k < s.plan.peers.size(); ++k) {
      const int q = s.plan.peers[k];
      for (int32_t row : s.plan.send_rows[k])
        out[size_t(q)].push_back(s.owned_in_degree[size_t(row)]);
      recv_counts[size_t(q)] += int64_t(s.plan.recv_rows[k].size()) * 8;
    }
  std::vector<int64_t> send, send_counts(size_t(p), 0), send_displs(size_t(p), 0);
  for (int q = 0; q < p; ++q) {
    send_displs[size_t(q)] = int64_t(send.size()) * 8;
    send_counts[size_t(q)] = int64_t(out[size_t(q)].size()) * 8;
    send.insert(send.end(), out[size_t(q)].begin(), out[size_t(q)].end());
  }
  int64_t total = 0;
  for (int q = 0; q < p; ++q) {
    recv_displs[size_t(q)] = total;
    total += recv_counts[size_t(q)];
  }
  std::vector<int64_t> recv(size_t(total / 8));
  comm.alltoallv(send.data(), send_counts, send_displs, recv.data(), recv_counts, recv_displs);
  std::vector<size_t> at(static_cast<size_t>(p));
  for (int q = 0; q < p; ++q) at[size_t(q)] = size_t(recv_displs[size_t(q)] / 8);
  for (LocalSnapshot& s : snaps) {
    const int64_t n_owned = s.local.rows;
    s.halo_in_degree.assign(size_t(s.local.cols - n_owned), 0);
    for (size_t k = 0; k < s.plan.peers.size(); ++k)
      for (int32_t row : s.plan.recv_rows[k])
        s.halo_in_degree[size_t(row - n_owned)] = recv[at[size_t(s.plan.peers[k])]++];
    std::vector<int64_t>().swap(s.owned_in_degree);
  }
}

// The order of a rank's halo columns: by owner, then by id (each peer's rows one block, in the
// order the peer sends them).
struct HaloOrder {
  const std::vector<int32_t>& part;
  bool operator()(int64_t x, int64_t y) const {
    return part[size_t(x)] != part[size_t(y)] ? part[size_t(x)] < part[size_t(y)] : x < y;
  }
};

LocalSnapshot cut_snapshot(const Csr& a, const std::vector<int32_t>& part, int parts, int rank,
                           const std::vector<int64_t>& owned, const RowDirectory& dir,
                           bool symmetric) {
  LocalSnapshot s;
  const int64_t n_owned = int64_t(owned.size());
  std::vector<int64_t> halo;
  for (int64_t v : owned)
    for (int64_t e = a.offsets[v]; e < a.offsets[v + 1]; ++e)
      if (part[size_t(a.indices[e])] != rank) halo.push_back(a.indices[e]);
  std::sort(halo.begin(), halo.end(), HaloOrder{part});
  halo.erase(std::unique(halo.begin(), halo.end()), halo.end());
  s.halo_ids = halo;
  auto local_col = [&](int64_t u) -> int32_t {
    if (part[size_t(u)] == rank) return dir.owned_row(int32_t(u));
    auto it = std::lower_bound(halo.begin(), halo.end(), u, HaloOrder{part});
    return int32_t(n_owned + (it - halo.begin()));
  };
  // In-degree without self loops, as GraphView's GCN weights expect for halo vertices: counted
  // here for owned vertices (whose rows `a` holds whole, a share or the whole snapshot), sent to
  // the peers that hold them as halo by make_temporal_rank.
  for (int64_t v : owned) {
    int64_t d = 0;
    for (int64_t e = a.offsets[v]; e < a.offsets[v + 1]; ++e) d += a.indices[e] != v;
    s.owned_in_degree.push_back(d);
  }
  s.local.rows = n_owned;
  s.local.cols = n_owned + int64_t(halo.size());
  s.local.offsets.assign(size_t(n_owned) + 1, 0);
  // Every snapshot's view is kept for the run: sized exactly, not by push_back's doubling.
  int64_t entries = 0;
  for (int64_t v : owned) entries += a.offsets[v + 1] - a.offsets[v];
  s.local.indices.reserve(size_t(entries));
  if (!a.values.empty()) s.local.values.reserve(size_t(entries));
  std::vector<std::pair<int32_t, float>> row;  // reused: one allocation, not one per row
  for (int64_t r = 0; r < n_owned; ++r) {
    const int64_t v = owned[size_t(r)];
    row.clear();
    for (int64_t e = a.offsets[v]; e < a.offsets[v + 1]; ++e)
      row.emplace_back(local_col(a.indices[e]), a.values.empty() ? 1.f : a.values[size_t(e)]);
    std::sort(row.begin(), row.end());
    for (auto [c, w] : row) {
      s.local.indices.push_back(c);
      if (!a.values.empty()) s.local.values.push_back(w);
    }
    s.local.offsets[size_t(r) + 1] = int64_t(s.local.indices.size());
  }
  // What each peer needs from this rank: owned in-neighbours of the peer's vertices. In a
  // symmetric snapshot (an undirected graph) they are the owned rows' entries from the peer's
  // vertices, so a share of owned rows alone says it.
  std::vector<std::vector<int32_t>> need(static_cast<size_t>(parts));
  if (symmetric) {
    for (int64_t u : owned)
      for (int64_t e = a.offsets[u]; e < a.offsets[u + 1]; ++e) {
        const int q = part[size_t(a.indices[e])];
        if (q != rank) need[size_t(q)].push_back(int32_t(u));
      }
  } else {
    for (int64_t v = 0; v < a.rows; ++v) {
      const int q = part[size_t(v)];
      if (q == rank) continue;
      for (int64_t e = a.offsets[v]; e < a.offsets[v + 1]; ++e)
        if (part[size_t(a.indices[e])] == rank) need[size_t(q)].push_back(a.indices[e]);
    }
  }
  for (int q = 0; q < parts; ++q) {
    if (q == rank) continue;
    auto& nq = need[size_t(q)];
    std::sort(nq.begin(), nq.end());
    nq.erase(std::unique(nq.begin(), nq.end()), nq.end());
    std::vector<int32_t> recv;
    for (size_t k = 0; k < halo.size(); ++k)
      if (part[size_t(halo[k])] == q) recv.push_back(int32_t(n_owned + int64_t(k)));
    recv.shrink_to_fit();
    if (nq.empty() && recv.empty()) continue;
    std::vector<int32_t> send(nq.size());
    for (size_t k = 0; k < nq.size(); ++k) send[k] = dir.owned_row(nq[k]);
    s.plan.peers.push_back(q);
    s.plan.send_rows.push_back(std::move(send));
    s.plan.recv_rows.push_back(std::move(recv));
  }
  return s;
}

}  // namespace

std::unique_ptr<TemporalRank> make_temporal_rank(const TemporalGraph& g,
                                                 const std::vector<Var>& features,
                                                 const std::vector<int32_t>& part,
                                                 Communicator& comm, Device dev, bool keep_plans) {
  const int parts = comm.size(), rank = comm.rank();
  DGNN_CHECK(int64_t(part.size()) == g.num_vertices, ShapeError,
             "the partition must assign every vertex");
  auto tr = std::make_unique<TemporalRank>();
  for (size_t v = 0; v < part.size(); ++v)
    DGNN_CHECK(part[v] >= 0 && part[v] < parts, OptionError,
               "the partition has a part outside 0.." + std::to_string(parts - 1));
  // Rows by ascending id on each owner, found by the owner: no row number for every vertex.
  tr->dir = RowDirectory::by_ascending_id(part, rank);
  tr->owned.assign(tr->dir.owned.begin(), tr->dir.owned.end());
  const std::vector<int32_t>& owned_rows = tr->dir.owned;
  for (const Var& f : features) {
    // Sliced on the host (the row list is host memory), then moved to `dev`.
    Tensor host_copy;
    if (f.device() != Device::cpu) host_copy = f.value().to(Device::cpu);
    const Tensor& src = f.device() != Device::cpu ? host_copy : f.value();
    Tensor rows = Tensor::uninitialized(int64_t(owned_rows.size()), f.cols());
    kernels::gather_rows(Device::cpu, src.view(), owned_rows.data(), int64_t(owned_rows.size()),
                         rows.view());
    tr->features.emplace_back(dev == Device::cpu ? std::move(rows) : rows.to(dev));
  }
  std::vector<LocalSnapshot> snaps;
  SnapshotCursor cur(g);
  do
    snaps.push_back(
        cut_snapshot(cur.current(), part, parts, rank, tr->owned, tr->dir, !g.directed));
  while (cur.next());
  exchange_halo_degrees(snaps, comm);
  // The owned rows' ids, one list for every snapshot's view: the rank's own, which outlives
  // the views it holds (an aliasing pointer that owns nothing, not a copy).
  const std::shared_ptr<const std::vector<int64_t>> owned_ids(std::shared_ptr<void>(),
                                                               &tr->owned);
  // Every snapshot's halo vertices in one list, in the snapshots' halo order (owner, then id):
  // each snapshot names its own as a subset of it (IdSubset: a bit an entry, or positions).
  auto all_halo = std::make_shared<std::vector<int64_t>>();
  {
    size_t total = 0;
    for (const LocalSnapshot& s : snaps) total += s.halo_ids.size();
    all_halo->reserve(total);
    for (const LocalSnapshot& s : snaps)
      all_halo->insert(all_halo->end(), s.halo_ids.begin(), s.halo_ids.end());
    std::sort(all_halo->begin(), all_halo->end(), HaloOrder{part});
    all_halo->erase(std::unique(all_halo->begin(), all_halo->end()), all_halo->end());
    all_halo->shrink_to_fit();
  }
  const std::shared_ptr<const std::vector<int64_t>> halo_list = all_halo;
  auto halo_subset = [&](const std::vector<int64_t>& ids) {
    std::vector<int32_t> at;
    at.reserve(ids.size());
    size_t j = 0;
    for (int64_t v : ids) {
      while ((*halo_list)[j] != v) ++j;  // both in halo order, ids a subset: found ahead
      at.push_back(int32_t(j));
    }
    return IdSubset(halo_list, at);
  };
  // One exchange runs at a time: the snapshots share one set of buffers, the largest's.
  const std::shared_ptr<HaloBuffers> buffers = make_halo_buffers();
  for (LocalSnapshot& s : snaps) {
    tr->halo_rows += s.local.cols - s.local.rows;
    tr->halos.push_back(make_halo_exchange(s.plan, comm, dev, buffers));
    // A snapshot whose halo would outgrow the rank's own rows streams it in pieces (comm/halo.hpp;
    // collective: every rank cuts the same snapshots).
    agree_piece_rows(*tr->halos.back(), comm,
                     halo_piece_rows(s.plan, int64_t(tr->owned.size()), 1, -1));
    if (keep_plans) tr->plans.push_back(std::move(s.plan));
    tr->graphs.push_back(std::make_unique<GraphView>(std::move(s.local), owned_ids,
                                                     halo_subset(s.halo_ids),
                                                     std::move(s.halo_in_degree),
                                                     tr->halos.back().get()));
    s = LocalSnapshot{};
  }
  return tr;
}

SnapshotPlan snapshot_strategy_plan(const TemporalGraph& g, const std::vector<int64_t>& nnz,
                                    const TemporalOptions& opt, int ranks) {
  // Each rank owns whole steps: beyond one rank per step, a rank would never compute.
  const int steps = temporal_split(g, opt).steps;
  if (ranks > steps)
    throw OptionError("--strategy snapshot: " + std::to_string(ranks) + " ranks but " +
                      std::to_string(steps) + " steps (" + std::to_string(g.num_snapshots()) +
                      " snapshots): each rank owns whole steps, so run at most " +
                      std::to_string(steps) + " ranks (or --strategy vertex)");
  DGNN_CHECK(int(nnz.size()) == g.num_snapshots(), ShapeError, "need one entry count per snapshot");
  const std::vector<int> bounds = temporal_windows(g, opt);
  // A step costs its snapshot's edges (aggregation) plus its vertices (dense transforms).
  std::vector<int64_t> cost;
  for (int s = 0; s < bounds.back(); ++s) cost.push_back(nnz[size_t(s)] + g.num_vertices);
  return plan_snapshots(cost, bounds, ranks, g.num_vertices);
}

std::unique_ptr<SnapshotRank> make_snapshot_rank(SnapshotPlan plan, const std::vector<Csr>& held,
                                                 const std::vector<Var>& features, int rank) {
  auto sr = std::make_unique<SnapshotRank>();
  sr->plan = std::move(plan);
  const int steps = sr->plan.num_steps();
  DGNN_CHECK(int(held.size()) >= steps, ShapeError, "need a snapshot slot per step");
  DGNN_CHECK(features.size() == 1 || features.size() == held.size(), ShapeError,
             "need one feature matrix, or one per snapshot");
  sr->graphs.resize(held.size());
  if (features.size() == 1)
    sr->features = features;
  else
    sr->features.resize(features.size());
  for (int s = 0; s < steps; ++s) {
    if (sr->plan.owner[size_t(s)] != rank) continue;
    DGNN_CHECK(held[size_t(s)].rows == sr->plan.num_vertices, ShapeError,
               "snapshot " + std::to_string(s) + " is owned here but was not received");
    sr->graphs[size_t(s)] = std::make_unique<GraphView>(held[size_t(s)]);
    if (features.size() > 1) sr->features[size_t(s)] = features[size_t(s)];
  }
  return sr;
}

std::unique_ptr<SnapshotRank> make_snapshot_rank(const TemporalGraph& g,
                                                 const std::vector<Var>& features,
                                                 const TemporalOptions& opt, int ranks, int rank) {
  DGNN_CHECK(features.size() == 1 || int(features.size()) == g.num_snapshots(), ShapeError,
             "need one feature matrix, or one per snapshot");
  SnapshotPlan plan = snapshot_strategy_plan(g, snapshot_nnz(g), opt, ranks);
  const std::vector<Csr> held = owned_snapshots(g, plan, rank);
  return make_snapshot_rank(std::move(plan), held, features, rank);
}

std::vector<Csr> owned_snapshots(const TemporalGraph& g, const SnapshotPlan& plan, int rank) {
  std::vector<Csr> held(size_t(g.num_snapshots()));
  SnapshotCursor cur(g);
  do {
    const int s = cur.index();
    if (s < plan.num_steps() && plan.owner[size_t(s)] == rank) held[size_t(s)] = cur.current();
  } while (cur.next());
  return held;
}

}  // namespace dgnn
