// Temporal graphs: bucketing, the three snapshot modes checked entry by entry on a hand-made file,
// base + differences against snapshots rebuilt from scratch, the byte formulas, bad input, and
// the real bitcoin-alpha / CollegeMsg files (skipped when ../shared/datasets is absent).
#include <catch2/catch.hpp>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "dgnn/common/error.hpp"
#include "dgnn/common/hash_rng.hpp"
#include "dgnn/graph/temporal.hpp"
#include "temp_files.hpp"

using namespace dgnn;
using Catch::Matchers::Contains;
using dgnn::test::error_of;
using dgnn::test::TempDir;

namespace {

const std::string kSmall = std::string(DGNN_TEST_DATA) + "/temporal_small.txt";

EdgeListOptions weighted_opts() {
  EdgeListOptions o;
  o.weight_col = 2;
  o.time_col = 3;
  o.use_cache = false;
  return o;
}

SnapshotOptions seconds(double s, SnapshotMode mode = SnapshotMode::window, int window = 1) {
  SnapshotOptions o;
  o.seconds = s;
  o.mode = mode;
  o.window = window;
  return o;
}

// A CSR written out row by row: neighbours and their weights (no weights: unweighted).
Csr rows(int64_t n, std::vector<std::vector<int32_t>> nb, std::vector<std::vector<float>> w = {}) {
  Csr c;
  c.rows = c.cols = n;
  c.offsets.push_back(0);
  for (int64_t r = 0; r < n; ++r) {
    for (size_t i = 0; i < nb[r].size(); ++i) {
      c.indices.push_back(nb[r][i]);
      if (!w.empty()) c.values.push_back(w[r][i]);
    }
    c.offsets.push_back(int64_t(c.indices.size()));
  }
  return c;
}

void check_same(const Csr& got, const Csr& want) {
  CHECK(got.rows == want.rows);
  CHECK(got.cols == want.cols);
  CHECK(got.offsets == want.offsets);
  CHECK(got.indices == want.indices);
  CHECK(got.values == want.values);
}

// Every snapshot through snapshot(t) and through the cursor, which must agree.
std::vector<Csr> all_snapshots(const TemporalGraph& g) {
  std::vector<Csr> out;
  SnapshotCursor cur(g);
  do {
    const Csr direct = g.snapshot(cur.index());
    check_same(cur.current(), direct);
    out.push_back(direct);
  } while (cur.next());
  CHECK(int(out.size()) == g.num_snapshots());
  CHECK_FALSE(cur.next());
  return out;
}

}  // namespace

TEST_CASE("temporal: buckets, events and times of the small file", "[temporal]") {
  const TemporalGraph g = load_temporal(kSmall, weighted_opts(), seconds(10));
  REQUIRE(g.num_snapshots() == 4);
  CHECK(g.num_vertices == 5);
  CHECK(g.original_ids == std::vector<int64_t>{10, 20, 30, 40, 50});
  CHECK(g.weighted);
  CHECK_FALSE(g.directed);
  // Bucket 0: 10-20 twice (weights 1 + 3), 20-30. Bucket 1: the self loop 30-30 is dropped.
  CHECK(g.events[0].src == std::vector<int32_t>{0, 1});
  CHECK(g.events[0].dst == std::vector<int32_t>{1, 2});
  CHECK(g.events[0].weight == std::vector<float>{4, 2});
  CHECK(g.events[1].src == std::vector<int32_t>{2});
  CHECK(g.events[1].dst == std::vector<int32_t>{3});
  CHECK(g.events[2].size() == 0);
  CHECK(g.events[3].src == std::vector<int32_t>{1, 3});  // "20 10" kept as in the file
  CHECK(g.events[3].dst == std::vector<int32_t>{0, 4});
  const int64_t starts[] = {100, 110, 120, 130, 140};
  for (int t = 0; t < 4; ++t) {
    CHECK(g.events[t].start_time == starts[t]);
    CHECK(g.events[t].end_time == starts[t + 1]);
  }

  // Four equal buckets over [100, 139] put every edge where 10 s buckets do.
  SnapshotOptions by_count;
  by_count.count = 4;
  const TemporalGraph c = load_temporal(kSmall, weighted_opts(), by_count);
  REQUIRE(c.num_snapshots() == 4);
  for (int t = 0; t < 4; ++t) {
    CHECK(c.events[t].src == g.events[t].src);
    CHECK(c.events[t].start_time == starts[t]);
  }
  by_count.count = 1;
  const TemporalGraph one = load_temporal(kSmall, weighted_opts(), by_count);
  REQUIRE(one.num_snapshots() == 1);
  CHECK(one.diffs.empty());
  CHECK(one.base.nnz() == 8);  // 4 undirected edges: 10-20 (weights 1+3+2), 20-30, 30-40, 40-50
  CHECK(one.events[0].end_time == 140);
}

TEST_CASE("temporal: window snapshots, entry by entry", "[temporal]") {
  const TemporalGraph g = load_temporal(kSmall, weighted_opts(), seconds(10));
  const std::vector<Csr> s = all_snapshots(g);
  check_same(s[0], rows(5, {{1}, {0, 2}, {1}, {}, {}}, {{4}, {4, 2}, {2}, {}, {}}));
  check_same(s[1], rows(5, {{}, {}, {3}, {2}, {}}, {{}, {}, {1}, {1}, {}}));
  check_same(s[2], rows(5, {{}, {}, {}, {}, {}}));  // the empty bucket: an empty snapshot
  check_same(s[3], rows(5, {{1}, {0}, {}, {4}, {3}}, {{2}, {2}, {}, {1}, {1}}));
  // Window differences: everything of the previous bucket goes, the new bucket comes.
  REQUIRE(g.diffs.size() == 3);
  CHECK(g.diffs[0].del_dst == std::vector<int32_t>{0, 1, 1, 2});
  CHECK(g.diffs[0].del_src == std::vector<int32_t>{1, 0, 2, 1});
  CHECK(g.diffs[0].add_dst == std::vector<int32_t>{2, 3});
  CHECK(g.diffs[0].add_src == std::vector<int32_t>{3, 2});
  CHECK(g.diffs[0].add_weight == std::vector<float>{1, 1});

  // Bytes: offsets 8 * 6 per snapshot, 8 per weighted entry; nnz 4, 2, 0, 4.
  CHECK(g.full_bytes() == 4 * 48 + 8 * (4 + 2 + 0 + 4));
  CHECK(g.diffs[0].bytes() == 4 * (2 + 2 + 2 + 4 + 4));
  CHECK(g.diffs[1].bytes() == 4 * (2 + 2));
  CHECK(g.diffs[2].bytes() == 4 * (4 + 4 + 4));
  CHECK(g.diff_bytes() == 48 + 8 * 4 + 56 + 16 + 48);

  const std::vector<SnapshotStats> st = snapshot_stats(g);
  REQUIRE(st.size() == 4);
  CHECK(st[0].active_vertices == 3);
  CHECK(st[1].active_vertices == 2);
  CHECK(st[2].active_vertices == 0);
  CHECK(st[3].active_vertices == 4);
  CHECK(st[3].stored_edges == 4);
  CHECK(st[3].edges == 2);
  CHECK(st[3].events == 2);
  CHECK(st[0].bytes == 48 + 32);
  CHECK(st[1].diff_bytes == 56);
}

TEST_CASE("temporal: cumulative snapshots sum weights over time", "[temporal]") {
  const TemporalGraph g =
      load_temporal(kSmall, weighted_opts(), seconds(10, SnapshotMode::cumulative));
  const std::vector<Csr> s = all_snapshots(g);
  const Csr s1 = rows(5, {{1}, {0, 2}, {1, 3}, {2}, {}}, {{4}, {4, 2}, {2, 1}, {1}, {}});
  check_same(s[0], rows(5, {{1}, {0, 2}, {1}, {}, {}}, {{4}, {4, 2}, {2}, {}, {}}));
  check_same(s[1], s1);
  check_same(s[2], s1);
  check_same(s[3], rows(5, {{1}, {0, 2}, {1, 3}, {2, 4}, {3}}, {{6}, {6, 2}, {2, 1}, {1, 1}, {1}}));
  // Only additions, except the 10-20 weight change (4 -> 6): deleted and added again.
  CHECK(g.diffs[0].del_src.empty());
  CHECK(g.diffs[1].add_src.empty());
  CHECK(g.diffs[1].del_src.empty());
  CHECK(g.diffs[2].del_dst == std::vector<int32_t>{0, 1});
  CHECK(g.diffs[2].add_dst == std::vector<int32_t>{0, 1, 3, 4});
  CHECK(g.diffs[2].add_weight == std::vector<float>{6, 6, 1, 1});
  CHECK(g.diff_bytes() < g.full_bytes());
}

TEST_CASE("temporal: sliding window of two buckets", "[temporal]") {
  const TemporalGraph g =
      load_temporal(kSmall, weighted_opts(), seconds(10, SnapshotMode::sliding, 2));
  const std::vector<Csr> s = all_snapshots(g);
  check_same(s[0], rows(5, {{1}, {0, 2}, {1}, {}, {}}, {{4}, {4, 2}, {2}, {}, {}}));
  check_same(s[1], rows(5, {{1}, {0, 2}, {1, 3}, {2}, {}}, {{4}, {4, 2}, {2, 1}, {1}, {}}));
  check_same(s[2], rows(5, {{}, {}, {3}, {2}, {}}, {{}, {}, {1}, {1}, {}}));
  check_same(s[3], rows(5, {{1}, {0}, {}, {4}, {3}}, {{2}, {2}, {}, {1}, {1}}));
}

TEST_CASE("temporal: directed and unweighted", "[temporal]") {
  EdgeListOptions o;
  o.time_col = 3;
  o.directed = true;
  const TemporalGraph g = load_temporal(kSmall, o, seconds(10, SnapshotMode::cumulative));
  CHECK_FALSE(g.weighted);
  const std::vector<Csr> s = all_snapshots(g);
  check_same(s[0], rows(5, {{}, {0}, {1}, {}, {}}));  // 10 -> 20, 20 -> 30
  check_same(s[3], rows(5, {{1}, {0}, {1}, {2}, {3}}));
  o.self_loops = SelfLoops::keep;
  const TemporalGraph loops = load_temporal(kSmall, o, seconds(10));
  check_same(loops.snapshot(1), rows(5, {{}, {}, {2}, {2}, {}}));
  CHECK(loops.events[1].size() == 2);
}

// Random edge lists: each snapshot equals a static graph built from the edges of its window.
TEST_CASE("temporal: base + differences equal snapshots built from scratch", "[temporal]") {
  Rng rng(7);
  for (SnapshotMode mode :
       {SnapshotMode::window, SnapshotMode::cumulative, SnapshotMode::sliding}) {
    for (bool directed : {false, true}) {
      EdgeList e;
      for (int i = 0; i < 600; ++i) {
        e.src.push_back(int64_t(rng.below(40)) * 3);
        e.dst.push_back(int64_t(rng.below(40)) * 3);
        e.weight.push_back(float(1 + rng.below(5)));  // integers: sums are exact in any order
        e.time.push_back(1000 + int64_t(rng.below(500)));
      }
      EdgeListOptions o;
      o.time_col = 3;
      o.directed = directed;
      SnapshotOptions snap;
      snap.count = 9;
      snap.mode = mode;
      snap.window = mode == SnapshotMode::sliding ? 3 : 1;
      const TemporalGraph g = build_temporal(e, o, snap, "random");
      REQUIRE(g.num_snapshots() == 9);
      const std::vector<Csr> s = all_snapshots(g);
      int64_t events = 0;
      for (int t = 0; t < 9; ++t) {
        const int first = mode == SnapshotMode::cumulative ? 0 : std::max(0, t - snap.window + 1);
        EdgeList part;
        for (int b = first; b <= t; ++b)
          for (size_t i = 0; i < g.events[b].src.size(); ++i) {
            part.src.push_back(g.events[b].src[i]);
            part.dst.push_back(g.events[b].dst[i]);
            part.weight.push_back(g.events[b].weight[i]);
          }
        events += g.events[t].size();
        // Dense ids in, all vertices kept: build_graph's ids are the temporal graph's.
        const Graph want = build_graph(part, o, {}, g.num_vertices);
        INFO("mode " << int(mode) << " directed " << directed << " snapshot " << t);
        check_same(s[t], want.in);
      }
      CHECK(events > 500);  // distinct pairs per bucket: a few repeats merged
      // Each step is held in the cheaper form: a window snapshot shares little with the last
      // one and is stored whole; storage never exceeds the snapshots themselves.
      int whole = 0;
      for (size_t t = 0; t < g.diffs.size(); ++t) {
        const SnapshotDiff& d = g.diffs[t];
        CHECK(d.bytes() <= csr_wire_bytes(s[t + 1]));
        if (d.whole) CHECK((d.add_src.empty() && d.del_src.empty()));
        whole += d.whole.has_value();
      }
      CHECK(g.diff_bytes() <= g.full_bytes());
      if (mode == SnapshotMode::window) CHECK(whole > 0);
      if (mode == SnapshotMode::cumulative) CHECK(whole == 0);
      // snapshot_step picks the same form from the two snapshots alone.
      for (size_t t = 0; t < g.diffs.size(); ++t) {
        const SnapshotDiff d = snapshot_step(s[t], s[t + 1]);
        CHECK(d.whole.has_value() == g.diffs[t].whole.has_value());
        check_same(apply_diff(s[t], d), s[t + 1]);
      }
    }
  }
}

TEST_CASE("temporal: apply_diff refuses inconsistent differences", "[temporal]") {
  const Csr c = rows(3, {{1}, {0}, {}});
  SnapshotDiff d;
  d.del_src = {2};
  d.del_dst = {0};
  CHECK_THROWS_AS(apply_diff(c, d), Error);
  SnapshotDiff dup;
  dup.add_src = {1};
  dup.add_dst = {0};
  CHECK_THROWS_AS(apply_diff(c, dup), Error);
  SnapshotDiff ok;
  ok.del_src = {1};
  ok.del_dst = {0};
  ok.add_src = {2, 0};
  ok.add_dst = {0, 2};
  check_same(apply_diff(c, ok), rows(3, {{2}, {0}, {0}}));
}

TEST_CASE("temporal: csr_difference turns one snapshot into another, weights or structure only",
          "[temporal]") {
  // Row 0 keeps 1 with a new weight, loses 2, gains 3; row 1 is unchanged; row 2 goes from
  // empty to {0}; row 3 loses everything.
  const Csr from = rows(4, {{1, 2}, {0}, {}, {0, 1}}, {{1.f, 2.f}, {4.f}, {}, {1.f, 1.f}});
  const Csr to = rows(4, {{1, 3}, {0}, {0}, {}}, {{5.f, 6.f}, {4.f}, {7.f}, {}});
  const SnapshotDiff d = csr_difference(from, to);
  check_same(apply_diff(from, d), to);
  CHECK(d.add_src == std::vector<int32_t>{1, 3, 0});  // the reweighted entry goes and comes back
  CHECK(d.add_weight == std::vector<float>{5.f, 6.f, 7.f});
  CHECK(d.del_src == std::vector<int32_t>{1, 2, 0, 1});
  CHECK(d.del_dst == std::vector<int32_t>{0, 0, 3, 3});

  // Structure only (what a GPU upload by difference needs): no weights, no reweighted entries.
  const SnapshotDiff s = csr_difference(from, to, false);
  CHECK(s.add_src == std::vector<int32_t>{3, 0});
  CHECK(s.add_dst == std::vector<int32_t>{0, 2});
  CHECK(s.add_weight.empty());
  CHECK(s.del_src == std::vector<int32_t>{2, 0, 1});
  Csr bare_from = from, bare_to = to;
  bare_from.values.clear();
  bare_to.values.clear();
  check_same(apply_diff(bare_from, s), bare_to);
}

TEST_CASE("temporal: bad input names the file and line, bad options the option", "[temporal]") {
  TempDir tmp;
  EdgeListOptions o;
  o.time_col = 2;
  o.use_cache = false;
  const std::string short_line = tmp.write("short.txt", "1 2 5\n2 3\n");
  CHECK_THAT(error_of<InputError>([&] { load_temporal(short_line, o, seconds(1)); }),
             Contains("short.txt:2: 2 columns, but --time-col 2 needs at least 3"));
  const std::string word = tmp.write("word.csv", "a,b,when\n1,2,5\n2,3,soon\n");
  CHECK_THAT(error_of<InputError>([&] { load_temporal(word, o, seconds(1)); }),
             Contains("word.csv:3:") && Contains("time") && Contains("'soon'"));
  EdgeListOptions no_time;
  CHECK_THAT(error_of<InputError>([&] { load_temporal(kSmall, no_time, seconds(1)); }),
             Contains("temporal_small.txt") && Contains("--time-col"));

  SnapshotOptions both = seconds(10);
  both.count = 3;
  CHECK_THAT(error_of<OptionError>([&] { load_temporal(kSmall, weighted_opts(), both); }),
             Contains("--snapshot-seconds") && Contains("--snapshots"));
  CHECK_THAT(error_of<OptionError>([&] { load_temporal(kSmall, weighted_opts(), {}); }),
             Contains("--snapshot-seconds"));
  CHECK_THAT(error_of<OptionError>([&] {
               load_temporal(kSmall, weighted_opts(), seconds(10, SnapshotMode::sliding, 0));
             }),
             Contains("--window"));
  CHECK_THAT(error_of<OptionError>([&] { load_temporal(kSmall, weighted_opts(), seconds(-2)); }),
             Contains("--snapshot-seconds"));
  SnapshotOptions too_many;
  too_many.count = 41;  // times 100..139: 40 distinct values
  CHECK_THAT(error_of<OptionError>([&] { load_temporal(kSmall, weighted_opts(), too_many); }),
             Contains("--snapshots 41") && Contains("at most 40"));
  too_many.count = 40;
  CHECK(load_temporal(kSmall, weighted_opts(), too_many).num_snapshots() == 40);
  CHECK_THAT(error_of<OptionError>([&] { load_temporal(kSmall, weighted_opts(), seconds(1e-4)); }),
             Contains("longer duration"));
}

TEST_CASE("temporal: a dataset directory with snapshots.txt needs no options", "[temporal]") {
  TempDir tmp;
  tmp.write("d/edges.txt", "# src dst time\n0 1 0\n1 2 0\n2 3 1\n0 3 2\n");
  TemporalLayout lay;
  lay.time_col = 2;
  lay.seconds = 1;
  lay.snapshots = 3;
  lay.vertices = 6;  // vertices 4 and 5 have no edges yet are vertices
  tmp.write("d/snapshots.txt", lay.to_text());
  const auto back = read_temporal_layout(tmp.path("d"));
  REQUIRE(back);
  CHECK(back->time_col == 2);
  CHECK(back->seconds == 1);
  CHECK(back->vertices == 6);
  const TemporalGraph g = load_temporal(tmp.path("d"), {}, {});
  CHECK(g.num_snapshots() == 3);
  CHECK(g.num_vertices == 6);
  CHECK(g.snapshot(2).nnz() == 2);
  CHECK_FALSE(read_temporal_layout(kSmall));

  tmp.write("bad/edges.txt", "0 1 0\n");
  tmp.write("bad/snapshots.txt", "time-col 2\nsnapshot-seconds soon\n");
  CHECK_THAT(error_of<InputError>([&] { read_temporal_layout(tmp.path("bad")); }),
             Contains("snapshots.txt:2:") && Contains("snapshot-seconds"));
}

TEST_CASE("temporal: a snapshots.txt folder keeps its own columns and snapshot count",
          "[temporal][errors]") {
  TempDir tmp;
  tmp.write("d/edges.txt", "0 1 0\n1 2 1\n2 3 2\n0 3 3\n");
  // Only the count it was made with: equal buckets, no option needed.
  tmp.write("d/snapshots.txt", "time-col 2\r\nsnapshots 2\r\n");
  const std::string d = tmp.path("d");
  CHECK(load_temporal(d, {}, {}).num_snapshots() == 2);
  SnapshotOptions four;
  four.count = 4;
  CHECK(load_temporal(d, {}, four).num_snapshots() == 4);  // an option still re-cuts it
  EdgeListOptions same;
  same.time_col = 2;
  CHECK(load_temporal(d, same, {}).num_snapshots() == 2);

  // Column options that disagree with the folder are refused, naming the option.
  EdgeListOptions o;
  o.time_col = 3;
  CHECK_THAT(error_of<OptionError>([&] { load_temporal(d, o, {}); }),
             Contains("--time-col 3: " + d + " is a temporal dataset already cut into snapshots") &&
                 Contains("times in column 2") && Contains("do not apply to it"));
  o = {};
  o.src_col = 5;
  CHECK_THAT(error_of<OptionError>([&] { load_temporal(d, o, {}); }),
             Contains("--src-col 5: " + d + " is a temporal dataset"));
  o = {};
  o.src_col = 1;  // swapped ids: the same columns, reversed edges
  o.dst_col = 0;
  o.directed = true;
  const TemporalGraph swapped = load_temporal(d, o, {});
  CHECK(swapped.events[0].src == std::vector<int32_t>{1, 2});
  CHECK(swapped.events[0].dst == std::vector<int32_t>{0, 1});

  // A short line names the file that set the time column.
  tmp.write("d/edges.txt", "0 1 0\n1 2\n");
  CHECK_THAT(error_of<InputError>([&] { load_temporal(d, {}, {}); }),
             Contains("edges.txt:2: 2 columns, but time-col 2 (" + d +
                      "/snapshots.txt) needs at least 3"));
  // Old Mac line ends: refused at the line, not read as one line of four words.
  tmp.write("d/snapshots.txt", "time-col 2\rsnapshots 2\r");
  CHECK_THAT(error_of<InputError>([&] { load_temporal(d, {}, {}); }),
             Contains(d + "/snapshots.txt:1: a carriage return without a line feed"));
  // Neither a bucket length nor a count: the file is named, not the options alone.
  tmp.write("d/snapshots.txt", "time-col 2\nvertices 4\n");
  CHECK_THAT(error_of<InputError>([&] { load_temporal(d, {}, {}); }),
             Contains(d + "/snapshots.txt: neither a snapshot-seconds nor a snapshots line"));
}

// EvolveGCN's buckets on the real files. The counts are printed for docs/temporal.md.
TEST_CASE("temporal: bitcoin-alpha and CollegeMsg in EvolveGCN's buckets", "[temporal][real]") {
  const std::string root = std::string(DGNN_SOURCE_DIR) + "/../shared/datasets";
  const std::string btc = root + "/bitcoin-alpha/soc-sign-bitcoinalpha.csv";
  const std::string uci = root + "/collegemsg/CollegeMsg.txt";
  if (!std::filesystem::exists(btc) || !std::filesystem::exists(uci)) {
    WARN("SKIP: " << root << " is absent");
    return;
  }
  struct Case {
    const char* name;
    std::string path;
    EdgeListOptions opt;
    double seconds;
    int lo, hi;  // the snapshot count to expect (EvolveGCN: 138 and 88)
  };
  EdgeListOptions b;
  b.weight_col = 2;
  b.time_col = 3;
  b.use_cache = false;
  EdgeListOptions u;
  u.time_col = 2;
  u.use_cache = false;
  for (const Case& c : {Case{"bitcoin-alpha", btc, b, 1200000, 130, 145},
                        Case{"collegemsg", uci, u, 190080, 80, 100}}) {
    for (SnapshotMode mode : {SnapshotMode::window, SnapshotMode::cumulative}) {
      const TemporalGraph g = load_temporal(c.path, c.opt, seconds(c.seconds, mode));
      const int T = g.num_snapshots();
      CHECK(T >= c.lo);
      CHECK(T <= c.hi);
      int64_t events = 0;
      for (const SnapshotEvents& e : g.events) events += e.size();
      std::printf(
          "%s (%s, %g s buckets): %lld vertices, %d snapshots, %lld events; full %lld B, "
          "base+diffs %lld B, saved %lld B (%.2fx)\n",
          c.name, mode == SnapshotMode::window ? "window" : "cumulative", c.seconds,
          (long long)g.num_vertices, T, (long long)events, (long long)g.full_bytes(),
          (long long)g.diff_bytes(), (long long)(g.full_bytes() - g.diff_bytes()),
          double(g.full_bytes()) / double(g.diff_bytes()));
      if (mode == SnapshotMode::cumulative) CHECK(g.diff_bytes() * 5 < g.full_bytes());
      // The last snapshot by cursor and by composition agree on a real graph too.
      SnapshotCursor cur(g);
      while (cur.next()) {
      }
      check_same(cur.current(), g.snapshot(T - 1));
    }
  }
}

TEST_CASE("a share's ordinals are kept as a bit an event and each source's first ordinal") {
  constexpr uint32_t R = SnapshotEvents::kRepeat;
  SnapshotEvents ev;
  // Sources 1 (counted 7, 8, a repeat, 9), 2 (repeats only: another rank's source), 4 (3), 5
  // (a repeat, then 20, 21): one run each, sorted by source as shares are.
  ev.src = {1, 1, 1, 1, 2, 2, 4, 5, 5, 5};
  ev.dst = {2, 3, 4, 5, 0, 1, 0, 0, 1, 2};
  const std::vector<uint32_t> per = {7, 8, R, 9, R, R, 3, R, 20, 21};
  ev.set_ordinals(per);
  CHECK(ev.ordinals() == per);
  CHECK(ev.ordinal.first == std::vector<uint32_t>{7, 3, 20});
  CHECK(ev.ordinal.counted.size() == 1);
  // 130 events of one source, every third a repeat: more than two words of bits.
  SnapshotEvents many;
  std::vector<uint32_t> big;
  for (uint32_t i = 0, next = 100; i < 130; ++i) {
    many.src.push_back(6), many.dst.push_back(int32_t(i));
    big.push_back(i % 3 == 2 ? R : next++);
  }
  many.set_ordinals(big);
  CHECK(many.ordinals() == big);
  CHECK(many.ordinal.first.size() == 1);
  // No events: nothing kept, nothing listed.
  SnapshotEvents none;
  none.set_ordinals({});
  CHECK(none.ordinals().empty());
  // A run that skips an ordinal is not a share's numbering; one ordinal per event.
  CHECK_THROWS_AS(ev.set_ordinals({7, 9, R, 10, R, R, 3, R, 20, 21}), Error);
  CHECK_THROWS_AS(ev.set_ordinals({7, 8}), ShapeError);
}
