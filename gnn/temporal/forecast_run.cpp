// A forecasting run, assembled (gnn/temporal/forecast_run.hpp).
#include "dgnn/gnn/temporal/forecast_run.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "dgnn/common/error.hpp"
#include "dgnn/gnn/models/layers.hpp"

namespace dgnn {

namespace {

bool is_temporal_model(const std::string& name) {
  return name == "evolvegcn-o" || name == "evolvegcn-h" || name == "gcrn" || name == "tgcn";
}

// The model `cfg` names over `dims`: a temporal one, or static layers applied per step.
std::unique_ptr<TemporalModel> forecast_model(const ForecastRunConfig& cfg,
                                              const std::vector<int64_t>& dims) {
  if (cfg.make_model) return cfg.make_model(dims);
  if (is_temporal_model(cfg.model))
    return make_temporal_model(parse_temporal_kind(cfg.model), dims);
  if (const LayerSpec* spec = find_registered_layer(cfg.model))
    return make_per_step_model(spec->factory, dims);
  return make_per_step_model(builtin_layer(parse_model_kind(cfg.model)), dims);
}

// The snapshot strategy: per sample, its graph's entries plus the vertices.
std::vector<int64_t> sample_costs(const TemporalGraph& g, const ForecastSplit& split) {
  const std::vector<int64_t> nnz = snapshot_nnz(g);
  std::vector<int64_t> cost;
  for (int64_t i = 0; i < split.samples; ++i)
    cost.push_back(nnz[nnz.size() == 1 ? 0 : size_t(split.first + i)] + g.num_vertices);
  return cost;
}

}  // namespace

void ForecastRun::check(const ForecastRunConfig& cfg, int ranks) {
  if (cfg.hidden < 1) throw OptionError("--hidden must be >= 1");
  if (cfg.layers < 1) throw OptionError("--layers must be >= 1");
  forecast_split(1 << 30, cfg.train);  // the options alone, before anything is read
  const bool by_snapshot = cfg.strategy == "snapshot";
  if (cfg.strategy != "vertex" && !by_snapshot)
    throw OptionError("--strategy: unknown strategy '" + cfg.strategy +
                      "' (expected vertex or snapshot)");
  if (ranks > 1 && !by_snapshot && cfg.model == "evolvegcn-h" && !cfg.make_model)
    throw OptionError(
        "--model evolvegcn-h does not run under --strategy vertex on several ranks: "
        "its top-k summary spans all vertices (use --strategy snapshot)");
}

ForecastRun::ForecastRun(const std::function<SignalSeries()>& read, ForecastRunConfig cfg,
                         Communicator& comm)
    : cfg_(std::move(cfg)), comm_(comm) {
  check(cfg_, comm.size());
  const bool by_snapshot = cfg_.strategy == "snapshot";
  ForecastOptions& opt = cfg_.train;
  const Device dev = cfg_.device;

  // Rank 0 reads the graph and the signal; the graph goes out as every temporal graph does, the
  // signal in one broadcast.
  SignalSeries series;
  // Vertex strategy on several ranks: each rank keeps only its share of every snapshot.
  const auto read_graph = [&] {
    series = read();
    return std::move(series.graph);
  };
  in_ = !by_snapshot && comm.size() > 1
            ? load_temporal_vertex_shares(read_graph, comm, cfg_.partition)
            : load_temporal_everywhere(read_graph, comm);
  const TemporalGraph& g = in_.g;
  int64_t shape[2] = {series.steps, series.channels};
  comm.broadcast(shape, sizeof shape, 0);
  steps_ = series.steps = shape[0];
  channels_ = series.channels = shape[1];
  series.values.resize(size_t(shape[0] * g.num_vertices * shape[1]));
  comm.broadcast(series.values.data(), int64_t(series.values.size() * sizeof(float)), 0);
  source_ = series.source;
  series.source.clear();
  // The graph itself went to in_ (rank 0 moved it out); forecast_rows reads the vertex count.
  series.graph.num_vertices = g.num_vertices;
  try {
    split_ = forecast_split(series.steps, opt);
  } catch (const OptionError& e) {
    const std::string where = source_.empty() ? "" : " (" + source_ + ")";
    throw OptionError(e.what() + where);
  }
  int64_t static_dim = 0;
  std::vector<float> statics;
  if (cfg_.features) statics = cfg_.features(g, &static_dim);
  if (statics.empty()) static_dim = 0;

  // Vertex strategy on several ranks: each rank its vertices of every step. One process, or the
  // snapshot strategy: whole graphs (under the snapshot strategy only those of the steps this
  // rank's samples read) and every vertex's signal.
  std::vector<int64_t> owned;
  if (comm.size() == 1 || by_snapshot) {
    std::vector<char> needed(size_t(g.num_snapshots()), 1);
    if (by_snapshot) {
      plan_ = forecast_snapshot_plan(split_, opt, sample_costs(g, split_), comm.size(),
                                     g.num_vertices);
      if (g.num_snapshots() > 1) {
        std::fill(needed.begin(), needed.end(), 0);
        for (int64_t i = 0; i < split_.samples; ++i)
          if (plan_->owner[size_t(i)] == comm.rank()) needed[size_t(split_.first + i)] = 1;
      }
    }
    SnapshotCursor cur(g);
    do
      whole_.push_back(needed[size_t(cur.index())]
                           ? std::make_unique<GraphView>(cur.current(), dev)
                           : nullptr);
    while (cur.next());
    for (int64_t v = 0; v < g.num_vertices; ++v) owned.push_back(v);
  } else {
    rank_data_ = make_temporal_rank(g, {}, in_.part, comm, dev);
    owned = rank_data_->owned;
  }
  std::vector<const GraphView*> views;
  for (const auto& v : rank_data_ ? rank_data_->graphs : whole_) views.push_back(v.get());
  data_ = std::make_unique<ForecastData>(forecast_rows(series, owned, statics, static_dim));
  std::vector<float>().swap(series.values);  // each rank keeps its rows only
  // The snapshot strategy gathers every vertex's forecasts on rank 0 itself.
  if (!by_snapshot || comm.rank() == 0) forecast_ids_ = owned;

  std::vector<int64_t> dims{forecast_input_dim(*data_, opt.lags)};
  for (int i = 0; i < cfg_.layers; ++i) dims.push_back(cfg_.hidden);
  model_ = forecast_model(cfg_, dims);
  if (!model_) throw Error("ForecastRunConfig::make_model returned no model");
  model_->reset_parameters(opt.seed);
  if (dev != Device::cpu) model_->to(dev);
  // Checkpoints record what was read, beside the caller's settings.
  nlohmann::json meta = nlohmann::json::parse(opt.meta_json);
  meta.update({{"signals", source_},
               {"steps", steps_},
               {"channels", channels_},
               {"snapshots", g.num_snapshots()}});
  opt.meta_json = meta.dump();
  trainer_ = std::make_unique<ForecastTrainer>(*model_, views, *data_, comm, opt, dev,
                                               plan_ ? &*plan_ : nullptr);
}

ForecastRun::~ForecastRun() = default;

ForecastResult ForecastRun::train(const std::function<void(const EpochRecord&)>& on_epoch) {
  return trainer_->run(on_epoch);
}

EpochFormat ForecastRun::epoch_format() const {
  EpochFormat f;
  f.metrics = {{"train_mse", "train_mse", "  train mse"},
               {"val_mse", "val_mse", "  val mse"},
               {"val_mae", "val_mae", " mae"},
               {"val_rmse", "val_rmse", ""},
               {"val_mape", "val_mape", ""}};
  if (split_.val == 0)  // no validation samples: nothing to print
    for (ShownMetric& m : f.metrics)
      if (m.name != "train_mse") m.label.clear();
  return f;
}

}  // namespace dgnn
