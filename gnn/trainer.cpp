#include "dgnn/gnn/trainer.hpp"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "dgnn/comm/device_comm.hpp"
#include "dgnn/common/error.hpp"
#include "dgnn/common/timer.hpp"
#include "dgnn/gnn/checkpoint.hpp"
#include "dgnn/gnn/loss.hpp"
#include "dgnn/kernels/buffer.hpp"
#include "dgnn/kernels/kernels.hpp"

namespace dgnn {

NodeTask make_node_task(const Dataset& d) {
  NodeTask t;
  if (d.labels.empty()) throw OptionError("the dataset has no labels (give --labels FILE)");
  t.features = Var(Tensor::from_host(d.features.data(), d.num_vertices(), d.feature_dim));
  t.labels = d.labels;
  t.train = d.train;
  t.val = d.val;
  t.test = d.test;
  t.global_train = int64_t(t.train.size());
  t.global_val = int64_t(t.val.size());
  t.global_test = int64_t(t.test.size());
  t.num_classes = d.num_classes;
  return t;
}

Trainer::Trainer(Module& model, const GraphView& graph, const NodeTask& task, Communicator& comm,
                 TrainOptions opt)
    : model_(model), graph_(graph), task_(task), comm_(comm), opt_(std::move(opt)) {
  DGNN_CHECK(task.features.rows() == graph.n_owned(), ShapeError,
             "features have " + std::to_string(task.features.rows()) + " rows for " +
                 std::to_string(graph.n_owned()) + " vertices");
  DGNN_CHECK(int64_t(task.labels.size()) == graph.n_owned(), ShapeError,
             "need one label (or -1) per vertex");
  // Written so that NaN fails every check.
  if (opt_.epochs < 0) throw OptionError("--epochs must be >= 0");
  if (!(opt_.lr > 0 && std::isfinite(opt_.lr))) throw OptionError("--lr must be a number > 0");
  if (!(opt_.weight_decay >= 0 && std::isfinite(opt_.weight_decay)))
    throw OptionError("--weight-decay must be a number >= 0");
  if (!(opt_.momentum >= 0 && opt_.momentum < 1))
    throw OptionError("--momentum must be in [0, 1)");
  if (task.global_train == 0) throw OptionError("no labelled training vertices: nothing to train");
  params_ = model_.named_parameters();
  // A layer whose weights are members but not add_parameter'd (or a child not add_module'd)
  // would train nothing, at a constant loss, without a word.
  if (params_.empty())
    throw Error(
        "the model has no parameters to train: declare them with add_parameter and "
        "child modules with add_module");
  if (opt_.optimizer == "adam") {
    optimizer_ = std::make_unique<Adam>(params_, AdamConfig{opt_.lr, 0.9f, 0.999f, 1e-8f,
                                                             opt_.weight_decay});
  } else if (opt_.optimizer == "sgd") {
    optimizer_ = std::make_unique<Sgd>(params_, SgdConfig{opt_.lr, opt_.momentum,
                                                           opt_.weight_decay});
  } else {
    throw OptionError("--optimizer: unknown '" + opt_.optimizer + "' (expected adam or sgd)");
  }
  for (int32_t r : task.train) train_labels_.push_back(task.labels[size_t(r)]);
  features_ = task.features;  // the same leaf every step: inputs need no gradient
}

Trainer::~Trainer() = default;

double Trainer::train_step(uint64_t step) {
  const double loss = forward_backward(step);
  optimizer_->step();
  kernels::synchronize(features_.device());  // the step's time includes its queued kernels
  return loss;
}

void Trainer::check_logits(const Var& logits) const {
  if (!logits.defined()) throw Error("the model's forward returned an undefined Var");
  if (logits.rows() != graph_.n_owned() || logits.cols() != task_.num_classes)
    throw ShapeError("the model outputs " + logits.value().shape_str() + " for " +
                     std::to_string(graph_.n_owned()) + " vertices x " +
                     std::to_string(task_.num_classes) + " classes");
}

double Trainer::forward_backward(uint64_t step) {
  optimizer_->zero_grad();
  ForwardContext ctx{graph_, true, opt_.seed, step};
  Var logits = model_.forward(ctx, features_);
  check_logits(logits);
  Var loss = cross_entropy(logits, task_.train, train_labels_, double(task_.global_train));
  double value = loss.value().item();
  loss.backward();
  // Parameters are replicated: sum every rank's share of the gradient (and of the loss).
  allreduce_gradients(comm_, params_, flat_, &value);
  return value;
}

double Trainer::forward_backward(const MiniBatch& batch, uint64_t step) {
  optimizer_->zero_grad();
  double value = 0;
  // A rank out of seeds computes nothing but still joins the gradient all-reduce.
  if (!batch.seeds.empty()) {
    ForwardContext ctx{*batch.views.front(), true, opt_.seed, step};
    ctx.blocks = batch.blocks();
    Var logits = model_.forward(ctx, batch.inputs);
    DGNN_CHECK(logits.rows() == int64_t(batch.seeds.size()) && logits.cols() == task_.num_classes,
               ShapeError,
               "the model outputs " + logits.value().shape_str() + " for " +
                   std::to_string(batch.seeds.size()) + " seeds and " +
                   std::to_string(task_.num_classes) + " classes");
    std::vector<int32_t> rows(batch.seeds.size());
    for (size_t i = 0; i < rows.size(); ++i) rows[i] = int32_t(i);
    Var loss = cross_entropy(logits, rows, batch.labels, double(batch.global_seeds));
    value = loss.value().item();  // data()[0] would read device memory on a GPU
    loss.backward();
  }
  allreduce_gradients(comm_, params_, flat_, &value);
  return value;
}

double Trainer::train_epoch_minibatch(int epoch, EpochStats& st) {
  double weighted = 0;
  int64_t seeds = 0;
  st.steps = loader_->steps_per_epoch();
  for (int64_t s = 0; s < st.steps; ++s) {
    MiniBatch b = loader_->next();
    DGNN_CHECK(b.epoch == epoch - 1 && b.step == s, Error, "mini-batch pipeline out of order");
    st.sample_ms += b.sample_ms;
    st.sample_wait_ms += loader_->last_wait_ms();
    st.sampled_edges += b.edges;
    st.sample_bytes += b.sample_bytes;
    // The optimiser's step count keys dropout: unique per step, and restored by a checkpoint.
    weighted += forward_backward(b, uint64_t(optimizer_->steps())) * double(b.global_seeds);
    seeds += b.global_seeds;
    optimizer_->step();
  }
  kernels::synchronize(features_.device());  // the epoch's time includes its queued kernels
  return seeds ? weighted / double(seeds) : 0;
}

Tensor Trainer::predict() {
  NoGradGuard no_grad;
  ForwardContext ctx{graph_, false, opt_.seed, 0};
  Var logits = model_.forward(ctx, features_);
  check_logits(logits);
  return std::move(logits.value());
}

std::array<double, 3> Trainer::evaluate() {
  Tensor logits = predict();
  const std::vector<int32_t>* sets[3] = {&task_.train, &task_.val, &task_.test};
  int64_t correct[3];
  for (int i = 0; i < 3; ++i) {
    std::vector<int32_t> labels;
    for (int32_t r : *sets[i]) labels.push_back(task_.labels[size_t(r)]);
    correct[i] = count_correct(logits, *sets[i], labels);
  }
  comm_.allreduce_sum(correct, 3);
  const int64_t totals[3] = {task_.global_train, task_.global_val, task_.global_test};
  std::array<double, 3> acc{};
  for (int i = 0; i < 3; ++i) acc[size_t(i)] = totals[i] ? double(correct[i]) / double(totals[i]) : 0;
  return acc;
}

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

TrainResult Trainer::run(const std::function<void(const EpochStats&)>& on_epoch) {
  if (!opt_.load.empty()) load_checkpoint(opt_.load);
  TrainResult res;
  std::vector<double> times;
  double loss = 0;
  std::vector<double> computes, comms, waits, samples, sample_waits;
  if (loader_) loader_->start(epoch_, opt_.epochs - 1);
  for (int e = epoch_ + 1; e <= opt_.epochs; ++e) {
    comm_.stats().reset();
    Timer t;
    EpochStats st;
    loss = loader_ ? train_epoch_minibatch(e, st) : train_step(uint64_t(e - 1));
    st.epoch = e;
    st.loss = loss;
    static_cast<StepSplit&>(st) = split_step(comm_, t.ms());
    Timer te;
    auto acc = evaluate();
    st.eval_ms = te.ms();
    st.train_acc = acc[0];
    st.val_acc = acc[1];
    st.test_acc = acc[2];
    // Ties keep the earlier epoch; with no validation set the last epoch wins.
    if (task_.global_val == 0 || acc[1] > best_val_) {
      best_val_ = acc[1];
      best_epoch_ = e;
      best_params_.clear();
      for (auto& [name, p] : params_) best_params_.push_back(p->var.value().clone());
    }
    epoch_ = e;
    times.push_back(st.time_ms);
    computes.push_back(st.compute_ms);
    comms.push_back(st.comm_ms);
    waits.push_back(st.wait_ms);
    samples.push_back(st.sample_ms);
    sample_waits.push_back(st.sample_wait_ms);
    res.bytes_per_epoch = st.bytes_sent;
    if (on_epoch) on_epoch(st);
    ++res.epochs_run;
  }
  res.last_epoch = epoch_;
  res.final_loss = loss;
  if (!opt_.save.empty()) save_checkpoint(opt_.save);
  // Final test with the best-validation parameters (the current ones are put back afterwards,
  // so a caller may keep training).
  if (!best_params_.empty()) {
    std::vector<Tensor> current;
    for (size_t i = 0; i < params_.size(); ++i) {
      current.push_back(std::move(params_[i].second->var.value()));
      params_[i].second->var.value() = best_params_[i].clone();
    }
    res.test_acc = evaluate()[2];
    for (size_t i = 0; i < params_.size(); ++i)
      params_[i].second->var.value() = std::move(current[i]);
  } else {
    res.test_acc = evaluate()[2];
  }
  res.best_epoch = best_epoch_;
  res.best_val_acc = best_val_;
  res.median_epoch_ms = median(times);
  res.median_compute_ms = median(computes);
  res.median_comm_ms = median(comms);
  res.median_wait_ms = median(waits);
  res.median_sample_ms = median(samples);
  res.median_sample_wait_ms = median(sample_waits);
  return res;
}

void Trainer::save_checkpoint(const std::string& path) {
  // Only rank 0 writes: parameters and optimiser state are replicated.
  if (comm_.rank() != 0) return;
  nlohmann::json meta = nlohmann::json::parse(opt_.meta_json);
  meta["epoch"] = epoch_;
  meta["optimizer"] = opt_.optimizer;
  meta["optimizer_steps"] = optimizer_->steps();
  meta["best_epoch"] = best_epoch_;
  meta["best_val_acc"] = best_val_;
  std::vector<std::pair<std::string, const Tensor*>> tensors;
  for (auto& [name, p] : params_) tensors.emplace_back("param." + name, &p->var.value());
  for (auto& [name, t] : optimizer_->state()) tensors.emplace_back("optim." + name, t);
  for (size_t i = 0; i < best_params_.size(); ++i)
    tensors.emplace_back("best." + params_[i].first, &best_params_[i]);
  dgnn::save_checkpoint(path, meta.dump(), tensors);
}

void Trainer::load_checkpoint(const std::string& path) {
  try {
    restore_checkpoint(path);
  } catch (const nlohmann::json::exception& e) {
    throw InputError(path, 0, std::string("checkpoint metadata is not what dgnn wrote: ") +
                                  e.what());
  }
}

void Trainer::restore_checkpoint(const std::string& path) {
  Checkpoint ck = dgnn::load_checkpoint(path);
  nlohmann::json meta = nlohmann::json::parse(ck.meta_json);
  if (meta.value("optimizer", opt_.optimizer) != opt_.optimizer)
    throw OptionError(path + ": checkpoint was written with --optimizer " +
                      meta.value("optimizer", std::string()) + ", this run uses " +
                      opt_.optimizer);
  // Layers of another kind can have the same parameter names and shapes (GAT's and GCN's).
  const nlohmann::json mine = nlohmann::json::parse(opt_.meta_json);
  if (meta.contains("model") && mine.contains("model") && meta["model"] != mine["model"])
    throw OptionError(path + ": checkpoint was written for --model " +
                      meta["model"].get<std::string>() + ", this run trains " +
                      mine["model"].get<std::string>());
  if (meta.value("epoch", 0) > opt_.epochs)
    throw OptionError(path + ": checkpoint is at epoch " + std::to_string(meta.value("epoch", 0)) +
                      ", past --epochs " + std::to_string(opt_.epochs) +
                      " (a resumed run trains up to --epochs)");
  auto restore = [&](const std::string& name, Tensor& into) {
    const Tensor* t = ck.find(name);
    if (!t)
      throw InputError(path, 0, "checkpoint has no tensor '" + name +
                                    "' (written for a different model?)");
    if (t->rows() != into.rows() || t->cols() != into.cols())
      throw InputError(path, 0, "tensor '" + name + "' is " + t->shape_str() +
                                    " in the checkpoint but " + into.shape_str() +
                                    " in this model (different --hidden/--layers/features?)");
    into = t->to(into.device());
  };
  for (auto& [name, p] : params_) restore("param." + name, p->var.value());
  for (auto& [name, t] : optimizer_->state()) restore("optim." + name, *t);
  best_params_.clear();
  if (ck.find("best." + params_.front().first)) {
    for (auto& [name, p] : params_) {
      best_params_.emplace_back(p->var.rows(), p->var.cols(), p->var.device());
      restore("best." + name, best_params_.back());
    }
  }
  epoch_ = meta.value("epoch", 0);
  optimizer_->set_steps(meta.value("optimizer_steps", int64_t(0)));
  best_epoch_ = meta.value("best_epoch", 0);
  best_val_ = meta.value("best_val_acc", -1.0);
}

}  // namespace dgnn
