#include <algorithm>
#include <catch2/catch.hpp>
#include <map>
#include <set>
#include <vector>

#include "dgnn/common/error.hpp"
#include "dgnn/datasets/sbm.hpp"
#include "dgnn/partition/partition.hpp"

using namespace dgnn;

namespace {

Dataset sbm_dataset() {
  SbmConfig c;
  c.vertices = 1500;
  c.classes = 4;
  c.avg_degree = 8;
  c.feature_dim = 3;
  c.train_frac = 0.5;
  c.val_frac = 0.2;
  c.test_frac = 0.2;
  c.seed = 5;
  return generate_sbm(c).to_dataset();
}

// Every invariant of a set of parts that together cover the dataset.
void check_parts(const Dataset& d, const std::vector<int32_t>& part, int parts) {
  const Csr& g = d.graph.in;
  const int64_t n = d.num_vertices();
  std::vector<LocalPart> lps;
  for (int r = 0; r < parts; ++r) lps.push_back(extract_part(d, part, parts, r));

  std::vector<int> owned_count(static_cast<size_t>(n), 0);
  for (const LocalPart& lp : lps) {
    INFO("rank " << lp.rank << " of " << parts);
    const Csr& in = lp.local_in;
    REQUIRE(in.rows == lp.n_owned);
    REQUIRE(int64_t(lp.global_ids.size()) == in.cols);
    const int64_t n_halo = in.cols - lp.n_owned;
    CHECK(lp.global_vertices == n);

    // Owned: this rank's vertices, interior (no remote in-neighbour) before boundary, each
    // ascending; halo: remote, ordered by (owner, global id), distinct.
    int64_t first_boundary = lp.n_owned;
    for (int64_t i = 0; i < lp.n_owned; ++i) {
      const int64_t v = lp.global_ids[i];
      CHECK(part[v] == lp.rank);
      ++owned_count[v];
      CHECK(lp.original_ids[i] == d.graph.original_ids[v]);
      bool remote = false;
      for (int64_t e = g.offsets[v]; e < g.offsets[v + 1]; ++e)
        remote |= part[g.indices[e]] != lp.rank;
      if (remote && first_boundary == lp.n_owned) first_boundary = i;
      CHECK(remote == (i >= first_boundary));
      if (i > 0 && i != first_boundary) CHECK(lp.global_ids[i - 1] < v);
    }
    for (int64_t h = lp.n_owned + 1; h < in.cols; ++h) {
      const int64_t a = lp.global_ids[h - 1], b = lp.global_ids[h];
      CHECK((part[a] < part[b] || (part[a] == part[b] && a < b)));
    }
    for (int64_t h = lp.n_owned; h < in.cols; ++h) CHECK(part[lp.global_ids[h]] != lp.rank);

    // Each local row is exactly the global row, columns mapped back, sorted locally.
    for (int64_t i = 0; i < lp.n_owned; ++i) {
      const int64_t v = lp.global_ids[i];
      std::vector<int64_t> local,
          global(g.indices.begin() + g.offsets[v], g.indices.begin() + g.offsets[v + 1]);
      for (int64_t e = in.offsets[i]; e < in.offsets[i + 1]; ++e) {
        if (e > in.offsets[i]) CHECK(in.indices[e - 1] <= in.indices[e]);
        local.push_back(lp.global_ids[in.indices[e]]);
      }
      std::sort(local.begin(), local.end());
      CHECK(local == global);
    }
    // Every halo vertex is used by some edge and carries its global in-degree.
    std::vector<int> used(static_cast<size_t>(in.cols), 0);
    for (int32_t c : in.indices) used[c] = 1;
    REQUIRE(int64_t(lp.halo_in_degree.size()) == n_halo);
    for (int64_t h = 0; h < n_halo; ++h) {
      CHECK(used[lp.n_owned + h] == 1);
      CHECK(lp.halo_in_degree[h] == g.degree(lp.global_ids[lp.n_owned + h]));
    }

    // Features, labels and splits are the owned rows' slices.
    REQUIRE(lp.feature_dim == d.feature_dim);
    REQUIRE(int64_t(lp.features.size()) == lp.n_owned * d.feature_dim);
    for (int64_t i = 0; i < lp.n_owned; ++i) {
      const int64_t v = lp.global_ids[i];
      for (int64_t j = 0; j < d.feature_dim; ++j)
        CHECK(lp.features[i * d.feature_dim + j] == d.features[v * d.feature_dim + j]);
      CHECK(lp.labels[i] == d.labels[v]);
    }
    CHECK(lp.num_classes == d.num_classes);
    for (auto [mine, all] :
         {std::pair{&lp.train, &d.train}, {&lp.val, &d.val}, {&lp.test, &d.test}}) {
      CHECK(std::is_sorted(mine->begin(), mine->end()));
      std::vector<int64_t> got, want;
      for (int32_t r : *mine) got.push_back(lp.global_ids[r]);
      for (int32_t v : *all)
        if (part[v] == lp.rank) want.push_back(v);
      std::sort(got.begin(), got.end());
      CHECK(got == want);
    }
    CHECK(lp.global_train == int64_t(d.train.size()));
    CHECK(lp.global_val == int64_t(d.val.size()));
    CHECK(lp.global_test == int64_t(d.test.size()));
  }
  for (int64_t v = 0; v < n; ++v) CHECK(owned_count[v] == 1);

  // The exchange, simulated: what rank r sends to q lands in q's receive rows for r, and holds
  // exactly the global ids those halo rows stand for. Every halo row is filled once.
  std::vector<std::vector<int>> filled(static_cast<size_t>(parts));
  for (const LocalPart& lp : lps) {
    CHECK(std::is_sorted(lp.plan.peers.begin(), lp.plan.peers.end()));
    REQUIRE(lp.plan.send_rows.size() == lp.plan.peers.size());
    REQUIRE(lp.plan.recv_rows.size() == lp.plan.peers.size());
    filled[lp.rank].assign(size_t(lp.local_in.cols), 0);
  }
  for (const LocalPart& src : lps)
    for (size_t i = 0; i < src.plan.peers.size(); ++i) {
      const LocalPart& dst = lps[src.plan.peers[i]];
      const auto at = std::find(dst.plan.peers.begin(), dst.plan.peers.end(), src.rank);
      REQUIRE(at != dst.plan.peers.end());
      const auto& recv = dst.plan.recv_rows[at - dst.plan.peers.begin()];
      const auto& send = src.plan.send_rows[i];
      REQUIRE(recv.size() == send.size());
      for (size_t k = 0; k < send.size(); ++k) {
        REQUIRE(send[k] < src.n_owned);
        REQUIRE(recv[k] >= dst.n_owned);
        CHECK(dst.global_ids[recv[k]] == src.global_ids[send[k]]);
        ++filled[dst.rank][recv[k]];
      }
    }
  for (const LocalPart& lp : lps)
    for (int64_t h = lp.n_owned; h < lp.local_in.cols; ++h) CHECK(filled[lp.rank][h] == 1);
}

}  // namespace

TEST_CASE("extract_part invariants on an SBM graph") {
  const Dataset d = sbm_dataset();
  for (Partitioner m : {Partitioner::metis, Partitioner::random}) {
    for (int parts : {1, 3, 4}) {
      INFO(partitioner_name(m) << " into " << parts);
      PartitionOptions o;
      o.method = m;
      o.parts = parts;
      check_parts(d, partition_vertices(d.graph.in, o), parts);
    }
  }
}

TEST_CASE("extract_part on a hand-made weighted directed graph") {
  // in(0) = {1,2,3}  in(1) = {0,3}  in(2) = {}  in(3) = {3,4,5}  in(4) = {5}  in(5) = {0,1}
  // with weight 10u + v on u -> v and a kept self loop on 3.
  const std::vector<std::pair<int, int>> edges = {{1, 0}, {2, 0}, {3, 0}, {0, 1}, {3, 1}, {3, 3},
                                                  {4, 3}, {5, 3}, {5, 4}, {0, 5}, {1, 5}};
  std::vector<int32_t> row, col;
  std::vector<float> w;
  for (auto [u, v] : edges) row.push_back(v), col.push_back(u), w.push_back(float(10 * u + v));
  Dataset d;
  d.graph.in = csr_from_coo(6, 6, row, col, w);
  d.graph.directed = true;
  d.graph.original_ids = {100, 101, 102, 103, 104, 105};
  d.feature_dim = 1;
  d.features = {0, 1, 2, 3, 4, 5};
  d.train = {0, 2, 5};
  d.test = {1};
  const std::vector<int32_t> part = {0, 0, 0, 1, 1, 2};

  const LocalPart lp = extract_part(d, part, 3, 0);
  CHECK(lp.n_owned == 3);
  CHECK(lp.global_ids == std::vector<int64_t>{2, 0, 1, 3});  // interior 2, boundary 0 1, halo 3
  CHECK(lp.original_ids == std::vector<int64_t>{102, 100, 101});
  CHECK(lp.local_in.offsets == std::vector<int64_t>{0, 0, 3, 5});
  CHECK(lp.local_in.indices == std::vector<int32_t>{0, 2, 3, 1, 3});
  CHECK(lp.local_in.values == std::vector<float>{20, 10, 30, 1, 31});
  CHECK(lp.halo_in_degree == std::vector<int64_t>{2});  // in(3) without its self loop
  CHECK(lp.plan.peers == std::vector<int>{1, 2});
  CHECK(lp.plan.recv_rows == std::vector<std::vector<int32_t>>{{3}, {}});
  CHECK(lp.plan.send_rows == std::vector<std::vector<int32_t>>{{}, {1, 2}});
  CHECK(lp.features == std::vector<float>{2, 0, 1});
  CHECK(lp.labels.empty());
  CHECK(lp.train == std::vector<int32_t>{0, 1});
  CHECK(lp.test == std::vector<int32_t>{2});
  CHECK(lp.global_train == 3);

  const LocalPart p2 = extract_part(d, part, 3, 2);
  CHECK(p2.global_ids == std::vector<int64_t>{5, 0, 1});
  CHECK(p2.halo_in_degree == std::vector<int64_t>{3, 2});
  CHECK(p2.plan.peers == std::vector<int>{0, 1});
  CHECK(p2.plan.recv_rows == std::vector<std::vector<int32_t>>{{1, 2}, {}});
  CHECK(p2.plan.send_rows == std::vector<std::vector<int32_t>>{{}, {0}});

  CHECK_THROWS_AS(extract_part(d, part, 3, 3), OptionError);
  CHECK_THROWS_AS(extract_part(d, {0, 0}, 3, 0), OptionError);
}
