// Reading a temporal edge list in shards equals rank 0's whole read: on every rank,
// load_temporal_sharded gives exactly what load_temporal_vertex_shares gives from load_temporal
// on rank 0, and load_temporal_steps_sharded (the snapshot strategy's read) what
// load_temporal_on_ranks gives (every step's events, the needed steps' whole snapshots) (the same part, ids, events, shares as base + differences, snapshot entry counts), on
// the shipped bitcoin-alpha and CollegeMsg (gzipped: dealt by rank 0 in chunks; and plain: byte
// ranges) and on an awkward generated file: empty buckets, a vertex with no edge (a folder's
// vertex count), comments, CRLF, duplicates, self loops, sparse ids, tiny chunks, and ranks whose
// byte range holds no line. Under PT-Scotch, whose parts on the blocks differ from sequential
// Scotch's on rank 0, the shares are compared with rank 0's for the sharded read's own parts.
#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>

#include "dgnn/comm/communicator.hpp"
#include "dgnn/gnn/temporal/temporal_run.hpp"
#include "dgnn/graph/dataset.hpp"
#include "dgnn/graph/npy.hpp"
#include "dgnn/partition/dist_graph.hpp"
#include "dgnn/partition/dist_read.hpp"

using namespace dgnn;
namespace fs = std::filesystem;

namespace {

void check_csr(const Csr& a, const Csr& b) {
  CHECK(a.rows == b.rows);
  CHECK(a.cols == b.cols);
  CHECK(a.offsets == b.offsets);
  CHECK(a.indices == b.indices);
  CHECK(a.values == b.values);
}

// The two reads' vertices, direction, weights and entry counts.
void check_same_meta(const LoadedTemporal& a, const LoadedTemporal& b) {
  CHECK(a.nnz == b.nnz);
  const TemporalGraph &x = a.g, &y = b.g;
  REQUIRE(x.num_vertices == y.num_vertices);
  CHECK(x.directed == y.directed);
  CHECK(x.weighted == y.weighted);
  CHECK(x.original_ids == y.original_ids);
}

void check_same(const LoadedTemporal& a, const LoadedTemporal& b) {
  CHECK(a.part == b.part);
  check_same_meta(a, b);
  const TemporalGraph &x = a.g, &y = b.g;
  REQUIRE(x.events.size() == y.events.size());
  for (size_t t = 0; t < x.events.size(); ++t) {
    INFO("events of snapshot " << t);
    CHECK(x.events[t].src == y.events[t].src);
    CHECK(x.events[t].dst == y.events[t].dst);
    CHECK(x.events[t].weight == y.events[t].weight);
    CHECK(x.events[t].ordinals() == y.events[t].ordinals());
    REQUIRE(x.events[t].sharded() == y.events[t].sharded());
    if (x.events[t].sharded()) {
      CHECK(x.events[t].whole->events == y.events[t].whole->events);
      CHECK(x.events[t].whole->targets == y.events[t].whole->targets);
      CHECK(x.events[t].whole->negative_targets == y.events[t].whole->negative_targets);
      CHECK(x.events[t].whole->negative_weights == y.events[t].whole->negative_weights);
      CHECK(x.events[t].whole->distinct == y.events[t].whole->distinct);
    }
    CHECK(x.events[t].start_time == y.events[t].start_time);
    CHECK(x.events[t].end_time == y.events[t].end_time);
  }
  check_csr(x.base, y.base);
  REQUIRE(x.diffs.size() == y.diffs.size());
  for (size_t t = 0; t < x.diffs.size(); ++t) {
    INFO("difference " << t);
    const SnapshotDiff &d = x.diffs[t], &e = y.diffs[t];
    CHECK(d.add_src == e.add_src);
    CHECK(d.add_dst == e.add_dst);
    CHECK(d.add_weight == e.add_weight);
    CHECK(d.del_src == e.del_src);
    CHECK(d.del_dst == e.del_dst);
    REQUIRE(d.whole.has_value() == e.whole.has_value());
    if (d.whole) check_csr(*d.whole, *e.whole);
  }
  CHECK(x.num_snapshots() == y.num_snapshots());
}

// Rank 0's read, shares cut from the whole snapshots for the partition `part`.
LoadedTemporal rank0_shares_for(const std::function<TemporalGraph()>& read,
                                const std::vector<int32_t>& part, Communicator& comm) {
  LoadedTemporal out;
  if (comm.rank() == 0) out.g = read();
  broadcast_temporal_meta(out.g, out.nnz, comm, out.moves);
  out.part = part;
  move_vertex_shares(out.g, out.part, comm, out.moves);
  shard_events(out.g, out.part, comm);
  return out;
}

int64_t cases = 0;

// The snapshot strategy's read by steps (load_temporal_steps_sharded) against rank 0's read and
// moves (load_temporal_on_ranks) for the same need: step s to rank s % P, and the first and last
// steps to the last rank too (a step several ranks hold, and a rank holding steps far apart).
void check_steps_against_rank0(const std::string& path, const EdgeListOptions& eo,
                               const SnapshotOptions& snap, Communicator& comm) {
  const int p = comm.size();
  int steps = -1;
  const auto make_need = [&](const LoadedTemporal& m) {
    steps = m.g.num_snapshots();
    return std::function<bool(int, int)>([p, t = steps](int r, int s) {
      return s % p == r || ((s == 0 || s == t - 1) && r == p - 1);
    });
  };
  // The events of step s kept whole where s % P == rank (shares with the counts elsewhere).
  const auto keep = [p](int r, int s) { return s % p == r; };
  const LoadedTemporal mine = load_temporal_steps_sharded(path, eo, snap, comm, make_need, keep);
  CHECK(mine.sharded);
  CHECK(mine.g.base.rows == 0);  // no rank holds the graph's own snapshots
  CHECK(mine.g.diffs.empty());
  const LoadedTemporal want =
      load_temporal_on_ranks([&] { return load_temporal(path, eo, snap); }, comm, make_need);
  check_same_meta(mine, want);
  const TemporalGraph &x = mine.g, &y = want.g;
  REQUIRE(x.num_snapshots() == y.num_snapshots());
  for (int t = 0; t < x.num_snapshots(); ++t) {
    INFO("step " << t);
    const SnapshotEvents &a = x.events[size_t(t)], &b = y.events[size_t(t)];
    CHECK(a.start_time == b.start_time);
    CHECK(a.end_time == b.end_time);
    if (keep(comm.rank(), t)) {
      CHECK_FALSE(a.sharded());
      CHECK(a.src == b.src);
      CHECK(a.dst == b.dst);
      CHECK(a.weight == b.weight);
    } else {
      // A share holding none of the step, with its counts: as shard_events counts them.
      REQUIRE(a.sharded());
      CHECK(a.src.empty());
      int64_t c[5] = {0, 0, 0, 0, 0};
      for (size_t i = 0; i < b.src.size(); ++i) {
        const int32_t u = b.src[i], v = b.dst[i];
        const bool negative = !b.weight.empty() && b.weight[i] < 0;
        ++c[0];
        c[3] += negative;
        if (u == v) continue;
        ++c[1];
        c[2] += negative;
        bool reverse = false;
        for (size_t j = 0; j < b.src.size() && !reverse; ++j) reverse = b.src[j] == v && b.dst[j] == u;
        c[4] += y.directed || u < v || !reverse;
      }
      CHECK(a.whole->events == c[0]);
      CHECK(a.whole->targets == c[1]);
      CHECK(a.whole->negative_targets == c[2]);
      CHECK(a.whole->negative_weights == c[3]);
      CHECK(a.whole->distinct == c[4]);
    }
    REQUIRE(mine.held.size() == size_t(x.num_snapshots()));
    const bool needed = t % p == comm.rank() || ((t == 0 || t == steps - 1) && comm.rank() == p - 1);
    if (!needed) {
      CHECK(mine.held[size_t(t)].rows == 0);
      continue;
    }
    // Rank 0's read keeps its whole graph there and returns no `held`.
    check_csr(mine.held[size_t(t)], comm.rank() == 0 ? y.snapshot(t) : want.held[size_t(t)]);
  }
}

void check_against_rank0(const std::string& path, const EdgeListOptions& eo,
                         const SnapshotOptions& snap, Partitioner method, Communicator& comm) {
  PartitionOptions popt;
  popt.method = method;
  popt.seed = 5;
  const LoadedTemporal mine = load_temporal_sharded(path, eo, snap, comm, popt);
  CHECK(mine.sharded);
  const auto read = [&] { return load_temporal(path, eo, snap); };
  if (method == Partitioner::ptscotch) {
    check_same(mine, rank0_shares_for(read, mine.part, comm));
  } else {
    check_same(mine, load_temporal_vertex_shares(read, comm, popt));
  }
  ++cases;
  // The read by steps does not partition: once per input (METIS's call, or the chunked ones).
  if (method == Partitioner::metis || std::getenv("DGNN_CHUNK_BYTES"))
    check_steps_against_rank0(path, eo, snap, comm);
}

// A scratch folder every rank sees, written by rank 0.
std::string scratch(Communicator& comm, const std::string& name) {
  const std::string dir = (fs::temp_directory_path() /
                           ("dgnn_temporal_load_" + std::to_string(::getppid()) + "_" + name))
                              .string();
  if (comm.rank() == 0) {
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  comm.barrier();
  return dir;
}

void write(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

struct ChunkSize {
  explicit ChunkSize(const char* v) { ::setenv("DGNN_CHUNK_BYTES", v, 1); }
  ~ChunkSize() { ::unsetenv("DGNN_CHUNK_BYTES"); }
};

std::vector<Partitioner> partitioners() {
  std::vector<Partitioner> m{Partitioner::metis, Partitioner::hash};
  if (have_parallel_partitioner()) m.push_back(Partitioner::ptscotch);
  return m;
}

// The shipped graph gzipped, and a plain copy in a scratch folder.
std::vector<std::string> both_forms(const std::string& gz, const std::string& name,
                                    Communicator& comm) {
  const std::string dir = scratch(comm, name);
  const std::string plain = dir + "/" + name + ".txt";
  if (comm.rank() == 0) {
    const std::string cmd = "gzip -dc " + gz + " > " + plain;
    REQUIRE(std::system(cmd.c_str()) == 0);
  }
  comm.barrier();
  return {gz, plain};
}

}  // namespace

TEST_CASE("a temporal read in shards equals rank 0's: bitcoin-alpha", "[temporal_load]") {
  Communicator& comm = world();
  const std::string gz =
      std::string(DGNN_SOURCE_DIR) + "/datasets/bitcoin-alpha/soc-sign-bitcoinalpha.csv.gz";
  EdgeListOptions eo;
  eo.time_col = 3;
  eo.weight_col = 2;
  eo.use_cache = false;
  SnapshotOptions snap;
  snap.seconds = 1200000;
  for (const std::string& path : both_forms(gz, "bitcoin", comm)) {
    for (Partitioner m : partitioners()) {
      INFO(path << " " << partitioner_name(m));
      check_against_rank0(path, eo, snap, m, comm);
    }
    // The other modes and directions, on METIS.
    SnapshotOptions s = snap;
    s.mode = SnapshotMode::sliding;
    s.window = 3;
    eo.directed = true;
    check_against_rank0(path, eo, s, Partitioner::metis, comm);
    s.mode = SnapshotMode::cumulative;
    s.window = 1;
    eo.directed = false;
    check_against_rank0(path, eo, s, Partitioner::metis, comm);
  }
  ChunkSize small("65536");  // the .gz dealt in many chunks
  check_against_rank0(gz, eo, snap, Partitioner::metis, comm);
}

TEST_CASE("a temporal read in shards equals rank 0's: CollegeMsg", "[temporal_load]") {
  Communicator& comm = world();
  const std::string gz = std::string(DGNN_SOURCE_DIR) + "/datasets/collegemsg/CollegeMsg.txt.gz";
  EdgeListOptions eo;
  eo.time_col = 2;
  eo.use_cache = false;
  SnapshotOptions snap;
  snap.seconds = 190080;
  for (const std::string& path : both_forms(gz, "collegemsg", comm))
    for (Partitioner m : partitioners()) {
      INFO(path << " " << partitioner_name(m));
      check_against_rank0(path, eo, snap, m, comm);
    }
  eo.directed = true;
  snap = SnapshotOptions{};
  snap.count = 40;  // equal buckets
  check_against_rank0(gz, eo, snap, Partitioner::metis, comm);
}

TEST_CASE("a temporal read in shards equals rank 0's: awkward files", "[temporal_load]") {
  Communicator& comm = world();
  const std::string dir = scratch(comm, "awkward");
  // A long first comment (the first ranks' byte ranges hold no line), a header, CRLF, '%'
  // comments, sparse ids, duplicates within a bucket (weights summed in file order), self loops,
  // times with empty buckets between them (bucket 100 s: times 0..99, then 500..).
  const std::string edges = "# " + std::string(300, 'x') +
                            "\nsrc dst w t\r\n"
                            "1000000007 3 0.5 10\n3 1000000007 1.5 12\n3 3 2 15\n42 3 1 20\n"
                            "42 3 0.25 30\n% a comment\n\n42 3 0.125 35\n5 42 1 510\n"
                            "5 1000000007 3 520\n1000000007 5 1 530\r\n3 5 2 940\n42 42 1 950\n"
                            "5 3 0.5 960\n5 3 0.75 961\n3 5 1 1200\n7 9 1 1210\n";
  if (comm.rank() == 0) {
    write(dir + "/edges.txt", edges);
    const std::string cmd = "gzip -c " + dir + "/edges.txt > " + dir + "/edges.txt.gz";
    REQUIRE(std::system(cmd.c_str()) == 0);
    // A folder whose vertex count names vertices without an edge (0..44 but 3, 5, 7, 9, 42).
    fs::create_directories(dir + "/folder");
    write(dir + "/folder/edges.txt", edges);
    write(dir + "/folder/snapshots.txt", "time-col 3\nsnapshot-seconds 100\nvertices 45\n");
  }
  comm.barrier();
  EdgeListOptions eo;
  eo.time_col = 3;
  eo.weight_col = 2;
  eo.use_cache = false;
  for (const char* chunk : {"", "16", "64"}) {
    std::unique_ptr<ChunkSize> small;
    if (*chunk) small = std::make_unique<ChunkSize>(chunk);
    for (const std::string g : {"edges.txt", "edges.txt.gz"})
      for (bool directed : {false, true})
        for (SelfLoops loops : {SelfLoops::remove, SelfLoops::keep})
          for (SnapshotMode mode :
               {SnapshotMode::window, SnapshotMode::cumulative, SnapshotMode::sliding}) {
            INFO(g << " directed " << directed << " loops " << int(loops) << " mode " << int(mode)
                   << " chunk '" << chunk << "'");
            EdgeListOptions o = eo;
            o.directed = directed;
            o.self_loops = loops;
            SnapshotOptions snap;
            snap.seconds = 100;
            snap.mode = mode;
            snap.window = mode == SnapshotMode::sliding ? 2 : 1;
            check_against_rank0(dir + "/" + g, o, snap, Partitioner::hash, comm);
            if (*chunk == 0) check_against_rank0(dir + "/" + g, o, snap, Partitioner::metis, comm);
          }
  }
  // The folder: its columns and bucket length, and vertices without an edge.
  EdgeListOptions fo;
  fo.weight_col = 2;
  fo.use_cache = false;
  for (Partitioner m : partitioners()) {
    INFO("folder " << partitioner_name(m));
    check_against_rank0(dir + "/folder", fo, SnapshotOptions{}, m, comm);
  }
  // Equal buckets over the times, unweighted.
  EdgeListOptions u;
  u.time_col = 3;
  u.use_cache = false;
  SnapshotOptions count;
  count.count = 7;
  check_against_rank0(dir + "/edges.txt", u, count, Partitioner::metis, comm);
  INFO("cases compared on this rank: " << cases);
  CHECK(cases > 80);
}

TEST_CASE("vertex feature rows in shards equal the whole file's, and its errors are the job's",
          "[temporal_load]") {
  Communicator& comm = world();
  const int p = comm.size(), me = comm.rank();
  const std::string dir = scratch(comm, "feature_rows");
  // 50 vertices with sparse ids; rows in a shuffled order, a comment and a blank line.
  std::vector<int64_t> ids;
  for (int64_t i = 0; i < 50; ++i) ids.push_back(4 * i + (i % 3));  // ascending, gaps
  const int64_t dim = 3;
  auto value = [](int64_t id, int64_t k) { return float(id) * 0.5f + float(k) * 0.25f - 7.0f; };
  auto line_of = [&](int64_t id) {
    std::string s = std::to_string(id);
    for (int64_t k = 0; k < dim; ++k) s += " " + std::to_string(value(id, k));
    return s + "\n";
  };
  std::vector<int64_t> order(ids);
  for (size_t i = 0; i < order.size(); ++i) std::swap(order[i], order[(i * 17 + 5) % order.size()]);
  std::string text = "# vertex f1 f2 f3\n\n";
  for (int64_t id : order) text += line_of(id);
  // The .npy: row i = vertex id i (every id up to the largest).
  std::vector<float> npy(size_t((ids.back() + 1) * dim), 0.f);
  for (int64_t id : ids)
    for (int64_t k = 0; k < dim; ++k) npy[size_t(id * dim + k)] = value(id, k);
  if (me == 0) {
    write(dir + "/f.txt", text);
    write_npy(dir + "/f.npy", npy.data(), ids.back() + 1, dim);
    REQUIRE(std::system(("gzip -c " + dir + "/f.npy > " + dir + "/f.npy.gz").c_str()) == 0);
    write(dir + "/dup.txt", text + line_of(ids[7]));
    write(dir + "/unknown.txt", text + "2 1 2 3\n");
    write(dir + "/missing.txt", text.substr(0, text.rfind('\n', text.size() - 2) + 1));
    // A row of another width late in the file, and a first row of another width than the rest;
    // a second row of a vertex before a row of a vertex in no edge; a bad value.
    write(dir + "/wide.txt", text + line_of(999).substr(0, line_of(999).size() - 1) + " 1\n");
    write(dir + "/wide_first.txt", "1 2 3 4 5\n" + text);
    std::string twice = text;
    twice.insert(twice.find('\n', 30) + 1, line_of(ids[3]));
    write(dir + "/twice_then_unknown.txt", twice + "2 1 2 3\n");
    write(dir + "/nan.txt", text + "7 1 nan 2\n");
  }
  comm.barrier();
  // This rank's vertices: every p-th dense id (not a block), and none at all on the last rank
  // when there are more than two.
  std::vector<int64_t> rows;
  for (int64_t v = me; v < int64_t(ids.size()); v += p)
    if (!(p > 2 && me == p - 1)) rows.push_back(v);
  for (const char* name : {"f.txt", "f.npy", "f.npy.gz"}) {
    INFO(name);
    for (const char* chunk : {"", "40"}) {
      std::unique_ptr<ChunkSize> small;
      if (*chunk) small = std::make_unique<ChunkSize>(chunk);
      int64_t got_dim = 0;
      const std::vector<float> got =
          dist_read::vertex_feature_rows(dir + "/" + name, ids, rows, comm, &got_dim);
      CHECK(got_dim == dim);
      REQUIRE(got.size() == rows.size() * size_t(dim));
      for (size_t i = 0; i < rows.size(); ++i)
        for (int64_t k = 0; k < dim; ++k)
          CHECK(got[i * size_t(dim) + size_t(k)] == value(ids[size_t(rows[i])], k));
    }
  }
  // The error read_vertex_features gives one process, word for word, one line for the job,
  // whole and in small chunks.
  for (const char* name : {"dup.txt", "unknown.txt", "missing.txt", "wide.txt", "wide_first.txt",
                           "twice_then_unknown.txt", "nan.txt"})
    for (const char* chunk : {"", "40"}) {
      INFO(name << " chunk '" << chunk << "'");
      std::unique_ptr<ChunkSize> small;
      if (*chunk) small = std::make_unique<ChunkSize>(chunk);
      std::string want;
      int64_t d = 0;
      try {
        (void)read_vertex_features(dir + "/" + name, ids, &d);
      } catch (const InputError& e) {
        want = e.what();
      }
      REQUIRE(!want.empty());
      CHECK_THROWS_WITH(dist_read::vertex_feature_rows(dir + "/" + name, ids, rows, comm, &d),
                        want);
    }
}

TEST_CASE("vertex labels read in shares land on rank 0 as one process reads them",
          "[temporal_load]") {
  Communicator& comm = world();
  const std::string dir = scratch(comm, "labels");
  std::vector<int64_t> ids;
  for (int64_t i = 0; i < 40; ++i) ids.push_back(5 * i + (i % 2));
  std::string text = "# vertex label\n";
  for (size_t i = 0; i < ids.size(); ++i)
    if (i % 7 != 3)  // some vertices have no line, some -1
      text += std::to_string(ids[(i * 11) % ids.size()]) + " " +
              (i % 5 == 0 ? std::string("-1") : std::to_string(i % 4)) + "\n";
  if (comm.rank() == 0) {
    write(dir + "/l.txt", text);
    REQUIRE(std::system(("gzip -c " + dir + "/l.txt > " + dir + "/l.txt.gz").c_str()) == 0);
    write(dir + "/dup.txt", text + "# again\n" + text.substr(text.find('\n') + 1, 8));
    write(dir + "/unknown.txt", text + "3 1\n");
  }
  comm.barrier();
  for (const char* name : {"l.txt", "l.txt.gz"})
    for (const char* chunk : {"", "24"}) {
      INFO(name << " chunk '" << chunk << "'");
      std::unique_ptr<ChunkSize> small;
      if (*chunk) small = std::make_unique<ChunkSize>(chunk);
      for (int32_t given : {0, 6}) {
        int32_t classes = -1, want_classes = -1;
        const std::vector<int32_t> got =
            dist_read::vertex_labels_on_root(dir + "/" + name, ids, given, comm, &classes);
        const std::vector<int32_t> want =
            read_vertex_labels(dir + "/" + name, ids, given, &want_classes);
        CHECK(classes == want_classes);
        if (comm.rank() == 0)
          CHECK(got == want);
        else
          CHECK(got.empty());
      }
    }
  for (const char* name : {"dup.txt", "unknown.txt"}) {
    INFO(name);
    int32_t c = 0;
    std::string want;
    try {
      (void)read_vertex_labels(dir + "/" + name, ids, 0, &c);
    } catch (const InputError& e) {
      want = e.what();
    }
    REQUIRE(!want.empty());
    CHECK_THROWS_WITH(dist_read::vertex_labels_on_root(dir + "/" + name, ids, 0, comm, &c), want);
  }
}
