// Forecasting (gnn/temporal/forecast.hpp) on the GPU against the CPU: every temporal model and
// GCN per step, on a generated diffusion signal; each epoch's loss and the test errors.
#include <catch2/catch.hpp>
#include <memory>
#include <vector>

#include "dgnn/comm/communicator.hpp"
#include "dgnn/datasets/diffusion.hpp"
#include "dgnn/gnn/temporal/forecast.hpp"
#include "gpu_util.hpp"

using namespace dgnn;

namespace {

struct Outcome {
  std::vector<double> losses;
  ForecastResult result;
};

Outcome train(const SignalSeries& s, const std::string& model_name, Device dev) {
  std::vector<int64_t> owned;
  for (int64_t v = 0; v < s.vertices(); ++v) owned.push_back(v);
  const ForecastData data = forecast_rows(s, owned);
  GraphView view(s.graph.snapshot(0), dev);
  ForecastOptions opt;
  opt.epochs = 3;
  opt.bptt = 8;
  opt.seed = 2;
  const std::vector<int64_t> dims{forecast_input_dim(data, opt.lags), 16};
  std::unique_ptr<TemporalModel> model =
      model_name == "gcn" ? make_per_step_model(builtin_layer(ModelKind::gcn), dims)
                          : make_temporal_model(parse_temporal_kind(model_name), dims);
  model->reset_parameters(opt.seed);
  model->to(dev);
  ForecastTrainer trainer(*model, {&view}, data, world(), opt, dev);
  Outcome o;
  o.result = trainer.run([&](const EpochRecord& e) { o.losses.push_back(e.loss); });
  return o;
}

}  // namespace

TEST_CASE("forecasting trains on the GPU as on the CPU", "[gpu]") {
  DiffusionConfig cfg;
  cfg.vertices = 2000;
  cfg.steps = 60;
  cfg.seed = 3;
  const DiffusionDataset d = generate_diffusion(cfg);
  EdgeList e;
  for (size_t i = 0; i < d.src.size(); ++i) e.src.push_back(d.src[i]), e.dst.push_back(d.dst[i]);
  SignalSeries s;
  s.graph = static_as_temporal(e, EdgeListOptions{}, "diffusion", cfg.vertices);
  s.steps = cfg.steps;
  s.channels = 1;
  s.values = d.signal;
  for (const char* model : {"tgcn", "gcrn", "evolvegcn-o", "evolvegcn-h", "gcn"}) {
    INFO(model);
    const Outcome cpu = train(s, model, Device::cpu);
    const Outcome gpu = train(s, model, Device::cuda);
    REQUIRE(gpu.losses.size() == cpu.losses.size());
    for (size_t i = 0; i < cpu.losses.size(); ++i)
      CHECK(gpu.losses[i] == Approx(cpu.losses[i]).epsilon(1e-3));
    CHECK(gpu.result.test.mse == Approx(cpu.result.test.mse).epsilon(2e-3));
    CHECK(gpu.result.test.mae == Approx(cpu.result.test.mae).epsilon(2e-3));
    CHECK(gpu.result.test_zero.mse == Approx(cpu.result.test_zero.mse).epsilon(1e-12));
  }
}
