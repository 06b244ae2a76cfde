// `dgnn train --batch-size`: bad mini-batch options are one line naming the option, before any
// loading; a mini-batch run logs its steps and sampling times and learns.
#include <catch2/catch.hpp>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli_helpers.hpp"

using namespace cli_test;

namespace {

// A generated graph in a folder of the calling test case's own (`name`): ctest runs the cases
// as parallel processes, and a folder shared between them is wiped by the other's scratch().
fs::path sbm_dir(const std::string& name) {
  const fs::path dir = scratch("minibatch_sbm_" + name);
  Result r = run("generate sbm --vertices 2000 --classes 4 --seed 3 --out " + (dir / "g").string());
  REQUIRE(r.code == 0);
  return dir / "g";
}

}  // namespace

TEST_CASE("cli: bad mini-batch options are one line naming the option") {
  const std::string g = "train --graph " + sbm_dir("bad").string() + " --epochs 1 ";
  struct Bad {
    std::string args, option;
  };
  for (const Bad& b : std::vector<Bad>{
           {"--batch-size 0", "--batch-size"},
           {"--batch-size -4", "--batch-size"},
           {"--batch-size 32 --fanouts 10", "--fanouts"},        // 1 fanout, 2 layers
           {"--batch-size 32 --fanouts 10,10,10", "--fanouts"},  // 3 fanouts, 2 layers
           {"--batch-size 32 --fanouts 10,x", "--fanouts"},
           {"--batch-size 32 --fanouts 10,0", "--fanouts"},
           {"--batch-size 32 --fanouts ''", "--fanouts"},
           {"--fanouts 10,10", "--fanouts"},  // without --batch-size
           {"--replace", "--replace"},
           // GAT mini-batches on a GPU are sampled on the CPU; here the device itself is refused
           // (no GPU, or no CUDA in this build), before anything is loaded
           {"--batch-size 32 --model gat --device cuda", "--device cuda"},
       }) {
    INFO(b.args);
    Result r = run(g + b.args);
    INFO(r.out);
    CHECK(r.code != 0);
    CHECK(r.out.find(b.option) != std::string::npos);
    CHECK(count_lines(r.out) == 1);
  }
}

TEST_CASE("cli: mini-batch training logs steps and sampling, and learns") {
  fs::path out = scratch("minibatch_out");
  Result r = run("train --graph " + sbm_dir("learns").string() + " --model sage --batch-size 64 " +
                 "--fanouts 5,10 --epochs 8 --log-json " + (out / "log.jsonl").string());
  INFO(r.out);
  REQUIRE(r.code == 0);
  std::ifstream log(out / "log.jsonl");
  std::vector<nlohmann::json> lines;
  for (std::string line; std::getline(log, line);) lines.push_back(nlohmann::json::parse(line));
  REQUIRE(lines.size() == 9);
  for (int e = 0; e < 8; ++e) {
    const auto& j = lines[size_t(e)];
    CHECK(j["steps"] == 19);  // 60% of 2000 vertices train, 64 per step
    CHECK(j["sample_ms"].get<double>() > 0);
    CHECK(j["sample_hidden_ms"].get<double>() >= 0);
    CHECK(j["sample_hidden_ms"].get<double>() <= j["sample_ms"].get<double>());
    CHECK(j["sampled_edges"].get<int64_t>() > 0);
  }
  const auto& final = lines.back();
  CHECK(final["final"] == true);
  CHECK(final["settings"]["batch_size"] == 64);
  CHECK(final["settings"]["fanouts"] == std::vector<int>{5, 10});
  CHECK(final["settings"]["prefetch"] == true);
  CHECK(final["test_acc"].get<double>() > 0.7);
}
