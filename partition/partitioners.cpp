// Vertex partitioners: METIS k-way and Scotch (ptscotch, here on one process) on the symmetrised
// structure, and the seeded random, hash and range baselines that scaling studies compare them
// against.
#include <metis.h>
#include <pthread.h>
#include <signal.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <string>

#include "dgnn/common/error.hpp"
#include "dgnn/common/hash_rng.hpp"
#include "dgnn/partition/partition.hpp"
#include "dgnn/partition/symmetric.hpp"

namespace dgnn {

Partitioner parse_partitioner(const std::string& name) {
  for (Partitioner p : {Partitioner::metis, Partitioner::ptscotch, Partitioner::random,
                        Partitioner::hash, Partitioner::range})
    if (name == partitioner_name(p)) return p;
  throw OptionError("unknown partitioner '" + name +
                    "' (expected metis, ptscotch, random, hash or range)");
}

const char* partitioner_name(Partitioner p) {
  switch (p) {
    case Partitioner::metis:
      return "metis";
    case Partitioner::ptscotch:
      return "ptscotch";
    case Partitioner::random:
      return "random";
    case Partitioner::hash:
      return "hash";
    case Partitioner::range:
      return "range";
  }
  return "?";
}

MetisObjective parse_metis_objective(const std::string& name) {
  if (name == "cut") return MetisObjective::cut;
  if (name == "volume") return MetisObjective::volume;
  throw OptionError("unknown METIS objective '" + name + "' (expected cut or volume)");
}

const char* metis_objective_name(MetisObjective o) {
  return o == MetisObjective::volume ? "volume" : "cut";
}

namespace {

static_assert(sizeof(idx_t) == sizeof(int32_t),
              "dgnn builds METIS's graph with 32-bit indices (detail::metis_partition)");

const char* metis_status(int status) {
  switch (status) {
    case METIS_ERROR_INPUT:
      return "METIS rejected its input (METIS_ERROR_INPUT)";
    case METIS_ERROR_MEMORY:
      return "METIS ran out of memory (METIS_ERROR_MEMORY)";
    default:
      return "METIS failed (METIS_ERROR)";
  }
}

const char* const kMetisTooLarge =
    "METIS (32-bit indices in this build) cannot take more than 2^31 symmetrised edges; use the "
    "ptscotch, random, hash or range partitioner";

// The balanced quantities partition_vertices' options ask for beside the caller's columns:
// the vertex count, then in-degree (balance_edges), then training vertices (balance_train).
// A column whose total is zero balances trivially (and makes METIS divide by zero): left out.
std::vector<std::vector<int32_t>> option_columns(const Csr& g, const PartitionOptions& opt,
                                                 const std::vector<int32_t>& train) {
  const int64_t n = g.rows;
  std::vector<std::vector<int32_t>> columns;
  columns.emplace_back(size_t(n), 1);
  if (opt.balance_edges && g.nnz() > 0) {
    std::vector<int32_t> c(static_cast<size_t>(n));
    for (int64_t v = 0; v < n; ++v) c[size_t(v)] = int32_t(g.degree(v));
    columns.push_back(std::move(c));
  }
  if (opt.balance_train && !train.empty()) {
    std::vector<int32_t> c(size_t(n), 0);
    for (int32_t v : train) {
      if (v < 0 || v >= n)
        throw OptionError("training vertex " + std::to_string(v) + " is not a vertex of the graph");
      c[size_t(v)] = 1;
    }
    columns.push_back(std::move(c));
  }
  return columns;
}

void check_column(const std::vector<int64_t>& col, int64_t n) {
  if (int64_t(col.size()) != n)
    throw ShapeError("partition: a balance column has " + std::to_string(col.size()) +
                     " weights for " + std::to_string(n) + " vertices");
}

std::vector<int32_t> metis_kway(const Csr& g, const PartitionOptions& opt,
                                const std::vector<int32_t>& train,
                                const std::vector<std::vector<int64_t>>& extra) {
  const int64_t n = g.rows;
  if (n > std::numeric_limits<idx_t>::max())
    throw OptionError("METIS (32-bit indices in this build) cannot take " + std::to_string(n) +
                      " vertices; use the ptscotch, random, hash or range partitioner");
  for (const std::vector<int64_t>& col : extra) check_column(col, n);
  detail::SymmetricRows<int32_t> m =
      detail::symmetrise_rows<int32_t>(g, g.transpose(), 0, n, kMetisTooLarge);
  return detail::metis_partition(m, n, opt, option_columns(g, opt, train), extra);
}

// Sequential Scotch on the whole graph: the same balanced quantities as METIS, combined into
// one weight (detail::combine_columns).
std::vector<int32_t> scotch_kway(const Csr& g, const PartitionOptions& opt,
                                 const std::vector<int32_t>& train,
                                 const std::vector<std::vector<int64_t>>& extra) {
  const int64_t n = g.rows;
  std::vector<std::vector<int64_t>> own;
  for (const std::vector<int32_t>& c : option_columns(g, opt, train))
    own.emplace_back(c.begin(), c.end());
  std::vector<const std::vector<int64_t>*> columns;
  std::vector<int64_t> totals;
  auto add = [&](const std::vector<int64_t>& c) {
    check_column(c, n);
    int64_t total = 0;
    for (int64_t w : c) {
      if (w < 0) throw ShapeError("partition: a negative balance weight");
      total += w;
    }
    columns.push_back(&c);
    totals.push_back(total);
  };
  for (const std::vector<int64_t>& c : own) add(c);
  for (const std::vector<int64_t>& c : extra) add(c);
  const std::vector<int64_t> weight = detail::combine_columns(columns, totals, n, n);
  const detail::SymmetricRows<int64_t> m = detail::symmetrise_rows<int64_t>(
      g, g.transpose(), 0, n, "the symmetrised graph has too many edges");
  if (!detail::overpartitioned(opt, totals))
    return detail::scotch_whole(m.offsets, m.adj, m.weight, weight, opt);
  PartitionOptions fine_opt = opt;
  fine_opt.parts = int(std::min<int64_t>(n, int64_t(opt.parts) * opt.overpartition));
  std::vector<int32_t> fine = detail::scotch_whole(m.offsets, m.adj, m.weight, weight, fine_opt);
  std::vector<std::vector<int64_t>> load(columns.size(),
                                         std::vector<int64_t>(size_t(fine_opt.parts), 0));
  for (size_t c = 0; c < columns.size(); ++c)
    for (int64_t v = 0; v < n; ++v) load[c][size_t(fine[size_t(v)])] += (*columns[c])[size_t(v)];
  const std::vector<int32_t> to = detail::deal_pieces(load, opt.parts);
  for (int32_t& p : fine) p = to[size_t(p)];
  return fine;
}

}  // namespace

namespace detail {

bool check_partition_options(int64_t n, const PartitionOptions& opt) {
  if (opt.parts < 1)
    throw OptionError("the number of parts must be >= 1, got " + std::to_string(opt.parts));
  if (n > 0 && opt.parts > n)
    throw OptionError("cannot split " + std::to_string(n) + " vertices into " +
                      std::to_string(opt.parts) + " non-empty parts");
  if (!(opt.imbalance >= 1.0) || opt.imbalance > 10.0)
    throw OptionError("imbalance is max/mean load and must be in [1, 10], got " +
                      std::to_string(opt.imbalance));
  return opt.parts == 1 || n == 0;
}

std::vector<int32_t> metis_partition(SymmetricRows<int32_t>& m, int64_t n,
                                     const PartitionOptions& opt,
                                     std::vector<std::vector<int32_t>> columns,
                                     const std::vector<std::vector<int64_t>>& extra) {
  // Further columns the caller balances (e.g. each group of snapshots' edges), scaled so that
  // a column's total fits METIS's 32-bit sums.
  for (const std::vector<int64_t>& col : extra) {
    check_column(col, n);
    int64_t total = 0;
    for (int64_t w : col) {
      if (w < 0) throw ShapeError("partition: a negative balance weight");
      total += w;
    }
    if (total == 0) continue;
    const int64_t scale = total / (int64_t(1) << 30) + 1;
    std::vector<int32_t> c(static_cast<size_t>(n));
    for (int64_t v = 0; v < n; ++v) c[size_t(v)] = int32_t(col[size_t(v)] / scale);
    columns.push_back(std::move(c));
  }
  idx_t ncon = idx_t(columns.size());
  std::vector<idx_t> vwgt(size_t(n) * columns.size());
  for (int64_t v = 0; v < n; ++v)
    for (size_t k = 0; k < columns.size(); ++k)
      vwgt[size_t(v) * columns.size() + k] = columns[k][size_t(v)];
  columns.clear();

  idx_t options[METIS_NOPTIONS];
  METIS_SetDefaultOptions(options);
  options[METIS_OPTION_NUMBERING] = 0;
  // METIS's seed is an idx_t; fold the 64-bit seed so that every bit of it counts.
  options[METIS_OPTION_SEED] = idx_t(mix64(opt.seed) & 0x7fffffff);
  options[METIS_OPTION_UFACTOR] = idx_t(std::lround((opt.imbalance - 1.0) * 1000.0));
  options[METIS_OPTION_OBJTYPE] =
      opt.objective == MetisObjective::volume ? METIS_OBJTYPE_VOL : METIS_OBJTYPE_CUT;

  idx_t nvtxs = idx_t(n), nparts = idx_t(opt.parts), objval = 0;
  std::vector<idx_t> part(size_t(n), 0);
  // An edgeless graph has nothing to cut; METIS is not needed (and some builds fault on it).
  if (m.adj.empty()) {
    for (int64_t v = 0; v < n; ++v) part[size_t(v)] = idx_t(v * opt.parts / n);
  } else {
    // METIS traps SIGTERM (and SIGABRT) while it runs and turns it into METIS_ERROR: held back
    // until it returns, a stop signal reaches the program's own handler instead.
    sigset_t stop, before;
    sigemptyset(&stop);
    for (int sig : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&stop, sig);
    pthread_sigmask(SIG_BLOCK, &stop, &before);
    const int status = METIS_PartGraphKway(&nvtxs, &ncon, m.offsets.data(), m.adj.data(),
                                           vwgt.data(), nullptr, m.weight.data(), &nparts, nullptr,
                                           nullptr, options, &objval, part.data());
    pthread_sigmask(SIG_SETMASK, &before, nullptr);
    if (status != METIS_OK)
      throw Error(std::string(metis_status(status)) + " partitioning " + std::to_string(n) +
                  " vertices into " + std::to_string(opt.parts) + " parts");
  }
  m = {};
  return std::vector<int32_t>(part.begin(), part.end());
}

std::vector<int64_t> combine_columns(const std::vector<const std::vector<int64_t>*>& columns,
                                     const std::vector<int64_t>& totals, int64_t rows,
                                     int64_t global_rows) {
  std::vector<size_t> used;
  for (size_t c = 0; c < columns.size(); ++c)
    if (totals[c] > 0) used.push_back(c);
  if (used.empty() || (used.size() == 1 && used[0] == 0)) return {};
  // Each column is scaled to the same total: 8 per vertex, within [2^20, 2^30 / columns], so
  // that the sum fits Scotch's 32-bit loads with room to spare and a vertex's share of the
  // vertex count stays a whole number where the graph allows it.
  const double most = double(int64_t(1) << 30) / double(used.size());
  const double per_column = std::min(most, std::max(double(1 << 20), 8.0 * double(global_rows)));
  std::vector<int64_t> w(size_t(rows), 0);
  for (int64_t v = 0; v < rows; ++v) {
    double sum = 0;
    for (size_t c : used)
      sum += double((*columns[c])[size_t(v)]) * (per_column / double(totals[c]));
    w[size_t(v)] = std::max<int64_t>(1, std::llround(sum));
  }
  return w;
}

std::vector<int32_t> baseline_parts(int64_t n, int64_t begin, int64_t end,
                                    const PartitionOptions& opt) {
  std::vector<int32_t> part(size_t(end - begin), 0);
  switch (opt.method) {
    case Partitioner::random: {
      // A shuffle then round-robin: parts differ in size by at most one vertex. The shuffle is
      // of all n vertices whatever the range asked for (so a block gets the whole graph's
      // parts): 4 bytes per vertex of the graph, for the time it runs.
      std::vector<int32_t> order(static_cast<size_t>(n));
      std::iota(order.begin(), order.end(), 0);
      Rng rng(hash_combine(opt.seed, 0x7061727469746e));  // "partitn": its own stream
      for (size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[rng.below(i)]);
      for (int64_t i = 0; i < n; ++i) {
        const int64_t v = order[size_t(i)];
        if (v >= begin && v < end) part[size_t(v - begin)] = int32_t(i % opt.parts);
      }
      return part;
    }
    case Partitioner::hash:
      // Keyed by the vertex id alone, so any rank can compute any vertex's owner.
      for (int64_t v = begin; v < end; ++v)
        part[size_t(v - begin)] = int32_t(mix64(uint64_t(v)) % uint64_t(opt.parts));
      return part;
    case Partitioner::range:
      for (int64_t v = begin; v < end; ++v) part[size_t(v - begin)] = int32_t(v * opt.parts / n);
      return part;
    case Partitioner::metis:
    case Partitioner::ptscotch:
      break;
  }
  throw Error(std::string("baseline_parts: ") + partitioner_name(opt.method) +
              " is not computed per vertex");
}

bool overpartitioned(const PartitionOptions& opt, const std::vector<int64_t>& totals) {
  int used = 0;
  for (int64_t t : totals) used += t > 0;
  return opt.overpartition > 1 && used > 1;
}

std::vector<int32_t> deal_pieces(const std::vector<std::vector<int64_t>>& load, int parts) {
  const size_t pieces = load.empty() ? 0 : load[0].size();
  std::vector<std::vector<double>> share;  // [c][q]: the piece's share of quantity c
  for (const std::vector<int64_t>& col : load) {
    int64_t total = 0;
    for (int64_t w : col) total += w;
    if (total == 0) continue;
    std::vector<double> s(pieces);
    for (size_t q = 0; q < pieces; ++q) s[q] = double(col[q]) / double(total);
    share.push_back(std::move(s));
  }
  std::vector<size_t> order(pieces);
  std::iota(order.begin(), order.end(), size_t(0));
  auto heaviest = [&](size_t q) {
    double m = 0;
    for (const std::vector<double>& s : share) m = std::max(m, s[q]);
    return m;
  };
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return heaviest(a) > heaviest(b); });
  std::vector<std::vector<double>> held(share.size(), std::vector<double>(size_t(parts), 0.0));
  std::vector<int32_t> to(pieces, 0);
  for (size_t q : order) {
    int best = 0;
    double best_max = 0, best_sum = 0;
    for (int p = 0; p < parts; ++p) {
      double m = 0, sum = 0;
      for (size_t c = 0; c < share.size(); ++c) {
        m = std::max(m, held[c][size_t(p)] + share[c][q]);
        sum += held[c][size_t(p)];
      }
      if (p == 0 || m < best_max || (m == best_max && sum < best_sum)) {
        best = p, best_max = m, best_sum = sum;
      }
    }
    to[q] = int32_t(best);
    for (size_t c = 0; c < share.size(); ++c) held[c][size_t(best)] += share[c][q];
  }
  return to;
}

}  // namespace detail

std::vector<int32_t> partition_vertices(const Csr& g, const PartitionOptions& opt,
                                        const std::vector<int32_t>& train,
                                        const std::vector<std::vector<int64_t>>& balance) {
  const int64_t n = g.rows;
  std::vector<int32_t> part(size_t(n), 0);
  if (detail::check_partition_options(n, opt)) return part;

  switch (opt.method) {
    case Partitioner::metis:
      return metis_kway(g, opt, train, balance);
    case Partitioner::ptscotch:
      return scotch_kway(g, opt, train, balance);
    case Partitioner::random:
    case Partitioner::hash:
    case Partitioner::range:
      return detail::baseline_parts(n, 0, n, opt);
  }
  return part;
}

}  // namespace dgnn
