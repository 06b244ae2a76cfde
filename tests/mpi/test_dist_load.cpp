// Sharded loading equals loading on one process and cutting: on every rank, load_sharded_part
// gives exactly extract_part(load_dataset(opt), partition, P, rank) for the partition it made
// (gathered from the parts' owned vertices), on the shipped Cora (gzipped: dealt in chunks), a
// generated SBM in plain files (byte ranges, a .npy read by rows), and awkward files: a header,
// comments, CRLF, duplicates, self loops, sparse ids, weights, text features, a labelled vertex
// without edges, split files, tiny chunks, and ranks whose byte range holds no line.
#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "../small_sbm.hpp"
#include "dgnn/comm/communicator.hpp"
#include "dgnn/common/error.hpp"
#include "dgnn/common/io_stats.hpp"
#include "dgnn/graph/npy.hpp"
#include "dgnn/partition/dist_load.hpp"

using namespace dgnn;
namespace fs = std::filesystem;

namespace {

// The partition the sharded load made, as one vector on every rank.
std::vector<int32_t> gathered_partition(const LocalPart& lp, Communicator& comm) {
  std::vector<int64_t> part(size_t(lp.global_vertices), 0);
  for (int64_t i = 0; i < lp.n_owned; ++i) part[size_t(lp.global_ids[size_t(i)])] = comm.rank();
  comm.allreduce_sum(part.data(), int64_t(part.size()));
  return {part.begin(), part.end()};
}

void check_same(const LocalPart& a, const LocalPart& b) {
  CHECK(a.global_vertices == b.global_vertices);
  CHECK(a.n_owned == b.n_owned);
  CHECK(a.global_ids == b.global_ids);
  CHECK(a.original_ids == b.original_ids);
  CHECK(a.local_in.rows == b.local_in.rows);
  CHECK(a.local_in.cols == b.local_in.cols);
  CHECK(a.local_in.offsets == b.local_in.offsets);
  CHECK(a.local_in.indices == b.local_in.indices);
  CHECK(a.local_in.values == b.local_in.values);
  CHECK(a.halo_in_degree == b.halo_in_degree);
  CHECK(a.plan.peers == b.plan.peers);
  CHECK(a.plan.send_rows == b.plan.send_rows);
  CHECK(a.plan.recv_rows == b.plan.recv_rows);
  CHECK(a.feature_dim == b.feature_dim);
  CHECK(a.features == b.features);
  CHECK(a.labels == b.labels);
  CHECK(a.num_classes == b.num_classes);
  CHECK(a.train == b.train);
  CHECK(a.val == b.val);
  CHECK(a.test == b.test);
  CHECK(a.global_train == b.global_train);
  CHECK(a.global_val == b.global_val);
  CHECK(a.global_test == b.global_test);
}

void check_against_one_process(const DatasetOptions& opt, Partitioner method,
                               Communicator& comm) {
  PartitionOptions popt;
  popt.method = method;
  popt.seed = 5;
  ShardedLoad info;
  const LocalPart mine = load_sharded_part(opt, popt, comm, &info);
  const std::vector<int32_t> part = gathered_partition(mine, comm);
  const Dataset whole = load_dataset(opt);
  CHECK(info.vertices == whole.num_vertices());
  CHECK(info.stored_edges == whole.graph.num_edges());
  const LocalPart ref = extract_part(whole, part, comm.size(), comm.rank());
  check_same(mine, ref);
}

// A scratch folder every rank sees, written by rank 0.
std::string scratch(Communicator& comm, const std::string& name) {
  const std::string dir =
      (fs::temp_directory_path() / ("dgnn_dist_load_" + std::to_string(::getppid()) + "_" + name))
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

}  // namespace

TEST_CASE("sharded loading equals one process: the shipped Cora, gzipped", "[dist_load]") {
  Communicator& comm = world();
  DatasetOptions opt;
  opt.graph = std::string(DGNN_SOURCE_DIR) + "/datasets/cora";
  for (Partitioner m : {Partitioner::metis, Partitioner::ptscotch, Partitioner::hash}) {
    INFO(partitioner_name(m));
    check_against_one_process(opt, m, comm);
    ChunkSize small("4096");  // many chunks, dealt round-robin
    check_against_one_process(opt, m, comm);
  }
}

TEST_CASE("sharded loading equals one process: an SBM in plain files, random split",
          "[dist_load]") {
  Communicator& comm = world();
  const std::string dir = scratch(comm, "sbm");
  if (comm.rank() == 0) {
    const Dataset d = test::small_sbm(700, 4);
    std::string edges = "# generated\n";
    for (int64_t v = 0; v < d.num_vertices(); ++v)
      for (int64_t e = d.graph.in.offsets[size_t(v)]; e < d.graph.in.offsets[size_t(v) + 1]; ++e)
        if (d.graph.in.indices[size_t(e)] < v)
          edges += std::to_string(d.graph.in.indices[size_t(e)]) + " " + std::to_string(v) + "\n";
    write(dir + "/edges.txt", edges);
    write_npy(dir + "/features.npy", d.features.data(), d.num_vertices(), d.feature_dim);
    std::string labels;
    for (int64_t v = 0; v < d.num_vertices(); ++v)
      labels += std::to_string(v) + " " + std::to_string(d.labels[size_t(v)]) + "\n";
    write(dir + "/labels.txt", labels);
  }
  comm.barrier();
  DatasetOptions opt;
  opt.graph = dir;
  opt.seed = 9;
  for (Partitioner m :
       {Partitioner::metis, Partitioner::ptscotch, Partitioner::range, Partitioner::random}) {
    INFO(partitioner_name(m));
    check_against_one_process(opt, m, comm);
  }
  opt.generated = GeneratedFeatures::degree;
  opt.features = "";
  DatasetOptions gen = opt;
  gen.graph = dir + "/edges.txt";
  gen.labels = dir + "/labels.txt";
  for (GeneratedFeatures g : {GeneratedFeatures::degree, GeneratedFeatures::random}) {
    gen.generated = g;
    check_against_one_process(gen, Partitioner::metis, comm);
  }
}

TEST_CASE("sharded loading equals one process: awkward files", "[dist_load]") {
  Communicator& comm = world();
  const std::string dir = scratch(comm, "awkward");
  // Sparse ids, a header, comments, CRLF, duplicates (weights summed), self loops, and a vertex
  // (7) that only the labels name.
  const std::string edges =
      "src dst w\r\n% a comment\n1000000007 3 0.5\n3 1000000007 1.5\n3 3 2\n42 3 1\n42 3 0.25\n"
      "\n# more\n5 42 1\n5 1000000007 3\n1000000007 5 1\n3 5 2\n42 42 1\n5 3 0.5\n";
  const std::string labels = "# vertex label\n3 0\n5 1\n42 0\n1000000007 1\n7 1\n";
  const std::string feats =
      "3 1 0\n5 0 1\n42 0.5 0.5\n1000000007 1 1\n7 -1 2\n";
  if (comm.rank() == 0) {
    write(dir + "/edges.txt", edges);
    write(dir + "/labels.txt", labels);
    write(dir + "/feats.txt", feats);
    write(dir + "/train.txt", "3\n1000000007\n");
    write(dir + "/val.txt", "5\n");
    write(dir + "/test.txt", "42\n7\n");
    // The same edges gzipped, to be dealt in chunks.
    const std::string cmd = "gzip -c " + dir + "/edges.txt > " + dir + "/edges.txt.gz";
    REQUIRE(std::system(cmd.c_str()) == 0);
  }
  comm.barrier();
  DatasetOptions opt;
  opt.graph = dir + "/edges.txt";
  opt.labels = dir + "/labels.txt";
  opt.features = dir + "/feats.txt";
  opt.train = dir + "/train.txt";
  opt.val = dir + "/val.txt";
  opt.test = dir + "/test.txt";
  opt.edges.weight_col = 2;
  for (const char* chunk : {"", "16", "40"}) {
    std::unique_ptr<ChunkSize> small;
    if (*chunk) small = std::make_unique<ChunkSize>(chunk);
    for (const std::string g : {"edges.txt", "edges.txt.gz"})
      for (bool directed : {false, true})
        for (SelfLoops loops : {SelfLoops::remove, SelfLoops::keep})
          for (Duplicates dup : {Duplicates::merge, Duplicates::keep}) {
            INFO(g << " directed " << directed << " chunk '" << chunk << "'");
            opt.graph = dir + "/" + g;
            opt.edges.directed = directed;
            opt.edges.self_loops = loops;
            opt.edges.duplicates = dup;
            opt.edges.use_cache = false;
            check_against_one_process(opt, Partitioner::hash, comm);
          }
  }
}

TEST_CASE("a bad .npy header read by every rank is one error of the job", "[dist_load]") {
  // Every rank reads a plain .npy's header; what is wrong with it must be raised alike on every
  // rank (AgreedError: rank 0 alone prints it), not once per rank.
  Communicator& comm = world();
  const std::string dir = scratch(comm, "bad_npy");
  if (comm.rank() == 0) {
    write(dir + "/edges.txt", "0 1\n1 2\n2 3\n3 0\n");
    write(dir + "/labels.txt", "0 0\n1 1\n2 0\n3 1\n");
    const std::vector<float> x(8, 1.0f);
    write_npy(dir + "/good.npy", x.data(), 4, 2);
    std::ifstream f(dir + "/good.npy", std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    write(dir + "/cut.npy", bytes.substr(0, 40));  // the header cut short
  }
  comm.barrier();
  DatasetOptions opt;
  opt.graph = dir + "/edges.txt";
  opt.labels = dir + "/labels.txt";
  opt.features = dir + "/cut.npy";
  std::string message;
  try {
    load_sharded_part(opt, PartitionOptions{}, comm);
  } catch (const AgreedError& e) {
    message = e.what();
  }
  CHECK(message == dir + "/cut.npy: truncated .npy header");
  opt.features = dir + "/good.npy";  // the same folder loads once the header is whole
  CHECK(load_sharded_part(opt, PartitionOptions{}, comm).global_vertices == 4);
  comm.barrier();
  if (comm.rank() == 0) fs::remove_all(dir);
}

TEST_CASE("a partition folder written by every rank from its shard reads back as the same parts",
          "[dist_load]") {
  Communicator& comm = world();
  const std::string dir = scratch(comm, "parts");
  DatasetOptions opt;
  opt.graph = std::string(DGNN_SOURCE_DIR) + "/datasets/cora";
  PartitionOptions popt;
  ShardedLoad info;
  const LocalPart mine = load_sharded_part(opt, popt, comm, &info);
  write_partition_dir_sharded(dir + "/p", mine, popt, "abc", {info.vertices, info.stored_edges, false},
                              comm);
  const LocalPart back = read_partition_part(dir + "/p", comm.rank(), comm.size(), "abc");
  check_same(back, mine);
  CHECK(back.partition_id != 0);
  // The manifest's quality is partition_quality's on the whole graph.
  const Dataset whole = load_dataset(opt);
  const PartitionQuality q =
      partition_quality(whole.graph.in, gathered_partition(mine, comm), comm.size(), whole.train);
  std::ifstream f(dir + "/p/manifest.json");
  const std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  CHECK(text.find("\"edge_cut\": " + std::to_string(q.edge_cut)) != std::string::npos);
  CHECK(text.find("\"halo_vertices\": " + std::to_string(q.halo_vertices)) != std::string::npos);
  comm.barrier();
  if (comm.rank() == 0) fs::remove_all(dir);
}

TEST_CASE("the source hash is the same on any rank count, each rank reading 1/P of large files",
          "[dist_load]") {
  Communicator& comm = world();
  const std::string dir = scratch(comm, "hash");
  if (comm.rank() == 0) {  // a 5.3 MB edge list (hashed by blocks) and a small label file
    std::string text;
    for (int i = 0; i < 400000; ++i) text += std::to_string(i % 9973) + " " + std::to_string(i % 7919) + "\n";
    write(dir + "/edges.txt", text);
    write(dir + "/labels.txt", "0 1\n1 0\n");
  }
  comm.barrier();
  DatasetOptions opt;
  opt.graph = dir;
  const std::string one = dataset_source_hash(opt);  // every rank alone, reading it whole
  const int64_t before = input_bytes_read();
  const std::string shared = dataset_source_hash(opt, &comm);
  const int64_t read = input_bytes_read() - before;
  CHECK(shared == one);
  const int64_t size = int64_t(fs::file_size(dir + "/edges.txt"));
  CHECK(read <= size / comm.size() + (int64_t(1) << 20) + (comm.rank() == 0 ? 16 : 0));
  // A file that changes changes the hash; an unreadable one is one error on every rank.
  comm.barrier();
  if (comm.rank() == 0) write(dir + "/labels.txt", "0 1\n1 1\n");
  comm.barrier();
  CHECK(dataset_source_hash(opt, &comm) != shared);
  comm.barrier();
  if (comm.rank() == 0) fs::permissions(dir + "/edges.txt", fs::perms::none);
  comm.barrier();
  if (::geteuid() != 0) CHECK_THROWS(dataset_source_hash(opt, &comm));  // root reads anyway
  comm.barrier();
  if (comm.rank() == 0) fs::remove_all(dir);
}

TEST_CASE("sharded loading equals one process: the OGB layout, gzipped", "[dist_load]") {
  // OGB's node-property layout as ogbn-* unpack: comma-separated gzipped tables, features and
  // labels one row per vertex without ids ("nan" unlabelled), the vertex count in its own file.
  // Vertex 59 is in no edge (only its rows name it), 13 and 40 are unlabelled.
  Communicator& comm = world();
  const std::string dir = scratch(comm, "ogb");
  std::string edges, feat, label, train, valid, test;
  for (int v = 0; v < 59; ++v) {
    edges += std::to_string(v) + "," + std::to_string((v + 1) % 59) + "\n";
    edges += std::to_string(v) + "," + std::to_string((v * 7 + 3) % 59) + "\n";
  }
  for (int v = 0; v < 60; ++v) {
    feat += std::to_string(v % 3) + ".5," + std::to_string(v % 2) + "," + std::to_string(v) + "\n";
    label += (v == 13 || v == 40 ? std::string("nan") : std::to_string(v % 3)) + "\n";
    if (v == 13 || v == 40) continue;
    (v % 5 == 0 ? valid : v % 5 == 1 ? test : train) += std::to_string(v) + "\n";
  }
  auto gz = [&](const std::string& path, const std::string& text) {
    write(path, text);
    REQUIRE(std::system(("gzip -f " + path).c_str()) == 0);
  };
  if (comm.rank() == 0) {
    for (const char* sub : {"/full", "/rows"}) {
      fs::create_directories(dir + sub + "/raw");
      fs::create_directories(dir + sub + "/split/random");
      gz(dir + sub + "/raw/edge.csv", edges);
      gz(dir + sub + "/raw/node-feat.csv", feat);
      gz(dir + sub + "/raw/node-label.csv", label);
      gz(dir + sub + "/split/random/train.csv", train);
      gz(dir + sub + "/split/random/valid.csv", valid);
      gz(dir + sub + "/split/random/test.csv", test);
    }
    gz(dir + "/full/raw/num-node-list.csv", "60\n");  // "rows": bounded by the feature rows
  }
  comm.barrier();
  DatasetOptions opt;
  opt.edges.use_cache = false;
  for (const char* sub : {"/full", "/rows"})
    for (const char* chunk : {"", "64"}) {
      INFO(sub << " chunk '" << chunk << "'");
      std::unique_ptr<ChunkSize> small;
      if (*chunk) small = std::make_unique<ChunkSize>(chunk);
      opt.graph = dir + sub;
      check_against_one_process(opt, Partitioner::hash, comm);
      check_against_one_process(opt, Partitioner::metis, comm);
    }
  // Damaged: a label row short, a feature row extra, an edge past the count; each is the one
  // process's error, one line for the job.
  const std::pair<std::string, std::string> bad[] = {
      {"labels", "has 59 rows, expected one per vertex (60, the rows of"},
      // Without the count: the label rows are checked before the unnamed feature rows, as
      // load_dataset checks them (vertex 59 is in no edge and now no label row either).
      {"labels_rows", "has 59 rows, expected one per vertex (60, the rows of"},
      {"features", "is 61 x 3, expected 60 x 3: one row per vertex"},
      {"edges", "expected vertex ids below 60 (the rows of"}};
  for (const auto& [what, message] : bad) {
    INFO(what);
    const std::string d = dir + "/bad_" + what;
    if (comm.rank() == 0) {
      fs::copy(dir + (what == "labels_rows" ? "/rows" : "/full"), d, fs::copy_options::recursive);
      if (what == "labels" || what == "labels_rows") {
        fs::remove(d + "/raw/node-label.csv.gz");
        gz(d + "/raw/node-label.csv", label.substr(0, label.size() - 2));
      } else if (what == "features") {
        fs::remove(d + "/raw/node-feat.csv.gz");
        gz(d + "/raw/node-feat.csv", feat + "1,2,3\n");
      } else {
        fs::remove(d + "/raw/edge.csv.gz");
        gz(d + "/raw/edge.csv", edges + "3,77\n");
      }
    }
    comm.barrier();
    opt.graph = d;
    CHECK_THROWS_WITH(load_sharded_part(opt, PartitionOptions{}, comm), Catch::Contains(message));
    CHECK_THROWS_WITH(load_dataset(opt), Catch::Contains(message));
  }
}
