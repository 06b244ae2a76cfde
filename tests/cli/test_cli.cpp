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

// A small labelled dataset directory with non-contiguous original ids.
fs::path tiny_dataset() {
  fs::path d = scratch("tiny");
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
  fs::path d = tiny_dataset();
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
  fs::path d = tiny_dataset();
  fs::path out = scratch("train_out");
  Result r = run("train --graph " + d.string() + " --epochs 5 --hidden 8 --log-json " +
                 (out / "log.json").string() + " --predictions " + (out / "pred.txt").string());
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
}
