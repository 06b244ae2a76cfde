// The library runs of static node classification and forecasting on one process: built from a
// config, they train as the task's own trainer does when assembled by hand (the same losses and
// test numbers), and their epoch lines name each task's metrics.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "dgnn/comm/communicator.hpp"
#include "dgnn/datasets/diffusion.hpp"
#include "dgnn/gnn/temporal/forecast_run.hpp"
#include "dgnn/gnn/train/static_run.hpp"
#include "dgnn/graph/dataset.hpp"

using namespace dgnn;

TEST_CASE("StaticRun on Cora trains as a Trainer assembled by hand") {
  DatasetOptions data;
  data.graph = std::string(DGNN_SOURCE_DIR) + "/datasets/cora";
  TrainOptions opt;
  opt.epochs = 5;
  opt.seed = 2;
  SelfCommunicator self;

  StaticRunConfig cfg;
  cfg.layer = static_layer("gcn", 0.5f, &cfg.model);
  cfg.train = opt;
  std::vector<double> run_losses;
  std::vector<std::string> lines;
  StaticRun run([&] { return load_dataset(data); }, cfg, self);
  const TrainResult r = run.train([&](const EpochRecord& e) {
    run_losses.push_back(e.loss);
    lines.push_back(epoch_line(e, run.epoch_format(), false));
  });
  CHECK(cfg.model == "gcn");
  CHECK(run.row_ids().size() == 2708);

  const Dataset d = load_dataset(data);
  NodeTask task = make_node_task(d);
  GraphView graph(d.graph.in);
  StackModel model(static_layer("gcn", 0.5f, &cfg.model).factory, {1433, 16, 7}, 0.5f);
  model.reset_parameters(opt.seed);
  Trainer trainer(model, graph, task, self, opt);
  std::vector<double> losses;
  const TrainResult h = trainer.run([&](const EpochRecord& e) { losses.push_back(e.loss); });
  REQUIRE(losses.size() == run_losses.size());
  for (size_t i = 0; i < losses.size(); ++i) CHECK(run_losses[i] == Approx(losses[i]).epsilon(1e-6));
  CHECK(r.test_acc == Approx(h.test_acc).margin(2e-3));
  REQUIRE(lines.size() == 5);
  CHECK(lines[0].rfind("epoch    1  loss ", 0) == 0);
  CHECK(lines[0].find("  train ") != std::string::npos);
  CHECK(lines[0].find("  val ") != std::string::npos);
  CHECK(lines[0].find("test") == std::string::npos);  // logged, not printed
}

TEST_CASE("ForecastRun forecasts a generated diffusion better than either naive forecast") {
  DiffusionConfig gen;
  gen.vertices = 200;
  gen.steps = 80;
  gen.classes = 4;
  gen.seed = 1;
  ForecastRunConfig cfg;
  cfg.model = "tgcn";
  cfg.train.epochs = 8;
  cfg.train.bptt = 10;
  SelfCommunicator self;
  ForecastRun run([&] { return generate_diffusion(gen).to_series(); }, cfg, self);
  std::vector<std::string> json;
  const ForecastResult r =
      run.train([&](const EpochRecord& e) { json.push_back(epoch_json(e, run.epoch_format())); });
  CHECK(run.graph().num_vertices == 200);
  CHECK(run.split().samples == 80 - 4 - 1 + 1);
  CHECK(r.test.mse < r.test_zero.mse);
  CHECK(r.test.mse < r.test_last.mse);
  CHECK(run.trainer().test_forecasts().size() == size_t(run.split().test * 200));
  REQUIRE(json.size() == 8);
  for (const char* key : {"\"train_mse\"", "\"val_mse\"", "\"val_mae\"", "\"val_rmse\"", "\"val_mape\""})
    CHECK(json[0].find(key) != std::string::npos);
  // A config that cannot fit is refused before anything is read.
  ForecastRunConfig bad = cfg;
  bad.train.lags = 0;
  CHECK_THROWS_AS(ForecastRun([]() -> SignalSeries { throw Error("read"); }, bad, self), OptionError);
}
