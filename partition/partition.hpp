#pragma once
// Vertex partitioning for distributed training: assign every vertex to a rank (METIS k-way or a
// baseline), measure the partition's quality, and cut a dataset into per-rank parts.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "dgnn/comm/halo_plan.hpp"
#include "dgnn/graph/dataset.hpp"
#include "dgnn/graph/temporal.hpp"

namespace dgnn {

// ptscotch: Scotch k-way (PT-Scotch over the ranks of a graph no rank holds whole,
// partition/dist_graph.hpp; sequential Scotch on a graph one process holds).
enum class Partitioner : uint8_t { metis, random, hash, range, ptscotch };
Partitioner parse_partitioner(const std::string& name);  // OptionError for unknown names
const char* partitioner_name(Partitioner p);

// What METIS minimises: edges cut, or total communication volume (for a symmetric graph, exactly
// the halo_vertices of PartitionQuality).
enum class MetisObjective : uint8_t { cut, volume };
MetisObjective parse_metis_objective(const std::string& name);  // OptionError for unknown names
const char* metis_objective_name(MetisObjective o);

struct PartitionOptions {
  Partitioner method = Partitioner::metis;
  int parts = 1;
  uint64_t seed = 0;
  double imbalance = 1.03;     // allowed max/mean load per constraint (METIS ufactor)
  bool balance_edges = false;  // second constraint: in-edges per part
  bool balance_train = false;  // another constraint: training vertices per part
  MetisObjective objective = MetisObjective::cut;
  // Temporal graphs (partition_temporal): METIS also balances each of this many groups of
  // consecutive snapshots; 0 balances the union graph's vertices only; -1 picks
  // auto_snapshot_groups.
  int snapshot_groups = -1;
  // ptscotch with more than one balanced quantity: cut into parts * overpartition pieces, then
  // deal the pieces to the parts so that every quantity is balanced (Scotch balances one
  // weight only). 1: off.
  int overpartition = 1;
  // Temporal graphs: read the parts from a directory `dgnn partition` wrote
  // (write_temporal_partition_dir) instead of computing them.
  std::string from_dir;
};

// part[v] in [0, parts) for every vertex of g (g's structure is symmetrised for METIS and
// Scotch). `train` (dense ids) is used only with balance_train. `balance`: further per-vertex
// weight columns METIS balances, one constraint each (a column of zeros is dropped); Scotch
// (ptscotch) balances one weight, the sum of every such column (vertex count, in-edges,
// training vertices, `balance`) normalised to a common total; the other partitioners balance
// vertex counts only. Deterministic given the options.
std::vector<int32_t> partition_vertices(const Csr& g, const PartitionOptions& opt,
                                        const std::vector<int32_t>& train = {},
                                        const std::vector<std::vector<int64_t>>& balance = {});

// OptionError unless `part` assigns every vertex of g to a part in [0, parts).
void check_assignment(const Csr& g, const std::vector<int32_t>& part, int parts);

struct PartQuality {
  int64_t vertices = 0, edges = 0, halo = 0;  // owned vertices, in-edges, halo vertices
  int64_t train = 0;
};
struct PartitionQuality {
  int64_t edge_cut = 0;       // stored (directed) in-edges whose endpoints are on different parts
  int64_t halo_vertices = 0;  // sum over parts of distinct remote in-neighbours: rows per layer
  double vertex_balance = 0;  // max / mean
  double edge_balance = 0;
  std::vector<PartQuality> per_part;
};
PartitionQuality partition_quality(const Csr& g, const std::vector<int32_t>& part, int parts,
                                   const std::vector<int32_t>& train = {});
// A temporal union graph's (temporal_union: each (dst, src) pair once) halo rows as
// `dgnn partition` reports them on one process and on the blocks alike: per vertex, the other
// parts among its neighbours in either direction (the parts that receive its row). partition_
// quality's count reads in-neighbours only, which on a union that holds an undirected pair once
// misses the pairs stored the other way round.
int64_t union_halo_rows(const Csr& u, const std::vector<int32_t>& part);

// One rank's share of a dataset. Local numbering: owned vertices first — those with no remote
// in-neighbour (interior) before the others (boundary) — then halo vertices.
struct LocalPart {
  int rank = 0;
  int parts = 1;
  int64_t global_vertices = 0;
  int64_t n_owned = 0;
  std::vector<int64_t> global_ids;      // dense global id per local vertex [owned | halo]
  std::vector<int64_t> original_ids;    // input-file id per owned vertex
  Csr local_in;                         // n_owned x (n_owned + n_halo)
  std::vector<int64_t> halo_in_degree;  // global in-degree per halo vertex, self loops not
                                        // counted (GCN weights)
  HaloPlan plan;
  int64_t feature_dim = 0;
  std::vector<float> features;  // n_owned x feature_dim
  std::vector<int32_t> labels;  // n_owned, -1 = unlabelled (empty: no labels)
  int32_t num_classes = 0;
  std::vector<int32_t> train, val, test;  // local row ids
  int64_t global_train = 0, global_val = 0, global_test = 0;
  // A hash of the whole assignment (every vertex's part): the parts of one partition agree, so a
  // part file copied in from another partition is found (0 when cut on the fly).
  uint64_t partition_id = 0;
};

// Cuts rank `rank`'s part out of a loaded dataset (what `train --parts P` does on the fly).
LocalPart extract_part(const Dataset& d, const std::vector<int32_t>& part, int parts, int rank);

// A partition directory: manifest.json (format version, source hash, options, quality) and one
// binary file per rank. Writes atomically (temp dir + rename).
void write_partition_dir(const std::string& dir, const Dataset& d, const std::vector<int32_t>& part,
                         const PartitionOptions& opt, const std::string& source_hash);
// The same folder written by every rank of a job from its own part (a sharded load: no rank
// holds the others'), rank 0 writing the manifest with the quality computed from the parts
// (collective; every rank must see `dir`). The partition id hashes the parts' vertex sets.
struct ShardedPartition {
  int64_t vertices = 0, edges = 0;  // global
  bool directed = false;
};
class Communicator;
// partition_quality's figures from the parts themselves (collective), for a partition no rank
// holds whole: the cut is each part's in-edges from other parts.
PartitionQuality quality_of_parts(const LocalPart& part, Communicator& comm);
void write_partition_dir_sharded(const std::string& dir, LocalPart part,
                                 const PartitionOptions& opt, const std::string& source_hash,
                                 const ShardedPartition& whole, Communicator& comm);

// A part as bytes (the part-file format) and back, to send parts between ranks. decode_part
// throws InputError naming `origin` for bytes that are not a valid part.
std::string encode_part(const LocalPart& part);
LocalPart decode_part(const std::string& bytes, const std::string& origin);

// Reads only `rank`'s file. OptionError when the directory was made for another graph (hash) or
// another rank count; InputError for a corrupt file; IoError when missing. An empty
// expected_source_hash skips the graph check.
LocalPart read_partition_part(const std::string& dir, int rank, int parts,
                              const std::string& expected_source_hash);

// A hash of a dataset's source files and parse options, so a partition directory can be matched
// to the graph it was made from: the content of each input file load_dataset would read (not its
// path or mtime: a copied dataset still matches), the options that change the graph (columns,
// direction, self-loop and duplicate policy, num_classes), and those that change the dataset
// only when they are used (generated-feature kind/dim/seed without a feature file; split
// fractions and seed for a random split). 16 hex digits. IoError for an unreadable input.
// A plain file over 1 MiB is hashed by 1 MiB blocks, the blocks' digests then in order, so that
// with `comm` (collective: every rank calls it with the same options) each rank reads only its
// 1/P of it; the value is the same on any rank count. Pipes and smaller files are read by rank 0.
class Communicator;
std::string dataset_source_hash(const DatasetOptions& opt, Communicator* comm = nullptr);

// Streaming 64-bit content hash (mix64 over 8-byte words in eight independent lanes, so it runs
// near memory speed): source hashes and part-file checksums. Chunk boundaries do not matter.
class ContentHash {
 public:
  explicit ContentHash(uint64_t seed = 0);
  void update(const void* data, size_t bytes);
  uint64_t digest() const;

 private:
  static constexpr int kLanes = 8;
  static constexpr size_t kBlock = 8 * kLanes;
  uint64_t lane_[kLanes];
  uint64_t bytes_ = 0;
  unsigned char pending_[kBlock];  // the start of a block not yet complete
};

// ---- temporal graphs: one vertex partition for every snapshot (the vertex strategy) --------

// METIS on the union of all snapshots' events, balancing the vertex count and, per group of
// consecutive snapshots (opt.snapshot_groups of about equal work), each vertex's work there: its
// in-edges plus the events it is the source of, i.e. what its owner aggregates and scores in
// those steps. One constraint alone (the union) can put a snapshot's edges all on one rank.
// ptscotch balances the same quantities summed into one weight (each normalised to its total);
// the other partitioners balance vertex counts. Deterministic given the options.
std::vector<int32_t> partition_temporal(const TemporalGraph& g, const PartitionOptions& opt);
// What partition_temporal balances beside the vertex count: per group of consecutive snapshots
// (opt.snapshot_groups, -1: auto_snapshot_groups), each vertex's work there; one column of
// num_vertices per group, none for 0 groups. OptionError for a negative count other than -1.
std::vector<std::vector<int64_t>> snapshot_group_work(const TemporalGraph& g,
                                                      const PartitionOptions& opt);
// The union of all snapshots' events as one graph, each (dst, src) pair once: what the
// partitioner cuts (and partition_quality measures).
Csr temporal_union(const TemporalGraph& g);
// The groups -1 picks: min(snapshots, 16). Measured on bitcoin-alpha and CollegeMsg at 2-8 parts
// (docs/temporal-distributed.md): 16 groups take most of the balance one per snapshot gives, with
// a smaller cut and a tenth of METIS's time.
int auto_snapshot_groups(int snapshots);
// How many groups partition_temporal balances for `snapshots` snapshots (opt.snapshot_groups;
// OptionError below -1), and each snapshot's group from every snapshot's work (consecutive
// snapshots of about equal work): snapshot_group_work's grouping, for loaders that count the work
// in blocks.
int snapshot_group_count(int snapshots, const PartitionOptions& opt);
std::vector<int> snapshot_groups_of(const std::vector<int64_t>& step, int groups);

// How evenly a partition spreads each snapshot: per part, the in-edges of owned vertices, the
// owned vertices with an edge (active), and the events they are the source of; each as max /
// mean over the parts (0 for a snapshot without any). A makespan is the sum over snapshots of the
// most loaded part's share over the sum of the mean: how much longer a run that waits for the
// slowest rank at every step takes than a perfectly balanced one.
struct TemporalBalance {
  struct Snapshot {
    int64_t edges = 0, active = 0, events = 0;
    double edge_balance = 0, vertex_balance = 0, event_balance = 0;
  };
  std::vector<Snapshot> snapshots;
  double edge_makespan = 0, vertex_makespan = 0, event_makespan = 0;
};
TemporalBalance temporal_balance(const TemporalGraph& g, const std::vector<int32_t>& part,
                                 int parts);

// What names an assignment in a partition folder's manifest: its part count and every vertex's
// part, hashed (write_partition_dir's partition id, the temporal folder's), and the 16 hex
// digits it is written as.
uint64_t partition_assignment_id(const std::vector<int32_t>& part, int parts);
std::string partition_id_hex(uint64_t id);

// A temporal graph's vertex partition written once (`dgnn partition --out DIR`), read by every
// run of `dgnn train --partition DIR` instead of partitioning again: manifest.json (format
// "dgnn-temporal-partition") and parts.bin, every vertex's part as int32 in dense id order
// (ascending input ids, as every loader numbers them). Written atomically by the caller's rank
// (one file: the parts are what every rank of a run holds anyway).
struct TemporalPartitionInfo {
  int64_t vertices = 0, union_edges = 0;  // the union graph's stored (symmetrised) edges
  int snapshots = 0;
  bool directed = false;
  int64_t edge_cut = 0, halo_vertices = 0;  // of the union graph
  uint64_t vertex_ids = 0;                  // temporal_vertex_ids_hash of the graph
};
// What names a graph's vertex set: a hash of every vertex's input id in dense order (ascending;
// TemporalGraph::original_ids, empty meaning 0..vertices-1). Parts are valid for any graph with
// the same vertices (other edges, times or snapshot options only change how good they are).
uint64_t temporal_vertex_ids_hash(const std::vector<int64_t>& original_ids, int64_t vertices);
void write_temporal_partition_dir(const std::string& dir, const std::vector<int32_t>& part,
                                  const PartitionOptions& opt, const TemporalPartitionInfo& info);
// Every vertex's part for a graph of `vertices` vertices named by `original_ids` (as
// temporal_vertex_ids_hash takes them). With `comm` (collective) each rank reads 1/P of
// parts.bin and the pieces are gathered; without it the whole file is read. OptionError when the
// directory was made for another rank count (`parts`) or another vertex set; InputError for a
// damaged file (size, a part outside [0, parts), or parts whose hash is not the manifest's);
// IoError when missing.
class Communicator;
std::vector<int32_t> read_temporal_partition(const std::string& dir, int64_t vertices,
                                             const std::vector<int64_t>& original_ids, int parts,
                                             Communicator* comm);


}  // namespace dgnn
