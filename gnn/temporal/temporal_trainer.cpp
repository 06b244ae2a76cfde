// The link-prediction / edge-classification task of the training loop: its windows of steps
// under either strategy (its evaluation: gnn/temporal/temporal_eval.cpp; what steps score:
// gnn/temporal/temporal_steps.cpp; what they read: gnn/temporal/temporal_features.cpp; what a
// run writes: gnn/temporal/temporal_outputs.cpp).
#include "dgnn/gnn/temporal/temporal_trainer.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <tuple>

#include "dgnn/common/error.hpp"
#include "dgnn/common/hash_rng.hpp"
#include "dgnn/gnn/core/loss.hpp"
#include "dgnn/gnn/train/metrics.hpp"
#include "dgnn/gnn/train/trainer.hpp"

namespace dgnn {

LinkPredictionTrainer::LinkPredictionTrainer(TemporalModel& model, PairClassifier& head,
                                             const TemporalGraph& g,
                                             const std::vector<std::unique_ptr<GraphView>>& graphs,
                                             const std::vector<Var>& features, Communicator& comm,
                                             TemporalOptions opt, const RowDirectory* dir,
                                             const SnapshotPlan* plan)
    : model_(model),
      head_(head),
      g_(g),
      graphs_(graphs),
      features_(features),
      comm_(comm),
      opt_(opt),
      plan_(plan),
      single_(dir ? RowDirectory{} : RowDirectory::single(g.num_vertices)),
      dir_(dir ? *dir : single_) {
  const int t = g.num_snapshots();
  if (int(graphs.size()) != t) throw ShapeError("need one graph view per snapshot");
  if (features.size() != 1 && int(features.size()) != t)
    throw ShapeError("need one feature matrix, or one per snapshot");
  if (int64_t(dir_.owner.size()) != g.num_vertices)
    throw ShapeError("the row directory must list every vertex of the temporal graph");
  const TemporalSplit sp = temporal_split(g, opt_);
  if (g.num_vertices < model.min_vertices())
    throw OptionError("the model needs at least " + std::to_string(model.min_vertices()) +
                      " vertices (EvolveGCN-H summarises each step into one row per column of "
                      "its layers: lower --hidden), the graph has " +
                      std::to_string(g.num_vertices));
  n_steps_ = sp.steps;
  n_train_ = sp.train;
  n_val_ = sp.val;
  if (plan_) {
    if (plan_->windows != temporal_windows(g, opt_) || plan_->ranks != comm.size() ||
        plan_->num_vertices != g.num_vertices)
      throw Error("the snapshot plan was made for other options, rank count or graph");
    if (dir) throw Error("the snapshot strategy takes no row directory (vertices are not split)");
  } else {
    for (const auto& v : graphs)
      if (!v) throw ShapeError("need one graph view per snapshot");
  }
  for (int s = 0; s < n_steps_; ++s) {
    const SnapshotEvents& ev = g.events[size_t(opt_.task == TemporalTask::link ? s + 1 : s)];
    bool any = ev.sharded() && ev.whole->targets > 0;
    for (size_t i = 0; i < ev.src.size() && !any && !ev.sharded(); ++i)
      any = ev.src[i] != ev.dst[i];
    has_targets_.push_back(any);
  }
  // A split whose steps hold no edge to predict or classify has nothing to measure: its metrics
  // would be a mean over no step. Every rank sees the same events (or a share with the whole
  // step's counts), so all refuse alike.
  const char* what = opt_.task == TemporalTask::link ? "the next snapshot" : "the snapshot";
  for (auto [name, begin, end] :
       {std::tuple{"training", 0, n_train_}, std::tuple{"validation", n_train_, n_train_ + n_val_},
        std::tuple{"test", n_train_ + n_val_, n_steps_}})
    if (std::find(has_targets_.begin() + begin, has_targets_.begin() + end, uint8_t(1)) ==
        has_targets_.begin() + end)
      throw OptionError(std::string("the ") + name + " steps " + std::to_string(begin) + ".." +
                        std::to_string(end - 1) + " have no edge in " + what +
                        " (empty snapshots): nothing to " +
                        (std::string(name) == "training" ? "learn from" : "measure") +
                        "; move the split (--train-frac / --val-frac) or cut the time line "
                        "otherwise (--snapshot-seconds / --snapshots)");
  for (auto& p : model_.named_parameters()) params_.emplace_back("model." + p.first, p.second);
  for (auto& p : head_.named_parameters()) params_.emplace_back("head." + p.first, p.second);
  optimizer_ = make_optimizer(params_, opt_);
  // The tgb protocol's historical negatives: edges of the snapshots training sees, inputs and
  // targets (snapshots 0..n_train).
  if (opt_.eval_protocol == EvalProtocol::tgb)
    history_ = std::make_unique<const EdgeHistory>(edge_history(g_, n_train_));
  loop_ = std::make_unique<TrainingLoop>(static_cast<TrainingTask&>(*this), comm_, opt_);
}

LinkPredictionTrainer::~LinkPredictionTrainer() = default;

LinkPredictionTrainer::Batch LinkPredictionTrainer::local_batch(int step, int negatives,
                                                                uint64_t salt) const {
  if (comm_.size() == 1) return batch_for(step, negatives, salt);
  const int me = comm_.rank();
  const std::vector<int32_t>& owner = dir_.owner;
  auto mine = [&](int32_t u) { return owner[size_t(u)] == me; };
  if (opt_.task != TemporalTask::link)
    return step_pairs(g_, opt_.task, step, negatives, opt_.seed, salt, mine);
  // Found again at each use (one pass over the step's share of events): kept for every step,
  // they were 8 bytes per positive of the run on every rank (10 MB a rank, 100k x 30 SBM, 4
  // ranks), which one process never holds.
  const StepPositives known = step_positives(g_, step, mine);
  if (history_ && salt == kEvalSalt)
    return tgb_step_pairs(g_, step, negatives, opt_.seed, salt, *history_, mine, &known);
  return step_pairs(g_, opt_.task, step, negatives, opt_.seed, salt, mine, &known);
}

Var LinkPredictionTrainer::score(ForwardContext& ctx, const Var& h, const Batch& local) {
  // One process: both ends are rows of h. Several: the second ends' rows are fetched from
  // their owners (a differentiable all-to-all), each distinct vertex once (the negatives repeat
  // vertices), in order of first appearance; each pair indexes its end's row.
  if (comm_.size() == 1) return head_.score(ctx, h, local.src, local.dst);
  std::vector<int32_t> rows(local.src.size()), slot;
  for (size_t i = 0; i < rows.size(); ++i) rows[i] = dir_.owned_row(local.src[i]);
  const std::vector<int32_t> ends = distinct_ends(local.dst, slot);
  return head_.score(ctx, PairEnd{h, std::move(rows)},
                     PairEnd{fetch_rows(comm_, dir_, h, ends), std::move(slot)});
}

std::vector<int32_t> LinkPredictionTrainer::distinct_ends(const std::vector<int32_t>& dst,
                                                          std::vector<int32_t>& slot) {
  // A table sized by the batch (open addressing, at most half full), not by the graph: a mark
  // per vertex was 4 bytes a vertex of the whole graph on every rank.
  std::vector<int32_t> ends;
  slot.resize(dst.size());
  size_t cap = 16;
  while (cap < 2 * dst.size()) cap *= 2;
  std::vector<int64_t> table(cap, -1);  // (vertex << 32 | its slot), or -1
  const size_t mask = cap - 1;
  for (size_t i = 0; i < dst.size(); ++i) {
    const int32_t v = dst[i];
    size_t at = size_t(mix64(uint64_t(uint32_t(v)))) & mask;
    while (table[at] >= 0 && int32_t(table[at] >> 32) != v) at = (at + 1) & mask;
    if (table[at] < 0) {
      table[at] = int64_t(v) << 32 | int64_t(ends.size());
      ends.push_back(v);
    }
    slot[i] = int32_t(table[at] & 0xffffffff);
  }
  return ends;
}

Var LinkPredictionTrainer::round_loss(ForwardContext& ctx, const Var& h, const Batch& local,
                                      const std::vector<std::vector<int32_t>>& by_owner,
                                      int round) {
  const int p = comm_.size();
  if (p == 1) {
    Var logits = head_.score(ctx, h, local.src, local.dst);
    return local.src.empty() ? scale(sum(logits), 0.f)
                             : bce_with_logits(logits, local.target, 1.0, local.weight);
  }
  const int me = comm_.rank();
  const std::vector<int32_t>& pairs = by_owner[size_t((me + round) % p)];
  // Round 0 reads this rank's own rows and moves nothing: with no pair there, nothing to add.
  if (round == 0 && pairs.empty()) return {};
  std::vector<int32_t> rows(pairs.size()), dst(pairs.size()), slot;
  std::vector<float> target(pairs.size()), weight(local.weight.empty() ? 0 : pairs.size());
  for (size_t k = 0; k < pairs.size(); ++k) {
    const size_t i = size_t(pairs[k]);
    rows[k] = dir_.owned_row(local.src[i]);
    dst[k] = local.dst[i];
    target[k] = local.target[i];
    if (!weight.empty()) weight[k] = local.weight[i];
  }
  Var table = h;
  if (round == 0) {
    // The rank's own rows, read in place.
    slot.resize(dst.size());
    for (size_t k = 0; k < dst.size(); ++k) slot[k] = dir_.owned_row(dst[k]);
  } else {
    table = fetch_rows(comm_, dir_, h, distinct_ends(dst, slot));
  }
  Var logits = head_.score(ctx, PairEnd{h, std::move(rows)}, PairEnd{table, std::move(slot)});
  // A rank with no pairs here still back-propagates its (empty) scores: the fetch's backward
  // is collective.
  return pairs.empty() ? scale(sum(logits), 0.f) : bce_with_logits(logits, target, 1.0, weight);
}

StepLoss LinkPredictionTrainer::step_loss(int epoch, int64_t window) {
  const std::vector<int> bounds = training_windows();
  return window_loss(epoch, bounds[size_t(window)], bounds[size_t(window) + 1]);
}

std::vector<int> LinkPredictionTrainer::training_windows() const {
  if (plan_) {
    std::vector<int> b;
    for (int x : plan_->windows)
      if (x <= n_train_) b.push_back(x);
    return b;
  }
  const int window = opt_.bptt > 0 ? opt_.bptt : n_train_;
  std::vector<int> b;
  for (int start = 0; start < n_train_; start += window) b.push_back(start);
  b.push_back(n_train_);
  return b;
}

// Each step's head is back-propagated as soon as the step is scored (backward_to): the scores'
// tape (the fetched ends' rows, the scorer's projections of them, a row per pair) then lives for
// one step, not for the window's bptt steps; the window's backward starts from each step's
// gradient with respect to its embeddings. The parameters' gradient is the same sum (in another
// order), so the task zeroes them itself (StepLoss::accumulated).
StepLoss LinkPredictionTrainer::window_loss(int epoch, int start, int end) {
  if (plan_) return window_loss_snapshots(epoch, start, end);
  int in_window = 0;
  for (int s = start; s < end; ++s) in_window += has_targets_[size_t(s)];
  optimizer_->zero_grad();
  const float share = in_window > 0 ? 1.f / float(in_window) : 1.f;
  Var tape;
  double value = 0;
  for (int s = start; s < end; ++s) {
    ForwardContext ctx{*graphs_[size_t(s)], true, opt_.seed, uint64_t(epoch)};
    const Var& x = features_.size() == 1 ? features_[0] : features_[size_t(s)];
    Var h = model_.step(ctx, x);
    // Each rank draws its share of the step's batch (the same samples and weights as one
    // process); a step without targets is skipped on every rank alike.
    if (!has_targets_[size_t(s)]) continue;
    const Batch b = local_batch(s, opt_.neg_train, train_salt(epoch));
    double l = 0;
    // One round per rank that owns second vertices (one process: one round, every pair).
    std::vector<std::vector<int32_t>> by_owner(static_cast<size_t>(comm_.size()));
    if (comm_.size() > 1)
      for (size_t i = 0; i < b.dst.size(); ++i)
        by_owner[size_t(dir_.owner[size_t(b.dst[i])])].push_back(int32_t(i));
    Var term = backward_to_parts(h, share, comm_.size(), l, [&](const Var& rows, int round) {
      return round_loss(ctx, rows, b, by_owner, round);
    });
    value += l;
    tape = tape.defined() ? add(tape, term) : term;
  }
  StepLoss out;
  out.count = in_window;
  out.step = in_window > 0;  // the same on every rank
  out.accumulated = true;
  if (!tape.defined()) return out;
  out.value = value;
  comm_.allreduce_sum(&out.value, 1);
  out.summed = true;
  out.loss = tape;
  return out;
}

// ---- the snapshot strategy ------------------------------------------------------------------

StepLoss LinkPredictionTrainer::window_loss_snapshots(int epoch, int start, int end) {
  SnapshotWindow w(comm_, *plan_, start, end, graphs_, features_, true, opt_.seed, uint64_t(epoch),
                   device());
  const std::vector<Var> h = model_.window(w);
  // The owner of a step scores the whole of its batch (same samples and weights as one
  // process); every rank knows which steps have targets, so all agree on the window's count.
  int in_window = 0;
  for (int s = start; s < end; ++s) in_window += has_targets_[size_t(s)];
  StepLoss out;
  out.count = in_window;
  out.step = in_window > 0;  // every rank counts the same
  out.accumulated = true;
  optimizer_->zero_grad();
  if (in_window == 0) return out;
  const float share = 1.f / float(in_window);
  Var tape;
  double value = 0;
  for (int s = w.own_begin(); s < w.own_end(); ++s) {
    if (!has_targets_[size_t(s)]) continue;
    const Batch b = batch_for(s, opt_.neg_train, train_salt(epoch));
    double l = 0;
    Var term = backward_to(h[size_t(s - w.own_begin())], share, l, [&](const Var& rows) {
      return bce_with_logits(head_.score(w.ctx(s), rows, b.src, b.dst), b.target, 1.0, b.weight);
    });
    value += l;
    tape = tape.defined() ? add(tape, term) : term;
  }
  out.value = value;
  comm_.allreduce_sum(&out.value, 1);
  out.summed = true;
  // The anchor (a zero) puts the window's communication on every rank's tape: their
  // backwards are collective.
  out.loss = tape.defined() ? add(tape, w.anchor()) : w.anchor();
  return out;
}

namespace {

Evaluation to_evaluation(const LinkMetrics& m, const TemporalOptions& opt) {
  const TemporalTask task = opt.task;
  Evaluation e;
  if (task == TemporalTask::link)
    e.metrics = {{"auc", m.auc}, {"map", m.map}, {"mrr", m.mrr}, {"loss", m.loss}};
  else
    e.metrics = {{"f1", m.f1}, {"macro_f1", m.macro_f1}, {"auc", m.auc}, {"loss", m.loss}};
  // TGB selects by validation MRR, its one metric.
  e.selection = opt.eval_protocol == EvalProtocol::tgb ? m.mrr : m.selection(task);
  return e;
}

LinkMetrics to_metrics(const Evaluation& e) {
  LinkMetrics m;
  auto get = [&](const char* name) {
    const double v = e.get(name);
    return std::isnan(v) ? 0.0 : v;
  };
  m.auc = get("auc");
  m.map = get("map");
  m.mrr = get("mrr");
  m.f1 = get("f1");
  m.macro_f1 = get("macro_f1");
  m.loss = e.get("loss");
  return m;
}

}  // namespace

Evaluation LinkPredictionTrainer::validate() {
  Evaluation e = to_evaluation(evaluate(n_train_, n_train_ + n_val_), opt_);
  // Every rank holds the same parameters and selection: all decide alike.
  if (!plan_ && (!after_val_ || e.selection > after_val_->selection)) {
    auto v = std::make_unique<ValidationState>();
    if (model_.save_state(&v->state)) {
      for (auto& [name, p] : params_) v->params.push_back(p->var.value().to(Device::cpu));
      v->selection = e.selection;
      after_val_ = std::move(v);
    }
  }
  return e;
}

bool LinkPredictionTrainer::holds_validated_params() const {
  // A collective answer: a rank that reran the sequence while another continued would hang.
  double differ = after_val_ ? 0.0 : 1.0;
  for (size_t i = 0; after_val_ && differ == 0 && i < params_.size(); ++i) {
    const Tensor now = params_[i].second->var.value().to(Device::cpu);
    const Tensor& then = after_val_->params[i];
    differ = now.numel() != then.numel() ||
             std::memcmp(now.data(), then.data(), size_t(now.numel()) * sizeof(float)) != 0;
  }
  comm_.allreduce_max(&differ, 1);
  return differ == 0;
}

Evaluation LinkPredictionTrainer::test() {
  const bool resume = !plan_ && holds_validated_params();
  return to_evaluation(evaluate(n_train_ + n_val_, n_steps_, resume ? &after_val_->state : nullptr),
                       opt_);
}

TemporalResult LinkPredictionTrainer::run(const std::function<void(const EpochRecord&)>& cb) {
  TemporalResult res;
  res.train_steps = n_train_;
  res.val_steps = n_val_;
  res.test_steps = n_steps_ - n_train_ - n_val_;
  const LoopResult r = loop_->run(cb);
  static_cast<LoopSummary&>(res) = r;
  res.best_val = to_metrics(r.best_val);
  res.test = to_metrics(r.test);
  return res;
}

}  // namespace dgnn
