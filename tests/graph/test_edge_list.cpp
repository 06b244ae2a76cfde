#include <sys/resource.h>

#include <catch2/catch.hpp>
#include <cstdint>
#include <fstream>
#include <limits>

#include "dgnn/common/error.hpp"
#include "dgnn/graph/graph.hpp"
#include "dgnn/graph/temporal.hpp"
#include "temp_files.hpp"

using namespace dgnn;
using Catch::Matchers::Contains;
using dgnn::test::bytes_of;
using dgnn::test::error_of;
using dgnn::test::PipeSource;
using dgnn::test::TempDir;

namespace {

EdgeListOptions no_cache() {
  EdgeListOptions o;
  o.use_cache = false;
  return o;
}

const char* kTriangle =
    "# a triangle with a self-loop and a reversed duplicate\n"
    "% matrix-market style comment\n"
    "5 7\n"
    "7 9\n"
    "\n"
    "9 5\n"
    "5 5\n"
    "7 5\n";

}  // namespace

TEST_CASE("undirected: symmetrised, self-loop removed, duplicates merged", "[edge_list]") {
  TempDir tmp;
  const std::string f = tmp.write("tri.txt", kTriangle);
  const EdgeListOptions o = no_cache();
  const EdgeList e = read_edge_list(f, o);
  CHECK(e.src == std::vector<int64_t>{5, 7, 9, 5, 7});
  CHECK(e.dst == std::vector<int64_t>{7, 9, 5, 5, 5});
  CHECK(e.weight.empty());
  CHECK(e.time.empty());
  CHECK(e.lines == 8);

  const Graph g = build_graph(e, o);
  CHECK(g.original_ids == std::vector<int64_t>{5, 7, 9});
  CHECK(g.in.offsets == std::vector<int64_t>{0, 2, 4, 6});
  CHECK(g.in.indices == std::vector<int32_t>{1, 2, 0, 2, 0, 1});
  CHECK_FALSE(g.in.weighted());
  CHECK_FALSE(g.directed);
  CHECK(g.input_edges == 5);
  CHECK(g.self_loops_removed == 1);
  CHECK(g.duplicates_merged == 2);  // 7->5 repeats 5-7 in both stored directions
  CHECK(g.num_vertices() == 3);
  CHECK(g.num_edges() == 6);
  CHECK(g.dense_id(7) == 1);
  CHECK(g.dense_id(6) == -1);
  CHECK(g.dense_id(10) == -1);
}

TEST_CASE("directed: rows are destinations, policies keep", "[edge_list]") {
  TempDir tmp;
  const std::string f = tmp.write("tri.txt", std::string(kTriangle) + "5 7\n");
  EdgeListOptions o = no_cache();
  o.directed = true;
  o.self_loops = SelfLoops::keep;
  o.duplicates = Duplicates::keep;
  Graph g = load_graph(f, o);
  CHECK(g.directed);
  // in-edges: 5 <- {5, 7, 9}; 7 <- {5, 5}; 9 <- {7}
  CHECK(g.in.offsets == std::vector<int64_t>{0, 3, 5, 6});
  CHECK(g.in.indices == std::vector<int32_t>{0, 1, 2, 0, 0, 1});
  CHECK(g.self_loops_removed == 0);
  CHECK(g.duplicates_merged == 0);

  o.duplicates = Duplicates::merge;
  g = load_graph(f, o);
  CHECK(g.in.offsets == std::vector<int64_t>{0, 3, 4, 5});
  CHECK(g.in.indices == std::vector<int32_t>{0, 1, 2, 0, 1});
  CHECK(g.duplicates_merged == 1);

  // An undirected self-loop is stored once.
  o.directed = false;
  g = load_graph(f, o);
  CHECK(g.in.offsets == std::vector<int64_t>{0, 3, 5, 7});
  CHECK(g.in.indices == std::vector<int32_t>{0, 1, 2, 0, 2, 0, 1});
}

TEST_CASE("weight and time columns; merged weights are summed", "[edge_list]") {
  const std::string f = std::string(DGNN_TEST_DATA) + "/graph_weighted.txt";
  EdgeListOptions o = no_cache();
  o.weight_col = 2;
  o.time_col = 3;
  const EdgeList e = read_edge_list(f, o);
  CHECK(e.src == std::vector<int64_t>{1, 2, 1});
  CHECK(e.dst == std::vector<int64_t>{2, 3, 2});
  CHECK(e.weight == std::vector<float>{0.5f, 1.5f, 2.0f});
  CHECK(e.time == std::vector<int64_t>{100, 200, 300});

  o.directed = true;
  Graph g = build_graph(e, o);
  CHECK(g.in.offsets == std::vector<int64_t>{0, 0, 1, 2});
  CHECK(g.in.indices == std::vector<int32_t>{0, 1});
  CHECK(g.in.values == std::vector<float>{2.5f, 1.5f});

  o.directed = false;
  g = build_graph(e, o);
  CHECK(g.in.offsets == std::vector<int64_t>{0, 1, 3, 4});
  CHECK(g.in.indices == std::vector<int32_t>{1, 0, 2, 1});
  CHECK(g.in.values == std::vector<float>{2.5f, 2.5f, 1.5f, 1.5f});

  o.weight_col = -1;  // the weights are then ignored: unweighted merge
  g = load_graph(f, o);
  CHECK_FALSE(g.in.weighted());
  CHECK(g.in.indices == std::vector<int32_t>{1, 0, 2, 1});
}

TEST_CASE("header line, commas, chosen columns, CRLF", "[edge_list]") {
  TempDir tmp;
  const std::string f = tmp.write("t.csv",
                                  "# exported\r\n"
                                  "when,to,from\r\n"
                                  "100,2,1\r\n"
                                  "200 , 3 ,2,extra\r\n"
                                  "300\t4\t3\r\n");
  EdgeListOptions o = no_cache();
  o.time_col = 0;
  o.dst_col = 1;
  o.src_col = 2;
  const EdgeList e = read_edge_list(f, o);
  CHECK(e.src == std::vector<int64_t>{1, 2, 3});
  CHECK(e.dst == std::vector<int64_t>{2, 3, 4});
  CHECK(e.time == std::vector<int64_t>{100, 200, 300});

  // A file without a trailing newline reads its last line.
  const std::string g = tmp.write("nonl.txt", "FromNodeId ToNodeId\n1 2\n3 4");
  CHECK(read_edge_list(g, no_cache()).dst == std::vector<int64_t>{2, 4});
}

TEST_CASE("relabelling keeps huge ids in ascending order", "[edge_list]") {
  TempDir tmp;
  const int64_t big = int64_t(1) << 62, max = INT64_MAX;
  const std::string f = tmp.write("huge.txt", std::to_string(big) + " 3\n" + std::to_string(max) +
                                                  " " + std::to_string(big) + "\n");
  const Graph g = load_graph(f, no_cache());
  CHECK(g.original_ids == std::vector<int64_t>{3, big, max});
  CHECK(g.dense_id(big) == 1);
  CHECK(g.dense_id(max) == 2);
  CHECK(g.dense_id(big + 1) == -1);
  CHECK(g.in.offsets == std::vector<int64_t>{0, 1, 3, 4});
  CHECK(g.in.indices == std::vector<int32_t>{1, 0, 2, 1});

  // The sparse (sort + unique) and direct-array paths agree on the same structure.
  const std::string sparse = tmp.write("sparse.txt", "0 3000000\n3000000 9\n9 0\n");
  const std::string dense = tmp.write("dense.txt", "0 30\n30 9\n9 0\n");
  const Graph a = load_graph(sparse, no_cache()), b = load_graph(dense, no_cache());
  CHECK(a.original_ids == std::vector<int64_t>{0, 9, 3000000});
  CHECK(b.original_ids == std::vector<int64_t>{0, 9, 30});
  CHECK(a.in.offsets == b.in.offsets);
  CHECK(a.in.indices == b.in.indices);
}

TEST_CASE("build_graph adds extra and min_vertices vertices without edges", "[edge_list]") {
  EdgeList e;
  e.src = {4};
  e.dst = {6};
  const Graph g = build_graph(e, no_cache(), {100, 6}, 3);
  CHECK(g.original_ids == std::vector<int64_t>{0, 1, 2, 4, 6, 100});
  CHECK(g.in.offsets == std::vector<int64_t>{0, 0, 0, 0, 1, 2, 2});
  CHECK(g.in.indices == std::vector<int32_t>{4, 3});

  Graph h = g;
  add_isolated_vertices(h, {5, 1000, 4, 5});
  CHECK(h.original_ids == std::vector<int64_t>{0, 1, 2, 4, 5, 6, 100, 1000});
  CHECK(h.in.offsets == std::vector<int64_t>{0, 0, 0, 0, 1, 1, 2, 2, 2});
  CHECK(h.in.indices == std::vector<int32_t>{5, 3});
}

TEST_CASE("a pipe, plain or gzipped, reads as the file does (<(zcat g.gz), /dev/stdin)",
          "[edge_list]") {
  TempDir tmp;
  const std::string text = "# piped\n1 2\n2 3\n3 1\n10 1\n";
  const std::string plain = tmp.write("e.txt", text), gz = tmp.write_gz("e.txt.gz", text);
  const EdgeList want = read_edge_list(plain, no_cache());
  for (const std::string& bytes : {bytes_of(plain), bytes_of(gz)}) {
    PipeSource pipe(bytes);
    // The cache is on: a pipe has no stamp, so nothing is cached under its name.
    const EdgeList got = read_edge_list(pipe.path(), EdgeListOptions{});
    CHECK(got.src == want.src);
    CHECK(got.dst == want.dst);
    // Read once, kept: a second reader of the same path (the input hash) sees the same bytes.
    CHECK(is_stream(pipe.path()));
    CHECK(stream_bytes(pipe.path()) == bytes);
    CHECK(read_file(pipe.path()) == text);
  }
  PipeSource empty("");
  CHECK_THAT(error_of<InputError>([&] { read_edge_list(empty.path(), no_cache()); }),
             Contains("no edges"));
  CHECK_FALSE(is_stream(plain));
  CHECK_FALSE(is_stream(tmp.dir()));
}

TEST_CASE("bipartite (--bipartite): JODIE / TGB CSV, users and items in two id spaces",
          "[edge_list]") {
  TempDir tmp;
  // JODIE's layout: a header, user, item, a float timestamp, a state label, edge features.
  const std::string f = tmp.write("wiki.csv",
                                  "user_id,item_id,timestamp,state_label,f0,f1\n"
                                  "0,0,0.0,0,0.1,0.2\n"
                                  "1,0,36.5,0,0.3,0.1\n"
                                  "2,1,77.0,1,0.0,0.9\n"
                                  "0,2,101.9,0,0.5,0.5\n");
  EdgeListOptions o = no_cache();
  o.time_col = 2;
  o.bipartite = true;
  const EdgeList e = read_edge_list(f, o);
  CHECK(e.src == std::vector<int64_t>{0, 1, 2, 0});
  CHECK(e.dst == std::vector<int64_t>{3, 3, 4, 5});  // items after the 3 users
  CHECK(e.time == std::vector<int64_t>{0, 36, 77, 101});
  // Without it user 0 and item 0 are one vertex (a self loop, removed).
  o.bipartite = false;
  CHECK(read_edge_list(f, o).dst == std::vector<int64_t>{0, 0, 1, 2});
  // The location of an id beyond a bound counts the shift too.
  o.bipartite = true;
  const EdgeLocation at = find_edge_id_at_least(f, o, 5);
  CHECK(at.line == 5);
  CHECK(at.id == 5);
}

TEST_CASE("gzip input reads the same as plain text", "[edge_list]") {
  TempDir tmp;
  const std::string text = "# gz\n1 2\n2 3\n3 1\n10 1\n";
  const std::string plain = tmp.write("e.txt", text);
  const std::string gz = tmp.write_gz("e.txt.gz", text);
  CHECK(read_file(gz) == text);
  const EdgeList a = read_edge_list(plain, no_cache()), b = read_edge_list(gz, no_cache());
  CHECK(a.src == b.src);
  CHECK(a.dst == b.dst);
  CHECK(b.lines == 5);

  // Two gzip members: the size hint in the trailer covers only the last one.
  std::string many;
  for (int i = 0; i < 100000; ++i) many += "1 2\n";
  const std::string multi = tmp.write_gz("m.txt.gz", many);
  gzFile app = gzopen(multi.c_str(), "ab");
  gzputs(app, "3 4\n");
  gzclose(app);
  const EdgeList m = read_edge_list(multi, no_cache());
  REQUIRE(m.src.size() == 100001);
  CHECK(m.src.back() == 3);

  // Damaged compressed data is an input error, not a crash.
  std::string raw;
  {
    std::ifstream in(multi, std::ios::binary);
    raw.assign(std::istreambuf_iterator<char>(in), {});
  }
  for (size_t i = 12; i < raw.size() / 2; i += 7) raw[i] = char(raw[i] ^ 0x5a);
  const std::string bad = tmp.write("bad.txt.gz", raw);
  const std::string msg = error_of<InputError>([&] { read_edge_list(bad, no_cache()); });
  CHECK_THAT(msg, Contains(bad) && Contains("corrupt gzip data"));
}

TEST_CASE("edge-list errors name path:LINE and what was expected", "[edge_list][errors]") {
  TempDir tmp;
  EdgeListOptions o = no_cache();
  auto err = [&](const std::string& name, const std::string& text) {
    const std::string f = tmp.write(name, text);
    return std::pair{f, error_of<InputError>([&] { read_edge_list(f, o); })};
  };
  {
    auto [f, msg] = err("alpha.txt", "1 2\nabc 3\n");
    CHECK_THAT(msg, Contains(f + ":2: expected an integer vertex id, found 'abc'"));
  }
  {
    auto [f, msg] = err("malformed.txt", "# c\n1 2\n3 4x\n");
    CHECK_THAT(msg, Contains(f + ":3: expected an integer vertex id, found '4x'"));
  }
  {
    auto [f, msg] = err("float.txt", "1 2\n3.5 4\n");
    CHECK_THAT(msg, Contains(f + ":2: expected an integer vertex id, found '3.5'"));
  }
  {
    auto [f, msg] = err("neg.txt", "1 2\n\n-3 4\n");
    CHECK_THAT(msg, Contains(f + ":3: expected a non-negative vertex id, found '-3'"));
  }
  {
    auto [f, msg] = err("overflow.txt", "9223372036854775808 1\n");
    CHECK_THAT(msg, Contains(f + ":1: vertex id '9223372036854775808' does not fit"));
  }
  {
    auto [f, msg] = err("empty_field.csv", "1,2\n1,,2\n");
    CHECK_THAT(msg, Contains(f + ":2: expected an integer vertex id, found nothing"));
  }
  {
    auto [f, msg] = err("short.txt", "1 2\n3\n");
    CHECK_THAT(msg, Contains(f + ":2: 1 column, but an edge needs at least 2 ('src dst')"));
  }
  o.weight_col = 2;
  {
    auto [f, msg] = err("noweight.txt", "1 2 0.5\n3 4\n");
    CHECK_THAT(msg, Contains(f + ":2: 2 columns, but --weight-col 2 needs at least 3"));
  }
  {
    auto [f, msg] = err("badweight.txt", "1 2 0.5\n3 4 heavy\n");
    CHECK_THAT(msg, Contains(f + ":2: expected a number for the weight, found 'heavy'"));
  }
  o.weight_col = -1;
  {
    auto [f, msg] = err("empty.txt", "");
    CHECK_THAT(msg, Contains(f + ": no edges found"));
  }
  {
    auto [f, msg] = err("only_comments.txt", "# nothing\nsrc dst\n\n");
    CHECK_THAT(msg, Contains(f + ": no edges found"));
  }
  const std::string missing = tmp.path("does_not_exist.txt");
  const std::string msg = error_of<IoError>([&] { read_edge_list(missing, o); });
  CHECK_THAT(msg, Contains("cannot open '" + missing + "'"));
  CHECK_THROWS_AS(read_edge_list(tmp.dir(), o), IoError);
}

TEST_CASE("find_edge_id_at_least locates the first offending line", "[edge_list]") {
  TempDir tmp;
  const std::string f = tmp.write("e.txt", "# c\n0 1\n1 2\n7 1\n9 9\n");
  const EdgeLocation at = find_edge_id_at_least(f, no_cache(), 3);
  CHECK(at.line == 4);
  CHECK(at.id == 7);
  CHECK(find_edge_id_at_least(f, no_cache(), 10).line == 0);
}

TEST_CASE("gzip: a cut file is an input error, never a partial graph", "[edge_list][errors]") {
  TempDir tmp;
  std::string text;
  for (int i = 0; i < 200000; ++i)
    text += std::to_string(i * 7919 % 100003) + " " + std::to_string(i) + "\n";
  const std::string whole = tmp.write_gz("whole.txt.gz", text);
  std::string raw;
  {
    std::ifstream in(whole, std::ios::binary);
    raw.assign(std::istreambuf_iterator<char>(in), {});
  }
  REQUIRE(raw.size() > 1000);
  REQUIRE(read_file(whole) == text);

  // Cut inside the deflate data, inside the 8-byte trailer, and right after the magic.
  for (size_t keep : {raw.size() / 2, raw.size() - 3, size_t(2)}) {
    const std::string cut =
        tmp.write("cut" + std::to_string(keep) + ".txt.gz", raw.substr(0, keep));
    INFO("kept " << keep << " of " << raw.size() << " bytes");
    CHECK_THAT(error_of<InputError>([&] { read_file(cut); }),
               Contains(cut + ": truncated gzip data"));
  }

  // Through the cache: refused both times, so nothing partial was stored in between.
  EdgeListOptions o;
  o.cache_dir = tmp.path("cache");
  const std::string cut = tmp.write("cached.txt.gz", raw.substr(0, raw.size() / 2));
  for (int i = 0; i < 2; ++i)
    CHECK_THAT(error_of<InputError>([&] { load_graph(cut, o); }),
               Contains(cut + ": truncated gzip data"));
}

TEST_CASE("gzip: bytes after the last member are an error; zero padding is not",
          "[edge_list][errors]") {
  TempDir tmp;
  const std::string text = "1 2\n2 3\n";
  std::string raw;
  {
    const std::string gz = tmp.write_gz("g.txt.gz", text);
    std::ifstream in(gz, std::ios::binary);
    raw.assign(std::istreambuf_iterator<char>(in), {});
  }
  // A text file appended by mistake: gzip's reader dropped it without a word.
  const std::string appended = tmp.write("appended.txt.gz", raw + "5 6\n7 8\n");
  CHECK_THAT(error_of<InputError>([&] { read_file(appended); }),
             Contains(appended + ": data after the end of the gzip stream, at byte " +
                      std::to_string(raw.size())));
  // Padding to a block (tar, dd): ignored, as gzip -d does.
  const std::string padded = tmp.write("padded.txt.gz", raw + std::string(512, '\0'));
  CHECK(read_file(padded) == text);
  // Padding between members too, and then more data.
  const std::string both = tmp.write("both.txt.gz", raw + std::string(7, '\0') + raw);
  CHECK(read_file(both) == text + text);
  // Something that starts like a member but is not one.
  const std::string fake = tmp.write("fake.txt.gz", raw + "\x1f\x8b junk");
  CHECK_THAT(error_of<InputError>([&] { read_file(fake); }), Contains(fake + ": "));
}

TEST_CASE("gzip: the size in a damaged trailer does not size the buffer", "[edge_list][errors]") {
  TempDir tmp;
  std::string text;
  for (int i = 0; i < 20000; ++i) text += std::to_string(i) + " " + std::to_string(i + 1) + "\n";
  std::string raw;
  {
    const std::string gz = tmp.write_gz("t.txt.gz", text);
    std::ifstream in(gz, std::ios::binary);
    raw.assign(std::istreambuf_iterator<char>(in), {});
  }
  // A cut file ends in whatever bytes were there: here an ISIZE of 4 GiB - 1 for ~20 KB of data.
  raw.resize(raw.size() / 2);
  raw.append(4, char(0xff));
  const std::string f = tmp.write("huge_isize.txt.gz", raw);
  struct rusage before {};
  ::getrusage(RUSAGE_SELF, &before);
  CHECK_THAT(error_of<InputError>([&] { read_file(f); }), Contains(f + ": "));
  struct rusage after {};
  ::getrusage(RUSAGE_SELF, &after);
  // ru_maxrss is the peak in KiB: the old reader zero-filled 4 GiB here.
  CHECK(after.ru_maxrss - before.ru_maxrss < 256 * 1024);
}

TEST_CASE("time column: fractions round down, values beyond int64 are errors",
          "[edge_list][errors]") {
  TempDir tmp;
  EdgeListOptions o = no_cache();
  o.time_col = 2;
  const std::string ok =
      tmp.write("ok.txt",
                "1 2 1.5\n2 3 -0.5\n3 4 1.7e9\n4 5 9223372036854775807\n5 6 -9223372036854775808\n"
                "6 7 -2.0\n");
  CHECK(read_edge_list(ok, o).time ==
        std::vector<int64_t>{1, -1, 1700000000, INT64_MAX, INT64_MIN, -2});
  auto err = [&](const std::string& name, const std::string& text) {
    const std::string f = tmp.write(name, text);
    return std::pair{f, error_of<InputError>([&] { read_edge_list(f, o); })};
  };
  for (const char* big : {"1e30", "-1e30", "9223372036854775808", "9.3e18", "1e400", "inf"}) {
    auto [f, msg] = err(std::string("big") + big + ".txt", std::string("1 2 0\n2 3 ") + big + "\n");
    CHECK_THAT(msg, Contains(f + ":2: time '" + big + "' does not fit a 64-bit integer"));
  }
  for (const char* bad : {"nan", "1.5x", "soon"}) {
    auto [f, msg] = err(std::string("bad") + bad + ".txt", std::string("1 2 ") + bad + "\n");
    CHECK_THAT(msg, Contains(f + ":1: expected an integer time, found '" + bad + "'"));
  }
}

TEST_CASE("edge list: a byte-order mark is skipped, columns must differ, odd bytes are escaped",
          "[edge_list]") {
  TempDir tmp;
  EdgeListOptions o;
  o.use_cache = false;
  const EdgeList e = read_edge_list(tmp.write("bom.txt",
                                              "\xEF\xBB\xBF"
                                              "0 1\n1 2\n"),
                                    o);
  CHECK(e.src.size() == 2);  // the first edge is not taken for a header
  EdgeListOptions same = o;
  same.weight_col = 0;
  CHECK_THAT(error_of<OptionError>([&] { read_edge_list(tmp.write("w.txt", "0 1\n"), same); }),
             Contains("--weight-col 0: the column of a vertex id"));
  const std::string f = tmp.write("bin.txt", "0 1\n1 \x01\xff\n");
  CHECK_THAT(error_of<InputError>([&] { read_edge_list(f, o); }),
             Contains(f + ":2: expected an integer vertex id, found '\\x01\\xff'"));
}

TEST_CASE("temporal: a time span beyond 2^62 is an error naming the file", "[temporal]") {
  TempDir tmp;
  EdgeListOptions o;
  o.use_cache = false;
  o.time_col = 2;
  SnapshotOptions s;
  s.seconds = 4e18;
  const std::string f =
      tmp.write("span.txt", "0 1 -9223372036854775808\n1 2 9223372036854775807\n");
  CHECK_THAT(error_of<InputError>([&] { load_temporal(f, o, s); }),
             Contains(f + ": the times span"));
}

TEST_CASE("line ends: LF and CRLF read, a bare CR (old Mac text) is refused at its line",
          "[edge_list][errors]") {
  TempDir tmp;
  const EdgeListOptions o = no_cache();
  for (const char* text : {"0 1\n1 2\n2 0\n", "0 1\r\n1 2\r\n2 0", "0 1\r\n1 2\n2 0\r"}) {
    const EdgeList e = read_edge_list(tmp.write("ok.txt", text), o);
    CHECK(e.src == std::vector<int64_t>{0, 1, 2});
    CHECK(e.dst == std::vector<int64_t>{1, 2, 0});
  }
  // Read as a space, a bare CR made the whole file one line: its first edge, silently.
  const std::string cr = tmp.write("cr.txt", "0 1\r1 2\r2 0\r");
  CHECK_THAT(error_of<InputError>([&] { read_edge_list(cr, o); }),
             Contains(cr + ":1: a carriage return without a line feed (old Mac line ends?)") &&
                 Contains("tr '\\r' '\\n'"));
  const std::string mixed = tmp.write("mixed.txt", "# c\r\n0 1\r\n1 2\r2 0\r\n");
  CHECK_THAT(error_of<InputError>([&] { read_edge_list(mixed, o); }),
             Contains(mixed + ":3: a carriage return without a line feed"));
  // Nothing but line ends: as empty as an empty file.
  const std::string crs = tmp.write("crs.txt", "\r\r\r");
  CHECK_THAT(error_of<InputError>([&] { read_edge_list(crs, o); }),
             Contains(crs + ": no edges found"));
  // Through the cache too: refused on every load (a version-1 cache held its first line).
  EdgeListOptions cached;
  cached.cache_dir = tmp.path("cache");
  for (int i = 0; i < 2; ++i)
    CHECK_THAT(error_of<InputError>([&] { load_graph(cr, cached); }),
               Contains(cr + ":1: a carriage return without a line feed"));
  CHECK(read_text_file(tmp.write("t.txt", "a\r\nb\n\r")) == "a\r\nb\n\r");
}

TEST_CASE("missing columns name the option that asks for them, counted in 64 bits",
          "[edge_list][errors]") {
  TempDir tmp;
  const std::string f = tmp.write("two.txt", "# src dst\n0 1\n1 2\n");
  EdgeListOptions o = no_cache();
  o.src_col = 5;
  CHECK_THAT(error_of<InputError>([&] { read_edge_list(f, o); }),
             Contains(f + ":2: 2 columns, but --src-col 5 needs at least 6"));
  o = no_cache();
  o.time_col = std::numeric_limits<int>::max();  // + 1 overflowed an int: "at least 0 columns"
  CHECK_THAT(error_of<InputError>([&] { read_edge_list(f, o); }),
             Contains(f + ":2: 2 columns, but --time-col 2147483647 needs at least 2147483648"));
  o.time_col = 2;
  o.weight_col = 3;  // the furthest column names the message
  CHECK_THAT(error_of<InputError>([&] { read_edge_list(f, o); }),
             Contains(f + ":2: 2 columns, but --weight-col 3 needs at least 4"));
  o.weight_col = -1;
  o.time_col_from = "d/snapshots.txt";  // set by a dataset, not by --time-col
  CHECK_THAT(error_of<InputError>([&] { read_edge_list(f, o); }),
             Contains(f + ":2: 2 columns, but time-col 2 (d/snapshots.txt) needs at least 3"));
  o.src_col = 2;
  CHECK_THAT(error_of<OptionError>([&] { read_edge_list(f, o); }),
             Contains("time-col 2 (d/snapshots.txt): the column of a vertex id (--src-col 2"));
}
