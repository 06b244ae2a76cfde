// Forecasting (gnn/temporal/forecast.hpp): the split, the naive forecasts against hand-computed
// errors, gradients against finite differences, a signal only the graph explains learnt below
// both naive forecasts, and the generator's data.
#include <omp.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>

#include "dgnn/comm/communicator.hpp"
#include "dgnn/common/error.hpp"
#include "dgnn/datasets/diffusion.hpp"
#include "dgnn/gnn/temporal/forecast.hpp"
#include "dgnn/graph/npy.hpp"

using namespace dgnn;

namespace {

// A ring of n vertices (v -> v + 1; both ways unless `directed`) and a signal f(t, v, c).
template <class F>
SignalSeries ring_series(int64_t n, int64_t steps, int64_t channels, F f, bool directed = false) {
  EdgeList e;
  for (int64_t v = 0; v < n; ++v) e.src.push_back(v), e.dst.push_back((v + 1) % n);
  EdgeListOptions opt;
  opt.directed = directed;
  SignalSeries s;
  s.graph = static_as_temporal(e, opt, "ring", n);
  s.steps = steps;
  s.channels = channels;
  for (int64_t t = 0; t < steps; ++t)
    for (int64_t v = 0; v < n; ++v)
      for (int64_t c = 0; c < channels; ++c) s.values.push_back(float(f(t, v, c)));
  return s;
}

struct Run {
  SignalSeries series;
  std::unique_ptr<GraphView> view;
  ForecastData data;
  std::unique_ptr<TemporalModel> model;
  std::unique_ptr<ForecastTrainer> trainer;
};

std::unique_ptr<Run> make_run(SignalSeries s, const std::string& model, ForecastOptions opt,
                              int64_t hidden = 8, std::vector<float> statics = {},
                              int64_t static_dim = 0) {
  auto r = std::make_unique<Run>();
  r->series = std::move(s);
  r->view = std::make_unique<GraphView>(r->series.graph.snapshot(0));
  std::vector<int64_t> owned;
  for (int64_t v = 0; v < r->series.vertices(); ++v) owned.push_back(v);
  r->data = forecast_rows(r->series, owned, statics, static_dim);
  const std::vector<int64_t> dims{forecast_input_dim(r->data, opt.lags), hidden};
  if (model == "gcn" || model == "sage")
    r->model = make_per_step_model(builtin_layer(parse_model_kind(model)), dims);
  else
    r->model = make_temporal_model(parse_temporal_kind(model), dims);
  r->model->reset_parameters(opt.seed);
  r->trainer = std::make_unique<ForecastTrainer>(
      *r->model, std::vector<const GraphView*>{r->view.get()}, r->data, world(), opt);
  return r;
}

}  // namespace

TEST_CASE("forecast split: samples from lags and horizon, split by time as PyG-Temporal does",
          "[forecast]") {
  ForecastOptions opt;  // lags 4, horizon 1, 0.7 / 0.1
  // chickenpox: 521 weeks, 4 lags -> 517 samples (PyG-Temporal's count).
  ForecastSplit s = forecast_split(521, opt);
  CHECK(s.first == 3);
  CHECK(s.samples == 517);
  CHECK(s.train == 361);  // int(0.7 * 517)
  CHECK(s.val == 51);
  CHECK(s.test == 105);
  opt.horizon = 3;
  opt.lags = 2;
  s = forecast_split(10, opt);  // samples at t = 1..6 (targets 4..9)
  CHECK(s.first == 1);
  CHECK(s.samples == 6);
  opt.lags = 0;
  CHECK_THROWS_WITH(forecast_split(10, opt), Catch::Contains("--lags must be >= 1"));
  opt.lags = 4;
  opt.horizon = 0;
  CHECK_THROWS_WITH(forecast_split(10, opt), Catch::Contains("--horizon must be >= 1"));
  opt.horizon = 7;
  CHECK_THROWS_WITH(forecast_split(10, opt), Catch::Contains("leaves 0 samples"));
  opt.horizon = 1;
  opt.train_frac = 0.1;
  CHECK_THROWS_WITH(forecast_split(8, opt), Catch::Contains("leaves 0 for training"));
  opt.train_frac = 0.9;
  opt.val_frac = 0.2;
  CHECK_THROWS_WITH(forecast_split(100, opt), Catch::Contains("--train-frac and --val-frac"));
}

TEST_CASE("forecast: the naive forecasts' errors are the hand-computed ones, zeros masked",
          "[forecast]") {
  // 3 vertices, 1 channel, x(t, v) = t - v (zero at t == v); lags 2, horizon 2: samples at
  // t = 1..T-3, target x(t + 2); predict 0 errs by the target, last value by 2.
  const int64_t T = 12;
  SignalSeries s =
      ring_series(3, T, 1, [](int64_t t, int64_t v, int64_t) { return double(t - v); });
  ForecastOptions opt;
  opt.lags = 2;
  opt.horizon = 2;
  opt.train_frac = 0.5;
  opt.val_frac = 0.2;
  opt.epochs = 1;
  auto r = make_run(std::move(s), "gcn", opt);
  const ForecastSplit& sp = r->trainer->split();
  REQUIRE(sp.samples == 9);
  REQUIRE(sp.train == 4);
  REQUIRE(sp.val == 1);
  REQUIRE(sp.test == 4);
  const ForecastResult res = r->trainer->run();
  // Test samples i = 5..8: t = 6..9, targets at 8..11.
  double sq = 0, ab = 0, ape = 0;
  int n = 0, nz = 0;
  for (int64_t t = 8; t <= 11; ++t)
    for (int64_t v = 0; v < 3; ++v) {
      const double y = double(t - v);
      sq += y * y, ab += std::fabs(y), ++n;
      if (y != 0) ape += 1.0, ++nz;
    }
  CHECK(res.test_zero.mse == Approx(sq / n).epsilon(1e-12));
  CHECK(res.test_zero.mae == Approx(ab / n).epsilon(1e-12));
  CHECK(res.test_zero.rmse == Approx(std::sqrt(sq / n)).epsilon(1e-12));
  CHECK(res.test_zero.mape == Approx(100.0 * ape / nz).epsilon(1e-12));
  CHECK(res.test_last.mse == Approx(4.0).epsilon(1e-12));
  CHECK(res.test_last.mae == Approx(2.0).epsilon(1e-12));
  // Validation: sample 4 (t = 5, target 7): vertices 0..2 -> 7, 6, 5.
  CHECK(res.val_zero.mse == Approx((49.0 + 36 + 25) / 3).epsilon(1e-12));
  CHECK(res.val_last.mae == Approx(2.0).epsilon(1e-12));
  // The model's forecasts: test x vertices x channels, finite.
  const std::vector<float> f = r->trainer->test_forecasts();
  REQUIRE(f.size() == 4 * 3);
  for (float x : f) CHECK(std::isfinite(x));
}

TEST_CASE("forecast: gradients of a training window equal finite differences", "[forecast]") {
  for (const char* model : {"tgcn", "gcrn", "evolvegcn-o", "gcn"}) {
    INFO(model);
    SignalSeries s = ring_series(7, 14, 2, [](int64_t t, int64_t v, int64_t c) {
      return std::sin(0.7 * double(t) + double(v)) + 0.3 * double(c) - 0.1 * double(v % 3);
    });
    ForecastOptions opt;
    opt.lags = 3;
    opt.seed = 5;
    std::vector<float> statics;
    for (int v = 0; v < 7; ++v) statics.push_back(0.2f * float(v) - 0.5f);
    auto r = make_run(std::move(s), model, opt, 5, statics, 1);
    const auto w = r->trainer->epoch_gradients(1);
    REQUIRE(w.size() == 1);  // --bptt 0: one window over the training samples
    const double n = double(w[0].count);
    // Central differences of the window's mean loss, a few entries of every parameter. An entry
    // whose one-sided differences disagree has a ReLU kink within eps (a unit changes sides):
    // no difference quotient stands for its gradient there, so it is counted, not compared.
    const double mid = w[0].loss / n;
    size_t offset = 0;
    int checked = 0, kinks = 0;
    for (auto& [name, p] : r->trainer->named_parameters()) {
      Tensor& value = p->var.node()->value;
      const int64_t count = value.numel();
      for (int64_t k = 0; k < count; k += std::max<int64_t>(1, count / 4)) {
        const float keep = value.data()[k];
        const float eps = 5e-4f;  // (EvolveGCN-O's evolved weights curve within 2e-3)
        value.data()[k] = keep + eps;
        const double up = r->trainer->epoch_gradients(1)[0].loss / n;
        value.data()[k] = keep - eps;
        const double down = r->trainer->epoch_gradients(1)[0].loss / n;
        value.data()[k] = keep;
        const double numeric = (up - down) / (2.0 * double(eps));
        const double right = (up - mid) / eps, left = (mid - down) / eps;
        const double analytic = w[0].grads[offset + size_t(k)];
        ++checked;
        if (std::fabs(right - left) > 5e-3 + 0.1 * std::fabs(numeric)) {
          ++kinks;
          continue;
        }
        INFO(name << "[" << k << "]: analytic " << analytic << ", numeric " << numeric);
        CHECK(std::fabs(analytic - numeric) <= 2e-3 + 2e-2 * std::fabs(numeric));
      }
      offset += size_t(count);
    }
    CHECK(kinks * 5 <= checked);
    CHECK(offset == w[0].grads.size());
    CHECK(checked > 10);
  }
}

TEST_CASE(
    "forecast: a signal that only the neighbours explain is learnt below both naive "
    "forecasts",
    "[forecast]") {
  // x(t + 1, v) = x(t, v - 1): a wave moving along a directed ring (v - 1 -> v). A vertex's own
  // past does not give its next value; its in-neighbour's last value is it. GraphSAGE per step
  // sees that neighbour alone in its mean.
  const int64_t n = 24, T = 120;
  std::vector<double> base(n);
  for (int64_t v = 0; v < n; ++v)
    base[size_t(v)] = std::sin(2.3 * double(v)) + 0.5 * std::cos(0.9 * double(v * v));
  SignalSeries s = ring_series(
      n, T, 1, [&](int64_t t, int64_t v, int64_t) { return base[size_t(((v - t) % n + n) % n)]; },
      /*directed=*/true);
  ForecastOptions opt;
  opt.lags = 2;
  opt.epochs = 120;
  opt.lr = 0.02f;
  opt.seed = 1;
  auto r = make_run(std::move(s), "sage", opt, 16);
  const ForecastResult res = r->trainer->run();
  INFO("test mse " << res.test.mse << ", predict 0 " << res.test_zero.mse << ", last value "
                   << res.test_last.mse);
  CHECK(res.test.mse < 0.1 * res.test_zero.mse);
  CHECK(res.test.mse < 0.1 * res.test_last.mse);
  CHECK(res.best_epoch > 0);
}

TEST_CASE("forecast: a graph whose vertex count is not the signal's is refused", "[forecast]") {
  SignalSeries s = ring_series(5, 10, 1, [](int64_t, int64_t, int64_t) { return 1.0; });
  auto view = std::make_unique<GraphView>(s.graph.snapshot(0));
  std::vector<int64_t> owned{0, 1, 2};
  const ForecastData d = forecast_rows(s, owned);
  auto model = make_temporal_model(TemporalKind::tgcn, {forecast_input_dim(d, 4), 4});
  CHECK_THROWS_WITH(ForecastTrainer(*model, {view.get()}, d, world(), ForecastOptions{}),
                    Catch::Contains("the graph owns 5 vertices, the signal has 3 rows"));
}

TEST_CASE("diffusion generator: shapes, standardised, the same on any thread count", "[forecast]") {
  DiffusionConfig cfg;
  cfg.vertices = 500;
  cfg.steps = 60;
  cfg.seed = 4;
  const DiffusionDataset a = generate_diffusion(cfg);
  REQUIRE(a.signal.size() == size_t(500 * 60));
  double sum = 0, sq = 0;
  for (float v : a.signal) sum += v, sq += double(v) * v;
  CHECK(std::fabs(sum / 30000) < 1e-4);
  CHECK(sq / 30000 == Approx(1.0).epsilon(1e-3));
  for (size_t e = 0; e < a.src.size(); ++e) CHECK(a.src[e] < a.dst[e]);
  const int threads = omp_get_max_threads();
  omp_set_num_threads(1);
  const DiffusionDataset b = generate_diffusion(cfg);
  omp_set_num_threads(threads);
  CHECK(a.signal == b.signal);
  CHECK(a.src == b.src);
  cfg.persistence = 1.0;
  CHECK_THROWS_WITH(generate_diffusion(cfg), Catch::Contains("persistence must be in [0, 1)"));
}
