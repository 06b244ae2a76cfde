#include "dgnn/gnn/train/trainer.hpp"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "dgnn/comm/device_comm.hpp"
#include "dgnn/common/error.hpp"
#include "dgnn/common/timer.hpp"
#include "dgnn/gnn/core/loss.hpp"
#include "dgnn/gnn/train/checkpoint.hpp"
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
  check_train_options(opt_);
  if (task.global_train == 0) throw OptionError("no labelled training vertices: nothing to train");
  params_ = model_.named_parameters();
  // A layer whose weights are members but not add_parameter'd (or a child not add_module'd)
  // would train nothing, at a constant loss, without a word.
  if (params_.empty())
    throw Error(
        "the model has no parameters to train: declare them with add_parameter and "
        "child modules with add_module");
  optimizer_ = make_optimizer(params_, opt_);
  loop_ = std::make_unique<TrainingLoop>(static_cast<TrainingTask&>(*this), comm_, opt_);
  for (int32_t r : task.train) train_labels_.push_back(task.labels[size_t(r)]);
  features_ = task.features;  // the same leaf every step: inputs need no gradient
}

Trainer::~Trainer() = default;

double Trainer::train_step(uint64_t step) {
  const double loss = loop_->step(full_loss(step));
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

StepLoss Trainer::full_loss(uint64_t step) {
  ForwardContext ctx{graph_, true, opt_.seed, step};
  Var logits = model_.forward(ctx, features_);
  check_logits(logits);
  StepLoss l;
  l.loss = cross_entropy(logits, task_.train, train_labels_, double(task_.global_train));
  l.value = l.loss.value().item();
  return l;
}

StepLoss Trainer::batch_loss(const MiniBatch& batch, uint64_t step) {
  StepLoss l;
  // The epoch's loss is the mean over its seeds.
  l.weight = l.count = double(batch.global_seeds);
  // A rank out of seeds computes nothing but still joins the gradient all-reduce.
  if (batch.seeds.empty()) return l;
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
  l.loss = cross_entropy(logits, rows, batch.labels, double(batch.global_seeds));
  l.value = l.loss.value().item();  // data()[0] would read device memory on a GPU
  return l;
}

double Trainer::forward_backward(uint64_t step) { return loop_->gradients(full_loss(step)); }

double Trainer::forward_backward(const MiniBatch& batch, uint64_t step) {
  return loop_->gradients(batch_loss(batch, step));
}

int64_t Trainer::steps_in_epoch(int) { return loader_ ? loader_->steps_per_epoch() : 1; }

void Trainer::begin_epoch(int) { figures_ = BatchFigures{}; }

StepLoss Trainer::step_loss(int epoch, int64_t step) {
  if (!loader_) return full_loss(uint64_t(epoch - 1));
  // The batch's views stay alive until its backward has run (end_step drops it).
  batch_ = std::make_unique<MiniBatch>(loader_->next());
  const MiniBatch& b = *batch_;
  DGNN_CHECK(b.epoch == epoch - 1 && b.step == step, Error, "mini-batch pipeline out of order");
  ++figures_.steps;
  figures_.sample_ms += b.sample_ms;
  figures_.sample_wait_ms += loader_->last_wait_ms();
  figures_.sampled_edges += b.edges;
  figures_.sample_bytes += b.sample_bytes;
  // The optimiser's step count keys dropout: unique per step, and restored by a checkpoint.
  return batch_loss(b, uint64_t(optimizer_->steps()));
}

void Trainer::end_step(int, int64_t) { batch_.reset(); }

void Trainer::end_epoch(int) {
  if (loader_) kernels::synchronize(features_.device());  // the epoch's time includes its kernels
}

std::vector<std::pair<std::string, double>> Trainer::epoch_figures() {
  if (!loader_) return {};
  const BatchFigures& f = figures_;
  return {{"steps", double(f.steps)},
          {"sample_ms", f.sample_ms},
          {"sample_wait_ms", f.sample_wait_ms},
          {"sample_hidden_ms", std::max(0.0, f.sample_ms - f.sample_wait_ms)},
          {"sampled_edges", double(f.sampled_edges)},
          {"sample_bytes_sent", double(f.sample_bytes)}};
}

Tensor Trainer::predict() {
  NoGradGuard no_grad;
  ForwardContext ctx{graph_, false, opt_.seed, 0};
  Var logits = model_.forward(ctx, features_);
  check_logits(logits);
  return std::move(logits.value());
}

void NodeSplitCounts::add(const Tensor& logits, const std::vector<int32_t>& labels,
                          const std::vector<int32_t>& train, const std::vector<int32_t>& val,
                          const std::vector<int32_t>& test) {
  const std::vector<int32_t>* sets[3] = {&train, &val, &test};
  for (int i = 0; i < 3; ++i) {
    std::vector<int32_t> l;
    for (int32_t r : *sets[i]) l.push_back(labels[size_t(r)]);
    correct[i] += count_correct(logits, *sets[i], l);
    if (i == 1) val_loss += cross_entropy_sum(logits, *sets[i], l);
  }
}

std::array<double, 4> NodeSplitCounts::reduce(Communicator& comm, int64_t global_train,
                                              int64_t global_val, int64_t global_test) {
  comm.allreduce_sum(correct, 3);
  comm.allreduce_sum(&val_loss, 1);
  const int64_t totals[3] = {global_train, global_val, global_test};
  std::array<double, 4> out{};
  for (int i = 0; i < 3; ++i)
    out[size_t(i)] = totals[i] ? double(correct[i]) / double(totals[i]) : 0;
  out[3] = totals[1] ? val_loss / double(totals[1]) : std::nan("");
  return out;
}

Evaluation node_validation(const std::array<double, 4>& e, const std::string& select) {
  Evaluation v;
  v.metrics = {{"train_acc", e[0]}, {"val_acc", e[1]}, {"test_acc", e[2]}, {"val_loss", e[3]}};
  v.selection = select == "loss" ? -e[3] : e[1];
  return v;
}

Evaluation node_test(double test_acc) {
  Evaluation e;
  e.metrics = {{"test_acc", test_acc}};
  e.selection = test_acc;
  return e;
}

TrainResult node_result(const LoopResult& r) {
  TrainResult res;
  static_cast<LoopSummary&>(res) = r;
  res.best_val_acc = r.best_epoch > 0 ? r.best_val.get("val_acc") : -1;
  res.best_val_loss = r.best_epoch > 0 ? r.best_val.get("val_loss") : std::nan("");
  res.test_acc = r.test.get("test_acc");
  return res;
}

std::array<double, 4> Trainer::evaluate_with_loss() {
  NodeSplitCounts counts;
  counts.add(predict(), task_.labels, task_.train, task_.val, task_.test);
  return counts.reduce(comm_, task_.global_train, task_.global_val, task_.global_test);
}

std::array<double, 3> Trainer::evaluate() {
  const std::array<double, 4> e = evaluate_with_loss();
  return {e[0], e[1], e[2]};
}

Evaluation Trainer::validate() { return node_validation(evaluate_with_loss(), opt_.select); }

Evaluation Trainer::test() { return node_test(evaluate()[2]); }

void Trainer::on_start(int epochs_done) {
  if (loader_) loader_->start(epochs_done, opt_.epochs - 1);
}

TrainResult Trainer::run(const std::function<void(const EpochRecord&)>& on_epoch) {
  std::vector<double> samples, sample_waits;
  const LoopResult r = loop_->run([&](const EpochRecord& rec) {
    samples.push_back(rec.figure("sample_ms"));
    sample_waits.push_back(rec.figure("sample_wait_ms"));
    if (on_epoch) on_epoch(rec);
  });
  TrainResult res = node_result(r);
  res.median_sample_ms = median(samples);
  res.median_sample_wait_ms = median(sample_waits);
  return res;
}

void Trainer::save_checkpoint(const std::string& path) { loop_->save_checkpoint(path); }
void Trainer::load_checkpoint(const std::string& path) { loop_->load_checkpoint(path); }

}  // namespace dgnn
