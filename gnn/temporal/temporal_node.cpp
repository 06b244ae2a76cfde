#include "dgnn/gnn/temporal/temporal_node.hpp"

#include <algorithm>

#include "dgnn/common/error.hpp"
#include "dgnn/common/timer.hpp"
#include "dgnn/gnn/core/loss.hpp"
#include "dgnn/kernels/kernels.hpp"

namespace dgnn {

NodeSequenceTrainer::NodeSequenceTrainer(TemporalModel& model,
                                         const std::vector<std::unique_ptr<GraphView>>& graphs,
                                         const std::vector<Var>& features,
                                         const NodeSequenceTask& task, Communicator& comm,
                                         NodeSequenceOptions opt)
    : model_(model),
      graphs_(graphs),
      features_(features),
      task_(task),
      comm_(comm),
      opt_(opt),
      head_(model.out_dim(), task.num_classes) {
  // User-facing: plain messages (DGNN_CHECK would add this file's name and line).
  if (graphs_.empty()) throw OptionError("node classification needs at least one snapshot");
  DGNN_CHECK(features_.size() == 1 || features_.size() == graphs_.size(), ShapeError,
             "need one feature matrix, or one per snapshot");
  if (task_.num_classes < 2)
    throw OptionError("node classification needs labels of at least two classes (--labels)");
  if (task_.global_train <= 0)
    throw OptionError("node classification needs labelled training vertices (--labels)");
  if (opt_.bptt < 0) throw OptionError("--bptt must be >= 0");
  const int64_t owned = graphs_[0]->n_owned();
  DGNN_CHECK(int64_t(task_.labels.size()) == owned, ShapeError,
             "need one label per owned vertex: " + std::to_string(task_.labels.size()) +
                 " labels, " + std::to_string(owned) + " vertices");
  head_.reset_parameters(opt_.seed + 1);
  auto model_params = model_.named_parameters();
  if (!model_params.empty()) head_.to(model_params.front().second->var.device());
  for (auto& [name, p] : model_params) params_.emplace_back("model." + name, p);
  for (auto& [name, p] : head_.named_parameters()) params_.emplace_back("head." + name, p);
  optimizer_ = make_optimizer(params_, opt_);
  for (int32_t r : task_.train) train_labels_.push_back(task_.labels[size_t(r)]);
  loop_ = std::make_unique<TrainingLoop>(static_cast<TrainingTask&>(*this), comm_, opt_);
}

NodeSequenceTrainer::~NodeSequenceTrainer() = default;

Var NodeSequenceTrainer::run_sequence(bool training, uint64_t step, bool embed) {
  model_.reset_state();
  const int steps = int(graphs_.size());
  const int cut = opt_.bptt > 0 ? std::max(0, steps - opt_.bptt) : 0;
  Var h;
  for (int s = 0; s < steps; ++s) {
    // Truncated BPTT: the steps before the last `bptt` run with their state cut off behind.
    if (training && s == cut && s > 0) model_.detach_state();
    ForwardContext ctx{*graphs_[size_t(s)], training, opt_.seed,
                       step * uint64_t(steps) + uint64_t(s)};
    const Var& x = features_.size() == 1 ? features_[0] : features_[size_t(s)];
    h = model_.step(ctx, x);
  }
  if (embed) return h;
  ForwardContext ctx{*graphs_.back(), training, opt_.seed, step};
  return head_.forward(ctx, h);
}

StepLoss NodeSequenceTrainer::step_loss(int epoch, int64_t) {
  Var logits = run_sequence(true, uint64_t(epoch));
  StepLoss l;
  l.loss = cross_entropy(logits, task_.train, train_labels_, double(task_.global_train));
  l.value = l.loss.value().item();
  return l;
}

std::array<double, 2> NodeSequenceTrainer::evaluate(const Tensor& logits,
                                                    const std::vector<int32_t>& rows,
                                                    int64_t global_count) {
  // Per class: true positives, predicted, actual; then summed over ranks.
  const int64_t c = task_.num_classes;
  std::vector<int64_t> counts(size_t(3 * c + 1), 0);
  DGNN_CHECK(logits.device() == Device::cpu, DeviceError,
             "NodeSequenceTrainer::evaluate takes logits on the host");
  const Tensor& host = logits;
  for (int32_t r : rows) {
    const int32_t y = task_.labels[size_t(r)];
    int32_t best = 0;
    for (int32_t k = 1; k < c; ++k)
      if (host.at(r, k) > host.at(r, best)) best = k;
    counts[size_t(best)] += best == y;
    counts[size_t(c + best)] += 1;
    counts[size_t(2 * c + y)] += 1;
    counts[size_t(3 * c)] += best == y;
  }
  comm_.allreduce_sum(counts.data(), int64_t(counts.size()));
  double f1 = 0;
  int present = 0;
  for (int64_t k = 0; k < c; ++k) {
    const double tp = double(counts[size_t(k)]), pred = double(counts[size_t(c + k)]);
    const double actual = double(counts[size_t(2 * c + k)]);
    if (actual == 0) continue;  // macro over the classes present in these rows
    ++present;
    f1 += tp == 0 ? 0.0 : 2 * tp / (pred + actual);
  }
  return {global_count ? double(counts[size_t(3 * c)]) / double(global_count) : 0.0,
          present ? f1 / present : 0.0};
}

Tensor NodeSequenceTrainer::predict() {
  NoGradGuard no_grad;
  return run_sequence(false, 0).value().to(Device::cpu);
}

Tensor NodeSequenceTrainer::embeddings() {
  NoGradGuard no_grad;
  return run_sequence(false, 0, true).value().to(Device::cpu);
}

Evaluation NodeSequenceTrainer::validate() {
  const Tensor logits = predict();  // on the host: both evaluations read it there
  const auto val = evaluate(logits, task_.val, task_.global_val);
  Evaluation e;
  e.metrics = {{"train_acc", evaluate(logits, task_.train, task_.global_train)[0]},
               {"val_acc", val[0]},
               {"val_macro_f1", val[1]}};
  e.selection = val[0];
  return e;
}

Evaluation NodeSequenceTrainer::test() {
  const auto t = evaluate(predict(), task_.test, task_.global_test);
  Evaluation e;
  e.metrics = {{"test_acc", t[0]}, {"test_macro_f1", t[1]}};
  e.selection = t[0];
  return e;
}

NodeSequenceResult NodeSequenceTrainer::run(
    const std::function<void(const EpochRecord&)>& on_epoch) {
  const LoopResult r = loop_->run(on_epoch);
  NodeSequenceResult res;
  static_cast<LoopSummary&>(res) = r;
  res.best_val_acc = r.best_epoch > 0 ? r.best_val.get("val_acc") : -1;
  res.test_acc = r.test.get("test_acc");
  res.test_macro_f1 = r.test.get("test_macro_f1");
  return res;
}

}  // namespace dgnn
