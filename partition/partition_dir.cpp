// Partition directories: computed once by `dgnn partition`, then each rank of a training job
// reads the manifest and its own part file only. Part files are a flat little-endian-host
// layout (magic, version, fields, arrays as count + raw bytes) closed by a checksum, so a
// truncated or damaged file is reported rather than trained on.
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>

#include "dgnn/common/bytes.hpp"
#include "dgnn/common/error.hpp"
#include "dgnn/common/hash_rng.hpp"
#include "dgnn/common/io_stats.hpp"
#include "dgnn/graph/atomic_write.hpp"
#include "dgnn/graph/input_files.hpp"
#include "dgnn/partition/partition.hpp"
#include "dgnn/comm/communicator.hpp"

namespace dgnn {

namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

constexpr char kMagic[8] = {'D', 'G', 'N', 'N', 'P', 'A', 'R', 'T'};
constexpr uint32_t kPartVersion = 2;          // 2: the partition id
constexpr uint32_t kEndianMark = 0x01020304;  // reads back swapped on a machine of other order
constexpr int kManifestVersion = 2;           // 2: the partition id
constexpr const char* kFormat = "dgnn-partition";

std::string part_file_name(int rank) { return "part-" + std::to_string(rank) + ".bin"; }

bool is_partition_file(const std::string& name) {
  static const std::regex part_re("part-[0-9]+\\.bin");
  return name == "manifest.json" || std::regex_match(name, part_re);
}

struct Closer {
  void operator()(std::FILE* f) const { std::fclose(f); }
};
using File = std::unique_ptr<std::FILE, Closer>;

std::string read_bytes(const fs::path& path, const char* what) {
  File f(std::fopen(path.c_str(), "rb"));
  if (!f) throw IoError(path.string() + ": cannot open " + what + ": " + std::strerror(errno));
  note_input(::fileno(f.get()), path.string());
  std::string out;
  char buf[1 << 16];
  size_t got;
  while ((got = std::fread(buf, 1, sizeof buf, f.get())) > 0) {
    out.append(buf, got);
    count_input_bytes(int64_t(got));
  }
  if (std::ferror(f.get())) throw IoError(path.string() + ": read error");
  return out;
}

// The part-file encoding: ByteWriter's layout followed by a checksum of everything before it.
std::string finish_with_checksum(ByteWriter& e) {
  ContentHash h;
  h.update(e.bytes().data(), e.bytes().size());
  e.scalar(h.digest());
  return e.take();
}

std::string encode(const LocalPart& lp) {
  ByteWriter e;
  for (char c : kMagic) e.scalar(c);
  e.scalar(kPartVersion);
  e.scalar(kEndianMark);
  for (int64_t v : {int64_t(lp.rank), int64_t(lp.parts), lp.global_vertices, lp.n_owned,
                    lp.feature_dim, int64_t(lp.num_classes), lp.global_train, lp.global_val,
                    lp.global_test, lp.local_in.rows, lp.local_in.cols})
    e.scalar(v);
  e.scalar(lp.partition_id);
  e.array(lp.global_ids);
  e.array(lp.original_ids);
  e.array(lp.local_in.offsets);
  e.array(lp.local_in.indices);
  e.array(lp.local_in.values);
  e.array(lp.halo_in_degree);
  e.array(lp.plan.peers);
  for (size_t i = 0; i < lp.plan.peers.size(); ++i) {
    e.array(lp.plan.send_rows[i]);
    e.array(lp.plan.recv_rows[i]);
  }
  e.array(lp.features);
  e.array(lp.labels);
  e.array(lp.train);
  e.array(lp.val);
  e.array(lp.test);
  return finish_with_checksum(e);
}

// Structure checks: a file that passes them cannot make the trainer index out of bounds.
void validate(const LocalPart& lp, const ByteReader& d) {
  const Csr& in = lp.local_in;
  auto need = [&](bool ok, const char* what) {
    if (!ok) d.fail(std::string("inconsistent part: ") + what);
  };
  // Counts first, before any arithmetic on them (a crafted count would overflow it).
  need(lp.parts >= 1 && lp.rank >= 0 && lp.rank < lp.parts, "rank and part count");
  need(lp.n_owned >= 0 && in.cols >= lp.n_owned && in.rows == lp.n_owned &&
           lp.global_vertices >= lp.n_owned,
       "row counts");
  const int64_t n_local = in.cols, n_halo = in.cols - lp.n_owned;
  need(int64_t(lp.global_ids.size()) == n_local, "global ids");
  need(int64_t(lp.original_ids.size()) == lp.n_owned, "original ids");
  need(int64_t(in.offsets.size()) == in.rows + 1 && in.offsets.front() == 0, "CSR offsets");
  need(std::is_sorted(in.offsets.begin(), in.offsets.end()), "CSR offsets");
  need(in.offsets.back() == int64_t(in.indices.size()), "CSR size");
  need(in.values.empty() || in.values.size() == in.indices.size(), "CSR values");
  for (int32_t c : in.indices) need(c >= 0 && c < n_local, "CSR column");
  for (int64_t g : lp.global_ids) need(g >= 0 && g < lp.global_vertices, "global id");
  need(int64_t(lp.halo_in_degree.size()) == n_halo, "halo degrees");
  const HaloPlan& p = lp.plan;
  need(p.send_rows.size() == p.peers.size() && p.recv_rows.size() == p.peers.size(), "plan");
  for (size_t i = 0; i < p.peers.size(); ++i) {
    need(p.peers[i] >= 0 && p.peers[i] < lp.parts && p.peers[i] != lp.rank, "plan peer");
    need(i == 0 || p.peers[i - 1] < p.peers[i], "plan peer order");
    for (int32_t r : p.send_rows[i]) need(r >= 0 && r < lp.n_owned, "plan send row");
    for (int32_t r : p.recv_rows[i]) need(r >= lp.n_owned && r < n_local, "plan receive row");
  }
  need(lp.feature_dim >= 0 &&
           __int128(lp.features.size()) == __int128(lp.n_owned) * __int128(lp.feature_dim),
       "features");
  need(lp.labels.empty() || int64_t(lp.labels.size()) == lp.n_owned, "labels");
  for (auto* s : {&lp.train, &lp.val, &lp.test})
    for (int32_t r : *s) need(r >= 0 && r < lp.n_owned, "split row");
}

LocalPart decode(const std::string& bytes, const std::string& path) {
  ByteReader d(bytes, path);
  char magic[8];
  for (char& c : magic) c = d.scalar<char>();
  if (std::memcmp(magic, kMagic, 8) != 0) d.fail("not a dgnn part file (bad magic)");
  const uint32_t version = d.scalar<uint32_t>();
  if (version != kPartVersion)
    d.fail("part file version " + std::to_string(version) + ", this dgnn reads version " +
           std::to_string(kPartVersion));
  if (d.scalar<uint32_t>() != kEndianMark) d.fail("written on a machine of other byte order");
  if (bytes.size() < 8) d.fail("truncated");
  ContentHash h;
  h.update(bytes.data(), bytes.size() - 8);
  uint64_t stored;
  std::memcpy(&stored, bytes.data() + bytes.size() - 8, 8);
  if (h.digest() != stored) d.fail("checksum mismatch (the file is damaged or truncated)");

  LocalPart lp;
  lp.rank = int(d.scalar<int64_t>());
  lp.parts = int(d.scalar<int64_t>());
  lp.global_vertices = d.scalar<int64_t>();
  lp.n_owned = d.scalar<int64_t>();
  lp.feature_dim = d.scalar<int64_t>();
  lp.num_classes = int32_t(d.scalar<int64_t>());
  lp.global_train = d.scalar<int64_t>();
  lp.global_val = d.scalar<int64_t>();
  lp.global_test = d.scalar<int64_t>();
  lp.local_in.rows = d.scalar<int64_t>();
  lp.local_in.cols = d.scalar<int64_t>();
  lp.partition_id = d.scalar<uint64_t>();
  lp.global_ids = d.array<int64_t>();
  lp.original_ids = d.array<int64_t>();
  lp.local_in.offsets = d.array<int64_t>();
  lp.local_in.indices = d.array<int32_t>();
  lp.local_in.values = d.array<float>();
  lp.halo_in_degree = d.array<int64_t>();
  lp.plan.peers = d.array<int>();
  for (size_t i = 0; i < lp.plan.peers.size(); ++i) {
    lp.plan.send_rows.push_back(d.array<int32_t>());
    lp.plan.recv_rows.push_back(d.array<int32_t>());
  }
  lp.features = d.array<float>();
  lp.labels = d.array<int32_t>();
  lp.train = d.array<int32_t>();
  lp.val = d.array<int32_t>();
  lp.test = d.array<int32_t>();
  d.scalar<uint64_t>();  // the checksum, verified above
  if (!d.at_end()) d.fail("unexpected bytes after the data");
  validate(lp, d);
  return lp;
}

// What a manifest says of the dataset.
struct DatasetShape {
  int64_t vertices = 0, edges = 0, feature_dim = 0;
  int32_t num_classes = 0;
  bool directed = false;
};

json manifest_of(const DatasetShape& d, const PartitionOptions& opt,
                 const std::string& source_hash, const PartitionQuality& q,
                 uint64_t partition_id) {
  json ranks = json::array();
  for (size_t r = 0; r < q.per_part.size(); ++r) {
    const PartQuality& p = q.per_part[r];
    ranks.push_back({{"rank", r},
                     {"file", part_file_name(int(r))},
                     {"vertices", p.vertices},
                     {"edges", p.edges},
                     {"halo", p.halo},
                     {"train", p.train}});
  }
  return {{"format", kFormat},
          {"version", kManifestVersion},
          {"source_hash", source_hash},
          {"partition_id", partition_id_hex(partition_id)},
          {"parts", opt.parts},
          {"partitioner", partitioner_name(opt.method)},
          {"seed", opt.seed},
          {"options",
           {{"imbalance", opt.imbalance},
            {"balance_edges", opt.balance_edges},
            {"balance_train", opt.balance_train},
            {"objective", metis_objective_name(opt.objective)}}},
          {"global_vertices", d.vertices},
          {"global_edges", d.edges},
          {"directed", d.directed},
          {"feature_dim", d.feature_dim},
          {"num_classes", d.num_classes},
          {"edge_cut", q.edge_cut},
          {"halo_vertices", q.halo_vertices},
          {"vertex_balance", q.vertex_balance},
          {"edge_balance", q.edge_balance},
          {"ranks", ranks}};
}

}  // namespace

uint64_t partition_assignment_id(const std::vector<int32_t>& part, int parts) {
  ContentHash h;
  const int64_t p = parts;
  h.update(&p, sizeof p);
  h.update(part.data(), part.size() * sizeof(int32_t));
  return h.digest();
}

std::string partition_id_hex(uint64_t id) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(id));
  return buf;
}

std::string encode_part(const LocalPart& part) { return encode(part); }
LocalPart decode_part(const std::string& bytes, const std::string& origin) {
  return decode(bytes, origin);
}

void write_partition_dir(const std::string& dir, const Dataset& d, const std::vector<int32_t>& part,
                         const PartitionOptions& opt, const std::string& source_hash) {
  const PartitionQuality q = partition_quality(d.graph.in, part, opt.parts, d.train);
  const uint64_t id = partition_assignment_id(part, opt.parts);
  // Each file is also written atomically (AtomicFile) inside the temporary folder: redundant
  // there, but it is the one checked whole-file write, and costs a rename per part.
  write_dir_atomically(
      dir, "partition", is_partition_file, opt.seed ^ uint64_t(opt.parts),
      [&](const std::string& tmp_dir) {
        const fs::path tmp(tmp_dir);
        for (int r = 0; r < opt.parts; ++r) {
          LocalPart lp = extract_part(d, part, opt.parts, r);
          lp.partition_id = id;
          write_file_atomically((tmp / part_file_name(r)).string(), encode(lp));
        }
        const DatasetShape shape{d.num_vertices(), d.graph.num_edges(), d.feature_dim,
                                 d.num_classes, d.graph.directed};
        write_file_atomically((tmp / "manifest.json").string(),
                              manifest_of(shape, opt, source_hash, q, id).dump(2) + "\n");
      },
      "manifest.json");  // every partition dgnn writes has one
}

PartitionQuality quality_of_parts(const LocalPart& part, Communicator& comm) {
  const int p = comm.size(), me = comm.rank();
  // Each part's in-edges from other parts are the cut, its halo rows the distinct remote sources.
  const Csr& in = part.local_in;
  int64_t cut = 0;
  for (int32_t c : in.indices) cut += c >= part.n_owned;
  std::vector<int64_t> fig(size_t(4 * p), 0);
  fig[size_t(4 * me)] = part.n_owned;
  fig[size_t(4 * me + 1)] = in.nnz();
  fig[size_t(4 * me + 2)] = in.cols - part.n_owned;
  fig[size_t(4 * me + 3)] = int64_t(part.train.size());
  comm.allreduce_sum(fig.data(), int64_t(fig.size()));
  comm.allreduce_sum(&cut, 1);
  PartitionQuality q;
  q.edge_cut = cut;
  int64_t max_v = 0, max_e = 0, sum_v = 0, sum_e = 0;
  for (int r = 0; r < p; ++r) {
    PartQuality pq{fig[size_t(4 * r)], fig[size_t(4 * r + 1)], fig[size_t(4 * r + 2)],
                   fig[size_t(4 * r + 3)]};
    q.per_part.push_back(pq);
    q.halo_vertices += pq.halo;
    max_v = std::max(max_v, pq.vertices), sum_v += pq.vertices;
    max_e = std::max(max_e, pq.edges), sum_e += pq.edges;
  }
  // As partition_quality: an empty quantity is perfectly balanced.
  q.vertex_balance = sum_v > 0 ? double(max_v) * p / double(sum_v) : 1.0;
  q.edge_balance = sum_e > 0 ? double(max_e) * p / double(sum_e) : 1.0;
  return q;
}

void write_partition_dir_sharded(const std::string& dir, LocalPart part,
                                 const PartitionOptions& opt_in, const std::string& source_hash,
                                 const ShardedPartition& whole, Communicator& comm) {
  const int p = comm.size(), me = comm.rank();
  PartitionOptions opt = opt_in;
  opt.parts = p;
  const PartitionQuality q = quality_of_parts(part, comm);
  // The partition's id: each part's owned vertices hashed, the digests hashed in rank order.
  std::vector<int64_t> digests(size_t(p), 0);
  {
    std::vector<int64_t> owned(part.global_ids.begin(), part.global_ids.begin() + part.n_owned);
    std::sort(owned.begin(), owned.end());
    ContentHash h{uint64_t(me)};
    h.update(owned.data(), owned.size() * sizeof(int64_t));
    digests[size_t(me)] = int64_t(h.digest());
    comm.allreduce_sum(digests.data(), p);
  }
  ContentHash h;
  const int64_t parts = p;
  h.update(&parts, sizeof parts);
  h.update(digests.data(), digests.size() * sizeof(int64_t));
  part.partition_id = h.digest();
  const std::string bytes = encode(part);
  // Rank 0 owns the folder's atomic replacement; inside it every rank writes its own file, and
  // a failure anywhere fails the whole write (every rank learns it before any rethrows).
  auto write_mine = [&](const std::string& tmp) {
    int64_t failed = 0;
    std::string why;
    try {
      write_file_atomically((fs::path(tmp) / part_file_name(me)).string(), bytes);
    } catch (const std::exception& e) {
      failed = 1;
      why = e.what();
    }
    comm.allreduce_sum(&failed, 1);
    if (!why.empty()) throw IoError(why);
    if (failed) throw IoError(dir + ": another rank could not write its part file");
  };
  auto share_tmp = [&](std::string tmp) {
    int64_t len = int64_t(tmp.size());
    comm.broadcast(&len, 8, 0);
    tmp.resize(size_t(len));
    comm.broadcast(tmp.data(), len, 0);
    return tmp;
  };
  if (me == 0) {
    write_dir_atomically(
        dir, "partition", is_partition_file, opt.seed ^ uint64_t(opt.parts),
        [&](const std::string& tmp_dir) {
          share_tmp(tmp_dir);
          write_mine(tmp_dir);
          write_file_atomically((fs::path(tmp_dir) / "manifest.json").string(),
                                manifest_of({whole.vertices, whole.edges, part.feature_dim,
                                             part.num_classes, whole.directed},
                                            opt, source_hash, q, part.partition_id)
                                        .dump(2) +
                                    "\n");
        },
        "manifest.json");
  } else {
    write_mine(share_tmp(""));
  }
  comm.barrier();  // the folder is in place before any rank goes on
}

LocalPart read_partition_part(const std::string& dir, int rank, int parts,
                              const std::string& expected_source_hash) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) throw IoError(dir + ": no such partition directory");
  const fs::path manifest_path = fs::path(dir) / "manifest.json";
  if (!fs::exists(manifest_path, ec))
    throw IoError(dir + ": not a partition directory (no manifest.json)");
  const std::string mpath = manifest_path.string();
  json m;
  try {
    m = json::parse(read_bytes(manifest_path, "the manifest"));
  } catch (const json::exception& e) {
    throw InputError(mpath, 0, std::string("not valid JSON: ") + e.what());
  }
  std::string format, source_hash, partition_id;
  int version = 0, made_for = 0;
  int64_t global_vertices = 0;
  try {
    format = m.at("format").get<std::string>();
    version = m.at("version").get<int>();
    source_hash = m.at("source_hash").get<std::string>();
    made_for = m.at("parts").get<int>();
    global_vertices = m.at("global_vertices").get<int64_t>();
    if (version == kManifestVersion) partition_id = m.at("partition_id").get<std::string>();
  } catch (const json::exception& e) {
    throw InputError(mpath, 0, std::string("not a dgnn partition manifest: ") + e.what());
  }
  if (format != kFormat)
    throw InputError(mpath, 0,
                     "expected format \"" + std::string(kFormat) + "\", found \"" + format + "\"");
  if (version != kManifestVersion)
    throw InputError(mpath, 0,
                     "manifest version " + std::to_string(version) + ", this dgnn reads version " +
                         std::to_string(kManifestVersion) + "; run dgnn partition again");
  if (!expected_source_hash.empty() && source_hash != expected_source_hash)
    throw OptionError(dir + " was made from a different graph (hash " + source_hash +
                      "; this job's graph and dataset options hash to " + expected_source_hash +
                      "): run dgnn partition again");
  if (made_for != parts)
    throw OptionError(dir + " was partitioned for " + std::to_string(made_for) +
                      " ranks, this job has " + std::to_string(parts));
  if (rank < 0 || rank >= parts)
    throw OptionError("rank " + std::to_string(rank) + " is outside [0, " + std::to_string(parts) +
                      ")");

  const fs::path path = fs::path(dir) / part_file_name(rank);
  if (!fs::exists(path, ec))
    throw IoError(path.string() + ": missing (the partition directory is incomplete)");
  LocalPart lp = decode(read_bytes(path, "the part file"), path.string());
  if (lp.rank != rank || lp.parts != parts || lp.global_vertices != global_vertices)
    throw InputError(path.string(), 0,
                     "holds rank " + std::to_string(lp.rank) + " of " + std::to_string(lp.parts) +
                         " (" + std::to_string(lp.global_vertices) +
                         " vertices), the manifest says rank " + std::to_string(rank) + " of " +
                         std::to_string(parts) + " (" + std::to_string(global_vertices) + ")");
  if (partition_id_hex(lp.partition_id) != partition_id)
    throw InputError(path.string(), 0,
                     "belongs to another partition (id " + partition_id_hex(lp.partition_id) +
                         ", the manifest's is " + partition_id +
                         "): the folder mixes files of two runs of dgnn partition; run it again");
  return lp;
}

}  // namespace dgnn
