// Cutting one rank's share out of a dataset: its owned vertices (interior before boundary, so
// the interior rows can be aggregated while the halo exchange is in flight), its halo, its
// in-edges renumbered into [owned | halo], and the halo plan that fills the halo rows.
#include <algorithm>
#include <string>
#include <utility>

#include "dgnn/common/error.hpp"
#include "dgnn/partition/partition.hpp"

namespace dgnn {

namespace {

void map_split(const std::vector<int32_t>& global, const std::vector<int32_t>& part, int rank,
               const std::vector<int32_t>& local_of, std::vector<int32_t>& out) {
  for (int32_t v : global) {
    DGNN_CHECK(v >= 0 && size_t(v) < part.size(), ShapeError, "split vertex outside the graph");
    if (part[v] == rank) out.push_back(local_of[v]);
  }
  std::sort(out.begin(), out.end());
}

}  // namespace

LocalPart extract_part(const Dataset& d, const std::vector<int32_t>& part, int parts, int rank) {
  const Csr& g = d.graph.in;
  check_assignment(g, part, parts);
  if (rank < 0 || rank >= parts)
    throw OptionError("rank " + std::to_string(rank) + " is outside [0, " + std::to_string(parts) +
                      ")");
  const int64_t n = g.rows;
  DGNN_CHECK(int64_t(d.features.size()) == n * d.feature_dim, ShapeError,
             "dataset features must be num_vertices x feature_dim");
  DGNN_CHECK(d.labels.empty() || int64_t(d.labels.size()) == n, ShapeError,
             "dataset labels must have one entry per vertex");
  DGNN_CHECK(int64_t(d.graph.original_ids.size()) == n, ShapeError,
             "graph needs one original id per vertex");

  LocalPart lp;
  lp.rank = rank;
  lp.parts = parts;
  lp.global_vertices = n;

  std::vector<int32_t> owned, boundary;
  for (int64_t v = 0; v < n; ++v) {
    if (part[v] != rank) continue;
    bool remote = false;
    for (int64_t e = g.offsets[v]; e < g.offsets[v + 1] && !remote; ++e)
      remote = part[g.indices[e]] != rank;
    (remote ? boundary : owned).push_back(int32_t(v));
  }
  owned.insert(owned.end(), boundary.begin(), boundary.end());
  lp.n_owned = int64_t(owned.size());

  constexpr int32_t kNone = -1, kHalo = -2;
  std::vector<int32_t> local_of(size_t(n), kNone);
  for (size_t i = 0; i < owned.size(); ++i) local_of[owned[i]] = int32_t(i);
  std::vector<int32_t> halo;
  for (int32_t v : boundary)
    for (int64_t e = g.offsets[v]; e < g.offsets[v + 1]; ++e) {
      const int32_t u = g.indices[e];
      if (local_of[u] == kNone) {
        local_of[u] = kHalo;
        halo.push_back(u);
      }
    }
  // Grouped by owner, ascending global id within: each peer's rows arrive as one block, in the
  // order that peer sends them (it sorts its send list by global id too).
  std::sort(halo.begin(), halo.end(),
            [&](int32_t a, int32_t b) { return part[a] != part[b] ? part[a] < part[b] : a < b; });
  for (size_t i = 0; i < halo.size(); ++i) local_of[halo[i]] = int32_t(lp.n_owned + int64_t(i));

  lp.global_ids.assign(owned.begin(), owned.end());
  lp.global_ids.insert(lp.global_ids.end(), halo.begin(), halo.end());
  lp.original_ids.reserve(owned.size());
  for (int32_t v : owned) lp.original_ids.push_back(d.graph.original_ids[v]);

  // In-edges of owned rows, columns renumbered; a row's entries are re-sorted by local column
  // (ties, from kept duplicates, by value) because local order differs from global order.
  Csr& in = lp.local_in;
  in.rows = lp.n_owned;
  in.cols = lp.n_owned + int64_t(halo.size());
  in.offsets.assign(size_t(in.rows) + 1, 0);
  for (size_t i = 0; i < owned.size(); ++i) in.offsets[i + 1] = in.offsets[i] + g.degree(owned[i]);
  in.indices.resize(size_t(in.offsets.back()));
  if (g.weighted()) in.values.resize(in.indices.size());
  std::vector<std::pair<int32_t, float>> row;
  for (size_t i = 0; i < owned.size(); ++i) {
    const int32_t v = owned[i];
    row.clear();
    for (int64_t e = g.offsets[v]; e < g.offsets[v + 1]; ++e)
      row.emplace_back(local_of[g.indices[e]], g.weighted() ? g.values[e] : 1.0f);
    std::sort(row.begin(), row.end());
    for (size_t k = 0; k < row.size(); ++k) {
      in.indices[in.offsets[i] + int64_t(k)] = row[k].first;
      if (g.weighted()) in.values[in.offsets[i] + int64_t(k)] = row[k].second;
    }
  }

  // GCN normalisation needs the halo vertices' full degrees; like graph_view's count for owned
  // rows, self loops are left out.
  lp.halo_in_degree.reserve(halo.size());
  for (int32_t u : halo) {
    int64_t deg = 0;
    for (int64_t e = g.offsets[u]; e < g.offsets[u + 1]; ++e) deg += g.indices[e] != u;
    lp.halo_in_degree.push_back(deg);
  }

  // What each peer needs from this rank: owned in-neighbours of the peer's vertices. One pass
  // over the whole graph; sorted by global id to match the peer's receive order.
  std::vector<std::vector<int32_t>> needs(static_cast<size_t>(parts));
  for (int64_t w = 0; w < n; ++w) {
    const int32_t q = part[w];
    if (q == rank) continue;
    for (int64_t e = g.offsets[w]; e < g.offsets[w + 1]; ++e)
      if (part[g.indices[e]] == rank) needs[q].push_back(g.indices[e]);
  }
  std::vector<std::vector<int32_t>> recv(static_cast<size_t>(parts));
  for (int32_t u : halo) recv[part[u]].push_back(local_of[u]);
  for (int q = 0; q < parts; ++q) {
    std::vector<int32_t>& s = needs[q];
    std::sort(s.begin(), s.end());
    s.erase(std::unique(s.begin(), s.end()), s.end());
    if (s.empty() && recv[q].empty()) continue;
    for (int32_t& v : s) v = local_of[v];
    lp.plan.peers.push_back(q);
    lp.plan.send_rows.push_back(std::move(s));
    lp.plan.recv_rows.push_back(std::move(recv[q]));
  }

  lp.feature_dim = d.feature_dim;
  lp.features.resize(size_t(lp.n_owned * d.feature_dim));
  for (size_t i = 0; i < owned.size(); ++i)
    std::copy_n(d.features.begin() + int64_t(owned[i]) * d.feature_dim, d.feature_dim,
                lp.features.begin() + int64_t(i) * d.feature_dim);
  if (!d.labels.empty()) {
    lp.labels.reserve(owned.size());
    for (int32_t v : owned) lp.labels.push_back(d.labels[v]);
  }
  lp.num_classes = d.num_classes;
  map_split(d.train, part, rank, local_of, lp.train);
  map_split(d.val, part, rank, local_of, lp.val);
  map_split(d.test, part, rank, local_of, lp.test);
  lp.global_train = int64_t(d.train.size());
  lp.global_val = int64_t(d.val.size());
  lp.global_test = int64_t(d.test.size());
  return lp;
}

}  // namespace dgnn
