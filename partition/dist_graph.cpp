// A graph no rank holds whole, and partitioning it: PT-Scotch over the blocks; METIS on rank 0
// after gathering the blocks' symmetrised rows there; random / hash / range per vertex.
#include "dgnn/partition/dist_graph.hpp"

#include <algorithm>
#include <limits>
#include <string>

#include "dgnn/comm/collectives.hpp"
#include "dgnn/common/error.hpp"
#include "dgnn/dgnn_config.hpp"
#include "dgnn/partition/symmetric.hpp"
#if DGNN_HAVE_SCOTCH
#include "dgnn/partition/scotch/scotch_part.hpp"
#endif
#if DGNN_HAVE_PTSCOTCH
#include "dgnn/comm/mpi/mpi.hpp"
#endif

namespace dgnn {

int DistGraph::owner(int64_t v) const {
  DGNN_CHECK(v >= 0 && v < num_vertices, ShapeError,
             "DistGraph::owner: vertex " + std::to_string(v) + " is not in [0, " +
                 std::to_string(num_vertices) + ")");
  // The last rank whose block starts at or before v (empty blocks start where the next does).
  return int(std::upper_bound(vtxdist.begin(), vtxdist.end(), v) - vtxdist.begin()) - 1;
}

DistGraph dist_graph_block(const Csr& in, int rank, int ranks) {
  DGNN_CHECK(ranks >= 1 && rank >= 0 && rank < ranks, ShapeError,
             "dist_graph_block: rank " + std::to_string(rank) + " of " + std::to_string(ranks));
  DGNN_CHECK(in.rows == in.cols, ShapeError, "dist_graph_block: a graph's CSR is square");
  const int64_t n = in.rows;
  DistGraph g;
  g.num_vertices = n;
  g.rank = rank;
  g.vtxdist.resize(size_t(ranks) + 1);
  for (int r = 0; r <= ranks; ++r) g.vtxdist[size_t(r)] = int64_t(r) * n / ranks;
  const int64_t begin = g.begin(), end = g.end();
  const int64_t first = in.offsets[size_t(begin)], last = in.offsets[size_t(end)];
  g.in_offsets.resize(size_t(end - begin) + 1);
  for (int64_t v = begin; v <= end; ++v)
    g.in_offsets[size_t(v - begin)] = in.offsets[size_t(v)] - first;
  g.in_src.assign(in.indices.begin() + first, in.indices.begin() + last);
  if (in.weighted()) g.in_weight.assign(in.values.begin() + first, in.values.begin() + last);
  detail::SymmetricRows<int64_t> s = detail::symmetrise_rows<int64_t>(
      in, in.transpose(), begin, end, "dist_graph_block: too many symmetrised edges");
  g.adj_offsets = std::move(s.offsets);
  g.adj = std::move(s.adj);
  g.adj_weight = std::move(s.weight);
  return g;
}

void symmetrise_blocks(DistGraph& g, bool directed, Communicator& comm) {
  const int p = comm.size();
  auto owner = [&](int64_t v) { return g.owner(v); };
  struct {
    int64_t begin, size;
  } b{g.begin(), g.block_size()};
  g.adj.clear();
  g.adj_weight.clear();
  std::vector<int64_t> out_off(size_t(b.size) + 1, 0), out_dst;
  if (directed) {
    std::vector<std::vector<std::pair<int64_t, int64_t>>> send(static_cast<size_t>(p));
    for (int64_t v = 0; v < b.size; ++v)
      for (int64_t e = g.in_offsets[size_t(v)]; e < g.in_offsets[size_t(v) + 1]; ++e)
        send[size_t(owner(g.in_src[size_t(e)]))].push_back({g.in_src[size_t(e)], b.begin + v});
    std::vector<std::pair<int64_t, int64_t>> got = route(comm, send);
    std::sort(got.begin(), got.end());
    for (const auto& [src, dst] : got) ++out_off[size_t(src - b.begin) + 1], out_dst.push_back(dst);
    for (int64_t v = 0; v < b.size; ++v) out_off[size_t(v) + 1] += out_off[size_t(v)];
  }
  g.adj_offsets.assign(size_t(b.size) + 1, 0);
  for (int64_t v = 0; v < b.size; ++v) {
    const int64_t gv = b.begin + v;
    int64_t a = g.in_offsets[size_t(v)], a_end = g.in_offsets[size_t(v) + 1];
    int64_t c = directed ? out_off[size_t(v)] : a, c_end = directed ? out_off[size_t(v) + 1] : a_end;
    const std::vector<int64_t>& cl = directed ? out_dst : g.in_src;
    while (a < a_end || c < c_end) {
      int64_t u;
      if (c >= c_end || (a < a_end && g.in_src[size_t(a)] <= cl[size_t(c)]))
        u = g.in_src[size_t(a++)];
      else
        u = cl[size_t(c++)];
      if (u == gv) continue;
      if (int64_t(g.adj.size()) > g.adj_offsets[size_t(v)] && g.adj.back() == u) {
        ++g.adj_weight.back();
        continue;
      }
      g.adj.push_back(u);
      g.adj_weight.push_back(1);
    }
    g.adj_offsets[size_t(v) + 1] = int64_t(g.adj.size());
  }
}

bool have_parallel_partitioner() { return DGNN_HAVE_PTSCOTCH; }

namespace detail {

std::vector<int32_t> scotch_whole(const std::vector<int64_t>& offsets,
                                  const std::vector<int64_t>& adj,
                                  const std::vector<int64_t>& adj_weight,
                                  const std::vector<int64_t>& vertex_weight,
                                  const PartitionOptions& opt) {
#if DGNN_HAVE_SCOTCH
  return scotch::partition_graph(offsets, adj, adj_weight, vertex_weight, opt);
#else
  throw OptionError(
      "--partitioner ptscotch: this build of dgnn has no Scotch (install libscotch-dev, and "
      "libptscotch-dev for MPI jobs, then rebuild)");
#endif
}

}  // namespace detail

namespace {

void check_blocks(const DistGraph& g, Communicator& comm, const char* who) {
  DGNN_CHECK(int(g.vtxdist.size()) == comm.size() + 1 && g.rank == comm.rank(), ShapeError,
             std::string(who) + ": the graph's blocks are not those of this communicator (" +
                 std::to_string(g.vtxdist.size()) + " offsets for " + std::to_string(comm.size()) +
                 " ranks; block of rank " + std::to_string(g.rank) + " on rank " +
                 std::to_string(comm.rank()) + ")");
  DGNN_CHECK(int64_t(g.adj_offsets.size()) == g.block_size() + 1, ShapeError,
             std::string(who) + ": the block has no symmetrised rows (adj_offsets)");
}

void check_columns(const std::vector<std::vector<int64_t>>& columns, int64_t rows,
                   const char* who) {
  for (const std::vector<int64_t>& c : columns)
    DGNN_CHECK(int64_t(c.size()) == rows, ShapeError,
               std::string(who) + ": a balance column has " + std::to_string(c.size()) +
                   " weights for a block of " + std::to_string(rows) + " vertices");
}

// Per rank, how many of T each rank holds (`mine` on this rank): all ranks learn all counts.
std::vector<int64_t> counts_of_all(Communicator& comm, int64_t mine) {
  std::vector<int64_t> c(size_t(comm.size()), 0);
  c[size_t(comm.rank())] = mine;
  comm.allreduce_sum(c.data(), int64_t(c.size()));
  return c;
}

// Rank 0 gets every rank's `mine` (counts[p] elements from rank p) one after the other; the other
// ranks get nothing.
template <class T>
std::vector<T> gather_to_root(Communicator& comm, const std::vector<T>& mine,
                              const std::vector<int64_t>& counts) {
  const int ranks = comm.size();
  std::vector<int64_t> send_counts(size_t(ranks), 0), send_displs(size_t(ranks), 0);
  std::vector<int64_t> recv_counts(size_t(ranks), 0), recv_displs(size_t(ranks), 0);
  send_counts[0] = int64_t(mine.size() * sizeof(T));
  std::vector<T> all;
  if (comm.rank() == 0) {
    int64_t at = 0;
    for (int p = 0; p < ranks; ++p) {
      recv_displs[size_t(p)] = at;
      recv_counts[size_t(p)] = counts[size_t(p)] * int64_t(sizeof(T));
      at += recv_counts[size_t(p)];
    }
    all.resize(size_t(at) / sizeof(T));
  }
  comm.alltoallv(mine.data(), send_counts, send_displs, all.data(), recv_counts, recv_displs);
  return all;
}

// Rank 0's `all` (every vertex) cut back into blocks: each rank gets its own.
std::vector<int32_t> scatter_from_root(Communicator& comm, const DistGraph& g,
                                       const std::vector<int32_t>& all) {
  const int ranks = comm.size();
  std::vector<int64_t> send_counts(size_t(ranks), 0), send_displs(size_t(ranks), 0);
  std::vector<int64_t> recv_counts(size_t(ranks), 0), recv_displs(size_t(ranks), 0);
  if (comm.rank() == 0)
    for (int p = 0; p < ranks; ++p) {
      send_displs[size_t(p)] = g.vtxdist[size_t(p)] * int64_t(sizeof(int32_t));
      send_counts[size_t(p)] =
          (g.vtxdist[size_t(p) + 1] - g.vtxdist[size_t(p)]) * int64_t(sizeof(int32_t));
    }
  recv_counts[0] = g.block_size() * int64_t(sizeof(int32_t));
  std::vector<int32_t> mine(size_t(g.block_size()), 0);
  comm.alltoallv(all.data(), send_counts, send_displs, mine.data(), recv_counts, recv_displs);
  return mine;
}

// In-degree per vertex of the block (what balance_edges balances, as partition_vertices counts it).
std::vector<int64_t> in_degrees(const DistGraph& g) {
  std::vector<int64_t> d(size_t(g.block_size()));
  for (int64_t i = 0; i < g.block_size(); ++i)
    d[size_t(i)] = g.in_offsets[size_t(i) + 1] - g.in_offsets[size_t(i)];
  return d;
}

const char* const kMetisTooLarge =
    "METIS (32-bit indices in this build) cannot take more than 2^31 symmetrised edges; use the "
    "ptscotch, random, hash or range partitioner";

// METIS on rank 0: the blocks' symmetrised rows (32-bit, as METIS takes them) and balance
// columns are gathered there, partitioned exactly as partition_vertices partitions the whole
// graph, and the parts scattered back.
std::vector<int32_t> metis_on_root(const DistGraph& g, const PartitionOptions& opt,
                                   Communicator& comm,
                                   const std::vector<std::vector<int64_t>>& balance) {
  const int64_t n = g.num_vertices;
  if (n > std::numeric_limits<int32_t>::max())
    throw OptionError("METIS (32-bit indices in this build) cannot take " + std::to_string(n) +
                      " vertices; use the ptscotch, random, hash or range partitioner");
  const std::vector<int64_t> rows = counts_of_all(comm, g.block_size());
  const std::vector<int64_t> entries = counts_of_all(comm, int64_t(g.adj.size()));
  int64_t total_entries = 0;
  for (int64_t e : entries) total_entries += e;
  if (total_entries > std::numeric_limits<int32_t>::max()) throw OptionError(kMetisTooLarge);
  int64_t in_edges = g.in_offsets.empty() ? 0 : g.in_offsets.back();
  comm.allreduce_sum(&in_edges, 1);

  std::vector<int32_t> length(size_t(g.block_size()));
  for (int64_t i = 0; i < g.block_size(); ++i)
    length[size_t(i)] = int32_t(g.adj_offsets[size_t(i) + 1] - g.adj_offsets[size_t(i)]);
  detail::SymmetricRows<int32_t> m;
  {
    const std::vector<int32_t> all_lengths = gather_to_root(comm, length, rows);
    if (comm.rank() == 0) {
      m.offsets.assign(size_t(n) + 1, 0);
      for (int64_t v = 0; v < n; ++v)
        m.offsets[size_t(v) + 1] = m.offsets[size_t(v)] + all_lengths[size_t(v)];
    }
  }
  m.adj = gather_to_root(comm, std::vector<int32_t>(g.adj.begin(), g.adj.end()), entries);
  m.weight =
      gather_to_root(comm, std::vector<int32_t>(g.adj_weight.begin(), g.adj_weight.end()), entries);
  // The constraints partition_vertices builds: vertex count, then in-degree (balance_edges).
  std::vector<std::vector<int32_t>> columns;
  std::vector<int32_t> degree;
  if (opt.balance_edges && in_edges > 0) {
    const std::vector<int64_t> d = in_degrees(g);
    degree = gather_to_root(comm, std::vector<int32_t>(d.begin(), d.end()), rows);
  }
  std::vector<std::vector<int64_t>> extra;
  for (const std::vector<int64_t>& c : balance) extra.push_back(gather_to_root(comm, c, rows));

  std::vector<int32_t> all;
  if (comm.rank() == 0) {
    columns.emplace_back(size_t(n), 1);
    if (!degree.empty()) columns.push_back(std::move(degree));
    all = detail::metis_partition(m, n, opt, std::move(columns), extra);
  }
  extra.clear();
  return scatter_from_root(comm, g, all);
}

std::vector<int32_t> partition_distributed_impl(const DistGraph& g, const PartitionOptions& opt,
                                                Communicator& comm,
                                                const std::vector<int64_t>& vertex_weight,
                                                DistGraph* release) {
  check_blocks(g, comm, "partition_distributed");
  if (detail::check_partition_options(g.num_vertices, opt))
    return std::vector<int32_t>(size_t(g.block_size()), 0);
  DGNN_CHECK(vertex_weight.empty() || int64_t(vertex_weight.size()) == g.block_size(), ShapeError,
             "partition_distributed: " + std::to_string(vertex_weight.size()) +
                 " vertex weights for a block of " + std::to_string(g.block_size()));
  // One rank holds the whole graph: sequential Scotch, the engine PT-Scotch runs per process.
  if (comm.size() == 1)
    return detail::scotch_whole(g.adj_offsets, g.adj, g.adj_weight, vertex_weight, opt);
#if DGNN_HAVE_PTSCOTCH
  void* handle = mpi::native_handle(comm);
  DGNN_CHECK(handle != nullptr, Error,
             "partition_distributed: PT-Scotch needs the job's MPI communicator");
  std::vector<int64_t> sums{vertex_weight.empty() ? 0 : 1, 0};
  for (int64_t w : vertex_weight) sums[1] += w;
  comm.allreduce_sum(sums.data(), 2);
  DGNN_CHECK(sums[0] == 0 || !vertex_weight.empty() || g.block_size() == 0, ShapeError,
             "partition_distributed: vertex weights on some ranks only");
  return scotch::partition_dgraph(g, opt, handle, vertex_weight, sums[0] > 0, sums[1], release);
#else
  (void)release;
  throw OptionError(
      "--partitioner ptscotch on " + std::to_string(comm.size()) +
      " ranks: this build of dgnn has no PT-Scotch (install libptscotch-dev and rebuild with MPI)");
#endif
}

std::vector<int32_t> partition_blocks_impl(const DistGraph& g, const PartitionOptions& opt,
                                           Communicator& comm,
                                           const std::vector<std::vector<int64_t>>& balance,
                                           DistGraph* release) {
  check_blocks(g, comm, "partition_blocks");
  check_columns(balance, g.block_size(), "partition_blocks");
  if (detail::check_partition_options(g.num_vertices, opt))
    return std::vector<int32_t>(size_t(g.block_size()), 0);
  switch (opt.method) {
    case Partitioner::random:
    case Partitioner::hash:
    case Partitioner::range:
      return detail::baseline_parts(g.num_vertices, g.begin(), g.end(), opt);
    case Partitioner::metis:
    case Partitioner::ptscotch:
      break;
  }
  if (opt.balance_train)
    throw OptionError(
        "partition_blocks: balance_train needs the training vertices; pass them as a balance "
        "column (1 per training vertex)");
  if (opt.method == Partitioner::metis) return metis_on_root(g, opt, comm, balance);

  // PT-Scotch balances one weight: the vertex count, in-edges (balance_edges) and the caller's
  // columns, each normalised to its total over the graph and summed (detail::combine_columns),
  // as partition_vertices does for ptscotch on one process.
  const std::vector<int64_t> ones(size_t(g.block_size()), 1);
  std::vector<int64_t> degree;
  std::vector<const std::vector<int64_t>*> columns{&ones};
  if (opt.balance_edges) {
    degree = in_degrees(g);
    columns.push_back(&degree);
  }
  for (const std::vector<int64_t>& c : balance) columns.push_back(&c);
  std::vector<int64_t> totals(columns.size(), 0);
  for (size_t c = 0; c < columns.size(); ++c)
    for (int64_t w : *columns[c]) {
      if (w < 0) throw ShapeError("partition_blocks: a negative balance weight");
      totals[c] += w;
    }
  comm.allreduce_sum(totals.data(), int64_t(totals.size()));
  const std::vector<int64_t> weight =
      detail::combine_columns(columns, totals, g.block_size(), g.num_vertices);
  // An empty weight means 1 each, on every rank alike (combine_columns decides from the totals).
  if (!detail::overpartitioned(opt, totals))
    return partition_distributed_impl(g, opt, comm, weight, release);
  // Pieces balanced on the summed weight, dealt to the parts so that each quantity is balanced.
  PartitionOptions fine_opt = opt;
  fine_opt.parts = int(std::min<int64_t>(g.num_vertices, int64_t(opt.parts) * opt.overpartition));
  std::vector<int32_t> fine = partition_distributed(g, fine_opt, comm, weight);
  std::vector<int64_t> load(columns.size() * size_t(fine_opt.parts), 0);
  for (size_t c = 0; c < columns.size(); ++c)
    for (int64_t i = 0; i < g.block_size(); ++i)
      load[c * size_t(fine_opt.parts) + size_t(fine[size_t(i)])] += (*columns[c])[size_t(i)];
  comm.allreduce_sum(load.data(), int64_t(load.size()));
  std::vector<std::vector<int64_t>> per_column;
  for (size_t c = 0; c < columns.size(); ++c)
    per_column.emplace_back(load.begin() + c * size_t(fine_opt.parts),
                            load.begin() + (c + 1) * size_t(fine_opt.parts));
  const std::vector<int32_t> to = detail::deal_pieces(per_column, opt.parts);
  for (int32_t& p : fine) p = to[size_t(p)];
  return fine;
}

}  // namespace

std::vector<int32_t> partition_distributed(const DistGraph& g, const PartitionOptions& opt,
                                           Communicator& comm,
                                           const std::vector<int64_t>& vertex_weight) {
  return partition_distributed_impl(g, opt, comm, vertex_weight, nullptr);
}

std::vector<int32_t> partition_blocks(const DistGraph& g, const PartitionOptions& opt,
                                      Communicator& comm,
                                      const std::vector<std::vector<int64_t>>& balance) {
  return partition_blocks_impl(g, opt, comm, balance, nullptr);
}

std::vector<int32_t> partition_blocks_releasing(DistGraph& g, const PartitionOptions& opt,
                                                Communicator& comm,
                                                const std::vector<std::vector<int64_t>>& balance) {
  return partition_blocks_impl(g, opt, comm, balance, &g);
}

std::vector<int32_t> allgather_parts(const DistGraph& g, const std::vector<int32_t>& mine,
                                     Communicator& comm) {
  check_blocks(g, comm, "allgather_parts");
  DGNN_CHECK(int64_t(mine.size()) == g.block_size(), ShapeError,
             "allgather_parts: one part per vertex of the block");
  const int ranks = comm.size();
  const int64_t bytes = g.block_size() * int64_t(sizeof(int32_t));
  std::vector<int64_t> send_counts(size_t(ranks), bytes), send_displs(size_t(ranks), 0);
  std::vector<int64_t> recv_counts(static_cast<size_t>(ranks)), recv_displs(recv_counts);
  for (int p = 0; p < ranks; ++p) {
    recv_displs[size_t(p)] = g.vtxdist[size_t(p)] * int64_t(sizeof(int32_t));
    recv_counts[size_t(p)] =
        (g.vtxdist[size_t(p) + 1] - g.vtxdist[size_t(p)]) * int64_t(sizeof(int32_t));
  }
  std::vector<int32_t> all(size_t(g.num_vertices), 0);
  comm.alltoallv(mine.data(), send_counts, send_displs, all.data(), recv_counts, recv_displs);
  return all;
}

int64_t metis_gather_bytes(const DistGraph& g, Communicator& comm, const PartitionOptions& opt,
                           size_t balance_columns) {
  int64_t entries = int64_t(g.adj.size());
  comm.allreduce_sum(&entries, 1);
  const int64_t n = g.num_vertices;
  const int64_t constraints = 1 + (opt.balance_edges ? 1 : 0) + int64_t(balance_columns);
  // xadj + adjncy + adjwgt (32-bit), the gathered columns (64-bit, then the 32-bit copies and
  // METIS's interleaved vwgt), the parts (METIS's and the copy returned).
  return 4 * (n + 1) + 8 * entries + 8 * n * int64_t(balance_columns) + 8 * n * constraints + 8 * n;
}

}  // namespace dgnn
