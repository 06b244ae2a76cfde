// `dgnn partition`: split a dataset into per-rank parts once, print what the split costs, and
// write the partition directory that `dgnn train --partition DIR` reads rank by rank.
#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>

#include "dgnn/cli/commands.hpp"
#include "dgnn/cli/options.hpp"
#include "dgnn/comm/communicator.hpp"
#include "dgnn/common/error.hpp"
#include "dgnn/common/memory.hpp"
#include "dgnn/common/timer.hpp"
#include "dgnn/partition/dist_load.hpp"
#include "dgnn/graph/dataset.hpp"
#include "dgnn/graph/temporal.hpp"
#include "dgnn/gnn/temporal/temporal_run.hpp"
#include "dgnn/partition/dist_graph.hpp"
#include "dgnn/partition/partition.hpp"

namespace dgnn::cli {

namespace {

struct PartitionArgs {
  DatasetOptions dataset;
  SnapshotOptions snapshots;
  PartitionOptions opt;
  std::string partitioner = "metis";
  std::string objective = "cut";
  std::string out;
  bool dry_run = false;
  bool snapshot_groups_given = false;
};

double percent(int64_t part, int64_t whole) {
  return whole > 0 ? 100.0 * double(part) / double(whole) : 0.0;
}

void print_quality(int64_t n, int64_t m, const PartitionQuality& q) {
  std::printf("%-14s %lld of %lld stored edges (%.2f%%)\n", "edge cut", (long long)q.edge_cut,
              (long long)m, percent(q.edge_cut, m));
  std::printf("%-14s %lld rows exchanged per layer (%.2f%% of the vertices)\n", "halo vertices",
              (long long)q.halo_vertices, percent(q.halo_vertices, n));
  std::printf("%-14s vertices %.3f, edges %.3f (max / mean)\n", "balance", q.vertex_balance,
              q.edge_balance);
  std::printf("%6s %12s %12s %12s %12s\n", "rank", "vertices", "in-edges", "halo", "train");
  for (size_t r = 0; r < q.per_part.size(); ++r) {
    const PartQuality& p = q.per_part[r];
    std::printf("%6zu %12lld %12lld %12lld %12lld\n", r, (long long)p.vertices, (long long)p.edges,
                (long long)p.halo, (long long)p.train);
  }
}

std::string describe(const PartitionArgs& a, bool temporal, int ranks) {
  std::string how = a.partitioner + " into " + std::to_string(a.opt.parts) + " parts, seed " +
                    std::to_string(a.opt.seed);
  const bool metis = a.opt.method == Partitioner::metis;
  if (metis || a.opt.method == Partitioner::ptscotch) {
    char buf[160];
    std::snprintf(buf, sizeof buf, ", imbalance %.3f%s%s%s", a.opt.imbalance,
                  metis ? (", objective " + a.objective).c_str() : "",
                  a.opt.balance_edges ? ", +edges" : "", a.opt.balance_train ? ", +train" : "");
    how += buf;
    if (temporal)
      how += a.opt.snapshot_groups == 0
                 ? ", the union graph only"
                 : ", +" + std::to_string(a.opt.snapshot_groups) + " groups of snapshots";
    // Scotch balances one weight: the quantities above, each normalised to its total, summed.
    if (!metis && (a.opt.balance_edges || a.opt.balance_train || temporal))
      how += a.opt.overpartition > 1
                 ? " (" + std::to_string(a.opt.overpartition) + "x pieces dealt to the parts)"
                 : " (summed into one weight)";
  }
  if (ranks > 1)
    how += ", over " + std::to_string(ranks) +
           (a.opt.method == Partitioner::ptscotch ? " ranks (PT-Scotch)" : " ranks");
  return how;
}

// The partition made by the ranks of the job (`dgnn partition` under mpirun): each rank takes
// its block of `g` (every rank has read the whole graph; a parallel reader gives each only its
// block) and partition_blocks cuts the blocks as a job that holds no whole graph does (METIS:
// gathered to rank 0). `columns`: further balanced quantities over the whole graph (snapshot
// groups). Every rank gets every vertex's part. `memory`: what the choice costs per rank.
std::vector<int32_t> partition_over_ranks(const Csr& g, PartitionOptions opt,
                                          const std::vector<int32_t>& train,
                                          const std::vector<std::vector<int64_t>>& columns,
                                          Communicator& comm, std::string* memory) {
  const DistGraph block = dist_graph_block(g, comm.rank(), comm.size());
  std::vector<std::vector<int64_t>> balance;
  auto slice = [&](const std::vector<int64_t>& whole) {
    balance.emplace_back(whole.begin() + block.begin(), whole.begin() + block.end());
  };
  // partition_blocks has no training set: the training vertices are a column of their own,
  // where partition_vertices puts them (after the vertex count and in-edges).
  if (opt.balance_train && !train.empty() &&
      (opt.method == Partitioner::metis || opt.method == Partitioner::ptscotch)) {
    std::vector<int64_t> t(size_t(g.rows), 0);
    for (int32_t v : train) t[size_t(v)] = 1;
    slice(t);
  }
  opt.balance_train = false;
  for (const std::vector<int64_t>& c : columns) slice(c);
  const std::vector<int32_t> mine = partition_blocks(block, opt, comm, balance);

  const int64_t gather = metis_gather_bytes(block, comm, opt, balance.size());
  double most = double(8 * (block.adj_offsets.size() + 2 * block.adj.size()));
  comm.allreduce_max(&most, 1);
  char buf[200];
  std::snprintf(buf, sizeof buf,
                "metis gathers %.1f MB to rank 0 (and METIS's working memory); ptscotch and the "
                "others keep each rank at its block (largest %.1f MB of symmetrised rows)",
                double(gather) / 1e6, most / 1e6);
  *memory = buf;
  return allgather_parts(block, mine, comm);
}

// Under mpirun with --out and one part per rank: the temporal graph read in shards and its
// union partitioned on the blocks, as `train --parts P` does when it starts (the same parts for
// the same options), then written by rank 0 for `train --partition DIR`.
void run_temporal_sharded(PartitionArgs& a, Communicator& comm) {
  Timer timer;
  TemporalPartitionInfo info;
  const std::vector<int32_t> part = partition_temporal_sharded(
      a.dataset.graph, a.dataset.edges, a.snapshots, comm, a.opt, &info);
  const double part_s = timer.ms() / 1000;
  a.opt.snapshot_groups = snapshot_group_count(info.snapshots, a.opt);
  const double peak = double(peak_resident_bytes());
  double most = peak;
  comm.allreduce_max(&most, 1);
  if (comm.rank() != 0) return;
  timer.reset();
  write_temporal_partition_dir(a.out, part, a.opt, info);
  std::vector<int64_t> sizes(size_t(a.opt.parts), 0);
  for (int32_t p : part) ++sizes[size_t(p)];
  std::printf("%-14s %s: %lld vertices, %d snapshots, %lld edges in their union (read in shards "
              "by %d ranks)\n",
              "graph", a.dataset.graph.c_str(), (long long)info.vertices, info.snapshots,
              (long long)info.union_edges, comm.size());
  std::printf("%-14s %s (%.2f s with the read)\n", "partitioner",
              describe(a, true, comm.size()).c_str(), part_s);
  std::printf("%-14s peak %s on the largest rank (rank 0: %s)\n", "memory",
              memory_str(most).c_str(), memory_str(peak).c_str());
  std::printf("%-14s %lld of the union's %lld edges (%.2f%%); halo %lld rows\n", "edge cut",
              (long long)info.edge_cut, (long long)info.union_edges,
              percent(info.edge_cut, info.union_edges), (long long)info.halo_vertices);
  std::printf("%6s %12s\n", "rank", "vertices");
  for (size_t r = 0; r < sizes.size(); ++r)
    std::printf("%6zu %12lld\n", r, (long long)sizes[r]);
  std::printf("%-14s %s (manifest.json + parts.bin) in %.2f s\n", "wrote", a.out.c_str(),
              timer.ms() / 1000);
}

// A temporal graph: the vertex strategy's partition, and how evenly it spreads each snapshot;
// with --out, written for `train --partition DIR`.
void run_temporal(PartitionArgs& a) {
  for (auto [given, name] : {std::pair{a.opt.balance_edges, "--balance-edges"},
                             std::pair{a.opt.balance_train, "--balance-train"}})
    if (given)
      throw OptionError(std::string(name) +
                        " is for static graphs (a temporal graph balances groups of snapshots: "
                        "--snapshot-groups)");
  Communicator& comm = world();
  if (!a.dry_run && comm.size() > 1 && a.opt.parts == comm.size() &&
      can_load_temporal_sharded(a.dataset.graph, a.dataset.edges))
    return run_temporal_sharded(a, comm);
  Timer timer;
  const TemporalGraph g = load_temporal(a.dataset.graph, a.dataset.edges, a.snapshots);
  const double load_s = timer.ms() / 1000;
  if (a.opt.parts > g.num_vertices)
    throw OptionError("partition: --parts " + std::to_string(a.opt.parts) + " exceeds the " +
                      std::to_string(g.num_vertices) + " vertices of " + a.dataset.graph);
  if (a.opt.snapshot_groups < 0) a.opt.snapshot_groups = auto_snapshot_groups(g.num_snapshots());
  a.opt.snapshot_groups = std::min(a.opt.snapshot_groups, g.num_snapshots());
  std::string memory;
  timer.reset();
  const Csr u = temporal_union(g);
  std::vector<int32_t> part;
  if (comm.size() == 1) {
    part = partition_temporal(g, a.opt);
  } else {
    // What partition_temporal balances, cut by the ranks (the same parts for metis).
    const bool weighted =
        a.opt.method == Partitioner::metis || a.opt.method == Partitioner::ptscotch;
    part = partition_over_ranks(u, a.opt, {},
                                weighted && a.opt.parts > 1 ? snapshot_group_work(g, a.opt)
                                                            : std::vector<std::vector<int64_t>>{},
                                comm, &memory);
  }
  const double part_s = timer.ms() / 1000;
  if (comm.rank() != 0) return;
  const PartitionQuality q = partition_quality(u, part, a.opt.parts);
  const int64_t halo_rows = union_halo_rows(u, part);  // as the sharded job counts them
  const TemporalBalance b = temporal_balance(g, part, a.opt.parts);
  std::printf(
      "%-14s %s: %lld vertices, %d snapshots, %lld edges in their union (loaded in %.2f "
      "s)\n",
      "graph", a.dataset.graph.c_str(), (long long)g.num_vertices, g.num_snapshots(),
      (long long)u.nnz(), load_s);
  std::printf("%-14s %s (%.2f s)\n", "partitioner", describe(a, true, comm.size()).c_str(), part_s);
  if (!memory.empty()) std::printf("%-14s %s\n", "memory", memory.c_str());
  std::printf("%-14s %lld of the union's %lld edges (%.2f%%); halo %lld rows\n", "edge cut",
              (long long)q.edge_cut, (long long)u.nnz(), percent(q.edge_cut, u.nnz()),
              (long long)halo_rows);
  std::printf(
      "%-14s per snapshot, max / mean over the parts; makespan: the sum over snapshots of "
      "the most loaded part's share / the sum of the mean\n",
      "balance");
  std::printf(
      "%-14s edges %.3f, active vertices %.3f, event sources %.3f (vertices in all: "
      "%.3f)\n",
      "makespan", b.edge_makespan, b.vertex_makespan, b.event_makespan, q.vertex_balance);
  std::printf("%8s %10s %8s %10s %8s %10s %8s\n", "snapshot", "edges", "balance", "active",
              "balance", "events", "balance");
  for (size_t t = 0; t < b.snapshots.size(); ++t) {
    const TemporalBalance::Snapshot& r = b.snapshots[t];
    std::printf("%8zu %10lld %8.3f %10lld %8.3f %10lld %8.3f\n", t, (long long)r.edges,
                r.edge_balance, (long long)r.active, r.vertex_balance, (long long)r.events,
                r.event_balance);
  }
  if (a.dry_run) return;
  timer.reset();
  TemporalPartitionInfo info;
  info.vertices = g.num_vertices;
  info.union_edges = u.nnz();
  info.snapshots = g.num_snapshots();
  info.directed = g.directed;
  info.edge_cut = q.edge_cut;
  info.halo_vertices = halo_rows;
  info.vertex_ids = temporal_vertex_ids_hash(g.original_ids, g.num_vertices);
  write_temporal_partition_dir(a.out, part, a.opt, info);
  std::printf("%-14s %s (manifest.json + parts.bin) in %.2f s\n", "wrote", a.out.c_str(),
              timer.ms() / 1000);
}

// Under mpirun with --out and one part per rank: every rank reads its share of the dataset,
// the blocks are partitioned, and every rank writes its own part file (no rank holds the
// graph); rank 0 reports the quality computed from the parts and writes the manifest.
void run_sharded(PartitionArgs& a, Communicator& comm) {
  Timer timer;
  ShardedLoad info;
  LocalPart part = load_sharded_part(a.dataset, a.opt, comm, &info);
  const double load_s = timer.ms() / 1000;
  if (a.opt.balance_train && part.global_train == 0)
    throw OptionError("partition: --balance-train needs training vertices; " + a.dataset.graph +
                      " has none (give labels and a split)");
  const PartitionQuality q = quality_of_parts(part, comm);
  const std::string hash = dataset_source_hash(a.dataset, &comm);  // each rank its 1/P
  timer.reset();
  write_partition_dir_sharded(a.out, std::move(part), a.opt, hash,
                              {info.vertices, info.stored_edges, a.dataset.edges.directed}, comm);
  if (comm.rank() != 0) return;
  std::printf("%-14s %s: %lld vertices, %lld stored edges (read in shards by %d ranks and "
              "partitioned in %.2f s)\n",
              "graph", a.dataset.graph.c_str(), (long long)info.vertices,
              (long long)info.stored_edges, comm.size(), load_s);
  std::printf("%-14s %s\n", "partitioner", describe(a, false, comm.size()).c_str());
  if (info.partition_gather_bytes > 0)
    std::printf("%-14s METIS gathered the symmetrised structure on rank 0: %s\n", "memory",
                memory_str(double(info.partition_gather_bytes)).c_str());
  print_quality(info.vertices, info.stored_edges, q);
  std::printf("%-14s %s (manifest.json + %d part files, each written by its rank) in %.2f s\n",
              "wrote", a.out.c_str(), a.opt.parts, timer.ms() / 1000);
}

void run(PartitionArgs& a) {
  if (a.out.empty() && !a.dry_run)
    throw OptionError("partition: give --out DIR to write the parts, or --dry-run");
  if (!a.out.empty() && a.dry_run)
    throw OptionError("--dry-run writes nothing: drop --out " + a.out + ", or --dry-run");
  a.opt.method = parse_partitioner(a.partitioner);
  a.opt.objective = parse_metis_objective(a.objective);
  if (is_temporal_input(a.dataset.graph, a.dataset.edges, a.snapshots)) return run_temporal(a);
  if (a.snapshot_groups_given)
    throw OptionError(
        "--snapshot-groups is for temporal graphs (give the time column with "
        "--time-col)");
  // As in `dgnn train`, one --seed also seeds a random train/val/test split, so that the parts
  // hold the split a training job with that seed would make.
  a.dataset.seed = a.opt.seed;

  Timer timer;
  Communicator& comm = world();
  if (comm.size() > 1 && !a.dry_run && a.opt.parts == comm.size()) return run_sharded(a, comm);
  const Dataset d = load_dataset(a.dataset);
  const double load_s = timer.ms() / 1000;
  if (a.opt.parts > d.num_vertices())
    throw OptionError("partition: --parts " + std::to_string(a.opt.parts) + " exceeds the " +
                      std::to_string(d.num_vertices()) + " vertices of " + a.dataset.graph);
  if (a.opt.balance_train && d.train.empty())
    throw OptionError("partition: --balance-train needs training vertices; " + a.dataset.graph +
                      " has none (give labels and a split)");

  std::string memory;
  timer.reset();
  const std::vector<int32_t> part =
      comm.size() == 1 ? partition_vertices(d.graph.in, a.opt, d.train)
                       : partition_over_ranks(d.graph.in, a.opt, d.train, {}, comm, &memory);
  const double part_s = timer.ms() / 1000;
  // Under mpirun every rank has every part; rank 0 reports (and writes the directory).
  if (comm.rank() != 0) return;
  const PartitionQuality q = partition_quality(d.graph.in, part, a.opt.parts, d.train);

  const std::string how = describe(a, false, comm.size());
  std::printf("%-14s %s: %lld vertices, %lld stored edges (loaded in %.2f s)\n", "graph",
              a.dataset.graph.c_str(), (long long)d.num_vertices(), (long long)d.graph.num_edges(),
              load_s);
  std::printf("%-14s %s (%.2f s)\n", "partitioner", how.c_str(), part_s);
  if (!memory.empty()) std::printf("%-14s %s\n", "memory", memory.c_str());
  print_quality(d.num_vertices(), d.graph.num_edges(), q);
  if (a.dry_run) return;

  timer.reset();
  write_partition_dir(a.out, d, part, a.opt, dataset_source_hash(a.dataset));
  std::printf("%-14s %s (manifest.json + %d part files) in %.2f s\n", "wrote", a.out.c_str(),
              a.opt.parts, timer.ms() / 1000);
}

}  // namespace

void register_partition(CLI::App& app) {
  auto args = std::make_shared<PartitionArgs>();
  PartitionArgs& a = *args;
  CLI::App* cmd = app.add_subcommand(
      "partition",
      "Split a graph or dataset into per-rank parts, print the cut / halo / balance, and write a "
      "partition directory for `dgnn train --partition DIR`");
  cmd->add_option("--graph", a.dataset.graph,
                  "Edge-list file (.txt/.csv, optionally .gz) or dataset directory")
      ->required()
      ->check(CLI::ExistingPath);
  cmd->add_option("--parts,-p", a.opt.parts, "Number of parts (= ranks of the training job)")
      ->required()
      ->check(CLI::Range(1, 1 << 20));
  cmd->add_option("--partitioner", a.partitioner,
                  "metis (k-way, minimises the cut), ptscotch (Scotch k-way; under mpirun "
                  "PT-Scotch, with no rank holding the whole graph), random (seeded, balanced), "
                  "hash (of the vertex id) or range (contiguous id blocks)")
      ->check(CLI::IsMember({"metis", "ptscotch", "random", "hash", "range"}))
      ->capture_default_str();
  cmd->add_option("--seed,-s", a.opt.seed,
                  "Seed of the partitioner (and of a random train/val/test split, as in train)")
      ->check(non_negative())
      ->capture_default_str();
  cmd->add_option("--imbalance", a.opt.imbalance,
                  "METIS, ptscotch: allowed max / mean load of each balanced quantity")
      ->check(CLI::Range(1.0, 10.0))
      ->capture_default_str();
  cmd->add_flag("--balance-edges", a.opt.balance_edges,
                "METIS, ptscotch: also balance in-edges per part (aggregation work)");
  cmd->add_flag("--balance-train", a.opt.balance_train,
                "METIS, ptscotch: also balance training vertices per part");
  cmd->add_option("--objective", a.objective,
                  "METIS: minimise the edges cut, or the communication volume (halo rows)")
      ->check(CLI::IsMember({"cut", "volume"}))
      ->capture_default_str();
  cmd->add_option("--out,-o", a.out,
                  "Partition directory to write (an existing partition there is replaced)");
  cmd->add_flag("--dry-run", a.dry_run,
                "Print the partition's quality, write nothing (a temporal graph: how evenly "
                "each snapshot is spread)");
  cmd->add_option("--snapshot-groups", a.opt.snapshot_groups,
                  "Temporal graphs, METIS (ptscotch: summed into one weight): also balance each "
                  "of this many groups of consecutive snapshots (0: the union graph's vertices "
                  "only; default min(snapshots, 16))")
      ->check(CLI::Range(0, 1 << 20))
      ->each([args](const std::string&) { args->snapshot_groups_given = true; });
  cmd->add_option("--overpartition", a.opt.overpartition,
                  "ptscotch with several balanced quantities (snapshot groups, in-edges): cut "
                  "into parts x this many pieces, then deal the pieces to the parts so that each "
                  "quantity is balanced (1: off)")
      ->check(CLI::Range(1, 1024))
      ->capture_default_str();
  add_dataset_options(cmd, a.dataset);
  add_snapshot_options(cmd, a.snapshots);
  cmd->callback([args, cmd] {
    const bool scotch = args->partitioner == "ptscotch";
    if (!scotch && cmd->get_option("--overpartition")->count() > 0)
      throw OptionError("--overpartition is for --partitioner ptscotch (this run uses " +
                        args->partitioner + ")");
    if (args->partitioner != "metis")
      for (const char* metis_only : {"--imbalance", "--balance-edges", "--balance-train",
                                     "--objective", "--snapshot-groups"})
        if (cmd->get_option(metis_only)->count() > 0 &&
            (!scotch || std::string(metis_only) == "--objective"))
          throw OptionError(std::string(metis_only) + " is for --partitioner metis" +
                            (std::string(metis_only) == "--objective" ? "" : " or ptscotch") +
                            " (this run uses " + args->partitioner + ")");
    run(*args);
  });
}

}  // namespace dgnn::cli
