// Vertex partitioners: METIS k-way on the symmetrised structure, and the seeded random, hash and
// range baselines that scaling studies compare it against.
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

namespace dgnn {

Partitioner parse_partitioner(const std::string& name) {
  for (Partitioner p :
       {Partitioner::metis, Partitioner::random, Partitioner::hash, Partitioner::range})
    if (name == partitioner_name(p)) return p;
  throw OptionError("unknown partitioner '" + name + "' (expected metis, random, hash or range)");
}

const char* partitioner_name(Partitioner p) {
  switch (p) {
    case Partitioner::metis:
      return "metis";
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

// METIS wants an undirected graph without self loops: row v = the union of v's in- and
// out-neighbours. adjwgt counts the stored directed edges between the pair (1 or 2), so that the
// cut METIS minimises is exactly the edge_cut partition_quality reports.
struct MetisGraph {
  std::vector<idx_t> xadj, adjncy, adjwgt;
};

MetisGraph symmetrise(const Csr& g) {
  const Csr t = g.transpose();  // row u = out-neighbours of u; rows of both are sorted
  const int64_t n = g.rows;
  MetisGraph m;
  m.xadj.assign(size_t(n) + 1, 0);
  m.adjncy.reserve(size_t(g.nnz()) * 2);
  m.adjwgt.reserve(size_t(g.nnz()) * 2);
  constexpr int64_t kMaxIdx = std::numeric_limits<idx_t>::max();
  for (int64_t v = 0; v < n; ++v) {
    int64_t a = g.offsets[v], a_end = g.offsets[v + 1];
    int64_t b = t.offsets[v], b_end = t.offsets[v + 1];
    // Merge of two sorted lists; equal neighbours (duplicates, reciprocal edges) add up.
    while (a < a_end || b < b_end) {
      int32_t u;
      if (b >= b_end || (a < a_end && g.indices[a] <= t.indices[b])) {
        u = g.indices[a++];
      } else {
        u = t.indices[b++];
      }
      if (u == v) continue;
      if (!m.adjncy.empty() && int64_t(m.adjncy.size()) > m.xadj[v] && m.adjncy.back() == u) {
        ++m.adjwgt.back();
      } else {
        m.adjncy.push_back(idx_t(u));
        m.adjwgt.push_back(1);
      }
    }
    if (int64_t(m.adjncy.size()) > kMaxIdx)
      throw OptionError(
          "METIS (32-bit indices in this build) cannot take more than 2^31 symmetrised edges; "
          "use the random, hash or range partitioner");
    m.xadj[v + 1] = idx_t(m.adjncy.size());
  }
  return m;
}

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

std::vector<int32_t> metis_kway(const Csr& g, const PartitionOptions& opt,
                                const std::vector<int32_t>& train,
                                const std::vector<std::vector<int64_t>>& extra) {
  const int64_t n = g.rows;
  if (n > std::numeric_limits<idx_t>::max())
    throw OptionError("METIS (32-bit indices in this build) cannot take " + std::to_string(n) +
                      " vertices; use the random, hash or range partitioner");
  MetisGraph m = symmetrise(g);

  // Constraint columns: vertex count, then in-degree, then training vertices. A column whose
  // total is zero balances trivially and makes METIS divide by zero, so it is left out.
  std::vector<std::vector<idx_t>> columns;
  columns.emplace_back(size_t(n), 1);
  if (opt.balance_edges && g.nnz() > 0) {
    std::vector<idx_t> c(static_cast<size_t>(n));
    for (int64_t v = 0; v < n; ++v) c[v] = idx_t(g.degree(v));
    columns.push_back(std::move(c));
  }
  if (opt.balance_train && !train.empty()) {
    std::vector<idx_t> c(size_t(n), 0);
    for (int32_t v : train) {
      if (v < 0 || v >= n)
        throw OptionError("training vertex " + std::to_string(v) + " is not a vertex of the graph");
      c[v] = 1;
    }
    columns.push_back(std::move(c));
  }
  // Further columns the caller balances (e.g. each group of snapshots' edges), scaled so that
  // a column's total fits METIS's 32-bit sums.
  for (const std::vector<int64_t>& col : extra) {
    if (int64_t(col.size()) != n)
      throw ShapeError("partition: a balance column has " + std::to_string(col.size()) +
                       " weights for " + std::to_string(n) + " vertices");
    int64_t total = 0;
    for (int64_t w : col) {
      if (w < 0) throw ShapeError("partition: a negative balance weight");
      total += w;
    }
    if (total == 0) continue;
    const int64_t scale = total / (int64_t(1) << 30) + 1;
    std::vector<idx_t> c(static_cast<size_t>(n));
    for (int64_t v = 0; v < n; ++v) c[size_t(v)] = idx_t(col[size_t(v)] / scale);
    columns.push_back(std::move(c));
  }
  idx_t ncon = idx_t(columns.size());
  std::vector<idx_t> vwgt(size_t(n) * columns.size());
  for (int64_t v = 0; v < n; ++v)
    for (size_t k = 0; k < columns.size(); ++k)
      vwgt[size_t(v) * columns.size() + k] = columns[k][v];

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
  if (m.adjncy.empty()) {
    for (int64_t v = 0; v < n; ++v) part[v] = idx_t(v * opt.parts / n);
  } else {
    // METIS traps SIGTERM (and SIGABRT) while it runs and turns it into METIS_ERROR: held back
    // until it returns, a stop signal reaches the program's own handler instead.
    sigset_t stop, before;
    sigemptyset(&stop);
    for (int sig : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&stop, sig);
    pthread_sigmask(SIG_BLOCK, &stop, &before);
    const int status = METIS_PartGraphKway(&nvtxs, &ncon, m.xadj.data(), m.adjncy.data(),
                                           vwgt.data(), nullptr, m.adjwgt.data(), &nparts, nullptr,
                                           nullptr, options, &objval, part.data());
    pthread_sigmask(SIG_SETMASK, &before, nullptr);
    if (status != METIS_OK)
      throw Error(std::string(metis_status(status)) + " partitioning " + std::to_string(n) +
                  " vertices into " + std::to_string(opt.parts) + " parts");
  }
  return std::vector<int32_t>(part.begin(), part.end());
}

}  // namespace

std::vector<int32_t> partition_vertices(const Csr& g, const PartitionOptions& opt,
                                        const std::vector<int32_t>& train,
                                        const std::vector<std::vector<int64_t>>& balance) {
  const int64_t n = g.rows;
  if (opt.parts < 1)
    throw OptionError("the number of parts must be >= 1, got " + std::to_string(opt.parts));
  if (n > 0 && opt.parts > n)
    throw OptionError("cannot split " + std::to_string(n) + " vertices into " +
                      std::to_string(opt.parts) + " non-empty parts");
  if (!(opt.imbalance >= 1.0) || opt.imbalance > 10.0)
    throw OptionError("imbalance is max/mean load and must be in [1, 10], got " +
                      std::to_string(opt.imbalance));
  std::vector<int32_t> part(size_t(n), 0);
  if (opt.parts == 1 || n == 0) return part;

  switch (opt.method) {
    case Partitioner::metis:
      return metis_kway(g, opt, train, balance);
    case Partitioner::random: {
      // A shuffle then round-robin: parts differ in size by at most one vertex.
      std::vector<int32_t> order(static_cast<size_t>(n));
      std::iota(order.begin(), order.end(), 0);
      Rng rng(hash_combine(opt.seed, 0x7061727469746e));  // "partitn": its own stream
      for (size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[rng.below(i)]);
      for (int64_t i = 0; i < n; ++i) part[order[i]] = int32_t(i % opt.parts);
      return part;
    }
    case Partitioner::hash:
      // Keyed by the vertex id alone, so any rank can compute any vertex's owner.
      for (int64_t v = 0; v < n; ++v) part[v] = int32_t(mix64(uint64_t(v)) % uint64_t(opt.parts));
      return part;
    case Partitioner::range:
      for (int64_t v = 0; v < n; ++v) part[v] = int32_t(v * opt.parts / n);
      return part;
  }
  return part;
}

}  // namespace dgnn
