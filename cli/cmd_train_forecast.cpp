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
#include "dgnn/gnn/temporal/forecast.hpp"
#include "dgnn/gnn/temporal/temporal_dist.hpp"
#include "dgnn/gnn/temporal/temporal_run.hpp"
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
  if (a.hidden < 1) throw OptionError("--hidden must be >= 1");
  if (a.layers < 1) throw OptionError("--layers must be >= 1");
  if (!a.embeddings.empty())
    throw OptionError(
        "--embeddings: not written by --task forecast (--predictions writes the "
        "test forecasts)");
  set_threads(a.threads);
  check_outputs(
      a, {{"--log-json", a.log_json}, {"--predictions", a.predictions}, {"--save", a.train.save}});
  ForecastOptions opt;
  static_cast<TrainOptions&>(opt) = a.train;  // epochs, optimiser, checkpoints, patience
  opt.lags = a.lags;
  opt.horizon = a.horizon;
  opt.bptt = a.bptt;
  if (a.train_frac_given) opt.train_frac = a.data.train_frac;
  if (a.val_frac_given) opt.val_frac = a.data.val_frac;
  forecast_split(1 << 30, opt);  // the options alone, before anything is read
  // The model: a temporal one, or static layers applied per step.
  const std::string model_name = a.model.empty() ? "tgcn" : a.model;
  const bool temporal_model = model_name == "evolvegcn-o" || model_name == "evolvegcn-h" ||
                              model_name == "gcrn" || model_name == "tgcn";
  Communicator& comm = world();
  check_parts(a, comm);
  const bool by_snapshot = a.strategy == "snapshot";
  if (comm.size() > 1 && !by_snapshot && model_name == "evolvegcn-h")
    throw OptionError(
        "--model evolvegcn-h does not run under --strategy vertex on several ranks: "
        "its top-k summary spans all vertices (use --strategy snapshot)");
  std::unique_ptr<DeviceComm> device_link;
  const Device dev = train_device(a, comm, &device_link);

  // Rank 0 reads the graph and the signal; the graph goes out as every temporal graph does, the
  // signal in one broadcast.
  SignalSeries series;
  LoadedTemporal in = load_temporal_on_ranks(
      [&] {
        series = read_signal_input(a.data, a.snapshots, a.signals);
        return std::move(series.graph);
      },
      comm,
      [](const LoadedTemporal&) {
        return std::function<bool(int, int)>([](int, int) { return true; });
      });
  const TemporalGraph& g = in.g;
  int64_t shape[2] = {series.steps, series.channels};
  comm.broadcast(shape, sizeof shape, 0);
  series.steps = shape[0];
  series.channels = shape[1];
  series.values.resize(size_t(shape[0] * g.num_vertices * shape[1]));
  comm.broadcast(series.values.data(), int64_t(series.values.size() * sizeof(float)), 0);
  std::string signal_source = series.source;
  series.source.clear();
  // The graph itself went to `in` (rank 0 moved it out); forecast_rows reads the vertex count.
  series.graph.num_vertices = g.num_vertices;
  ForecastSplit split;
  try {
    split = forecast_split(series.steps, opt);
  } catch (const OptionError& e) {
    const std::string where = signal_source.empty() ? "" : " (" + signal_source + ")";
    throw OptionError(e.what() + where);
  }

  std::string feature_file;
  int64_t static_dim = 0;
  // A signal names its vertices 0..N-1: a .npy of features has a row for each, no more (as
  // read_vertex_features requires of every temporal graph).
  const std::vector<float> statics = read_static_features(a, g, &static_dim, &feature_file);

  // Vertex strategy on several ranks: each rank its vertices of every step. One process, or the
  // snapshot strategy: whole graphs (under the snapshot strategy only those of the steps this
  // rank's samples read) and every vertex's signal.
  std::vector<std::unique_ptr<GraphView>> whole;
  std::unique_ptr<TemporalRank> rank_data;
  std::optional<SnapshotPlan> plan;
  std::vector<int64_t> owned;
  if (comm.size() == 1 || by_snapshot) {
    std::vector<int64_t> cost;  // per sample: its graph's entries plus the vertices
    std::vector<char> read(size_t(g.num_snapshots()), 1);
    if (by_snapshot) {
      std::vector<int64_t> nnz;
      SnapshotCursor cur(g);
      do nnz.push_back(cur.current().nnz());
      while (cur.next());
      for (int64_t i = 0; i < split.samples; ++i)
        cost.push_back(nnz[nnz.size() == 1 ? 0 : size_t(split.first + i)] + g.num_vertices);
      plan = forecast_snapshot_plan(split, opt, cost, comm.size(), g.num_vertices);
      if (g.num_snapshots() > 1) {
        std::fill(read.begin(), read.end(), 0);
        for (int64_t i = 0; i < split.samples; ++i)
          if (plan->owner[size_t(i)] == comm.rank()) read[size_t(split.first + i)] = 1;
      }
    }
    SnapshotCursor cur(g);
    do
      whole.push_back(read[size_t(cur.index())] ? std::make_unique<GraphView>(cur.current(), dev)
                                                : nullptr);
    while (cur.next());
    for (int64_t v = 0; v < g.num_vertices; ++v) owned.push_back(v);
  } else {
    rank_data = vertex_partition_rank(g, {}, temporal_partition_options(a), comm, dev);
    owned = rank_data->owned;
  }
  std::vector<const GraphView*> views;
  for (const auto& v : rank_data ? rank_data->graphs : whole) views.push_back(v.get());
  const ForecastData data = forecast_rows(series, owned, statics, static_dim);
  std::vector<float>().swap(series.values);  // each rank keeps its rows only

  std::vector<int64_t> dims{forecast_input_dim(data, opt.lags)};
  for (int i = 0; i < a.layers; ++i) dims.push_back(a.hidden);
  std::unique_ptr<TemporalModel> model;
  if (temporal_model) {
    model = make_temporal_model(parse_temporal_kind(model_name), dims);
  } else if (const LayerSpec* spec = find_registered_layer(model_name)) {
    model = make_per_step_model(spec->factory, dims);
  } else {
    model = make_per_step_model(builtin_layer(parse_model_kind(model_name)), dims);
  }
  model->reset_parameters(a.train.seed);
  if (dev != Device::cpu) model->to(dev);

  nlohmann::json settings = temporal_settings(a, model_name, "forecast", comm.size());
  settings.update({{"signals", signal_source},
                   {"lags", opt.lags},
                   {"horizon", opt.horizon},
                   {"steps", series.steps},
                   {"channels", series.channels},
                   {"snapshots", g.num_snapshots()},
                   {"train_frac", opt.train_frac},
                   {"val_frac", opt.val_frac}});
  if (std::string id = checkpoint_data_id(a, comm, true); !id.empty()) {
    char buf[128];
    std::snprintf(buf, sizeof buf, ":forecast:lags=%d:horizon=%d:split=%.9g/%.9g", opt.lags,
                  opt.horizon, opt.train_frac, opt.val_frac);
    settings["data"] = id + buf;
  }
  opt.meta_json = settings.dump();
  ForecastTrainer trainer(*model, views, data, comm, opt, dev, plan ? &*plan : nullptr);
  const bool root = comm.rank() == 0;
  if (!a.quiet && root) {
    std::printf(
        "signal: %lld vertices, %lld steps x %lld channel%s (%s), %s graph of %d snapshot%s; "
        "lags %d, horizon %d: %lld samples, train/val/test %lld/%lld/%lld (loaded in %.0f ms)\n",
        (long long)g.num_vertices, (long long)series.steps, (long long)series.channels,
        series.channels == 1 ? "" : "s", signal_source.c_str(),
        g.num_snapshots() == 1 ? "a static" : "a temporal", g.num_snapshots(),
        g.num_snapshots() == 1 ? "" : "s", opt.lags, opt.horizon, (long long)split.samples,
        (long long)split.train, (long long)split.val, (long long)split.test, in.ms);
    if (comm.size() > 1) std::printf("%s\n", describe_moves(in.moves, comm.size()).c_str());
  }
  std::unique_ptr<LineLog> log;
  if (root && !a.log_json.empty()) log = std::make_unique<LineLog>(a.log_json);
  const ForecastResult res = trainer.run([&](const ForecastEpoch& s) {
    if (!a.quiet && root) {
      std::printf("epoch %4d  loss %.4f  train mse %.4f", s.epoch, s.loss, s.train_mse);
      if (split.val > 0) std::printf("  val mse %.4f mae %.4f", s.val.mse, s.val.mae);
      std::printf("  %7.1f ms", s.time_ms);
      if (comm.size() > 1) print_split(s);
      std::printf("\n");
    }
    if (log) {
      nlohmann::json j = {{"epoch", s.epoch},         {"loss", s.loss},
                          {"train_mse", s.train_mse}, {"val_mse", s.val.mse},
                          {"val_mae", s.val.mae},     {"val_rmse", s.val.rmse},
                          {"val_mape", s.val.mape},   {"eval_ms", s.eval_ms}};
      j.update(split_json(s));
      log->line(j.dump());
    }
  });
  // The model holds the tested (best-validation) parameters.
  if (!a.predictions.empty()) {
    // The snapshot strategy gathers every vertex's forecasts on rank 0 itself.
    const std::vector<float> mine = trainer.test_forecasts();
    const bool rows_here = !by_snapshot || comm.rank() == 0;
    write_forecasts(a.predictions, mine, rows_here ? owned : std::vector<int64_t>{}, split.test,
                    series.channels, comm);
  }
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
  if (log) {
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
    log->line(j.dump());
  }
}

}  // namespace dgnn::cli
