#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "dgnn/graph/cache.hpp"
#include "temp_files.hpp"

using namespace dgnn;
using dgnn::test::TempDir;
namespace fs = std::filesystem;

namespace {

void require_same(const Graph& a, const Graph& b) {
  CHECK(a.in.rows == b.in.rows);
  CHECK(a.in.offsets == b.in.offsets);
  CHECK(a.in.indices == b.in.indices);
  CHECK(a.in.values == b.in.values);
  CHECK(a.original_ids == b.original_ids);
  CHECK(a.directed == b.directed);
  CHECK(a.input_edges == b.input_edges);
  CHECK(a.self_loops_removed == b.self_loops_removed);
  CHECK(a.duplicates_merged == b.duplicates_merged);
}

// Rewrites a file keeping its size and modification time: a change the cache cannot see.
void rewrite_unseen(const std::string& path, const std::string& text) {
  const auto mtime = fs::last_write_time(path);
  std::ofstream(path, std::ios::binary) << text;
  fs::last_write_time(path, mtime);
}

size_t files_in(const std::string& dir) {
  size_t n = 0;
  for (auto& e : fs::directory_iterator(dir)) n += e.is_regular_file();
  return n;
}

}  // namespace

TEST_CASE("cache: stored on first load, read back identical", "[cache]") {
  TempDir tmp;
  const std::string src = tmp.write("g.txt", "1 2 0.5\n2 3 1.5\n3 3 1\n1 2 2\n");
  EdgeListOptions o;
  o.cache_dir = tmp.path("cache");
  o.weight_col = 2;
  const std::string cache_file = cache_path_for(src, o, 0);
  CHECK(cache_file.rfind(o.cache_dir, 0) == 0);
  CHECK_FALSE(cache_load(src, o, 0).has_value());

  const Graph parsed = load_graph(src, o);
  REQUIRE(fs::exists(cache_file));
  CHECK(files_in(o.cache_dir) == 1);  // no temp file left behind
  const std::optional<Graph> cached = cache_load(src, o, 0);
  REQUIRE(cached.has_value());
  require_same(*cached, parsed);
  CHECK(cached->in.values == std::vector<float>{2.5f, 2.5f, 1.5f, 1.5f});
  CHECK(cached->self_loops_removed == 1);
  CHECK(cached->duplicates_merged == 2);

  // Options and min_vertices are part of the key.
  EdgeListOptions d = o;
  d.directed = true;
  CHECK(cache_path_for(src, d, 0) != cache_file);
  CHECK(cache_path_for(src, o, 5) != cache_file);
  CHECK_FALSE(cache_load(src, d, 0).has_value());
  CHECK_FALSE(cache_load(src, o, 5).has_value());
}

TEST_CASE("cache: invalidated by a new mtime or size, not by unseen edits", "[cache]") {
  TempDir tmp;
  const std::string src = tmp.write("g.txt", "1 2\n2 3\n");
  EdgeListOptions o;
  o.cache_dir = tmp.path("cache");
  const Graph first = load_graph(src, o);
  CHECK(first.original_ids == std::vector<int64_t>{1, 2, 3});

  // Same size and mtime: the cached graph is what comes back, proving the parse was skipped.
  rewrite_unseen(src, "4 5\n5 6\n");
  CHECK(load_graph(src, o).original_ids == std::vector<int64_t>{1, 2, 3});

  // Touch: a newer mtime makes the entry stale.
  fs::last_write_time(src, fs::last_write_time(src) + std::chrono::seconds(5));
  CHECK_FALSE(cache_load(src, o, 0).has_value());
  CHECK(load_graph(src, o).original_ids == std::vector<int64_t>{4, 5, 6});
  CHECK(cache_load(src, o, 0).has_value());

  // A different size with the mtime restored is stale too.
  const auto mtime = fs::last_write_time(src);
  std::ofstream(src, std::ios::binary | std::ios::app) << "6 7\n";
  fs::last_write_time(src, mtime);
  CHECK_FALSE(cache_load(src, o, 0).has_value());
  CHECK(load_graph(src, o).original_ids == std::vector<int64_t>{4, 5, 6, 7});

  // use_cache = false neither reads nor writes.
  rewrite_unseen(src, "8 9\n9 8\n1 2\n");
  EdgeListOptions off = o;
  off.use_cache = false;
  CHECK(load_graph(src, off).original_ids == std::vector<int64_t>{1, 2, 8, 9});
  CHECK(load_graph(src, o).original_ids == std::vector<int64_t>{4, 5, 6, 7});
}

TEST_CASE("cache: a corrupt file is ignored and replaced", "[cache]") {
  TempDir tmp;
  const std::string src = tmp.write("g.txt", "10 20\n20 30\n30 10\n");
  EdgeListOptions o;
  o.cache_dir = tmp.path("cache");
  const Graph good = load_graph(src, o);
  const std::string cf = cache_path_for(src, o, 0);
  std::string bytes = read_file(cf);

  auto with_cache_bytes = [&](const std::string& b) {
    std::ofstream(cf, std::ios::binary | std::ios::trunc) << b;
    CHECK_FALSE(cache_load(src, o, 0).has_value());
    require_same(load_graph(src, o), good);  // parsed again and stored again
    CHECK(read_file(cf) == bytes);
  };
  SECTION("truncated") { with_cache_bytes(bytes.substr(0, bytes.size() - 5)); }
  SECTION("garbage") { with_cache_bytes(std::string(bytes.size(), 'x')); }
  SECTION("empty") { with_cache_bytes(""); }
  SECTION("one payload byte flipped") {
    std::string b = bytes;
    b[b.size() - 20] ^= 0x01;
    with_cache_bytes(b);
  }
  SECTION("wrong version") {
    std::string b = bytes;
    b[8] = char(b[8] + 1);
    with_cache_bytes(b);
  }
  SECTION("huge counts in the header") {
    std::string b = bytes;
    for (int i = 32; i < 48; ++i) b[i] = char(0x7f);
    with_cache_bytes(b);
  }
}

TEST_CASE("cache: an unwritable location is silently skipped", "[cache]") {
  TempDir tmp;
  const std::string src = tmp.write("g.txt", "1 2\n");
  EdgeListOptions o;
  o.cache_dir = tmp.write("a_file", "x") + "/sub";  // cannot be a folder
  CHECK(load_graph(src, o).num_edges() == 2);
  CHECK_FALSE(cache_load(src, o, 0).has_value());
}

TEST_CASE("cache: default location follows DGNN_CACHE_DIR, XDG_CACHE_HOME, HOME", "[cache]") {
  TempDir tmp;
  auto saved = [](const char* name) {
    const char* v = std::getenv(name);
    return v ? std::optional<std::string>(v) : std::nullopt;
  };
  const auto dgnn_dir = saved("DGNN_CACHE_DIR"), xdg = saved("XDG_CACHE_HOME"),
             home = saved("HOME");
  const std::string src = tmp.write("g.txt", "1 2\n");
  const EdgeListOptions o;
  ::setenv("DGNN_CACHE_DIR", tmp.path("d").c_str(), 1);
  ::setenv("XDG_CACHE_HOME", tmp.path("x").c_str(), 1);
  ::setenv("HOME", tmp.path("h").c_str(), 1);
  CHECK(fs::path(cache_path_for(src, o, 0)).parent_path() == tmp.path("d"));
  ::unsetenv("DGNN_CACHE_DIR");
  CHECK(fs::path(cache_path_for(src, o, 0)).parent_path() == tmp.path("x") + "/dgnn");
  ::unsetenv("XDG_CACHE_HOME");
  CHECK(fs::path(cache_path_for(src, o, 0)).parent_path() == tmp.path("h") + "/.cache/dgnn");
  CHECK(load_graph(src, o).num_edges() == 2);
  CHECK(fs::exists(cache_path_for(src, o, 0)));
  auto restore = [](const char* name, const std::optional<std::string>& v) {
    v ? ::setenv(name, v->c_str(), 1) : ::unsetenv(name);
  };
  restore("DGNN_CACHE_DIR", dgnn_dir);
  restore("XDG_CACHE_HOME", xdg);
  restore("HOME", home);
}
