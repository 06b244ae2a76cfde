// A temporal graph's partition directory: the vertex strategy's parts, computed once by
// `dgnn partition` (PT-Scotch over the ranks of a job, or METIS) and read by every training run
// with `--partition DIR`, so that a run pays neither the partitioner's time nor its memory.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "dgnn/comm/collectives.hpp"
#include "dgnn/comm/communicator.hpp"
#include "dgnn/common/error.hpp"
#include "dgnn/common/io_stats.hpp"
#include "dgnn/graph/atomic_write.hpp"
#include "dgnn/graph/graph.hpp"
#include "dgnn/graph/input_files.hpp"
#include "dgnn/partition/partition.hpp"

namespace dgnn {

namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

constexpr const char* kFormat = "dgnn-temporal-partition";
constexpr int kVersion = 1;
constexpr const char* kParts = "parts.bin";
// parts.bin: this header, then one int32 per vertex.
constexpr char kMagic[8] = {'D', 'G', 'N', 'N', 'T', 'P', 'R', 'T'};
constexpr uint32_t kEndianMark = 0x01020304;
struct Header {
  char magic[8];
  uint32_t version;
  uint32_t endian;
  int64_t vertices;
  int32_t parts;
  int32_t unused;
};
static_assert(sizeof(Header) == 32);

bool is_ours(const std::string& name) { return name == "manifest.json" || name == kParts; }

struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

json read_manifest(const std::string& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) throw IoError(dir + ": no such partition directory");
  const fs::path path = fs::path(dir) / "manifest.json";
  if (!fs::exists(path, ec)) throw IoError(dir + ": not a partition directory (no manifest.json)");
  try {
    return json::parse(read_file(path.string()));  // noted and counted as input
  } catch (const json::exception& e) {
    throw InputError(path.string(), 0, std::string("not valid JSON: ") + e.what());
  }
}

}  // namespace

uint64_t temporal_vertex_ids_hash(const std::vector<int64_t>& original_ids, int64_t vertices) {
  ContentHash h(0x7465'6d70'6964'7331ULL);
  h.update(&vertices, sizeof vertices);
  if (!original_ids.empty()) {
    DGNN_CHECK(int64_t(original_ids.size()) == vertices, ShapeError,
               "temporal_vertex_ids_hash: one id per vertex, or none");
    h.update(original_ids.data(), original_ids.size() * sizeof(int64_t));
  }
  return h.digest();
}

void write_temporal_partition_dir(const std::string& dir, const std::vector<int32_t>& part,
                                  const PartitionOptions& opt, const TemporalPartitionInfo& info) {
  DGNN_CHECK(int64_t(part.size()) == info.vertices, ShapeError,
             "write_temporal_partition_dir: need one part per vertex");
  std::vector<int64_t> sizes(size_t(opt.parts), 0);
  for (int32_t p : part) {
    DGNN_CHECK(p >= 0 && p < opt.parts, ShapeError,
               "write_temporal_partition_dir: a part outside [0, parts)");
    ++sizes[size_t(p)];
  }
  Header h{};
  std::memcpy(h.magic, kMagic, sizeof kMagic);
  h.version = kVersion;
  h.endian = kEndianMark;
  h.vertices = info.vertices;
  h.parts = opt.parts;
  std::string bytes(sizeof h + part.size() * sizeof(int32_t), '\0');
  std::memcpy(bytes.data(), &h, sizeof h);
  std::memcpy(bytes.data() + sizeof h, part.data(), part.size() * sizeof(int32_t));
  json ranks = json::array();
  for (int r = 0; r < opt.parts; ++r) ranks.push_back({{"rank", r}, {"vertices", sizes[size_t(r)]}});
  const json manifest = {{"format", kFormat},
                         {"version", kVersion},
                         {"vertex_ids_hash", partition_id_hex(info.vertex_ids)},
                         {"partition_id",
                          partition_id_hex(partition_assignment_id(part, opt.parts))},
                         {"parts", opt.parts},
                         {"partitioner", partitioner_name(opt.method)},
                         {"seed", opt.seed},
                         {"imbalance", opt.imbalance},
                         {"snapshot_groups", opt.snapshot_groups},
                         {"overpartition", opt.overpartition},
                         {"vertices", info.vertices},
                         {"snapshots", info.snapshots},
                         {"directed", info.directed},
                         {"union_edges", info.union_edges},
                         {"edge_cut", info.edge_cut},
                         {"halo_vertices", info.halo_vertices},
                         {"ranks", ranks}};
  write_dir_atomically(
      dir, "partition", is_ours, opt.seed ^ uint64_t(opt.parts),
      [&](const std::string& tmp) {
        write_file_atomically((fs::path(tmp) / kParts).string(), bytes);
        write_file_atomically((fs::path(tmp) / "manifest.json").string(),
                              manifest.dump(2) + "\n");
      },
      "manifest.json");
}

std::vector<int32_t> read_temporal_partition(const std::string& dir, int64_t vertices,
                                             const std::vector<int64_t>& original_ids, int parts,
                                             Communicator* comm) {
  const std::string mpath = (fs::path(dir) / "manifest.json").string();
  const json m = read_manifest(dir);
  std::string format, ids_hash, id;
  int version = 0, made_for = 0;
  int64_t made_vertices = 0;
  try {
    format = m.at("format").get<std::string>();
    if (format == kFormat) {
      version = m.at("version").get<int>();
      ids_hash = m.at("vertex_ids_hash").get<std::string>();
      id = m.at("partition_id").get<std::string>();
      made_for = m.at("parts").get<int>();
      made_vertices = m.at("vertices").get<int64_t>();
    }
  } catch (const json::exception& e) {
    throw InputError(mpath, 0, std::string("not a dgnn partition manifest: ") + e.what());
  }
  if (format != kFormat)
    throw OptionError("--partition " + dir + " holds a partition of a static graph (" + format +
                      "); partition the temporal graph: dgnn partition --graph ... --out DIR");
  if (version != kVersion)
    throw InputError(mpath, 0,
                     "version " + std::to_string(version) + ", this dgnn reads version " +
                         std::to_string(kVersion) + "; run dgnn partition again");
  if (made_for != parts)
    throw OptionError("--partition " + dir + " was partitioned for " + std::to_string(made_for) +
                      " ranks, this job has " + std::to_string(parts));
  if (made_vertices != vertices)
    throw OptionError("--partition " + dir + " assigns " + std::to_string(made_vertices) +
                      " vertices, this graph has " + std::to_string(vertices) +
                      ": run dgnn partition again");
  if (const std::string mine =
          partition_id_hex(temporal_vertex_ids_hash(original_ids, vertices));
      mine != ids_hash)
    throw OptionError("--partition " + dir + " was made for another graph's vertices (their ids " +
                      "hash to " + ids_hash + ", this graph's to " + mine +
                      "): run dgnn partition again");

  const fs::path path = fs::path(dir) / kParts;
  const std::string where = path.string();
  Fd f;
  f.fd = ::open(path.c_str(), O_RDONLY);
  if (f.fd < 0)
    throw IoError(where + ": cannot open (the partition directory is incomplete): " +
                  std::strerror(errno));
  note_input(f.fd, where);
  auto read_at = [&](void* dst, size_t bytes, int64_t at) {
    char* out = static_cast<char*>(dst);
    while (bytes > 0) {
      const ssize_t got = ::pread(f.fd, out, bytes, off_t(at));
      if (got < 0 && errno == EINTR) continue;
      if (got < 0) throw IoError(where + ": read error: " + std::strerror(errno));
      if (got == 0) throw InputError(where, 0, "truncated: shorter than its header says");
      count_input_bytes(int64_t(got));
      out += got, bytes -= size_t(got), at += got;
    }
  };
  struct stat st {};
  if (::fstat(f.fd, &st) != 0) throw IoError(where + ": " + std::strerror(errno));
  const int64_t expect = int64_t(sizeof(Header)) + vertices * int64_t(sizeof(int32_t));
  if (int64_t(st.st_size) != expect)
    throw InputError(where, 0,
                     std::to_string(st.st_size) + " bytes; " + std::to_string(vertices) +
                         " vertices take " + std::to_string(expect) + ": damaged or truncated");
  Header h{};
  read_at(&h, sizeof h, 0);
  if (std::memcmp(h.magic, kMagic, sizeof kMagic) != 0)
    throw InputError(where, 0, "not a dgnn temporal parts file");
  if (h.endian != kEndianMark)
    throw InputError(where, 0, "written on a machine of the other byte order");
  if (h.version != uint32_t(kVersion) || h.vertices != vertices || h.parts != parts)
    throw InputError(where, 0,
                     "its header (" + std::to_string(h.vertices) + " vertices, " +
                         std::to_string(h.parts) + " parts) disagrees with the manifest");
  // Each rank its 1/P of the rows, then every rank all of them.
  const int p = comm ? comm->size() : 1, me = comm ? comm->rank() : 0;
  const int64_t begin = vertices * me / p, end = vertices * (me + 1) / p;
  std::vector<int32_t> mine(size_t(end - begin));
  if (!mine.empty())
    read_at(mine.data(), mine.size() * sizeof(int32_t),
            int64_t(sizeof(Header)) + begin * int64_t(sizeof(int32_t)));
  std::vector<int32_t> part = comm ? allgather_records(mine, *comm) : std::move(mine);
  for (int64_t v = 0; v < vertices; ++v)
    if (part[size_t(v)] < 0 || part[size_t(v)] >= parts)
      throw InputError(where, 0,
                       "vertex " + std::to_string(v) + " in part " +
                           std::to_string(part[size_t(v)]) + ", outside [0, " +
                           std::to_string(parts) + ")");
  if (const std::string got = partition_id_hex(partition_assignment_id(part, parts)); got != id)
    throw InputError(where, 0,
                     "its parts hash to " + got +
                         ", the manifest's are " + id + ": damaged, or from another run");
  return part;
}

}  // namespace dgnn
