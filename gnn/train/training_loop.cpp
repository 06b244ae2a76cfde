// The one training loop (gnn/train/training_loop.hpp), and what every task's step shares: the
// gradient all-reduce and the step's time split.
#include "dgnn/gnn/train/training_loop.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <nlohmann/json.hpp>

#include "dgnn/comm/device_comm.hpp"
#include "dgnn/common/error.hpp"
#include "dgnn/common/timer.hpp"
#include "dgnn/gnn/train/checkpoint.hpp"
#include "dgnn/kernels/buffer.hpp"
#include "dgnn/kernels/kernels.hpp"

namespace dgnn {

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

namespace {

// allreduce_gradients on device memory, over the attached device communicator: the gradients
// are packed into one device buffer (device-to-device copies), the flags and `extra` appended
// from the host, all summed in one all-reduce, and unpacked. `flat` gets the host tail back.
void allreduce_gradients_on(DeviceComm& dc,
                            const std::vector<std::pair<std::string, Parameter*>>& params,
                            std::vector<float>& flat, double* extra) {
  const Device dev = dc.device();
  int64_t n_grad = 0;
  for (auto& [name, p] : params) n_grad += p->var.value().numel();
  const int64_t n_tail = int64_t(params.size()) + (extra ? 1 : 0);
  flat.assign(size_t(n_tail), 0.f);
  for (size_t i = 0; i < params.size(); ++i)
    flat[i] = params[i].second->var.grad().empty() ? 0.f : 1.f;
  if (extra) flat[params.size()] = float(*extra);
  kernels::Buffer buf(dev, size_t(n_grad + n_tail) * sizeof(float));
  float* d = buf.as<float>();
  int64_t off = 0;
  for (auto& [name, p] : params) {
    const Tensor& g = p->var.node()->grad_buffer();
    DGNN_CHECK(g.device() == dev, DeviceError,
               "allreduce_gradients: gradient of " + name + " is on " + device_name(g.device()) +
                   ", the device communicator carries " + device_name(dev) + " memory");
    if (g.numel() > 0)
      kernels::copy(dev, d + off, g.device(), g.data(), size_t(g.numel()) * sizeof(float));
    off += g.numel();
  }
  if (n_tail > 0)
    kernels::copy(dev, d + off, Device::cpu, flat.data(), size_t(n_tail) * sizeof(float));
  dc.allreduce_sum(d, n_grad + n_tail);
  if (n_tail > 0)
    kernels::copy(Device::cpu, flat.data(), dev, d + off, size_t(n_tail) * sizeof(float));
  off = 0;
  for (auto& [name, p] : params) {
    Tensor& g = p->var.grad();
    if (g.numel() > 0)
      kernels::copy(g.device(), g.data(), dev, d + off, size_t(g.numel()) * sizeof(float));
    off += g.numel();
  }
  for (size_t i = 0; i < params.size(); ++i)
    if (flat[i] == 0.f) params[i].second->var.zero_grad();
  if (extra) *extra = flat[params.size()];
}

}  // namespace

void allreduce_gradients(Communicator& comm,
                         const std::vector<std::pair<std::string, Parameter*>>& params,
                         std::vector<float>& flat, double* extra) {
  if (comm.size() == 1) return;
  // Gradients in the memory of the attached device communicator (a GPU's, over NCCL or staged)
  // are summed there; host memory over the host communicator below.
  if (DeviceComm* dc = comm.device_comm();
      dc && !params.empty() && params.front().second->var.device() == dc->device())
    return allreduce_gradients_on(*dc, params, flat, extra);
  // After the gradients: one flag per parameter (did this rank's backward reach it?), then
  // `extra`. A parameter no rank reached keeps no gradient, as on one rank, where the optimiser
  // leaves it unchanged (Adam's moments included); a zero gradient would move it.
  int64_t total = int64_t(params.size()) + (extra ? 1 : 0);
  for (auto& [name, p] : params) total += p->var.value().numel();
  flat.resize(size_t(total));
  int64_t off = 0;
  for (auto& [name, p] : params) off += p->var.value().numel();
  for (size_t i = 0; i < params.size(); ++i)
    flat[size_t(off) + i] = params[i].second->var.grad().empty() ? 0.f : 1.f;
  off = 0;
  for (auto& [name, p] : params) {
    const Tensor& g = p->var.node()->grad_buffer();
    kernels::copy(Device::cpu, flat.data() + off, g.device(), g.data(), size_t(g.numel()) * 4);
    off += g.numel();
  }
  if (extra) flat[size_t(off) + params.size()] = float(*extra);
  comm.allreduce_sum(flat.data(), total);
  off = 0;
  for (auto& [name, p] : params) {
    Tensor& g = p->var.grad();
    kernels::copy(g.device(), g.data(), Device::cpu, flat.data() + off, size_t(g.numel()) * 4);
    off += g.numel();
  }
  for (size_t i = 0; i < params.size(); ++i)
    if (flat[size_t(off) + i] == 0.f) params[i].second->var.zero_grad();
  if (extra) *extra = flat[size_t(off) + params.size()];
}

StepSplit split_step(Communicator& comm, double step_ms) {
  // Snapshot this rank's counters before the reductions below add to them.
  const CommStats mine = comm.stats();
  const double compute = std::max(0.0, step_ms - mine.comm_ms - mine.wait_ms);
  double sums[3] = {compute, mine.comm_ms, mine.wait_ms};
  double maxes[5] = {step_ms, compute, mine.comm_ms, mine.wait_ms, double(mine.bytes_sent)};
  int64_t bytes = mine.bytes_sent;
  comm.allreduce_sum(sums, 3);
  comm.allreduce_max(maxes, 5);
  comm.allreduce_sum(&bytes, 1);
  const double p = double(comm.size());
  StepSplit st;
  st.time_ms = maxes[0];
  st.compute_ms = sums[0] / p;
  st.comm_ms = sums[1] / p;
  st.wait_ms = sums[2] / p;
  st.max_compute_ms = maxes[1];
  st.max_comm_ms = maxes[2];
  st.max_wait_ms = maxes[3];
  st.max_bytes_sent = int64_t(maxes[4]);
  st.bytes_sent = bytes;
  return st;
}

void check_train_options(const TrainOptions& opt) {
  // Written so that NaN fails every check.
  if (opt.epochs < 0) throw OptionError("--epochs must be >= 0");
  if (!(opt.lr > 0 && std::isfinite(opt.lr))) throw OptionError("--lr must be a number > 0");
  if (!(opt.weight_decay >= 0 && std::isfinite(opt.weight_decay)))
    throw OptionError("--weight-decay must be a number >= 0");
  if (!(opt.momentum >= 0 && opt.momentum < 1)) throw OptionError("--momentum must be in [0, 1)");
  if (!(opt.clip_norm >= 0 && std::isfinite(opt.clip_norm)))
    throw OptionError("--clip-norm must be a number >= 0 (0: no clipping)");
  if (opt.patience < 0) throw OptionError("--patience must be >= 0 (0: never stop early)");
  if (opt.select != "acc" && opt.select != "loss")
    throw OptionError("--select must be acc or loss, got '" + opt.select + "'");
  if (opt.save_every < 0) throw OptionError("--save-every must be >= 0 (0: only at the end)");
  if (opt.save_every > 0 && opt.save.empty())
    throw OptionError("--save-every needs --save FILE (the checkpoint it replaces)");
  if (opt.optimizer != "adam" && opt.optimizer != "sgd")
    throw OptionError("--optimizer: unknown '" + opt.optimizer + "' (expected adam or sgd)");
}

std::unique_ptr<Optimizer> make_optimizer(
    const std::vector<std::pair<std::string, Parameter*>>& params, const TrainOptions& opt) {
  if (opt.optimizer == "sgd")
    return std::make_unique<Sgd>(params, SgdConfig{opt.lr, opt.momentum, opt.weight_decay});
  if (opt.optimizer == "adam")
    return std::make_unique<Adam>(params,
                                  AdamConfig{opt.lr, 0.9f, 0.999f, 1e-8f, opt.weight_decay});
  throw OptionError("--optimizer: unknown '" + opt.optimizer + "' (expected adam or sgd)");
}

double EpochRecord::figure(const std::string& name, double otherwise) const {
  for (const auto& [n, v] : figures)
    if (n == name) return v;
  return otherwise;
}

double Evaluation::get(const std::string& name) const {
  for (const auto& [n, v] : metrics)
    if (n == name) return v;
  return std::numeric_limits<double>::quiet_NaN();
}

namespace {

nlohmann::json to_json(const Evaluation& e) {
  nlohmann::json m = nlohmann::json::object();
  for (const auto& [n, v] : e.metrics) m[n] = v;
  return {{"metrics", m}, {"selection", e.selection}};
}

Evaluation from_json(const nlohmann::json& j) {
  Evaluation e;
  // JSON keeps no NaN: a metric that was NaN comes back null.
  for (auto& [n, v] : j.at("metrics").items())
    e.metrics.emplace_back(
        n, v.is_number() ? v.get<double>() : std::numeric_limits<double>::quiet_NaN());
  e.selection = j.at("selection").is_number() ? j.at("selection").get<double>()
                                              : std::numeric_limits<double>::quiet_NaN();
  return e;
}

}  // namespace

TrainingLoop::TrainingLoop(TrainingTask& task, Communicator& comm, TrainOptions opt)
    : task_(task), comm_(comm), opt_(std::move(opt)) {
  check_train_options(opt_);
}

void TrainingLoop::keep_best(int epoch, const Evaluation& val) {
  // The first epoch, a better score (ties keep the earlier epoch; NaN never wins), or, with
  // nothing to select on, every epoch.
  if (has_best_ && task_.has_validation() && !(val.selection > best_val_.selection)) return;
  has_best_ = true;
  best_epoch_ = epoch;
  best_val_ = val;
  best_params_.clear();
  for (auto& [name, p] : task_.parameters()) best_params_.push_back(p->var.value().clone());
}

LoopResult TrainingLoop::run(const std::function<void(const EpochRecord&)>& on_epoch) {
  if (!opt_.load.empty()) load_checkpoint(opt_.load);
  LoopResult res;
  std::vector<double> times, computes, comms, waits;
  const Device dev = task_.parameters().front().second->var.device();
  task_.on_start(epoch_);
  auto patience_out = [&] {
    return opt_.patience > 0 && has_best_ && task_.has_validation() &&
           epoch_ - best_epoch_ >= opt_.patience;
  };
  while (epoch_ < opt_.epochs && !patience_out()) {
    const int e = epoch_ + 1;
    EpochRecord st;
    st.epoch = e;
    comm_.stats().reset();
    Timer t;
    st.loss = train_epoch(e);
    kernels::synchronize(dev);  // the epoch's time includes its queued kernels
    static_cast<StepSplit&>(st) = split_step(comm_, t.ms());
    st.figures = task_.epoch_figures();
    Timer te;
    st.val = task_.validate();
    st.eval_ms = te.ms();
    keep_best(e, st.val);
    epoch_ = e;
    res.final_loss = st.loss;
    res.bytes_per_epoch = st.bytes_sent;
    times.push_back(st.time_ms);
    computes.push_back(st.compute_ms);
    comms.push_back(st.comm_ms);
    waits.push_back(st.wait_ms);
    ++res.epochs_run;
    if (on_epoch) on_epoch(st);
    if (opt_.save_every > 0 && e % opt_.save_every == 0 && e < opt_.epochs)
      save_checkpoint(opt_.save);
  }
  res.stopped_early = epoch_ < opt_.epochs;
  res.last_epoch = epoch_;
  if (!opt_.save.empty()) save_checkpoint(opt_.save);
  // The test, with the best-validation parameters, which stay in the model.
  if (has_best_) {
    const auto& params = task_.parameters();
    for (size_t i = 0; i < params.size(); ++i)
      params[i].second->var.value() = best_params_[i].clone();
  }
  Timer tt;
  res.test = task_.test();
  res.test_ms = tt.ms();
  res.usage = gather_rank_usage(comm_);  // the peak of the whole run, the test included
  res.best_epoch = best_epoch_;
  res.best_val = best_val_;
  res.median_epoch_ms = median(times);
  res.median_compute_ms = median(computes);
  res.median_comm_ms = median(comms);
  res.median_wait_ms = median(waits);
  return res;
}

void clip_gradients(const std::vector<std::pair<std::string, Parameter*>>& params, float max_norm) {
  // The gradients are replicated after the all-reduce: every rank computes the same norm. On the
  // CPU they are read and scaled in place; device gradients go through a host copy.
  double squares = 0;
  std::vector<Tensor> host(params.size());
  auto on_host = [&](size_t k) -> Tensor& {
    Tensor& g = params[k].second->var.grad();
    return g.device() == Device::cpu ? g : host[k];
  };
  for (size_t k = 0; k < params.size(); ++k) {
    const Tensor& grad = params[k].second->var.grad();
    if (grad.device() != Device::cpu && !grad.empty()) host[k] = grad.to(Device::cpu);
    const Tensor& g = on_host(k);
    for (int64_t i = 0; i < g.numel(); ++i) squares += double(g.data()[i]) * double(g.data()[i]);
  }
  const double norm = std::sqrt(squares);
  if (!(norm > max_norm)) return;
  const float factor = float(double(max_norm) / (norm + 1e-6));
  for (size_t k = 0; k < params.size(); ++k) {
    Tensor& g = on_host(k);
    for (int64_t i = 0; i < g.numel(); ++i) g.data()[i] *= factor;
    Tensor& grad = params[k].second->var.grad();
    if (grad.device() != Device::cpu && grad.numel() > 0)
      kernels::copy(grad.device(), grad.data(), Device::cpu, g.data(), size_t(g.numel()) * 4);
  }
}

double TrainingLoop::gradients(const StepLoss& l) {
  if (!l.accumulated) task_.optimizer().zero_grad();
  double value = l.value;
  if (!l.step) return value;
  if (l.loss.defined()) {
    Var loss = l.scale == 1.f ? l.loss : scale(l.loss, l.scale);
    loss.backward();
  }
  // Parameters are replicated: sum every rank's share of the gradient (and of the loss).
  allreduce_gradients(comm_, task_.parameters(), flat_, l.summed ? nullptr : &value);
  if (opt_.clip_norm > 0) clip_gradients(task_.parameters(), opt_.clip_norm);
  return value;
}

double TrainingLoop::step(const StepLoss& l) {
  const double value = gradients(l);
  if (l.step) task_.optimizer().step();
  return value;
}

double TrainingLoop::train_epoch(int epoch) {
  task_.begin_epoch(epoch);
  double total = 0, count = 0;
  const int64_t steps = task_.steps_in_epoch(epoch);
  for (int64_t s = 0; s < steps; ++s) {
    // What the last step freed and malloc kept resident between live blocks (the tape's small
    // objects, a step's batches, snapshots' adjacencies built on first use) goes back before
    // this step allocates its own: at 8 ranks of the 100k x 30 SBM the ranks' resident peaks
    // summed 1066-1077 -> 1050-1052 MB (malloc held about 20 MB a rank free).
    kernels::trim_host_heap();
    const StepLoss l = task_.step_loss(epoch, s);
    total += step(l) * l.weight;
    count += l.count;
    task_.end_step(epoch, s);
  }
  task_.end_epoch(epoch);
  return count > 0 ? total / count : 0.0;
}

std::vector<StepGradients> TrainingLoop::epoch_gradients(int epoch) {
  task_.begin_epoch(epoch);
  const int64_t steps = task_.steps_in_epoch(epoch);
  std::vector<StepGradients> out(static_cast<size_t>(steps));
  for (int64_t s = 0; s < steps; ++s) {
    const StepLoss l = task_.step_loss(epoch, s);
    StepGradients& g = out[size_t(s)];
    g.loss = gradients(l);
    g.count = int64_t(l.count);
    for (auto& [name, p] : task_.parameters()) {
      const Tensor host = p->var.node()->grad_buffer().to(Device::cpu);
      g.grads.insert(g.grads.end(), host.data(), host.data() + host.numel());
    }
    task_.end_step(epoch, s);
  }
  task_.end_epoch(epoch);
  task_.begin_epoch(epoch);  // a fresh state again
  return out;
}

void TrainingLoop::save_checkpoint(const std::string& path) {
  // Only rank 0 writes: parameters and optimiser state are replicated.
  if (comm_.rank() != 0) return;
  nlohmann::json meta = nlohmann::json::parse(opt_.meta_json);
  Optimizer& optim = task_.optimizer();
  meta["epoch"] = epoch_;
  meta["optimizer"] = opt_.optimizer;
  meta["optimizer_steps"] = optim.steps();
  meta["best_epoch"] = best_epoch_;
  if (has_best_) {
    meta["best"] = to_json(best_val_);
    // What format-1 readers look for: an accuracy (not a selection by loss, which is -loss).
    const double acc = best_val_.get("val_acc");
    meta["best_val_acc"] = std::isnan(acc) ? best_val_.selection : acc;
  }
  const auto& params = task_.parameters();
  std::vector<std::pair<std::string, const Tensor*>> tensors;
  for (auto& [name, p] : params) tensors.emplace_back("param." + name, &p->var.value());
  for (auto& [name, t] : optim.state()) tensors.emplace_back("optim." + name, t);
  for (size_t i = 0; i < best_params_.size(); ++i)
    tensors.emplace_back("best." + params[i].first, &best_params_[i]);
  dgnn::save_checkpoint(path, meta.dump(), tensors);
}

void TrainingLoop::load_checkpoint(const std::string& path) {
  try {
    restore_checkpoint(path);
  } catch (const nlohmann::json::exception&) {
    throw InputError(path, 0, "checkpoint metadata is not what dgnn writes");
  }
}

void TrainingLoop::restore_checkpoint(const std::string& path) {
  Checkpoint ck = dgnn::load_checkpoint(path);
  nlohmann::json meta = nlohmann::json::parse(ck.meta_json);
  // The loop's position is believed only when it is one the loop could have written.
  auto count = [&](const char* key) -> int64_t {
    if (!meta.contains(key)) return 0;
    const nlohmann::json& v = meta[key];
    if (!v.is_number_integer() || v.get<int64_t>() < 0)
      throw InputError(path, 0,
                       std::string("checkpoint's ") + key + " is " +
                           (v.is_number() ? v.dump() : "not a number") +
                           " (a count: a whole number >= 0)");
    return v.get<int64_t>();
  };
  const int64_t epoch = count("epoch"), best_epoch = count("best_epoch");
  count("optimizer_steps");
  if (best_epoch > epoch)
    throw InputError(path, 0,
                     "checkpoint's best epoch " + std::to_string(best_epoch) +
                         " is after its epoch " + std::to_string(epoch));
  if (meta.value("optimizer", opt_.optimizer) != opt_.optimizer)
    throw OptionError(path + ": checkpoint was written with --optimizer " +
                      meta.value("optimizer", std::string()) + ", this run uses " + opt_.optimizer);
  // Layers of another kind can have the same parameter names and shapes (GAT's and GCN's), and
  // a temporal task's checkpoint another task's.
  const nlohmann::json mine = nlohmann::json::parse(opt_.meta_json);
  for (const char* key : {"model", "task"})
    if (meta.contains(key) && mine.contains(key) && meta[key] != mine[key])
      throw OptionError(path + ": checkpoint was written for --" + key + " " +
                        meta[key].get<std::string>() + ", this run trains " +
                        mine[key].get<std::string>());
  // What selects the model and what the model reads: a run resumed under another --select would
  // compare its epochs with a best score of another kind (an accuracy against -loss), and one
  // with other features or GCNII constants would train another function.
  auto setting = [](const nlohmann::json& j, const char* key, const nlohmann::json& otherwise) {
    return j.contains(key) ? j[key] : otherwise;
  };
  const std::pair<const char*, nlohmann::json> bound[] = {{"select", "acc"},
                                                          {"normalize_features", false},
                                                          {"alpha", nullptr},
                                                          {"lambda", nullptr}};
  for (const auto& [key, otherwise] : bound) {
    const nlohmann::json was = setting(meta, key, otherwise), now = setting(mine, key, otherwise);
    if (was == now) continue;
    std::string flag = key;
    std::replace(flag.begin(), flag.end(), '_', '-');
    auto say = [](const nlohmann::json& v) {
      if (v.is_null()) return std::string("none");
      if (v.is_string()) return v.get<std::string>();
      if (v.is_number_float()) {  // a float flag recorded as a double: as it was typed
        char buf[32];
        std::snprintf(buf, sizeof buf, "%g", v.get<double>());
        return std::string(buf);
      }
      return v.dump();
    };
    throw OptionError(path + ": checkpoint was trained with --" + flag + " " + say(was) +
                      ", this run has " + say(now));
  }
  // Bound to what it was trained on: the input's content and its split (a hash, as partition
  // folders carry), so that another graph of the same shapes is not taken for it.
  if (meta.contains("data") && mine.contains("data") && meta["data"] != mine["data"])
    throw OptionError(path + ": checkpoint was trained on another graph or split (data " +
                      meta["data"].get<std::string>() + ", this run's " +
                      mine["data"].get<std::string>() + ")");
  if (epoch > opt_.epochs)
    throw OptionError(path + ": checkpoint is at epoch " + std::to_string(epoch) +
                      ", past --epochs " + std::to_string(opt_.epochs) +
                      " (a resumed run trains up to --epochs)");
  auto restore = [&](const std::string& name, Tensor& into) {
    const Tensor* t = ck.find(name);
    if (!t)
      throw InputError(path, 0,
                       "checkpoint has no tensor '" + name + "' (written for a different model?)");
    if (t->rows() != into.rows() || t->cols() != into.cols())
      throw InputError(path, 0,
                       "tensor '" + name + "' is " + t->shape_str() + " in the checkpoint but " +
                           into.shape_str() +
                           " in this model (different --hidden/--layers/features?)");
    into = t->to(into.device());
  };
  const auto& params = task_.parameters();
  Optimizer& optim = task_.optimizer();
  for (auto& [name, p] : params) restore("param." + name, p->var.value());
  for (auto& [name, t] : optim.state()) restore("optim." + name, *t);
  best_params_.clear();
  has_best_ = false;
  if (ck.find("best." + params.front().first)) {
    for (auto& [name, p] : params) {
      best_params_.emplace_back(p->var.rows(), p->var.cols(), p->var.device());
      restore("best." + name, best_params_.back());
    }
    has_best_ = true;
    if (meta.contains("best")) {
      best_val_ = from_json(meta["best"]);
    } else {  // format 1: static node classification recorded its validation accuracy alone
      best_val_ = Evaluation{};
      best_val_.selection = meta.value("best_val_acc", -1.0);
      best_val_.metrics = {{"val_acc", best_val_.selection}};
    }
  }
  epoch_ = int(epoch);  // at most --epochs (an int), checked above
  optim.set_steps(meta.value("optimizer_steps", int64_t(0)));
  best_epoch_ = meta.value("best_epoch", 0);
}

}  // namespace dgnn
