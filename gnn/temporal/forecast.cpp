#include "dgnn/gnn/temporal/forecast.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "dgnn/common/error.hpp"
#include "dgnn/gnn/core/ops.hpp"

namespace dgnn {

ForecastSplit forecast_split(int64_t steps, const ForecastOptions& opt) {
  if (opt.lags < 1) throw OptionError("--lags must be >= 1, got " + std::to_string(opt.lags));
  if (opt.horizon < 1)
    throw OptionError("--horizon must be >= 1, got " + std::to_string(opt.horizon));
  if (opt.bptt < 0) throw OptionError("--bptt must be >= 0");
  if (!(opt.train_frac > 0 && opt.val_frac >= 0 && opt.train_frac + opt.val_frac < 1))
    throw OptionError(
        "--train-frac and --val-frac must leave samples for training and testing "
        "(0 < train, 0 <= val, train + val < 1)");
  ForecastSplit s;
  s.first = opt.lags - 1;
  s.samples = steps - int64_t(opt.lags) - int64_t(opt.horizon) + 1;
  if (s.samples < 2)
    throw OptionError("--lags " + std::to_string(opt.lags) + " --horizon " +
                      std::to_string(opt.horizon) + ": the signal has " + std::to_string(steps) +
                      " steps, which leaves " + std::to_string(std::max<int64_t>(s.samples, 0)) +
                      " samples (steps - lags - horizon + 1); at least 2 are needed");
  s.train = int64_t(opt.train_frac * double(s.samples));
  s.val = int64_t(opt.val_frac * double(s.samples));
  s.test = s.samples - s.train - s.val;
  if (s.train < 1 || s.test < 1)
    throw OptionError("--train-frac " + std::to_string(opt.train_frac) + " --val-frac " +
                      std::to_string(opt.val_frac) + " over " + std::to_string(s.samples) +
                      " samples leaves " + std::to_string(s.train) + " for training and " +
                      std::to_string(s.test) + " for the test; each needs at least one");
  return s;
}

std::vector<int> forecast_windows(const ForecastSplit& split, const ForecastOptions& opt) {
  std::vector<int> b{0};
  auto cut = [&](int64_t begin, int64_t end) {
    const int64_t w = opt.bptt > 0 ? opt.bptt : std::max<int64_t>(end - begin, 1);
    for (int64_t s = begin + w; s < end; s += w) b.push_back(int(s));
    if (end > begin) b.push_back(int(end));
  };
  cut(0, split.train);
  cut(split.train, split.train + split.val);
  cut(split.train + split.val, split.samples);
  return b;
}

SnapshotPlan forecast_snapshot_plan(const ForecastSplit& split, const ForecastOptions& opt,
                                    const std::vector<int64_t>& cost, int ranks,
                                    int64_t num_vertices) {
  if (ranks > split.samples)
    throw OptionError("--strategy snapshot: " + std::to_string(ranks) + " ranks but " +
                      std::to_string(split.samples) +
                      " samples: each rank owns whole steps, so run at most " +
                      std::to_string(split.samples) + " ranks (or --strategy vertex)");
  DGNN_CHECK(int64_t(cost.size()) == split.samples, ShapeError,
             "forecast_snapshot_plan: one cost per sample");
  return plan_snapshots(cost, forecast_windows(split, opt), ranks, num_vertices);
}

ForecastData forecast_rows(const SignalSeries& s, const std::vector<int64_t>& owned,
                           const std::vector<float>& statics, int64_t static_dim) {
  const int64_t n = s.vertices(), f = s.channels, r = int64_t(owned.size());
  DGNN_CHECK(int64_t(s.values.size()) == s.steps * n * f, ShapeError,
             "forecast_rows: the signal is not steps x vertices x channels");
  DGNN_CHECK(int64_t(statics.size()) == (static_dim > 0 ? n * static_dim : 0), ShapeError,
             "forecast_rows: static features are not vertices x static_dim");
  ForecastData d;
  d.steps = s.steps;
  d.channels = f;
  d.static_dim = static_dim;
  d.global_vertices = n;
  d.signals.resize(size_t(s.steps * r * f));
  for (int64_t v : owned)
    DGNN_CHECK(v >= 0 && v < n, ShapeError, "forecast_rows: an owned id outside the vertices");
  for (int64_t t = 0; t < s.steps; ++t)
    for (int64_t i = 0; i < r; ++i)
      std::copy_n(s.values.begin() + (t * n + owned[size_t(i)]) * f, f,
                  d.signals.begin() + (t * r + i) * f);
  if (static_dim > 0) {
    d.statics.resize(size_t(r * static_dim));
    for (int64_t i = 0; i < r; ++i)
      std::copy_n(statics.begin() + owned[size_t(i)] * static_dim, static_dim,
                  d.statics.begin() + i * static_dim);
  }
  return d;
}

// ---- static layers per step -----------------------------------------------------------------

namespace {

class PerStepModel : public TemporalModel {
 public:
  PerStepModel(const LayerFactory& make_layer, const std::vector<int64_t>& dims)
      : stack_(add_module("stack", std::make_unique<StackModel>(make_layer, dims, 0.f))),
        out_(dims.back()) {}
  void reset_state() override {}
  void detach_state() override {}
  Var step(ForwardContext& ctx, const Var& x) override { return stack_.forward(ctx, x); }
  // Nothing passes between steps: each owned step alone on its whole graph.
  std::vector<Var> window(SnapshotWindow& w) override {
    std::vector<Var> out;
    for (int s = w.own_begin(); s < w.own_end(); ++s)
      out.push_back(stack_.forward(w.ctx(s), w.x(s)));
    return out;
  }
  int64_t out_dim() const override { return out_; }
  bool save_state(std::vector<Var>* out) const override {
    out->clear();
    return true;
  }

 private:
  StackModel& stack_;
  int64_t out_;
};

}  // namespace

std::unique_ptr<TemporalModel> make_per_step_model(const LayerFactory& make_layer,
                                                   const std::vector<int64_t>& dims) {
  DGNN_CHECK(dims.size() >= 2, Error, "make_per_step_model: dims needs an input and an output");
  return std::make_unique<PerStepModel>(make_layer, dims);
}

// ---- the trainer ----------------------------------------------------------------------------

// Error sums of one split on this rank, then over all ranks.
struct ForecastTrainer::Sums {
  double sq = 0, abs = 0, ape = 0, count = 0, ape_count = 0;
  void add(float pred, float y) {
    const double e = double(pred) - double(y);
    sq += e * e;
    abs += std::fabs(e);
    count += 1;
    if (y != 0.f) ape += std::fabs(e) / std::fabs(double(y)), ape_count += 1;
  }
};

ForecastTrainer::ForecastTrainer(TemporalModel& model, std::vector<const GraphView*> graphs,
                                 const ForecastData& data, Communicator& comm, ForecastOptions opt,
                                 Device dev, const SnapshotPlan* plan)
    : model_(model),
      graphs_(std::move(graphs)),
      data_(data),
      comm_(comm),
      opt_(opt),
      dev_(dev),
      split_(forecast_split(data.steps, opt)),
      head_(model.out_dim(), data.channels) {
  if (graphs_.empty()) throw OptionError("forecasting needs a graph");
  DGNN_CHECK(graphs_.size() == 1 || int64_t(graphs_.size()) == data_.steps, ShapeError,
             "forecasting needs one graph, or one per step: " + std::to_string(graphs_.size()) +
                 " graphs for " + std::to_string(data_.steps) + " steps");
  plan_ = plan;
  if (plan_) {
    DGNN_CHECK(plan_->num_steps() == split_.samples && plan_->ranks == comm_.size(), Error,
               "ForecastTrainer: the snapshot plan is not for these samples and ranks");
    DGNN_CHECK(data_.rows() == data_.global_vertices, ShapeError,
               "ForecastTrainer: the snapshot strategy needs every vertex's signal");
    sample_views_.assign(size_t(split_.samples), nullptr);
    for (int64_t i = 0; i < split_.samples; ++i)
      if (plan_->owner[size_t(i)] == comm_.rank()) sample_views_[size_t(i)] = &graph_of(i);
  }
  for (const GraphView* g : graphs_) {
    if (!g && plan_) continue;  // a step none of this rank's samples reads
    DGNN_CHECK(g != nullptr, Error, "ForecastTrainer: a null graph view");
    DGNN_CHECK(g->n_owned() == data_.rows(), ShapeError,
               "ForecastTrainer: the graph owns " + std::to_string(g->n_owned()) +
                   " vertices, the signal has " + std::to_string(data_.rows()) + " rows");
  }

  head_.reset_parameters(opt_.seed + 1);
  auto model_params = model_.named_parameters();
  head_.to(dev_);
  for (auto& [name, p] : model_params) params_.emplace_back("model." + name, p);
  for (auto& [name, p] : head_.named_parameters()) params_.emplace_back("head." + name, p);
  optimizer_ = make_optimizer(params_, opt_);
  loop_ = std::make_unique<TrainingLoop>(static_cast<TrainingTask&>(*this), comm_, opt_);
}

ForecastTrainer::~ForecastTrainer() = default;

Var ForecastTrainer::inputs(int64_t i) const {
  const int64_t t = split_.first + i, rows = data_.rows(), f = data_.channels;
  const int64_t lags = opt_.lags, width = forecast_input_dim(data_, opt_.lags);
  // Row r: its lags oldest first (each F channels), then its static features.
  Tensor x = Tensor::uninitialized(rows, width);
  float* out = x.data();
  for (int64_t r = 0; r < rows; ++r) {
    float* row = out + r * width;
    for (int64_t l = 0; l < lags; ++l)
      std::copy_n(data_.signals.data() + ((t - lags + 1 + l) * rows + r) * f, f, row + l * f);
    if (data_.static_dim > 0)
      std::copy_n(data_.statics.data() + r * data_.static_dim, data_.static_dim, row + lags * f);
  }
  return Var(dev_ == Device::cpu ? std::move(x) : x.to(dev_));
}

Var ForecastTrainer::forecast(int64_t i, bool training, uint64_t key) {
  ForwardContext ctx{graph_of(i), training, opt_.seed, key};
  Var h = model_.step(ctx, inputs(i));
  return head_.forward(ctx, relu(h));
}

Tensor ForecastTrainer::targets(int64_t i) const {
  const int64_t t = split_.first + i + opt_.horizon, rows = data_.rows(), f = data_.channels;
  return Tensor::from_host(data_.signals.data() + t * rows * f, rows, f);
}

Var ForecastTrainer::sample_loss(const Var& pred, int64_t i) {
  Tensor y = targets(i);
  Var diff = sub(pred, Var(dev_ == Device::cpu ? std::move(y) : y.to(dev_)));
  const double n = double(data_.global_vertices) * double(data_.channels);
  return scale(sum(mul(diff, diff)), float(1.0 / n));
}

std::vector<int64_t> ForecastTrainer::windows() const {
  std::vector<int64_t> b;
  for (int x : forecast_windows(split_, opt_))
    if (x <= split_.train) b.push_back(x);
  return b;
}

StepLoss ForecastTrainer::window_loss_snapshots(int epoch, int64_t start, int64_t end) {
  const auto [a, b] = plan_->owned(int(start), int(end), comm_.rank());
  std::vector<Var> xs(size_t(split_.samples));
  for (int i = a; i < b; ++i) xs[size_t(i)] = inputs(i);
  SnapshotWindow w(comm_, *plan_, int(start), int(end), sample_views_, xs, true, opt_.seed,
                   uint64_t(epoch), dev_);
  const std::vector<Var> h = model_.window(w);
  // The owner of a sample scores it; the loss and gradients are summed over ranks.
  Var loss;
  for (int i = a; i < b; ++i) {
    Var l = sample_loss(head_.forward(w.ctx(i), relu(h[size_t(i - a)])), i);
    loss = loss.defined() ? add(loss, l) : l;
  }
  StepLoss out;
  out.value = loss.defined() ? loss.value().to(Device::cpu).item() : 0.0;
  // The anchor puts the window's communication on every rank's tape: their backwards are
  // collective.
  out.loss = loss.defined() ? add(loss, w.anchor()) : w.anchor();
  out.scale = 1.f / float(end - start);
  out.count = double(end - start);
  return out;
}

StepLoss ForecastTrainer::window_loss(int epoch, int64_t start, int64_t end) {
  if (plan_) return window_loss_snapshots(epoch, start, end);
  Var loss;
  for (int64_t i = start; i < end; ++i) {
    Var l = sample_loss(forecast(i, true, uint64_t(epoch) * uint64_t(split_.samples) + i), i);
    loss = loss.defined() ? add(loss, l) : l;
  }
  StepLoss out;
  out.value = loss.value().to(Device::cpu).item();
  out.loss = loss;
  out.scale = 1.f / float(end - start);
  out.count = double(end - start);
  return out;
}

StepLoss ForecastTrainer::step_loss(int epoch, int64_t window) {
  const std::vector<int64_t> b = windows();
  return window_loss(epoch, b[size_t(window)], b[size_t(window) + 1]);
}

void ForecastTrainer::run_samples(int64_t begin, int64_t end,
                                  const std::function<void(int64_t, const Tensor&)>& each) {
  NoGradGuard no_grad;
  model_.reset_state();
  if (!plan_) {
    for (int64_t i = 0; i < end; ++i) {
      Var pred = forecast(i, false, 0);
      if (i >= begin) each(i, pred.value().to(Device::cpu));
    }
    return;
  }
  // Window by window; each rank forecasts the samples it owns.
  const std::vector<int>& bounds = plan_->windows;
  for (size_t wi = 0; wi + 1 < bounds.size() && bounds[wi] < end; ++wi) {
    const int start = bounds[wi], stop = int(std::min<int64_t>(end, bounds[wi + 1]));
    const auto [a, b] = plan_->owned(start, stop, comm_.rank());
    std::vector<Var> xs(size_t(split_.samples));
    for (int i = a; i < b; ++i) xs[size_t(i)] = inputs(i);
    SnapshotWindow w(comm_, *plan_, start, stop, sample_views_, xs, false, opt_.seed, 0, dev_);
    const std::vector<Var> h = model_.window(w);
    for (int i = a; i < b; ++i)
      if (i >= begin)
        each(i, head_.forward(w.ctx(i), relu(h[size_t(i - a)])).value().to(Device::cpu));
  }
}

ForecastMetrics ForecastTrainer::finish(Sums& s) {
  double v[5] = {s.sq, s.abs, s.ape, s.count, s.ape_count};
  comm_.allreduce_sum(v, 5);
  ForecastMetrics m;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  m.mse = v[3] > 0 ? v[0] / v[3] : nan;
  m.mae = v[3] > 0 ? v[1] / v[3] : nan;
  m.rmse = std::sqrt(m.mse);
  m.mape = v[4] > 0 ? 100.0 * v[2] / v[4] : nan;
  return m;
}

ForecastMetrics ForecastTrainer::evaluate(int64_t begin, int64_t end) {
  Sums s;
  run_samples(begin, end, [&](int64_t i, const Tensor& pred) {
    const Tensor y = targets(i);
    for (int64_t k = 0; k < y.numel(); ++k) s.add(pred.data()[k], y.data()[k]);
  });
  return finish(s);
}

ForecastMetrics ForecastTrainer::naive(int64_t begin, int64_t end, bool last) {
  Sums s;
  const int64_t per = data_.rows() * data_.channels;
  for (int64_t i = begin; i < end; ++i) {
    if (plan_ && plan_->owner[size_t(i)] != comm_.rank()) continue;  // each sample once
    const Tensor y = targets(i);
    const float* seen = data_.signals.data() + (split_.first + i) * per;
    for (int64_t k = 0; k < per; ++k) s.add(last ? seen[k] : 0.f, y.data()[k]);
  }
  return finish(s);
}

std::vector<float> ForecastTrainer::test_forecasts() {
  const int64_t begin = split_.train + split_.val;
  std::vector<float> out;
  if (!plan_) {
    run_samples(begin, split_.samples, [&](int64_t, const Tensor& pred) {
      out.insert(out.end(), pred.data(), pred.data() + pred.numel());
    });
    return out;
  }
  // Each owner's samples in place, summed over ranks (every other rank adds zeros).
  const int64_t per = data_.rows() * data_.channels;
  out.assign(size_t(split_.test * per), 0.f);
  run_samples(begin, split_.samples, [&](int64_t i, const Tensor& pred) {
    std::copy_n(pred.data(), per, out.begin() + (i - begin) * per);
  });
  comm_.allreduce_sum(out.data(), int64_t(out.size()));
  if (comm_.rank() != 0) out.clear();
  return out;
}

namespace {

void add_metrics(Evaluation& e, const std::string& prefix, const ForecastMetrics& m) {
  e.metrics.emplace_back(prefix + "_mse", m.mse);
  e.metrics.emplace_back(prefix + "_mae", m.mae);
  e.metrics.emplace_back(prefix + "_rmse", m.rmse);
  e.metrics.emplace_back(prefix + "_mape", m.mape);
}

ForecastMetrics metrics_of(const Evaluation& e, const std::string& prefix) {
  return {e.get(prefix + "_mse"), e.get(prefix + "_mae"), e.get(prefix + "_rmse"),
          e.get(prefix + "_mape")};
}

}  // namespace

Evaluation ForecastTrainer::validate() {
  // One run through training and validation: both splits' errors.
  Sums train, val;
  run_samples(0, split_.train + split_.val, [&](int64_t i, const Tensor& pred) {
    Sums& s = i < split_.train ? train : val;
    const Tensor y = targets(i);
    for (int64_t k = 0; k < y.numel(); ++k) s.add(pred.data()[k], y.data()[k]);
  });
  Evaluation e;
  e.metrics.emplace_back("train_mse", finish(train).mse);
  const ForecastMetrics m = finish(val);
  add_metrics(e, "val", m);
  e.selection = -m.mse;  // the loop maximises
  return e;
}

Evaluation ForecastTrainer::test() {
  Evaluation e;
  const ForecastMetrics m = evaluate(split_.train + split_.val, split_.samples);
  add_metrics(e, "test", m);
  e.selection = -m.mse;
  return e;
}

ForecastResult ForecastTrainer::run(const std::function<void(const EpochRecord&)>& on_epoch) {
  const LoopResult r = loop_->run(on_epoch);
  ForecastResult res;
  static_cast<LoopSummary&>(res) = r;
  res.best_val = metrics_of(r.best_val, "val");
  res.test = metrics_of(r.test, "test");
  const int64_t test_begin = split_.train + split_.val;
  res.test_zero = naive(test_begin, split_.samples, false);
  res.test_last = naive(test_begin, split_.samples, true);
  res.val_zero = naive(split_.train, test_begin, false);
  res.val_last = naive(split_.train, test_begin, true);
  res.split = split_;
  return res;
}

}  // namespace dgnn
