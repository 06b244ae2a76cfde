// `dgnn train --task forecast`: a signal on every vertex at every step (PyG-Temporal's JSON, or a
// dataset folder with signals.npy), each vertex's signal `--horizon` steps ahead predicted from
// its last `--lags` (gnn/temporal/forecast.hpp).
#include <omp.h>

#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>

#include "dgnn/cli/options.hpp"
#include "dgnn/cli/train_args.hpp"
#include "dgnn/comm/communicator.hpp"
#include "dgnn/gnn/temporal/forecast_run.hpp"
#include "dgnn/graph/dataset.hpp"
#include "dgnn/graph/npy.hpp"
#include "dgnn/graph/signals.hpp"

namespace dgnn::cli {

namespace {

namespace fs = std::filesystem;

// The signal file a dataset folder or --signals names ("" when neither does).
std::string signal_file(const std::string& graph, const std::string& signals) {
  if (!signals.empty()) return signals;
  std::error_code ec;
  if (fs::is_directory(graph, ec))
    for (const char* name : {"signals.npy", "signals.npy.gz"})
      if (fs::exists(fs::path(graph) / name)) return (fs::path(graph) / name).string();
  return "";
}

}  // namespace

SignalSeries read_signal_input(const DatasetOptions& data, const SnapshotOptions& snapshots,
                               const std::string& signals) {
  if (is_signal_json(data.graph)) return read_signal_json(data.graph);
  const std::string npy = signal_file(data.graph, signals);
  if (npy.empty())
    throw OptionError(
        "--task forecast needs a signal on the vertices: --graph FILE.json "
        "(PyG-Temporal's layout), a dataset folder with signals.npy, or --signals "
        "FILE.npy ([steps, vertices] or [steps, vertices, channels])");
  NpyMatrix m = read_signal_npy(npy);
  const int64_t n = m.shape[1];
  // Ids 0..N-1 are the signal's columns: vertices even without an edge.
  TemporalGraph g;
  if (is_temporal_input(data.graph, data.edges, snapshots)) {
    g = load_temporal(data.graph, data.edges, snapshots, n);
  } else {
    std::error_code ec;
    const std::string file =
        fs::is_directory(data.graph, ec) ? find_edges_file(data.graph) : data.graph;
    g = static_as_temporal(read_edge_list(file, data.edges), data.edges, file, n);
  }
  return attach_signals(std::move(g), std::move(m), npy);
}

void run_train_forecast(TrainArgs& a) {
  if (a.data.graph.empty())
    throw OptionError(
        "--task forecast needs --graph: a PyG-Temporal JSON file (e.g. "
        "datasets/chickenpox/chickenpox.json.gz) or a dataset folder with "
        "signals.npy (dgnn generate diffusion makes one)");
  if (!a.embeddings.empty())
    throw OptionError(
        "--embeddings: not written by --task forecast (--predictions writes the "
        "test forecasts)");
  set_threads(a.threads);
  check_outputs(
      a, {{"--log-json", a.log_json}, {"--predictions", a.predictions}, {"--save", a.train.save}});
  ForecastRunConfig cfg;
  cfg.model = a.model.empty() ? "tgcn" : a.model;
  cfg.layers = a.layers;
  cfg.hidden = a.hidden;
  cfg.strategy = a.strategy;
  cfg.partition = temporal_partition_options(a);
  ForecastOptions& opt = cfg.train;
  static_cast<TrainOptions&>(opt) = a.train;  // epochs, optimiser, checkpoints, patience
  opt.lags = a.lags;
  opt.horizon = a.horizon;
  opt.bptt = a.bptt;
  if (a.train_frac_given) opt.train_frac = a.data.train_frac;
  if (a.val_frac_given) opt.val_frac = a.data.val_frac;
  Communicator& comm = world();
  check_parts(a, comm);
  ForecastRun::check(cfg, comm.size());
  std::unique_ptr<DeviceComm> device_link;
  cfg.device = train_device(a, comm, &device_link);
  // A signal names its vertices 0..N-1: a .npy of features has a row for each, no more (as
  // read_vertex_features requires of every temporal graph).
  std::string feature_file;
  cfg.features = [&](const TemporalGraph& g, int64_t* dim) {
    return read_static_features(a, g, dim, &feature_file);
  };
  nlohmann::json settings = temporal_settings(a, cfg.model, "forecast", comm.size());
  settings.update({{"lags", opt.lags},
                   {"horizon", opt.horizon},
                   {"train_frac", opt.train_frac},
                   {"val_frac", opt.val_frac}});
  if (std::string id = checkpoint_data_id(a, comm, true); !id.empty()) {
    char buf[128];
    std::snprintf(buf, sizeof buf, ":forecast:lags=%d:horizon=%d:split=%.9g/%.9g", opt.lags,
                  opt.horizon, opt.train_frac, opt.val_frac);
    settings["data"] = id + buf;
  }
  // Checkpoints record the settings known before the data is read (model, task and data are
  // what a resumed run checks).
  opt.meta_json = settings.dump();
  ForecastRun run([&] { return read_signal_input(a.data, a.snapshots, a.signals); }, cfg, comm);
  const TemporalGraph& g = run.graph();
  const ForecastSplit& split = run.split();
  settings.update({{"signals", run.signal_source()},
                   {"steps", run.steps()},
                   {"channels", run.channels()},
                   {"snapshots", g.num_snapshots()}});
  const bool root = comm.rank() == 0;
  if (!a.quiet && root) {
    std::printf(
        "signal: %lld vertices, %lld steps x %lld channel%s (%s), %s graph of %d snapshot%s; "
        "lags %d, horizon %d: %lld samples, train/val/test %lld/%lld/%lld (loaded in %.0f ms)\n",
        (long long)g.num_vertices, (long long)run.steps(), (long long)run.channels(),
        run.channels() == 1 ? "" : "s", run.signal_source().c_str(),
        g.num_snapshots() == 1 ? "a static" : "a temporal", g.num_snapshots(),
        g.num_snapshots() == 1 ? "" : "s", opt.lags, opt.horizon, (long long)split.samples,
        (long long)split.train, (long long)split.val, (long long)split.test, run.load_ms());
    if (comm.size() > 1) std::printf("%s\n", describe_moves(run.moves(), comm.size()).c_str());
  }
  EpochPrinter printer(a, comm, run.epoch_format());
  const ForecastResult res = run.train(printer.callback());
  // The model holds the tested (best-validation) parameters.
  if (!a.predictions.empty())
    write_forecasts(a.predictions, run.trainer().test_forecasts(), run.forecast_ids(), split.test,
                    run.channels(), comm);
  if (!root) return;
  if (res.stopped_early)
    std::printf("stopped at epoch %d: no better validation MSE for %d epochs (--patience)\n",
                res.last_epoch, a.train.patience);
  char chosen[96];
  if (split.val > 0)
    std::snprintf(chosen, sizeof chosen, "best val mse %.4g at epoch %d", res.best_val.mse,
                  res.best_epoch);
  else
    std::snprintf(chosen, sizeof chosen, "no validation: epoch %d's parameters", res.last_epoch);
  std::printf(
      "test mse %.4f mae %.4f rmse %.4f mape %.2f%%  (predict 0: mse %.4f mae %.4f; last value: "
      "mse %.4f mae %.4f)  %s, median epoch %.1f ms\n",
      res.test.mse, res.test.mae, res.test.rmse, res.test.mape, res.test_zero.mse,
      res.test_zero.mae, res.test_last.mse, res.test_last.mae, chosen, res.median_epoch_ms);
  if (printer.logging()) {
    auto metrics = [](const ForecastMetrics& m) {
      return nlohmann::json{{"mse", m.mse}, {"mae", m.mae}, {"rmse", m.rmse}, {"mape", m.mape}};
    };
    nlohmann::json j = {
        {"final", true},
        {"test_mse", res.test.mse},
        {"test_mae", res.test.mae},
        {"test_rmse", res.test.rmse},
        {"test_mape", res.test.mape},
        {"naive_zero", metrics(res.test_zero)},
        {"naive_last", metrics(res.test_last)},
        {"best_val_mse", res.best_val.mse},
        {"best_epoch", res.best_epoch},
        {"epochs", res.last_epoch},
        {"stopped_early", res.stopped_early},
        {"median_epoch_ms", res.median_epoch_ms},
        {"test_ms", res.test_ms},
        {"samples", {{"train", split.train}, {"val", split.val}, {"test", split.test}}},
        {"settings", settings}};
    printer.final_line(j, res);
  }
}

}  // namespace dgnn::cli
