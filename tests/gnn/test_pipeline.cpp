// The pipeline strategy on one process (gnn/train/pipeline.hpp): the stage balance, refusals,
// and a one-stage pipeline with chunks (the multi-rank runs: tests/mpi/test_pipeline.cpp).
#include <catch2/catch.hpp>
#include <string>

#include "../small_sbm.hpp"
#include "dgnn/common/error.hpp"
#include "dgnn/gnn/train/pipeline.hpp"
#include "dgnn/gnn/train/static_run.hpp"

using namespace dgnn;

namespace {

StaticRunConfig deep_config(int layers, int epochs) {
  StaticRunConfig cfg;
  DeepModelOptions o;
  o.kind = DeepKind::gcnii;
  o.layers = layers;
  o.hidden = 16;
  o.dropout = 0.2f;
  cfg.deep = o;
  cfg.model = "gcnii";
  cfg.train.epochs = epochs;
  cfg.train.lr = 0.05f;
  cfg.train.seed = 4;
  return cfg;
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const OptionError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("balance_stages: contiguous groups with the smallest largest stage", "[pipeline]") {
  // Equal layers, nothing else: as even as the count allows.
  CHECK(balance_stages(std::vector<double>(8, 1.0), 0, 0, 0, 4) == std::vector<int>{1, 3, 5, 7, 9});
  CHECK(balance_stages(std::vector<double>(7, 1.0), 0, 0, 0, 1) == std::vector<int>{1, 8});
  // One layer per stage.
  CHECK(balance_stages(std::vector<double>(3, 1.0), 0, 0, 0, 3) == std::vector<int>{1, 2, 3, 4});
  // A heavy input layer on stage 0 moves layers to the other stages: 2 + 1 | 3 | 3.
  CHECK(balance_stages(std::vector<double>(7, 1.0), 2, 0, 0, 3) == std::vector<int>{1, 2, 5, 8});
  // A heavy head on the last stage: 3 | 3 | 1 + 2.
  CHECK(balance_stages(std::vector<double>(7, 1.0), 0, 2, 0, 3) == std::vector<int>{1, 4, 7, 8});
  // Work on every stage (GCNII's recomputed h0) changes no cut.
  CHECK(balance_stages(std::vector<double>(8, 1.0), 0, 0, 5, 4) == std::vector<int>{1, 3, 5, 7, 9});
  // Unequal layers: 4 | 1 1 1 1.
  CHECK(balance_stages({4, 1, 1, 1, 1}, 0, 0, 0, 2) == std::vector<int>{1, 2, 6});
  // More stages than layers: one line naming both.
  const std::string e = error_of([] { balance_stages(std::vector<double>(2, 1.0), 0, 0, 0, 4); });
  CHECK(e.find("4 stages for 2 graph layers") != std::string::npos);
  CHECK(e.find("--layers") != std::string::npos);
}

TEST_CASE("pipeline refusals: a stacked model, mini-batches, a device", "[pipeline]") {
  SelfCommunicator self;
  const Dataset d = test::small_sbm(100, 3);
  auto read = [&] { return d; };
  StaticRunConfig stacked = deep_config(2, 1);
  stacked.deep.reset();
  CHECK(error_of([&] { PipelineRun(read, stacked, {}, self); }).find("deep models") !=
        std::string::npos);
  StaticRunConfig mb = deep_config(2, 1);
  mb.minibatch = MiniBatchOptions{};
  CHECK(error_of([&] { PipelineRun(read, mb, {}, self); }).find("--batch-size") !=
        std::string::npos);
  PipelineOptions too_many;
  too_many.chunks = 101;
  CHECK(error_of([&] { PipelineRun(read, deep_config(2, 1), too_many, self); })
            .find("--chunks 101") != std::string::npos);
  PipelineOptions negative;
  negative.chunks = -1;
  CHECK(error_of([&] { PipelineRun(read, deep_config(2, 1), negative, self); })
            .find("--chunks") != std::string::npos);
}

TEST_CASE("a one-stage pipeline: one chunk is one process, chunks learn alike", "[pipeline]") {
  SelfCommunicator self;
  const Dataset d = test::small_sbm(600, 9);
  auto read = [&] { return d; };
  std::vector<double> ref;
  StaticRun one(read, deep_config(6, 30), self);
  const double ref_acc = one.train([&](const EpochRecord& r) { ref.push_back(r.loss); }).test_acc;

  PipelineOptions exact;
  exact.chunks = 1;
  PipelineRun same(read, deep_config(6, 30), exact, self);
  CHECK(same.stages() == 1);
  CHECK(same.chunks() == 1);
  CHECK(same.history_bytes() == 0);  // nothing is ever stale
  std::vector<double> got;
  const TrainResult r = same.train([&](const EpochRecord& e) { got.push_back(e.loss); });
  REQUIRE(got.size() == ref.size());
  for (size_t i = 0; i < ref.size(); ++i) CHECK(got[i] == Approx(ref[i]).epsilon(1e-5));
  CHECK(r.test_acc == Approx(ref_acc).margin(1e-12));

  PipelineOptions chunked;
  chunked.chunks = 5;
  PipelineRun stale(read, deep_config(6, 30), chunked, self);
  CHECK(stale.chunks() == 5);
  // One row per cut vertex and graph layer.
  CHECK(stale.history_bytes() > 0);
  CHECK(stale.history_bytes() <= 6 * 600 * 16 * 4);
  std::vector<double> sl;
  const TrainResult s = stale.train([&](const EpochRecord& e) { sl.push_back(e.loss); });
  CHECK(sl.back() < sl.front());
  CHECK(s.test_acc > 0.45);
}
