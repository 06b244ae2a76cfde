// `dgnn info` on temporal edge lists and `dgnn generate evolving-sbm`, as a user meets them:
// per-snapshot tables and JSON, the snapshot flags, and one-line errors for bad input.
#include <catch2/catch.hpp>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "cli_helpers.hpp"

namespace fs = std::filesystem;
using namespace cli_test;
using Catch::Matchers::Contains;

namespace {

const std::string kSmall = std::string(DGNN_SOURCE_DIR) + "/tests/data/temporal_small.txt";

nlohmann::json info_json(const std::string& args) {
  const Result r = run("info --json " + args);
  INFO(r.out);
  REQUIRE(r.code == 0);
  return nlohmann::json::parse(r.out);
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

TEST_CASE("cli temporal: info prints one row per snapshot and the memory saved", "[cli]") {
  const Result r =
      run("info --graph " + kSmall + " --weight-col 2 --time-col 3 --snapshot-seconds 10");
  INFO(r.out);
  REQUIRE(r.code == 0);
  CHECK_THAT(r.out, Contains("4 snapshots, window"));
  CHECK_THAT(r.out, Contains("buckets of 10 units"));
  CHECK_THAT(r.out, Contains("1 empty"));
  CHECK_THAT(r.out, Contains("272 B, base + differences 200 B: 72 B saved"));

  const nlohmann::json j =
      info_json("--graph " + kSmall + " --weight-col 2 --time-col 3 --snapshot-seconds 10");
  CHECK(j["temporal"] == true);
  CHECK(j["vertices"] == 5);
  CHECK(j["num_snapshots"] == 4);
  CHECK(j["events"] == 5);
  REQUIRE(j["snapshots"].size() == 4);
  CHECK(j["snapshots"][0]["edges"] == 2);
  CHECK(j["snapshots"][0]["active_vertices"] == 3);
  CHECK(j["snapshots"][2]["edges"] == 0);
  CHECK(j["snapshots"][3]["start_time"] == 130);
  CHECK(j["memory_bytes"]["full_snapshots"] == 272);
  CHECK(j["memory_bytes"]["base_plus_diffs"] == 200);
  CHECK(j["memory_bytes"]["saved"] == 72);
}

TEST_CASE("cli temporal: --cumulative, --window and --snapshots", "[cli]") {
  const std::string g = "--graph " + kSmall + " --time-col 3 ";
  const nlohmann::json cum = info_json(g + "--snapshot-seconds 10 --cumulative");
  CHECK(cum["snapshot_mode"] == "cumulative");
  CHECK(cum["snapshots"][1]["edges"] == 3);
  CHECK(cum["snapshots"][2]["edges"] == 3);
  CHECK(cum["snapshots"][3]["edges"] == 4);
  const nlohmann::json slide = info_json(g + "--snapshot-seconds 10 --window 2");
  CHECK(slide["snapshot_mode"] == "sliding");
  CHECK(slide["window"] == 2);
  CHECK(slide["snapshots"][1]["edges"] == 3);
  CHECK(slide["snapshots"][2]["edges"] == 1);
  const nlohmann::json count = info_json(g + "--snapshots 4 --directed");
  CHECK(count["snapshot_count"] == 4);
  CHECK(count["directed"] == true);
  CHECK(count["snapshots"][3]["stored_edges"] == 2);

  // Past 40 snapshots the table shows the first and last rows only.
  const Result many = run("info " + g + "--snapshot-seconds 0.5");  // 79 half-unit buckets
  INFO(many.out);
  REQUIRE(many.code == 0);
  CHECK_THAT(many.out, Contains("59 snapshots not shown"));
  CHECK(count_lines(many.out) < 40);
}

TEST_CASE("cli temporal: bad snapshot options and bad files are one line", "[cli]") {
  auto one_line_error = [](const std::string& args, const std::string& want) {
    const Result r = run(args);
    INFO(args << "\n" << r.out);
    CHECK(r.code != 0);
    CHECK_THAT(r.out, Contains(want));
    CHECK(count_lines(r.out) <= 2);  // CLI11 adds "Run with --help" to its own parse errors
  };
  one_line_error("info --graph " + kSmall + " --snapshots 3", "--time-col");
  one_line_error("info --graph " + kSmall + " --time-col 3", "--snapshot-seconds");
  one_line_error("info --graph " + kSmall + " --time-col 3 --snapshots 3 --snapshot-seconds 4",
                 "--snapshot-seconds excludes --snapshots");
  one_line_error("info --graph " + kSmall + " --time-col 3 --snapshots 3 --window 2 --cumulative",
                 "--window excludes --cumulative");
  one_line_error("info --graph " + kSmall + " --time-col 3 --snapshots 1000", "--snapshots 1000");
  one_line_error("info --graph " + kSmall + " --time-col 3 --snapshot-seconds 0.0001",
                 "longer duration");
  one_line_error("info --graph " + kSmall + " --time-col 4 --snapshots 2",
                 "temporal_small.txt:3: 4 columns, but --time-col 4 needs at least 5");
  const fs::path d = scratch("bad");
  std::ofstream(d / "times.csv") << "src,dst,time\n1,2,10\n2,3,later\n";
  one_line_error("info --graph " + (d / "times.csv").string() + " --time-col 2 --snapshots 2",
                 "times.csv:3: expected an integer time, found 'later'");
  // A split whose steps predict only empty snapshots (a gap in time) has nothing to measure.
  std::ofstream(d / "gap.txt") << "0 1 0\n1 2 1\n2 3 2\n3 4 3\n4 5 4\n5 6 5\n6 7 6\n0 2 9\n"
                               << "0 3 10\n1 3 11\n";
  one_line_error(
      "train --graph " + (d / "gap.txt").string() +
          " --time-col 2 --snapshot-seconds 1 --epochs 1 --train-frac 0.6 --val-frac 0.2",
      "the validation steps 6..7 have no edge in the next snapshot");
}

TEST_CASE("cli temporal: generate evolving-sbm, then info reads it with no flags", "[cli]") {
  const fs::path d = scratch("evo");
  const std::string gen =
      "generate evolving-sbm --vertices 2000 --snapshots 45 --classes 4 --avg-degree 4 "
      "--drift 0.1 --features 8 --seed 5 --out ";
  const Result r = run(gen + (d / "a").string());
  INFO(r.out);
  REQUIRE(r.code == 0);
  CHECK_THAT(r.out, Contains("45 snapshots"));
  CHECK_THAT(r.out, Contains("drift 0.100"));
  for (const char* f : {"edges.txt", "features.npy", "labels.txt", "snapshots.txt"})
    CHECK(fs::exists(d / "a" / f));
  REQUIRE(run(gen + (d / "b").string()).code == 0);
  CHECK(slurp(d / "a" / "edges.txt") == slurp(d / "b" / "edges.txt"));
  CHECK(slurp(d / "a" / "features.npy") == slurp(d / "b" / "features.npy"));

  const nlohmann::json j = info_json("--graph " + (d / "a").string());
  CHECK(j["num_snapshots"] == 45);
  CHECK(j["vertices"] == 2000);
  CHECK(j["snapshots"][44]["edges"] == 4000);
  const Result text = run("info --graph " + (d / "a").string() + " --cumulative");
  INFO(text.out);
  CHECK(text.code == 0);
  CHECK_THAT(text.out, Contains("25 snapshots not shown"));
  CHECK_THAT(text.out, Contains("saved"));

  const Result bad =
      run("generate evolving-sbm --classes 1 --drift 0.2 --out " + (d / "c").string());
  CHECK(bad.code != 0);
  CHECK_THAT(bad.out, Contains("--drift"));
  CHECK_FALSE(fs::exists(d / "c"));
}

TEST_CASE("cli temporal: train link prediction and edge classification from the command line",
          "[cli]") {
  fs::path d = scratch("temporal_train");
  Result g = run("generate evolving-sbm --vertices 300 --snapshots 12 --classes 3 --seed 2 --out " +
                 (d / "evo").string());
  REQUIRE(g.code == 0);
  Result t = run("train --graph " + (d / "evo").string() +
                 " --model tgcn --hidden 8 --epochs 3 --bptt 3 --neg-eval 10 --log-json " +
                 (d / "lp.jsonl").string());
  INFO(t.out);
  REQUIRE(t.code == 0);
  std::ifstream log(d / "lp.jsonl");
  std::string line, last;
  int epochs = 0;
  while (std::getline(log, line)) {
    auto j = nlohmann::json::parse(line);
    if (j.contains("final")) {
      last = line;
    } else {
      ++epochs;
      CHECK(j.contains("val_map"));
    }
  }
  CHECK(epochs == 3);
  auto fin = nlohmann::json::parse(last);
  for (const char* k : {"test_auc", "test_map", "test_mrr"}) {
    INFO(k);
    CHECK(fin.contains(k));
    CHECK(fin[k].get<double>() >= 0.0);
  }
  CHECK(fin["settings"]["model"] == "tgcn");

  // EvolveGCN's protocol: validation and test rank every vertex pair.
  Result all = run("train --graph " + (d / "evo").string() +
                   " --model gcrn --hidden 8 --epochs 2 --bptt 3 --neg-eval all --log-json " +
                   (d / "all.jsonl").string());
  INFO(all.out);
  REQUIRE(all.code == 0);
  std::ifstream all_log(d / "all.jsonl");
  std::string all_last;
  while (std::getline(all_log, line)) all_last = line;
  auto all_fin = nlohmann::json::parse(all_last);
  CHECK(all_fin["settings"]["neg_eval"] == "all");
  CHECK(all_fin["test_map"].get<double>() > 0.0);
  CHECK(all_fin["test_map"].get<double>() <= 1.0);
  for (const std::string& bad : {std::string("--neg-eval lots"), std::string("--neg-eval 5x"),
                                 std::string("--task edge --neg-eval all")}) {
    Result r = run("train --graph " + (d / "evo").string() + " --epochs 1 " + bad);
    INFO(bad << "\n" << r.out);
    CHECK(r.code != 0);
    CHECK(r.out.find("--neg-eval") != std::string::npos);
    CHECK(count_lines(r.out) == 1);
  }

  // TGB's protocol: each edge against its own negatives, MRR over the split's edges selects.
  Result tgb = run("train --graph " + (d / "evo").string() +
                   " --model gcrn --hidden 8 --epochs 2 --bptt 3 --neg-eval 10 "
                   "--eval-protocol tgb --log-json " +
                   (d / "tgb.jsonl").string());
  INFO(tgb.out);
  REQUIRE(tgb.code == 0);
  CHECK(tgb.out.find("best val mrr") != std::string::npos);
  std::ifstream tgb_log(d / "tgb.jsonl");
  std::string tgb_last;
  while (std::getline(tgb_log, line)) tgb_last = line;
  auto tgb_fin = nlohmann::json::parse(tgb_last);
  CHECK(tgb_fin["settings"]["eval_protocol"] == "tgb");
  // 1 / rank of 10 negatives: between 1/11 and 1.
  CHECK(tgb_fin["test_mrr"].get<double>() >= 1.0 / 11);
  CHECK(tgb_fin["test_mrr"].get<double>() <= 1.0);
  for (const std::string& bad :
       {std::string("--eval-protocol tgn"), std::string("--eval-protocol tgb --neg-eval all"),
        std::string("--eval-protocol tgb --task edge")}) {
    Result r = run("train --graph " + (d / "evo").string() + " --epochs 1 " + bad);
    INFO(bad << "\n" << r.out);
    CHECK(r.code != 0);
    CHECK(r.out.find("--eval-protocol") != std::string::npos);
    CHECK(count_lines(r.out) == 1);
  }
  {
    Result r = run("train --epochs 1 --eval-protocol tgb");  // a static graph
    INFO(r.out);
    CHECK(r.code != 0);
    CHECK(r.out.find("--eval-protocol") != std::string::npos);
  }

  // --train-frac / --val-frac split the steps when given (11 steps: 5 / 2 / 4), else 0.7 / 0.1.
  Result fr = run("train --graph " + (d / "evo").string() +
                  " --hidden 8 --epochs 1 --neg-eval 5 --train-frac 0.5 --val-frac 0.2");
  INFO(fr.out);
  CHECK(fr.code == 0);
  CHECK(fr.out.find("steps train/val/test 5/2/4") != std::string::npos);
  CHECK(t.out.find("steps train/val/test 7/1/3") != std::string::npos);

  // Edge classification needs signed weights: an unweighted graph is a one-line error.
  Result e = run("train --graph " + (d / "evo").string() + " --task edge --epochs 1");
  CHECK(e.code != 0);
  CHECK(e.out.find("--weight-col") != std::string::npos);
  CHECK(count_lines(e.out) == 1);
  // A static model name on a temporal graph is an error naming --model.
  Result m = run("train --graph " + (d / "evo").string() + " --model gin --epochs 1");
  CHECK(m.code != 0);
  CHECK(m.out.find("--model") != std::string::npos);
}

TEST_CASE("cli temporal: node classification over snapshots from the command line", "[cli]") {
  fs::path d = scratch("temporal_node");
  REQUIRE(run("generate evolving-sbm --vertices 300 --snapshots 8 --classes 3 --seed 2 --out " +
              (d / "evo").string())
              .code == 0);
  Result t = run("train --graph " + (d / "evo").string() +
                 " --task node --model gcrn --hidden 8 --epochs 3 --log-json " +
                 (d / "node.jsonl").string() + " --predictions " + (d / "pred.txt").string() +
                 " --embeddings " + (d / "emb.npy").string());
  INFO(t.out);
  REQUIRE(t.code == 0);
  std::ifstream log(d / "node.jsonl");
  std::string line, last;
  int epochs = 0;
  while (std::getline(log, line)) {
    auto j = nlohmann::json::parse(line);
    if (j.contains("final"))
      last = line;
    else
      epochs += j.contains("val_acc") && j.contains("val_macro_f1");
  }
  CHECK(epochs == 3);
  auto fin = nlohmann::json::parse(last);
  CHECK(fin["test_acc"].get<double>() >= 0.0);
  CHECK(fin["test_macro_f1"].get<double>() >= 0.0);
  CHECK(fin["settings"]["task"] == "node");
  // A class per vertex, and each vertex's embedding after the last snapshot.
  std::ifstream pred(d / "pred.txt");
  long id = 0, cls = 0, rows = 0;
  while (pred >> id >> cls) {
    CHECK(id == rows++);
    CHECK((cls >= 0 && cls < 3));
  }
  CHECK(rows == 300);
  std::ifstream npy(d / "emb.npy", std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(npy)), std::istreambuf_iterator<char>());
  CHECK(bytes.find("'shape': (300, 8)") != std::string::npos);

  // No labels: one line naming where they are looked for. The snapshot strategy: refused.
  fs::create_directories(d / "nolabels");
  fs::copy_file(d / "evo" / "edges.txt", d / "nolabels" / "edges.txt");
  fs::copy_file(d / "evo" / "snapshots.txt", d / "nolabels" / "snapshots.txt");
  Result n = run("train --graph " + (d / "nolabels").string() + " --task node --epochs 1");
  CHECK(n.code != 0);
  CHECK(n.out.find("labels") != std::string::npos);
  CHECK(count_lines(n.out) == 1);
  Result s =
      run("train --graph " + (d / "evo").string() + " --task node --strategy snapshot --epochs 1");
  CHECK(s.code != 0);
  CHECK(s.out.find("--strategy") != std::string::npos);

  // Labels that cannot make a classification: one line naming the file or the fractions.
  const std::string node = "train --graph " + (d / "evo").string() + " --task node --epochs 1 ";
  write(d / "dup.txt", "0 1\n1 2\n0 1\n");
  write(d / "one_class.txt", "0 7\n1 7\n2 7\n");
  write(d / "two.txt", "0 0\n1 1\n");
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"--labels " + (d / "dup.txt").string(), "dup.txt:3: expected one label per vertex"},
      {"--labels " + (d / "one_class.txt").string(), "every labelled vertex has class 7"},
      {"--labels " + (d / "two.txt").string(), "leave no validation vertices"},
  };
  for (const auto& [opt, want] : bad) {
    const Result r = run(node + opt);
    INFO(opt << "\n" << r.out);
    CHECK(r.code != 0);
    CHECK(count_lines(r.out) == 1);
    CHECK_THAT(r.out, Contains(want));
    CHECK(r.out.find(".cpp") == std::string::npos);  // no source locations for users
  }
}

TEST_CASE("cli temporal: text features train exactly as the same features in .npy", "[cli]") {
  const fs::path d = scratch("temporal_text_features");
  REQUIRE(run("generate evolving-sbm --vertices 200 --snapshots 12 --classes 3 --features 4 "
              "--seed 4 --out " +
              (d / "evo").string())
              .code == 0);
  // features.npy as written by generate: float32, C order, shape (200, 4), header then data.
  const std::string npy = slurp(d / "evo" / "features.npy");
  const size_t header = 10 + size_t(uint8_t(npy[8])) + 256 * size_t(uint8_t(npy[9]));
  REQUIRE(npy.find("'<f4'") != std::string::npos);
  REQUIRE(npy.size() == header + 200 * 4 * 4);
  std::string text;
  for (int v = 0; v < 200; ++v) {
    text += std::to_string(v);
    for (int j = 0; j < 4; ++j) {
      float x;
      std::memcpy(&x, npy.data() + header + (size_t(v) * 4 + size_t(j)) * 4, 4);
      char buf[32];
      std::snprintf(buf, sizeof buf, " %.9g", double(x));  // round-trips a float exactly
      text += buf;
    }
    text += "\n";
  }
  write(d / "features.txt", text);
  auto final_line = [&](const std::string& extra, const std::string& log) {
    const Result r = run("train --graph " + (d / "evo").string() +
                         " --model gcrn --hidden 8 --epochs 2 --bptt 3 --neg-eval 5 --quiet "
                         "--threads 1 --log-json " +
                         (d / log).string() + extra);
    INFO(r.out);
    REQUIRE(r.code == 0);
    std::ifstream in(d / log);
    std::string line, last;
    while (std::getline(in, line)) last = line;
    return nlohmann::json::parse(last);
  };
  const nlohmann::json a = final_line("", "npy.jsonl");
  const nlohmann::json b = final_line(" --features " + (d / "features.txt").string(), "txt.jsonl");
  CHECK(b["settings"]["features"] == 4);
  for (const char* k : {"test_auc", "test_map", "test_mrr"}) {
    INFO(k);
    CHECK(a[k] == b[k]);
  }
  // A vertex without a row is an error naming it.
  write(d / "short.txt", text.substr(0, text.rfind("199 ")));
  const Result r = run("train --graph " + (d / "evo").string() + " --epochs 1 --features " +
                       (d / "short.txt").string());
  CHECK(r.code != 0);
  CHECK_THAT(r.out, Contains("short.txt: no feature row for vertex 199"));
}

TEST_CASE("cli temporal: partition --dry-run prints each snapshot's balance", "[cli]") {
  const std::string g = "partition --graph " + kSmall + " --time-col 3 --snapshot-seconds 10";
  const Result r = run(g + " --parts 2 --dry-run");
  INFO(r.out);
  REQUIRE(r.code == 0);
  CHECK_THAT(r.out, Contains("5 vertices, 4 snapshots"));
  CHECK_THAT(r.out, Contains("+4 groups of snapshots"));  // min(snapshots, 16)
  CHECK_THAT(r.out, Contains("makespan"));
  // One row per snapshot; the empty bucket has nothing to balance (0).
  CHECK_THAT(r.out, Contains("       2          0    0.000"));
  CHECK(run(g + " --parts 2 --dry-run --snapshot-groups 0").out.find("the union graph only") !=
        std::string::npos);
  for (auto [opt, expect] : std::vector<std::pair<std::string, std::string>>{
           {" --parts 2 --dry-run --balance-edges", "--balance-edges is for static graphs"},
           {" --parts 9 --dry-run", "--parts 9 exceeds the 5 vertices"},
           {" --parts 2 --dry-run --partitioner range --snapshot-groups 2",
            "--snapshot-groups is for --partitioner metis"}}) {
    const Result e = run(g + opt);
    INFO(opt << "\n" << e.out);
    CHECK(e.code != 0);
    CHECK_THAT(e.out, Contains(expect));
  }
  // --out writes the parts for `train --partition DIR` (tests/mpi/cli_dist.sh trains with them).
  const fs::path out = scratch("tparts");
  const Result w = run(g + " --parts 2 --out " + (out / "p").string());
  INFO(w.out);
  CHECK(w.code == 0);
  CHECK_THAT(w.out, Contains("(manifest.json + parts.bin)"));
  CHECK(fs::file_size(out / "p" / "parts.bin") == 32 + 5 * 4);  // header, one int32 a vertex
  const Result s = run("partition --graph " + kSmall + " --parts 2 --dry-run --snapshot-groups 2");
  CHECK(s.code != 0);
  CHECK_THAT(s.out, Contains("--snapshot-groups is for temporal graphs"));
}

TEST_CASE("cli: a JODIE CSV (header, float times, edge features) trains with --bipartite") {
  const fs::path d = scratch("jodie");
  std::string csv = "user_id,item_id,timestamp,state_label,comma_separated_list_of_features\n";
  for (int i = 0; i < 400; ++i)
    csv += std::to_string(i % 23) + "," + std::to_string((i * 7) % 17) + "," +
           std::to_string(i * 3) + ".5,0," + std::to_string(i % 5) + ".25,0.5\n";
  write(d / "wiki.csv", csv);
  const std::string g = "--graph " + (d / "wiki.csv").string() + " --time-col 2 --snapshots 8";
  const Result i = run("info --json --bipartite " + g);
  REQUIRE(i.code == 0);
  CHECK(nlohmann::json::parse(i.out)["vertices"] == 23 + 17);
  const Result r = run("train --quiet --bipartite --model gcrn --hidden 8 --epochs 2 " + g);
  INFO(r.out);
  CHECK(r.code == 0);
  CHECK_THAT(r.out, Catch::Contains("test"));
}
