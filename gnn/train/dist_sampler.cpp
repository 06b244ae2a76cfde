#include "dgnn/gnn/train/dist_sampler.hpp"

#include <omp.h>

#include <algorithm>

#include "dgnn/common/error.hpp"
#include "dgnn/gnn/core/fetch.hpp"

namespace dgnn {

namespace {

// Sends send[q] to every rank q; returns what each rank sent here, in rank order. One
// all-to-all of the items, preceded by one of their counts unless `known` gives them (per rank).
template <class T>
std::vector<T> exchange(Communicator& comm, const std::vector<std::vector<T>>& send,
                        std::vector<int64_t>* recv_items = nullptr,
                        const std::vector<int64_t>* known = nullptr) {
  const int p = comm.size();
  const size_t np = static_cast<size_t>(p);
  std::vector<int64_t> n_send(np), n_recv(np);
  for (int q = 0; q < p; ++q) n_send[size_t(q)] = int64_t(send[size_t(q)].size());
  if (known) {
    n_recv = *known;
  } else {
    std::vector<int64_t> ones(np, 8), displs(np);
    for (int q = 0; q < p; ++q) displs[size_t(q)] = 8 * q;
    comm.alltoallv(n_send.data(), ones, displs, n_recv.data(), ones, displs);
  }
  std::vector<int64_t> sc(np), sd(np), rc(np), rd(np);
  std::vector<T> flat, out;
  for (int q = 0; q < p; ++q) {
    sd[size_t(q)] = int64_t(flat.size() * sizeof(T));
    sc[size_t(q)] = n_send[size_t(q)] * int64_t(sizeof(T));
    flat.insert(flat.end(), send[size_t(q)].begin(), send[size_t(q)].end());
  }
  int64_t total = 0;
  for (int q = 0; q < p; ++q) {
    rd[size_t(q)] = total * int64_t(sizeof(T));
    rc[size_t(q)] = n_recv[size_t(q)] * int64_t(sizeof(T));
    total += n_recv[size_t(q)];
  }
  out.resize(size_t(total));
  comm.alltoallv(flat.data(), sc, sd, out.data(), rc, rd);
  if (recv_items) *recv_items = n_recv;
  return out;
}

class DistStore final : public GraphStore {
 public:
  DistStore(const GraphView& part, int64_t global_vertices, const Var& features, Communicator& comm)
      : comm_(comm), features_(features) {
    const Csr& in = part.structure();
    const int64_t n = global_vertices, owned = part.n_owned();
    const int64_t* gid = part.global_ids();
    DGNN_CHECK(features.rows() == owned, ShapeError, "features must have one row per owned vertex");
    // Owned rows in global ids, sorted as the whole graph's rows are: a vertex's draw is then
    // the one a single process makes.
    rows_.rows = owned;
    rows_.cols = n;
    rows_.offsets = in.offsets;
    rows_.indices.resize(in.indices.size());
    if (in.weighted()) rows_.values.resize(in.indices.size());
    std::vector<std::pair<int32_t, float>> row;
    for (int64_t v = 0; v < owned; ++v) {
      row.clear();
      for (int64_t e = in.offsets[v]; e < in.offsets[v + 1]; ++e)
        row.emplace_back(int32_t(gid[in.indices[e]]), in.weighted() ? in.values[e] : 1.f);
      std::sort(row.begin(), row.end());
      for (size_t k = 0; k < row.size(); ++k) {
        rows_.indices[size_t(in.offsets[v]) + k] = row[k].first;
        if (in.weighted()) rows_.values[size_t(in.offsets[v]) + k] = row[k].second;
      }
    }
    // Every vertex's owner, row there, degree and self loop, agreed in one all-reduce.
    std::vector<int64_t> book(size_t(4 * n + 1), 0);
    for (int64_t v = 0; v < owned; ++v) {
      const int64_t g = gid[v];
      book[size_t(g)] = comm.rank() + 1;
      book[size_t(n + g)] = v;
      int64_t d = 0;
      for (int64_t e = in.offsets[v]; e < in.offsets[v + 1]; ++e) d += gid[in.indices[e]] != g;
      book[size_t(2 * n + g)] = d;
      book[size_t(3 * n + g)] = in.degree(v) - d;
    }
    book[size_t(4 * n)] = in.weighted();
    comm.allreduce_sum(book.data(), int64_t(book.size()));
    dir_.owner.resize(size_t(n));
    dir_.local.resize(size_t(n));
    degree_.resize(size_t(n));
    self_loops_.resize(size_t(n));
    for (int64_t g = 0; g < n; ++g) {
      DGNN_CHECK(book[size_t(g)] >= 1, ShapeError,
                 "vertex " + std::to_string(g) + " is owned by no rank");
      dir_.owner[size_t(g)] = int32_t(book[size_t(g)] - 1);
      dir_.local[size_t(g)] = int32_t(book[size_t(n + g)]);
      degree_[size_t(g)] = book[size_t(2 * n + g)];
      self_loops_[size_t(g)] = int32_t(book[size_t(3 * n + g)]);
      self_loops_any_ = self_loops_any_ || self_loops_[size_t(g)] > 0;
    }
    weighted_ = book[size_t(4 * n)] > 0;
  }

  int64_t num_vertices() const override { return int64_t(degree_.size()); }
  int64_t degree(int64_t v) const override { return degree_[size_t(v)]; }
  int64_t feature_dim() const override { return features_.cols(); }

  void sample(const std::vector<int64_t>& frontier, int layer, uint64_t epoch,
              const SamplerOptions& opt, SampledRows& out) override {
    const int p = comm_.size();
    const size_t np = static_cast<size_t>(p);
    // Requests grouped by owner; slot[q][k] is where the k-th answer of rank q goes.
    std::vector<std::vector<int64_t>> want(np), slot(np);
    for (size_t i = 0; i < frontier.size(); ++i) {
      const int q = dir_.owner[size_t(frontier[i])];
      want[size_t(q)].push_back(frontier[i]);
      slot[size_t(q)].push_back(int64_t(i));
    }
    std::vector<int64_t> asked_per_rank;
    const std::vector<int64_t> asked = exchange(comm_, want, &asked_per_rank);

    // Serve: draw each asked vertex's neighbours from its owned row.
    const int fanout = opt.fanouts[size_t(layer)];
    const int threads = opt.threads > 0 ? opt.threads : omp_get_max_threads();
    const int64_t m = int64_t(asked.size());
    std::vector<int64_t> off(size_t(m) + 1, 0);
#pragma omp parallel for schedule(static, 1024) num_threads(threads) if (m >= 4096)
    for (int64_t j = 0; j < m; ++j) {
      const int64_t v = dir_.local[size_t(asked[size_t(j)])];
      off[size_t(j) + 1] =
          sample_row_count(rows_.indices.data() + rows_.offsets[v], rows_.degree(v),
                           asked[size_t(j)], self_loops_any_, fanout, opt.replace);
    }
    for (int64_t j = 0; j < m; ++j) off[size_t(j) + 1] += off[size_t(j)];
    std::vector<int64_t> ids(size_t(off.back()));
    std::vector<float> w(weighted_ ? ids.size() : 0);
#pragma omp parallel for schedule(dynamic, 256) num_threads(threads) if (m >= 4096)
    for (int64_t j = 0; j < m; ++j) {
      const int64_t g = asked[size_t(j)], v = dir_.local[size_t(g)], b = rows_.offsets[v];
      sample_row(rows_.indices.data() + b, weighted_ ? rows_.values.data() + b : nullptr,
                 rows_.degree(v), g, self_loops_any_, fanout, opt.replace,
                 sample_key(opt.seed, epoch, layer, g), ids.data() + off[size_t(j)],
                 weighted_ ? w.data() + off[size_t(j)] : nullptr);
    }
    // Answers back to the askers: the ids (and weights). An asker knows how many to expect from
    // each vertex's degree, so no counts travel.
    std::vector<std::vector<int64_t>> nbrs(np);
    std::vector<std::vector<float>> weights(np);
    int64_t j = 0;
    for (int q = 0; q < p; ++q)
      for (int64_t k = 0; k < asked_per_rank[size_t(q)]; ++k, ++j) {
        nbrs[size_t(q)].insert(nbrs[size_t(q)].end(), ids.begin() + off[size_t(j)],
                               ids.begin() + off[size_t(j) + 1]);
        if (weighted_)
          weights[size_t(q)].insert(weights[size_t(q)].end(), w.begin() + off[size_t(j)],
                                    w.begin() + off[size_t(j) + 1]);
      }
    // Rows in frontier order: row i's length, and where it starts in what arrives.
    const size_t n = frontier.size();
    std::vector<int64_t> len(n), at(n), expect(np, 0);
    int64_t pos = 0;
    for (int q = 0; q < p; ++q)
      for (int64_t i : slot[size_t(q)]) {
        const int64_t v = frontier[size_t(i)];
        len[size_t(i)] =
            sample_count(degree_[size_t(v)], fanout, opt.replace) + self_loops_[size_t(v)];
        at[size_t(i)] = pos;
        pos += len[size_t(i)];
        expect[size_t(q)] += len[size_t(i)];
      }
    const std::vector<int64_t> got = exchange(comm_, nbrs, nullptr, &expect);
    std::vector<float> got_w;
    if (weighted_) got_w = exchange(comm_, weights, nullptr, &expect);
    out.offsets.assign(n + 1, 0);
    for (size_t i = 0; i < n; ++i) out.offsets[i + 1] = out.offsets[i] + len[i];
    out.nbrs.resize(size_t(out.offsets.back()));
    out.weights.resize(weighted_ ? out.nbrs.size() : 0);
    for (size_t i = 0; i < n; ++i) {
      std::copy_n(got.begin() + at[i], len[i], out.nbrs.begin() + out.offsets[i]);
      if (weighted_)
        std::copy_n(got_w.begin() + at[i], len[i], out.weights.begin() + out.offsets[i]);
    }
  }

  Tensor gather_features(const std::vector<int64_t>& ids) override {
    NoGradGuard no_grad;
    std::vector<int32_t> idx(ids.begin(), ids.end());
    return std::move(fetch_rows(comm_, dir_, features_, idx).value());
  }

 private:
  Communicator& comm_;
  Var features_;
  RowDirectory dir_;
  std::vector<int64_t> degree_;
  bool self_loops_any_ = false;
  std::vector<int32_t> self_loops_;  // 1 where a vertex's row holds a self loop (always kept)
  Csr rows_;                         // owned rows, columns in global ids
  bool weighted_ = false;
};

}  // namespace

std::unique_ptr<GraphStore> make_dist_store(const GraphView& part, int64_t global_vertices,
                                            const Var& features, Communicator& comm) {
  return std::make_unique<DistStore>(part, global_vertices, features, comm);
}

}  // namespace dgnn
