// The `dgnn` executable as a user meets it: exit codes, one-line errors naming file:line or the
// option, JSON logs, predictions in original ids, and no half-written outputs on failure.
#include <catch2/catch.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "cli_helpers.hpp"

namespace fs = std::filesystem;
using namespace cli_test;

namespace {

// A small labelled dataset directory with non-contiguous original ids, in a folder of its own
// per test case (`name`): ctest runs the cases in parallel.
fs::path tiny_dataset(const std::string& name) {
  fs::path d = scratch("tiny_" + name);
  std::string edges = "# a ring of 40 vertices with ids 100, 110, ...\n";
  std::string labels, train, val, test;
  for (int i = 0; i < 40; ++i) {
    const int a = 100 + 10 * i, b = 100 + 10 * ((i + 1) % 40), c = 100 + 10 * ((i + 2) % 40);
    edges += std::to_string(a) + " " + std::to_string(b) + "\n";
    edges += std::to_string(a) + " " + std::to_string(c) + "\n";
    labels += std::to_string(a) + " " + std::to_string((i / 10) % 2) + "\n";
    (i % 4 == 0 ? val : i % 4 == 1 ? test : train) += std::to_string(a) + "\n";
  }
  write(d / "edges.txt", edges);
  write(d / "labels.txt", labels);
  write(d / "train.txt", train);
  write(d / "val.txt", val);
  write(d / "test.txt", test);
  return d;
}

// Each (arguments, expected text) runs `dgnn prefix + arguments` and must fail with one line
// holding the text.
void expect_one_line_errors(const std::string& prefix,
                            const std::vector<std::pair<std::string, std::string>>& cases) {
  for (const auto& [args, want] : cases) {
    const Result r = run(prefix + args);
    INFO(prefix + args << "\n" << r.out);
    CHECK(r.code != 0);
    CHECK(count_lines(r.out) == 1);
    CHECK_THAT(r.out, Catch::Contains(want));
  }
}

}  // namespace

TEST_CASE("cli: --help and --version") {
  CHECK(run("--help").code == 0);
  CHECK(run("train --help").out.find("--weight-decay") != std::string::npos);
  CHECK(run("--version").code == 0);
  CHECK(run("").code != 0);
}

TEST_CASE("cli: a missing graph file is one line naming it") {
  fs::path d = scratch("missing");
  Result r = run("train --graph " + (d / "nope.txt").string() + " --log-json " +
                 (d / "log.json").string());
  CHECK(r.code != 0);
  CHECK(r.out.find("nope.txt") != std::string::npos);
  CHECK(count_lines(r.out) == 1);
  CHECK_FALSE(fs::exists(d / "log.json"));
}

TEST_CASE("cli: a malformed edge line is reported as path:LINE") {
  fs::path d = scratch("malformed");
  write(d / "edges.txt", "# comment\n0 1\n1 2\n2 x\n");
  Result r = run("info --graph " + (d / "edges.txt").string());
  CHECK(r.code != 0);
  CHECK(r.out.find("edges.txt:4") != std::string::npos);
  CHECK(count_lines(r.out) == 1);
}

TEST_CASE("cli: impossible options name the option") {
  fs::path d = tiny_dataset("impossible");
  Result r = run("train --graph " + d.string() + " --dropout 1.5");
  CHECK(r.code != 0);
  CHECK(r.out.find("--dropout") != std::string::npos);
  r = run("train --graph " + d.string() + " --model transformer");
  CHECK(r.code != 0);
  CHECK(r.out.find("--model") != std::string::npos);
  r = run("train --graph " + d.string() + " --layers 0");
  CHECK(r.code != 0);
  CHECK(r.out.find("--layers") != std::string::npos);
}

TEST_CASE("cli: --device cuda without a usable GPU fails with one clear line") {
  Result r = run("train --epochs 1 --device cuda");
  CHECK(r.code != 0);
  CHECK(r.out.find("--device cuda") != std::string::npos);
}

TEST_CASE("cli: --comm nccl on the CPU is one clear line and an unknown --comm a usage error") {
  Result r = run("train --epochs 1 --comm nccl");
  CHECK(r.code != 0);
  INFO(r.out);
  CHECK(count_lines(r.out) == 1);
  CHECK(r.out.find("dgnn: error: --comm nccl") == 0);
  CHECK(r.out.find("--device cuda") != std::string::npos);
  r = run("train --epochs 1 --comm gloo");
  CHECK(r.code != 0);
  CHECK(r.out.find("--comm") != std::string::npos);
  // --comm mpi and auto are what CPU ranks do anyway.
  r = run("train --epochs 1 --comm mpi --quiet");
  CHECK(r.code == 0);
}

TEST_CASE("cli: train writes a JSON log and predictions in the input's ids") {
  fs::path d = tiny_dataset("log");
  fs::path out = scratch("train_out");
  Result r = run("train --graph " + d.string() + " --epochs 5 --hidden 8 --log-json " +
                 (out / "log.json").string() + " --predictions " + (out / "pred.txt").string() +
                 " --embeddings " + (out / "emb.npy").string());
  INFO(r.out);
  REQUIRE(r.code == 0);
  std::ifstream log(out / "log.json");
  std::string line;
  std::vector<nlohmann::json> lines;
  while (std::getline(log, line)) lines.push_back(nlohmann::json::parse(line));
  REQUIRE(lines.size() == 6);
  for (int e = 0; e < 5; ++e) {
    CHECK(lines[e]["epoch"] == e + 1);
    for (const char* k : {"loss", "train_acc", "val_acc", "time_ms"}) CHECK(lines[e].contains(k));
  }
  CHECK(lines[5]["final"] == true);
  CHECK(lines[5].contains("test_acc"));
  CHECK(lines[5].contains("best_val_acc"));
  CHECK(lines[5]["settings"]["model"] == "gcn");

  std::ifstream pred(out / "pred.txt");
  std::vector<long> ids;
  long id, cls;
  while (pred >> id >> cls) {
    ids.push_back(id);
    CHECK((cls == 0 || cls == 1));
  }
  REQUIRE(ids.size() == 40);
  CHECK(ids.front() == 100);
  CHECK(ids.back() == 490);
  // Embeddings: the hidden layer's 8 columns per vertex, rows in ascending input id, the ids
  // beside them.
  std::ifstream npy(out / "emb.npy", std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(npy)), std::istreambuf_iterator<char>());
  CHECK(bytes.find("'shape': (40, 8)") != std::string::npos);
  std::ifstream emb_ids(out / "emb.ids.txt");
  std::vector<long> eids;
  while (emb_ids >> id) eids.push_back(id);
  CHECK(eids == ids);
}

TEST_CASE("cli: generate then train and info on the generated directory") {
  fs::path d = scratch("gen");
  Result g = run("generate sbm --vertices 600 --classes 3 --seed 4 --out " + (d / "sbm").string());
  INFO(g.out);
  REQUIRE(g.code == 0);
  Result i = run("info --graph " + (d / "sbm").string() + " --json");
  INFO(i.out);
  REQUIRE(i.code == 0);
  auto j = nlohmann::json::parse(i.out.substr(i.out.find('{')));
  CHECK(j["vertices"] == 600);
  Result t = run("train --graph " + (d / "sbm").string() + " --epochs 30 --quiet");
  INFO(t.out);
  CHECK(t.code == 0);
  CHECK(t.out.find("test accuracy") != std::string::npos);
  // What generate wrote it may replace; a user's copy of a dataset (our file names, no marker)
  // is refused with one line and left as it was, unless --force.
  CHECK(run("generate sbm --vertices 300 --out " + (d / "sbm").string()).code == 0);
  const fs::path copy = d / "copy";
  fs::create_directories(copy);
  for (const char* f : {"edges.txt", "labels.txt", "train.txt"}) write(copy / f, "0 1\n");
  const Result refused = run("generate sbm --vertices 100 --out " + copy.string());
  CHECK(refused.code != 0);
  CHECK(count_lines(refused.out) == 1);
  CHECK_THAT(refused.out, Catch::Contains("did not write") && Catch::Contains("--force"));
  CHECK(fs::file_size(copy / "edges.txt") == 4);
  CHECK(run("generate sbm --vertices 100 --force --out " + copy.string()).code == 0);
  CHECK(fs::file_size(copy / "edges.txt") > 4);
}

TEST_CASE("cli: usage errors are one line starting 'dgnn: error:', numbers say what they need") {
  for (const std::string& args :
       {std::string("train --frobnicate"), std::string("train --feature-dim 0 --epochs 1"),
        std::string("train --epochs 1 --feature-dim nan"), std::string("plan --bandwidth-gbs 0")}) {
    const Result r = run(args);
    INFO(args << "\n" << r.out);
    CHECK(r.code != 0);
    CHECK(count_lines(r.out) == 1);
    CHECK(r.out.rfind("dgnn: error: ", 0) == 0);
    CHECK(r.out.find("1797") == std::string::npos);  // no DBL_MAX as an upper bound
  }
  CHECK_THAT(run("train --feature-dim 0").out, Catch::Contains("--feature-dim: must be > 0"));
}

TEST_CASE("cli: without --graph, input options are refused and the split fractions apply") {
  // The generated default used to ignore --features, --directed, --generate-features, ... and
  // the fractions; a run said nothing of it.
  const std::vector<std::pair<std::string, std::string>> cases = {
      {" --features " + (fs::path(DGNN_TEST_DATA) / "graph_tiny" / "features.txt").string(),
       "--features: describes an input graph"},
      {" --directed", "--directed: describes an input graph"},
      {" --generate-features random", "--generate-features: describes an input graph"},
      {" --time-col 2", "--time-col: describes an input graph"},
  };
  expect_one_line_errors("train --epochs 1", cases);
  // The generated graph's features are centroids plus Gaussian noise: negative entries (found
  // once the graph is made, after its progress lines: --quiet leaves the error alone).
  expect_one_line_errors("train --epochs 1 --quiet",
                         {{" --normalize-features", "--normalize-features: vertex "}});
  expect_one_line_errors("plan --ranks 2", {{" --directed", "--directed: describes an input"}});
  const Result r = run("train --epochs 1 --train-frac 0.3 --val-frac 0.1");
  REQUIRE(r.code == 0);
  CHECK_THAT(r.out, Catch::Contains("train/val/test 3000/1000/6000"));
  // No test or validation set: said so, rather than an accuracy of 0.
  const Result all = run("train --epochs 1 --train-frac 1 --val-frac 0");
  REQUIRE(all.code == 0);
  CHECK_THAT(all.out, Catch::Contains("no test vertices, no test accuracy (no validation "
                                      "vertices: the last epoch's parameters)"));
}

TEST_CASE("cli: an option the run would not use is refused, naming it") {
  const fs::path d = tiny_dataset("unused_options");
  const std::vector<std::pair<std::string, std::string>> cases = {
      {" --bptt 3", "--bptt: for temporal graphs only"},
      {" --neg-train 2", "--neg-train: for temporal graphs only"},
      {" --momentum 0.9", "--momentum: is for --optimizer sgd"},
      {" --alpha 0.2", "--alpha: is for --model gcnii (this run's model is the default)"},
      {" --model resgcn --lambda 1", "--lambda: is for --model gcnii (this run's model is resgcn)"},
      {" --model gat --conv-weight-decay 0.01", "--conv-weight-decay: is for the deep models"},
      {" --model gcnii --batch-size 8", "--model gcnii trains on the whole graph"},
      {" --model gcnii --alpha 1.5", "--alpha must be in [0, 1]"},
      {" --model gcnii --lambda 0", "--lambda must be > 0"},
      {" --model resgcn --conv-weight-decay -2", "--conv-weight-decay must be a number >= 0"},
      {" --select best", "--select: best not in {acc,loss}"},
      {" --parts 0", "--parts must be the MPI rank count"},
      {" --threads 100000", "--threads 100000: at most"},
  };
  expect_one_line_errors("train --graph " + d.string() + " --epochs 1", cases);
  CHECK(run("train --graph " + d.string() + " --epochs 1 --quiet --optimizer sgd --momentum 0.9")
            .code == 0);
  // And the other way: a temporal run refuses what only static training reads.
  const fs::path t = scratch("refused_temporal");
  std::string events;
  for (int i = 0; i < 60; ++i)
    events += std::to_string(i % 12) + " " + std::to_string((i * 5 + 1) % 12) + " " +
              std::to_string(i) + "\n";
  write(t / "events.txt", events);
  for (const std::string opt : {"--dropout 0.2", "--no-overlap", "--feature-dim 4", "--select loss",
                                 "--normalize-features"}) {
    const Result r = run("train --graph " + (t / "events.txt").string() +
                         " --time-col 2 --snapshots 6 --epochs 1 " + opt);
    INFO(opt << "\n" << r.out);
    CHECK(r.code != 0);
    CHECK(count_lines(r.out) == 1);
    CHECK_THAT(r.out, Catch::Contains("not used by temporal training"));
  }
  {
    const Result r = run("train --graph " + (t / "events.txt").string() +
                         " --time-col 2 --snapshots 6 --epochs 1 --model gcnii");
    CHECK(r.code != 0);
    CHECK(count_lines(r.out) == 1);
    CHECK_THAT(r.out, Catch::Contains("--model gcnii: a deep model for static graphs"));
  }
  // --parts means one vertex part per rank, for static and temporal graphs alike; the snapshot
  // strategy partitions no vertices.
  const std::string tg = "train --graph " + (t / "events.txt").string() +
                         " --time-col 2 --snapshots 6 --epochs 1 --quiet";
  CHECK(run(tg + " --parts 1").code == 0);
  CHECK(run(tg + " --parts 1 --snapshot-groups 3").code == 0);
  const std::vector<std::pair<std::string, std::string>> temporal_cases = {
      {" --parts 2", "--parts 2 but the job has 1 ranks"},
      {" --parts 0", "--parts must be the MPI rank count"},
      {" --strategy snapshot --parts 1", "--parts: the snapshot strategy"},
      {" --strategy snapshot --partitioner random", "--partitioner: the snapshot strategy"},
      {" --partitioner range --snapshot-groups 2", "--snapshot-groups: balances groups"},
  };
  expect_one_line_errors(tg, temporal_cases);
  expect_one_line_errors("train --graph " + d.string() + " --epochs 1",
                         {{" --snapshot-groups 2", "--snapshot-groups: for temporal graphs"}});
}

TEST_CASE("cli: messages that name the real problem (issue 18 item 6)") {
  const fs::path d = tiny_dataset("messages");
  const fs::path o = scratch("messages");
  fs::create_directories(o / "folder" / "edges.txt");
  std::error_code ec;
  fs::remove(o / "loop_a", ec);
  fs::remove(o / "loop_b", ec);
  fs::create_symlink(o / "loop_b", o / "loop_a");
  fs::create_symlink(o / "loop_a", o / "loop_b");
  write(o / "e.csv", "a,b\n0,1\n1,2\n");
  const std::string g = "train --quiet --graph " + d.string();
  expect_one_line_errors(
      g, {
             {" --epochs 0", "--epochs: must be > 0"},
             {" --seed -1", "--seed: must be >= 0"},
             {" --epochs 1 --load " + o.string(), "is a directory, not a checkpoint"},
             {" --epochs 1 --log-json " + (o / "loop_a" / "x.json").string(),
              "Too many levels of symbolic links"},
             {" --epochs 1 --save " + (o / "loop_a").string(), "Too many levels of symbolic links"},
         });
  expect_one_line_errors("",
                         {
                             {"info --graph " + (o / "folder").string(),
                              "edges.txt: is a directory, not an edge list"},
                             {"info --graph " + (o / "e.csv").string() + " --src-col 0 --dst-col 0",
                              "--src-col 0 and --dst-col 0"},
                             {"generate sbm --vertices 50 --seed -3 --out " + (o / "gen").string(),
                              "--seed: must be >= 0"},
                         });
  // A symlink loop is a usage problem (exit 1), not an internal error (exit 2).
  CHECK(run(g + " --epochs 1 --save " + (o / "loop_a").string()).code == 1);
  CHECK_FALSE(fs::exists(o / "gen"));
}

TEST_CASE("cli: datasets lists what ships, each with its reference and a command that runs") {
  const Result r = run("datasets --json");
  REQUIRE(r.code == 0);
  const nlohmann::json j = nlohmann::json::parse(r.out);
  REQUIRE(j.size() == 3);
  for (const auto& d : j) {
    INFO(d.dump());
    CHECK(fs::exists(d["path"].get<std::string>()));
    CHECK(d["bytes"].get<int64_t>() > 1000);
    CHECK_FALSE(d["reference"].get<std::string>().empty());
  }
  CHECK(j[0]["name"] == "cora");
  // Cora's command, cut to 2 epochs, trains on the shipped (gzipped) files.
  std::string cmd = j[0]["command"].get<std::string>();
  REQUIRE(cmd.rfind("dgnn ", 0) == 0);
  cmd = cmd.substr(5);
  cmd.replace(cmd.find("--epochs 200"), 12, "--epochs 2 --quiet");
  const Result t = run(cmd);
  CHECK(t.code == 0);
  CHECK_THAT(t.out, Catch::Contains("test accuracy"));
  CHECK_THAT(run("datasets").out, Catch::Contains("reproduce: dgnn train --graph"));
}

TEST_CASE("cli: a folder in the OGB node-property layout trains as it unpacks") {
  const fs::path o = scratch("ogb");
  std::string edges, feat, label, train, valid, test;
  for (int v = 0; v < 60; ++v) {
    edges += std::to_string(v) + "," + std::to_string((v + 1) % 60) + "\n";
    edges += std::to_string(v) + "," + std::to_string((v + 7) % 60) + "\n";
    feat += std::to_string(v % 3) + ".0," + std::to_string(v % 2) + ",0.5\n";
    label += std::to_string(v % 3) + "\n";
    (v % 5 == 0 ? valid : v % 5 == 1 ? test : train) += std::to_string(v) + "\n";
  }
  write(o / "raw" / "edge.csv", edges);
  write(o / "raw" / "node-feat.csv", feat);
  write(o / "raw" / "node-label.csv", label);
  write(o / "raw" / "num-node-list.csv", "60\n");
  write(o / "split" / "random" / "train.csv", train);
  write(o / "split" / "random" / "valid.csv", valid);
  write(o / "split" / "random" / "test.csv", test);
  const Result r = run("train --quiet --epochs 3 --graph " + o.string());
  INFO(r.out);
  CHECK(r.code == 0);
  CHECK_THAT(r.out, Catch::Contains("test accuracy"));
  const Result i = run("info --json --graph " + o.string());
  REQUIRE(i.code == 0);
  const nlohmann::json j = nlohmann::json::parse(i.out);
  CHECK(j["vertices"] == 60);
  CHECK(j["feature_dim"] == 3);
  CHECK(j["split"]["train"] == 36);
  CHECK(j["split"]["val"] == 12);
}

TEST_CASE("cli: outputs are checked before training: folders, clashes, inputs") {
  const fs::path d = tiny_dataset("outputs");
  const fs::path o = scratch("outputs");
  fs::create_directories(o / "adir");
  const std::string g = "train --quiet --graph " + d.string();
  const std::vector<std::pair<std::string, std::string>> cases = {
      {" --log-json " + (o / "adir").string(), "is a directory"},
      {" --log-json " + (o / "same").string() + " --predictions " + (o / "." / "same").string(),
       "--log-json and --predictions both write"},
      {" --predictions " + (d / "labels.txt").string(), "would overwrite the input folder's file"},
      {" --save " + (d / "edges.txt").string(), "would overwrite the input"},
  };
  expect_one_line_errors(g, cases);
  CHECK_FALSE(fs::exists(o / "same"));
  // Resuming in place: --save may replace --load's checkpoint.
  REQUIRE(run(g + " --epochs 1 --save " + (o / "ck").string()).code == 0);
  CHECK(run(g + " --epochs 2 --load " + (o / "ck").string() + " --save " + (o / "ck").string())
            .code == 0);
  // A link is followed: the file it names gets the log, the link stays.
  fs::create_symlink("real.jsonl", o / "link.jsonl");
  REQUIRE(run(g + " --epochs 1 --log-json " + (o / "link.jsonl").string()).code == 0);
  CHECK(fs::is_symlink(fs::symlink_status(o / "link.jsonl")));
  CHECK(fs::file_size(o / "real.jsonl") > 0);
}

TEST_CASE("cli: empty splits, one-class edge tasks and options that would do nothing are refused") {
  const fs::path d = tiny_dataset("empty_splits");
  const fs::path o = scratch("contradictions");
  write(o / "empty.txt", "# no ids\n");
  write(o / "signed.txt", "0 1 1 10\n1 2 2 20\n2 3 1 30\n3 0 4 40\n0 2 1 50\n1 3 1 60\n");
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"train --epochs 1 --graph " + d.string() + " --test-ids " + (o / "empty.txt").string(),
       "empty.txt: no vertex ids found"},
      {"train --epochs 1 --graph " + (o / "signed.txt").string() +
           " --weight-col 2 --time-col 3 --snapshots 6 --task edge",
       "every weight is positive: one class"},
      {"partition --graph " + d.string() + " --parts 2 --dry-run --out " + (o / "p").string(),
       "--dry-run writes nothing"},
      {"train --epochs 1 --graph " + d.string() + " --batch-size 8 --fanouts 99999999999,3",
       "'99999999999' is too large"},
      {"train --epochs 1 --graph " + d.string() + " --features " + (o / "f.txt").string() +
           " --feature-dim 8",
       "--generate-features and --feature-dim make features when none are given"},
  };
  std::string features;
  for (int i = 0; i < 40; ++i) features += std::to_string(100 + 10 * i) + " 1 0\n";
  write(o / "f.txt", features);
  expect_one_line_errors("", cases);
  CHECK_FALSE(fs::exists(o / "p"));
}

TEST_CASE("cli: a checkpoint of another model, or past --epochs, is refused") {
  const fs::path d = tiny_dataset("checkpoint");
  const fs::path o = scratch("checkpoint_mismatch");
  const std::string g = "train --quiet --graph " + d.string();
  REQUIRE(run(g + " --model gat --epochs 2 --save " + (o / "gat.ckpt").string()).code == 0);
  Result r = run(g + " --model gcn --epochs 3 --load " + (o / "gat.ckpt").string());
  CHECK(r.code != 0);
  CHECK_THAT(r.out, Catch::Contains("checkpoint was written for --model gat, this run trains gcn"));
  r = run(g + " --model gat --epochs 1 --load " + (o / "gat.ckpt").string());
  CHECK(r.code != 0);
  CHECK_THAT(r.out, Catch::Contains("checkpoint is at epoch 2, past --epochs 1"));
  CHECK(run(g + " --model gat --epochs 3 --load " + (o / "gat.ckpt").string()).code == 0);
  // Another graph of the same shapes (a copy with one edge changed), or another split of the
  // same graph, is not what the checkpoint was trained on. A temporal checkpoint likewise.
  const fs::path other = scratch("checkpoint_other_graph");
  fs::copy(d, other, fs::copy_options::recursive | fs::copy_options::overwrite_existing);
  { std::ofstream(other / "edges.txt", std::ios::app) << "100 490\n"; }
  r = run("train --quiet --graph " + other.string() + " --model gat --epochs 3 --load " +
          (o / "gat.ckpt").string());
  CHECK(r.code != 0);
  CHECK(count_lines(r.out) == 1);
  CHECK_THAT(r.out, Catch::Contains("checkpoint was trained on another graph or split"));
  const fs::path e = scratch("checkpoint_events");
  std::string events;
  for (int i = 0; i < 80; ++i)
    events += std::to_string(i % 12) + " " + std::to_string((i * 5 + 1) % 12) + " " +
              std::to_string(i) + "\n";
  write(e / "a.txt", events);
  write(e / "b.txt", events + "3 9 79\n");
  const std::string t = " --time-col 2 --quiet --model gcrn --hidden 4";
  const std::string eight = t + " --snapshots 8";
  REQUIRE(run("train --graph " + (e / "a.txt").string() + eight + " --epochs 1 --save " +
              (e / "t.ckpt").string())
              .code == 0);
  CHECK(run("train --graph " + (e / "a.txt").string() + eight + " --epochs 2 --load " +
            (e / "t.ckpt").string())
            .code == 0);
  r = run("train --graph " + (e / "b.txt").string() + eight + " --epochs 2 --load " +
          (e / "t.ckpt").string());
  CHECK_THAT(r.out, Catch::Contains("trained on another graph or split"));
  r = run("train --graph " + (e / "a.txt").string() + t + " --snapshots 6 --epochs 2 --load " +
          (e / "t.ckpt").string());
  CHECK_THAT(r.out, Catch::Contains("trained on another graph or split"));
}

TEST_CASE("cli: options of another partitioner, fractions beside split files, bad layouts") {
  const fs::path d = tiny_dataset("partitioner_options");  // has train.txt, val.txt, test.txt
  const fs::path o = scratch("more_refusals");
  fs::create_directories(o / "lay");
  write(o / "lay" / "edges.txt", "0 1 5\n1 2 6\n2 0 7\n");
  write(o / "lay" / "snapshots.txt", "time-col 1\n");
  fs::create_directories(o / "dup");
  write(o / "dup" / "edges.txt", "0 1 5\n1 2 6\n2 0 7\n");
  write(o / "dup" / "snapshots.txt", "time-col 2\nsnapshots 2\nsnapshots 3\n");
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"partition --graph " + d.string() +
           " --parts 2 --partitioner random --objective volume "
           "--dry-run",
       "--objective is for --partitioner metis"},
      {"train --epochs 1 --graph " + d.string() + " --train-frac 0.5",
       "the split comes from files here"},
      {"info --graph " + (o / "lay").string(), "snapshots.txt:1: expected an integer from 2"},
      {"info --graph " + (o / "dup").string(), "snapshots.txt:3: a second 'snapshots' line"},
      {"plan --ranks 2 --latency-us 1e308", "--latency-us must be from 0 to 1e6"},
      {"plan --ranks 2 --network nvlink --latency-us 1 --bandwidth-gbs 10",
       "replace both of its figures"},
  };
  expect_one_line_errors("", cases);
}

TEST_CASE("cli: the deep models train, select on validation loss and write their outputs") {
  const fs::path d = tiny_dataset("deep_models");
  const fs::path out = scratch("deep_models_out");
  for (const std::string model : {"gcnii", "resgcn"}) {
    const Result r = run("train --graph " + d.string() + " --model " + model +
                         " --layers 16 --hidden 8 --epochs 3 --select loss --normalize-features "
                         "--conv-weight-decay 0.01 --log-json " + (out / (model + ".jsonl")).string() +
                         " --predictions " + (out / (model + ".txt")).string() + " --embeddings " +
                         (out / (model + ".npy")).string());
    INFO(r.out);
    REQUIRE(r.code == 0);
    CHECK_THAT(r.out, Catch::Contains("val loss"));
    CHECK_THAT(r.out, Catch::Contains("test accuracy"));
    std::ifstream log(out / (model + ".jsonl"));
    std::string line, last;
    int epochs = 0;
    while (std::getline(log, line)) {
      if (line.find("\"val_loss\"") != std::string::npos) ++epochs;
      last = line;
    }
    CHECK(epochs == 3);
    CHECK_THAT(last, Catch::Contains("\"model\":\"" + model + "\""));
    CHECK_THAT(last, Catch::Contains("\"select\":\"loss\""));
    CHECK_THAT(last, Catch::Contains("\"conv_weight_decay\":0.0099999"));
    CHECK(fs::file_size(out / (model + ".txt")) > 0);
    CHECK(fs::file_size(out / (model + ".npy")) > 128);
  }
  // A checkpoint resumes only under the selection, features and GCNII constants it was trained
  // with (its best score is of that kind).
  const std::string base = "train --graph " + d.string() +
                           " --model gcnii --layers 4 --hidden 8 --quiet";
  const std::string ckpt = (out / "gcnii.ckpt").string();
  REQUIRE(run(base + " --select loss --epochs 2 --save " + ckpt).code == 0);
  CHECK(run(base + " --select loss --epochs 4 --load " + ckpt).code == 0);
  expect_one_line_errors(base + " --epochs 4 --load " + ckpt,
                         {{" --select acc", "checkpoint was trained with --select loss, this run "
                                            "has acc"},
                          {"", "checkpoint was trained with --select loss, this run has acc"}});
  expect_one_line_errors(base + " --select loss --epochs 4 --load " + ckpt,
                         {
                          {" --alpha 0.2", "checkpoint was trained with --alpha 0.1, this run "
                                           "has 0.2"},
                          {" --normalize-features",
                           "checkpoint was trained with --normalize-features false"}});
}
