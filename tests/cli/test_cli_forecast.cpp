// `dgnn train --task forecast` and `dgnn generate diffusion` as a user meets them: PyG-Temporal's
// chickenpox file learnt below both naive forecasts, the forecasts written as .npy, a generated
// folder, and one-line errors for signals that do not fit.
#include <catch2/catch.hpp>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "cli_helpers.hpp"

namespace fs = std::filesystem;
using namespace cli_test;
using Catch::Matchers::Contains;

namespace {

const std::string kChickenpox =
    std::string(DGNN_SOURCE_DIR) + "/datasets/chickenpox/chickenpox.json.gz";

nlohmann::json final_line(const fs::path& log) {
  std::ifstream in(log);
  std::string line, last;
  while (std::getline(in, line)) last = line;
  return nlohmann::json::parse(last);
}

// A float32 .npy of `shape` filled with `values`.
void write_npy(const fs::path& p, const std::vector<int64_t>& shape, const std::vector<float>& v) {
  std::string dims;
  for (int64_t d : shape) dims += std::to_string(d) + ", ";
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (" + dims + "), }";
  while ((10 + header.size() + 1) % 64) header.push_back(' ');
  header.push_back('\n');
  std::ofstream out(p, std::ios::binary);
  out << "\x93NUMPY" << char(1) << char(0) << char(header.size() & 0xff) << char(header.size() >> 8)
      << header;
  out.write(reinterpret_cast<const char*>(v.data()), std::streamsize(v.size() * 4));
}

std::string npy_header(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::string s(128, '\0');
  in.read(s.data(), 128);
  return s;
}

}  // namespace

TEST_CASE("cli forecast: T-GCN on chickenpox beats predicting 0 and the last value", "[cli]") {
  const fs::path d = scratch("forecast_chickenpox");
  const Result r =
      run("train --graph " + kChickenpox +
          " --task forecast --lags 4 --model tgcn --epochs 30 --threads 2 --log-json " +
          (d / "log.jsonl").string() + " --predictions " + (d / "pred.npy").string());
  INFO(r.out);
  REQUIRE(r.code == 0);
  CHECK_THAT(r.out, Contains("20 vertices, 521 steps x 1 channel"));
  CHECK_THAT(r.out, Contains("517 samples, train/val/test 361/51/105"));
  const nlohmann::json fin = final_line(d / "log.jsonl");
  const double mse = fin["test_mse"], zero = fin["naive_zero"]["mse"],
               last = fin["naive_last"]["mse"];
  INFO("test mse " << mse << ", predict 0 " << zero << ", last value " << last);
  CHECK(mse < zero);
  CHECK(mse < last);
  CHECK(fin["test_rmse"].get<double>() == Approx(std::sqrt(mse)));
  CHECK(fin["settings"]["task"] == "forecast");
  CHECK(fin["settings"]["lags"] == 4);
  // The test forecasts: one row per test sample, one column per county.
  CHECK_THAT(npy_header(d / "pred.npy"), Contains("'shape': (105, 20)"));
  CHECK(fs::file_size(d / "pred.npy") == 128 + 105 * 20 * 4);
}

TEST_CASE("cli forecast: a generated diffusion folder, static layers per step, three channels",
          "[cli]") {
  const fs::path d = scratch("forecast_diffusion");
  const Result g =
      run("generate diffusion --vertices 200 --steps 40 --seed 3 --out " + (d / "diff").string());
  INFO(g.out);
  REQUIRE(g.code == 0);
  CHECK(fs::exists(d / "diff" / "signals.npy"));
  CHECK_THAT(npy_header(d / "diff" / "signals.npy"), Contains("'shape': (40, 200)"));
  for (const char* model : {"gcn", "gcrn", "evolvegcn-o"}) {
    const Result r = run("train --graph " + (d / "diff").string() + " --task forecast --model " +
                         model + " --epochs 2 --hidden 8 --horizon 3 --quiet");
    INFO(model << "\n" << r.out);
    CHECK(r.code == 0);
    CHECK_THAT(r.out, Contains("test mse"));
  }
  // [T, N, F] through --signals for an edge list: every channel predicted.
  std::vector<float> v;
  for (int t = 0; t < 30; ++t)
    for (int n = 0; n < 5; ++n)
      for (int c = 0; c < 3; ++c) v.push_back(float((t + n) % 4) * 0.5f - float(c));
  write_npy(d / "three.npy", {30, 5, 3}, v);
  write(d / "ring.txt", "0 1\n1 2\n2 3\n3 4\n");
  const Result r = run("train --graph " + (d / "ring.txt").string() + " --signals " +
                       (d / "three.npy").string() + " --task forecast --epochs 2 --predictions " +
                       (d / "p3.npy").string());
  INFO(r.out);
  REQUIRE(r.code == 0);
  CHECK_THAT(r.out, Contains("5 vertices, 30 steps x 3 channels"));
  CHECK_THAT(npy_header(d / "p3.npy"), Contains("'shape': (6, 5, 3)"));  // 26 samples: 18/2/6
}

TEST_CASE("cli forecast: signals and options that do not fit are one line", "[cli]") {
  const fs::path d = scratch("forecast_bad");
  auto one_line_error = [](const std::string& args, const std::string& want) {
    const Result r = run(args);
    INFO(args << "\n" << r.out);
    CHECK(r.code != 0);
    CHECK_THAT(r.out, Contains(want));
    CHECK(count_lines(r.out) <= 2);
  };
  const std::string f = " --task forecast --epochs 1";
  one_line_error("train --graph " + kChickenpox + f + " --lags 0", "--lags must be >= 1");
  one_line_error("train --graph " + kChickenpox + f + " --horizon 600",
                 "--lags 4 --horizon 600: the signal has 521 steps");
  one_line_error("train --graph " + kChickenpox + f + " --strategy snapshot --partitioner hash",
                 "--partitioner: the snapshot strategy gives each rank whole steps");
  one_line_error("train --graph " + kChickenpox + " --epochs 1",
                 "a PyG-Temporal signal file; train on it with --task forecast");
  one_line_error("train --graph " + kChickenpox + f + " --time-col 2",
                 "--time-col: a PyG-Temporal .json names its edges and signal itself");
  one_line_error("train --graph " + kChickenpox + " --lags 3 --epochs 1",
                 "--lags: for --task forecast only");
  write(d / "nofx.json", "{\"edges\": [[0, 1]], \"weights\": [1.0]}");
  one_line_error("train --graph " + (d / "nofx.json").string() + f,
                 "nofx.json: no signal: expected \"FX\"");
  write(d / "ragged.json", "{\"edges\": [[0, 1]], \"FX\": [[1, 2, 3], [1, 2]]}");
  one_line_error("train --graph " + (d / "ragged.json").string() + f,
                 "ragged.json: step 1 of the signal has 2 values, step 0 has 3");
  write(d / "badedge.json", "{\"edges\": [[0, 1], [2, 7]], \"FX\": [[1, 2, 3], [1, 2, 3]]}");
  one_line_error("train --graph " + (d / "badedge.json").string() + f,
                 "badedge.json: edge 1 names vertex 7, outside 0..2");
  write(d / "weights.json", "{\"edges\": [[0, 1]], \"weights\": [1, 2], \"FX\": [[1, 2]]}");
  one_line_error("train --graph " + (d / "weights.json").string() + f,
                 "\"weights\" has 2 values for 1 edges");
  // Hostile nesting: described, not printed whole (printing recurses), and no crash.
  std::string deep = "{\"edges\": [" + std::string(100000, '[') + std::string(100000, ']') +
                     "], \"FX\": [[1, 2], [1, 2]]}";
  write(d / "deep.json", deep);
  one_line_error("train --graph " + (d / "deep.json").string() + f,
                 "deep.json: edge 0 is not a pair of vertex ids (a list of 1)");
  // A first row that promises more than the file holds: checked row by row, no allocation.
  std::string wide = "{\"edges\": [[0, 1]], \"FX\": [[[1";
  for (int i = 1; i < 100000; ++i) wide += ",1";
  write(d / "wide.json", wide + "], 2], [1]]}");
  one_line_error("train --graph " + (d / "wide.json").string() + f,
                 "wide.json: step 0 of the signal, vertex 1 does not have 100000 values");
  write(d / "huge_id.json", "{\"edges\": [[0, 18446744073709551615]], \"FX\": [[1, 2], [1, 2]]}");
  one_line_error("train --graph " + (d / "huge_id.json").string() + f,
                 "edge 0 names vertex 18446744073709551615, outside 0..1");
  write(d / "broken.json", "{\"edges\": [[0, 1]], \"FX\": [[1, 2]");
  one_line_error("train --graph " + (d / "broken.json").string() + f,
                 "broken.json: not valid JSON");
  // A folder: no signal, a signal of the wrong width, a temporal graph of other length.
  write(d / "folder" / "edges.txt", "0 1\n1 2\n2 5\n");
  one_line_error("train --graph " + (d / "folder").string() + f, "needs a signal on the vertices");
  write_npy(d / "folder" / "signals.npy", {10, 4}, std::vector<float>(40, 1.f));
  one_line_error(
      "train --graph " + (d / "folder").string() + f,
      "signals.npy: is [10, 4] ([T, N]), expected N = 6: the graph names vertex 5 (ids must be "
      "0..3, the signal's columns)");
  write(d / "temporal" / "edges.txt", "0 1 0\n1 2 15\n2 3 25\n");
  write(d / "temporal" / "snapshots.txt", "time-col 2\nsnapshot-seconds 10\n");
  write_npy(d / "temporal" / "signals.npy", {7, 4}, std::vector<float>(28, 1.f));
  one_line_error("train --graph " + (d / "temporal").string() + f,
                 "signals.npy: is [7, 4] ([T, N]), expected T = 3: the graph has 3 snapshots");
  std::vector<float> nan(40, 0.f);
  nan[13] = std::nanf("");
  write_npy(d / "folder" / "signals.npy", {10, 4}, nan);
  one_line_error("train --graph " + (d / "folder").string() + f,
                 "the value at step 3, vertex 1 is not a finite float32 (nan");
  write_npy(d / "folder" / "signals.npy", {40}, nan);
  one_line_error("train --graph " + (d / "folder").string() + f, "got a 1-D one of 40 values");
  write_npy(d / "folder" / "signals.npy", {10, 6}, std::vector<float>(60, 1.f));
  write_npy(d / "feats.npy", {9, 2}, std::vector<float>(18, 1.f));
  one_line_error(
      "train --graph " + (d / "folder").string() + f + " --features " + (d / "feats.npy").string(),
      "feats.npy: is 9 x 2, expected 6 x 2: one row per vertex id 0..5 of the graph");
  one_line_error("generate diffusion --vertices 10 --steps 1 --out " + (d / "g").string(),
                 "--steps");
}
