#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "dgnn/common/error.hpp"
#include "dgnn/datasets/sbm.hpp"
#include "dgnn/partition/partition.hpp"
#include "../graph/temp_files.hpp"

using namespace dgnn;
using dgnn::test::error_of;
using dgnn::test::TempDir;
namespace fs = std::filesystem;

namespace {

SbmDataset small_sbm(uint64_t seed = 9) {
  SbmConfig c;
  c.vertices = 600;
  c.classes = 3;
  c.avg_degree = 6;
  c.feature_dim = 4;
  c.seed = seed;
  return generate_sbm(c);
}

void check_same(const LocalPart& a, const LocalPart& b) {
  CHECK(a.rank == b.rank);
  CHECK(a.parts == b.parts);
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

struct Written {
  Dataset d;
  std::vector<int32_t> part;
  PartitionOptions opt;
};

Written write_parts(const std::string& dir, int parts, const std::string& hash = "00ff") {
  Written w{small_sbm().to_dataset(), {}, {}};
  w.opt.parts = parts;
  w.opt.seed = 4;
  w.part = partition_vertices(w.d.graph.in, w.opt);
  write_partition_dir(dir, w.d, w.part, w.opt, hash);
  return w;
}

}  // namespace

TEST_CASE("a partition directory reads back what extract_part cuts") {
  TempDir t;
  const std::string dir = t.path("parts");
  const Written w = write_parts(dir, 3);
  for (int r = 0; r < 3; ++r) {
    INFO("rank " << r);
    check_same(read_partition_part(dir, r, 3, "00ff"), extract_part(w.d, w.part, 3, r));
  }
  // An empty expected hash skips the graph check.
  CHECK(read_partition_part(dir, 1, 3, "").rank == 1);

  std::ifstream f(dir + "/manifest.json");
  const nlohmann::json m = nlohmann::json::parse(f);
  const PartitionQuality q = partition_quality(w.d.graph.in, w.part, 3, w.d.train);
  CHECK(m["parts"] == 3);
  CHECK(m["partitioner"] == "metis");
  CHECK(m["seed"] == 4);
  CHECK(m["source_hash"] == "00ff");
  CHECK(m["edge_cut"] == q.edge_cut);
  CHECK(m["halo_vertices"] == q.halo_vertices);
  CHECK(m["vertex_balance"].get<double>() == Approx(q.vertex_balance));
  CHECK(m["edge_balance"].get<double>() == Approx(q.edge_balance));
  CHECK(m["global_vertices"] == 600);
  CHECK(m["feature_dim"] == 4);
  CHECK(m["num_classes"] == 3);
  REQUIRE(m["ranks"].size() == 3);
  for (int r = 0; r < 3; ++r) {
    CHECK(m["ranks"][r]["vertices"] == q.per_part[r].vertices);
    CHECK(m["ranks"][r]["edges"] == q.per_part[r].edges);
    CHECK(m["ranks"][r]["halo"] == q.per_part[r].halo);
  }
}

TEST_CASE("a partition directory made for another graph or rank count is refused") {
  TempDir t;
  const std::string dir = t.path("parts");
  write_parts(dir, 3, "abc123");
  const std::string hash = error_of<OptionError>([&] { read_partition_part(dir, 0, 3, "def456"); });
  CHECK_THAT(hash, Catch::Contains("was made from a different graph (hash abc123"));
  CHECK(error_of<OptionError>([&] { read_partition_part(dir, 0, 2, "abc123"); }) ==
        dir + " was partitioned for 3 ranks, this job has 2");
}

TEST_CASE("corrupt, truncated and missing partition files are reported") {
  TempDir t;
  const std::string dir = t.path("parts");
  write_parts(dir, 2);
  const std::string file = dir + "/part-1.bin";
  const auto size = fs::file_size(file);

  SECTION("a flipped byte") {
    std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(std::streamoff(size / 2));
    char c;
    f.read(&c, 1);
    f.seekp(std::streamoff(size / 2));
    c = char(c ^ 0x5a);
    f.write(&c, 1);
    f.close();
    CHECK_THAT(error_of<InputError>([&] { read_partition_part(dir, 1, 2, "00ff"); }),
               Catch::Contains(file) && Catch::Contains("checksum"));
    CHECK(read_partition_part(dir, 0, 2, "00ff").rank == 0);  // the other rank is unaffected
  }
  SECTION("a truncated file") {
    fs::resize_file(file, size - 100);
    CHECK_THAT(error_of<InputError>([&] { read_partition_part(dir, 1, 2, "00ff"); }),
               Catch::Contains(file));
  }
  SECTION("not a part file") {
    t.write("parts/part-1.bin", "hello");
    CHECK_THROWS_AS(read_partition_part(dir, 1, 2, "00ff"), InputError);
  }
  SECTION("a missing part file") {
    fs::remove(file);
    CHECK_THAT(error_of<IoError>([&] { read_partition_part(dir, 1, 2, "00ff"); }),
               Catch::Contains(file));
  }
  SECTION("a damaged manifest") {
    t.write("parts/manifest.json", "{\"format\": \"dgnn-partition\", ");
    CHECK_THAT(error_of<InputError>([&] { read_partition_part(dir, 1, 2, "00ff"); }),
               Catch::Contains("manifest.json"));
  }
  SECTION("a part file of another partition of the same graph") {
    TempDir other;
    Written w{small_sbm().to_dataset(), {}, {}};
    w.opt.parts = 2;
    w.opt.method = Partitioner::random;
    w.part = partition_vertices(w.d.graph.in, w.opt);
    write_partition_dir(other.path("parts"), w.d, w.part, w.opt, "00ff");
    fs::copy_file(other.path("parts/part-1.bin"), file, fs::copy_options::overwrite_existing);
    CHECK_THAT(error_of<InputError>([&] { read_partition_part(dir, 1, 2, "00ff"); }),
               Catch::Contains(file) && Catch::Contains("belongs to another partition"));
  }
  SECTION("a missing directory or manifest") {
    CHECK_THROWS_AS(read_partition_part(t.path("nothing"), 0, 2, "00ff"), IoError);
    fs::remove(dir + "/manifest.json");
    CHECK_THROWS_AS(read_partition_part(dir, 0, 2, "00ff"), IoError);
  }
}

TEST_CASE("writing replaces an old partition but never a folder with other files") {
  TempDir t;
  const std::string dir = t.path("parts");
  write_parts(dir, 4);
  write_parts(dir, 2);  // fewer ranks: the old part-2/3 files must be gone
  CHECK(!fs::exists(dir + "/part-2.bin"));
  CHECK(read_partition_part(dir, 1, 2, "00ff").parts == 2);
  for (const auto& e : fs::directory_iterator(t.dir()))
    CHECK(e.path().filename().string() == "parts");  // no temp folder left behind

  t.write("mine/notes.txt", "keep me");
  CHECK_THAT(error_of<IoError>([&] { write_parts(t.path("mine"), 2); }),
             Catch::Contains("notes.txt"));
  CHECK(fs::exists(t.path("mine/notes.txt")));
  CHECK(!fs::exists(t.path("mine/manifest.json")));
}

TEST_CASE("the source hash follows file contents and parse options, not paths or times") {
  TempDir t;
  small_sbm().write_dataset_dir(t.path("a"));
  DatasetOptions a;
  a.graph = t.path("a");
  const std::string h = dataset_source_hash(a);
  CHECK(h.size() == 16);
  CHECK(dataset_source_hash(a) == h);

  fs::copy(t.path("a"), t.path("b"));
  DatasetOptions b = a;
  b.graph = t.path("b");
  CHECK(dataset_source_hash(b) == h);
  fs::last_write_time(t.path("b/labels.txt"), fs::file_time_type::clock::now());
  CHECK(dataset_source_hash(b) == h);

  DatasetOptions directed = a;
  directed.edges.directed = true;
  CHECK(dataset_source_hash(directed) != h);
  DatasetOptions loops = a;
  loops.edges.self_loops = SelfLoops::keep;
  CHECK(dataset_source_hash(loops) != h);
  // The split comes from files: the split seed does not matter.
  DatasetOptions seeded = a;
  seeded.seed = 99;
  CHECK(dataset_source_hash(seeded) == h);

  // Without split files the split is drawn from the seed, and the parts hold that split.
  for (const char* f : {"b/train.txt", "b/val.txt", "b/test.txt"}) fs::remove(t.path(f));
  const std::string random_split = dataset_source_hash(b);
  CHECK(random_split != h);
  DatasetOptions reseeded = b;
  reseeded.seed = 99;
  CHECK(dataset_source_hash(reseeded) != random_split);

  { std::ofstream(t.path("b/labels.txt"), std::ios::app) << "\n"; }
  CHECK(dataset_source_hash(b) != random_split);
  DatasetOptions other = a;
  other.graph = t.path("c");
  small_sbm(10).write_dataset_dir(other.graph);
  CHECK(dataset_source_hash(other) != h);
  fs::remove(t.path("c/edges.txt"));
  CHECK_THROWS_AS(dataset_source_hash(other), IoError);
}

TEST_CASE("the content hash does not depend on how the bytes are chunked") {
  std::string bytes(1000, '\0');
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = char(i * 7 + 3);
  ContentHash whole;
  whole.update(bytes.data(), bytes.size());
  for (size_t step : {1, 7, 31, 32, 33, 500}) {
    ContentHash parts;
    for (size_t i = 0; i < bytes.size(); i += step)
      parts.update(bytes.data() + i, std::min(step, bytes.size() - i));
    CHECK(parts.digest() == whole.digest());
  }
  ContentHash shorter;
  shorter.update(bytes.data(), bytes.size() - 1);
  CHECK(shorter.digest() != whole.digest());
}
