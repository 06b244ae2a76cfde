// The link-prediction / edge-classification task of the training loop: its windows of steps
// under either strategy, and its evaluation (what steps score: gnn/temporal/temporal_steps.cpp;
// what they read: gnn/temporal/temporal_features.cpp; what a run writes:
// gnn/temporal/temporal_outputs.cpp).
#include "dgnn/gnn/temporal/temporal_trainer.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <tuple>

#include "dgnn/common/error.hpp"
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
      plan_(plan) {
  const int t = g.num_snapshots();
  if (int(graphs.size()) != t) throw ShapeError("need one graph view per snapshot");
  if (features.size() != 1 && int(features.size()) != t)
    throw ShapeError("need one feature matrix, or one per snapshot");
  dir_ = dir ? *dir : RowDirectory::single(g.num_vertices);
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
    bool any = false;
    for (size_t i = 0; i < ev.src.size() && !any; ++i) any = ev.src[i] != ev.dst[i];
    has_targets_.push_back(any);
  }
  // A split whose steps hold no edge to predict or classify has nothing to measure: its metrics
  // would be a mean over no step. Every rank sees the same events, so all refuse alike.
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
  if (positives_.empty()) positives_.resize(g_.events.size());
  auto& known = positives_[size_t(step)];
  if (!known) known = std::make_unique<const StepPositives>(step_positives(g_, step, mine));
  if (history_ && salt == kEvalSalt)
    return tgb_step_pairs(g_, step, negatives, opt_.seed, salt, *history_, mine, known.get());
  return step_pairs(g_, opt_.task, step, negatives, opt_.seed, salt, mine, known.get());
}

Var LinkPredictionTrainer::score(ForwardContext& ctx, const Var& h, const Batch& local) {
  // One process: both ends are rows of h. Several: the second ends' rows are fetched from
  // their owners (a differentiable all-to-all), each distinct vertex once (the negatives repeat
  // vertices), in order of first appearance; each pair indexes its end's row.
  if (comm_.size() == 1) return head_.score(ctx, h, local.src, local.dst);
  std::vector<int32_t> rows(local.src.size()), slot(local.dst.size()), ends;
  for (size_t i = 0; i < rows.size(); ++i) rows[i] = dir_.local[size_t(local.src[i])];
  end_slot_.resize(dir_.owner.size(), -1);
  for (size_t i = 0; i < slot.size(); ++i) {
    int32_t& at = end_slot_[size_t(local.dst[i])];
    if (at < 0) {
      at = int32_t(ends.size());
      ends.push_back(local.dst[i]);
    }
    slot[i] = at;
  }
  for (int32_t v : ends) end_slot_[size_t(v)] = -1;
  return head_.score(ctx, PairEnd{h, std::move(rows)},
                     PairEnd{fetch_rows(comm_, dir_, h, ends), std::move(slot)});
}

Var LinkPredictionTrainer::eval_logits(ForwardContext& ctx, const Var& h, const Batch& local,
                                       bool whole) {
  const size_t per = size_t(opt_.neg_eval) + 1;
  if (opt_.task != TemporalTask::link || opt_.eval_all_pairs || device() != Device::cpu ||
      local.src.size() % per != 0)
    return whole ? head_.score(ctx, h, local.src, local.dst) : score(ctx, h, local);
  Var fetched;
  if (!whole) {
    std::vector<int32_t> ids(static_cast<size_t>(g_.num_vertices));
    std::iota(ids.begin(), ids.end(), 0);
    fetched = fetch_rows(comm_, dir_, h, ids);
  }
  const FactoredPairs f = head_.factor(whole ? h.value() : fetched.value());
  const size_t kept = local.src.size() / per, k = per - 1;
  Tensor out(int64_t(local.src.size()), 1);
  float* o = out.data();
#pragma omp parallel
  {
    std::vector<int32_t> cand(per);
    std::vector<float> scores(per), scratch;
#pragma omp for schedule(dynamic, 64)
    for (int64_t j = 0; j < int64_t(kept); ++j) {
      cand[0] = local.dst[size_t(j)];
      std::copy(local.dst.begin() + int64_t(kept + size_t(j) * k),
                local.dst.begin() + int64_t(kept + size_t(j + 1) * k), cand.begin() + 1);
      f.score_list(local.src[size_t(j)], cand.data(), int64_t(per), scores.data(), scratch);
      o[j] = scores[0];
      std::copy(scores.begin() + 1, scores.end(), o + kept + size_t(j) * k);
    }
  }
  return Var(std::move(out));
}

double LinkPredictionTrainer::train_epoch(int epoch) {
  model_.reset_state();
  double total = 0;
  int counted = 0;
  const std::vector<int> bounds = training_windows();
  for (size_t wi = 0; wi + 1 < bounds.size(); ++wi) {
    int in_window = 0;
    total += window_gradients(epoch, bounds[wi], bounds[wi + 1], &in_window);
    counted += in_window;
    if (in_window > 0) optimizer_->step();
    model_.detach_state();
  }
  return counted ? total / counted : 0.0;
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

std::vector<LinkPredictionTrainer::WindowGradients> LinkPredictionTrainer::epoch_gradients(
    int epoch) {
  model_.reset_state();
  const std::vector<int> bounds = training_windows();
  std::vector<WindowGradients> out(bounds.size() - 1);
  for (size_t wi = 0; wi + 1 < bounds.size(); ++wi) {
    WindowGradients& w = out[wi];
    w.loss = window_gradients(epoch, bounds[wi], bounds[wi + 1], &w.steps);
    for (auto& [name, p] : params_) {
      const Tensor g = p->var.node()->grad_buffer().to(Device::cpu);
      w.grads.insert(w.grads.end(), g.data(), g.data() + g.numel());
    }
    model_.detach_state();
  }
  model_.reset_state();
  return out;
}

double LinkPredictionTrainer::window_gradients(int epoch, int start, int end, int* in_window) {
  if (plan_) return window_gradients_snapshots(epoch, start, end, in_window);
  optimizer_->zero_grad();
  Var loss;
  *in_window = 0;
  for (int s = start; s < end; ++s) {
    ForwardContext ctx{*graphs_[size_t(s)], true, opt_.seed, uint64_t(epoch)};
    const Var& x = features_.size() == 1 ? features_[0] : features_[size_t(s)];
    Var h = model_.step(ctx, x);
    // Each rank draws its share of the step's batch (the same samples and weights as one
    // process); a step without targets is skipped on every rank alike.
    if (!has_targets_[size_t(s)]) continue;
    const Batch b = local_batch(s, opt_.neg_train, train_salt(epoch));
    Var logits = score(ctx, h, b);
    // A rank with no pairs here still puts the (empty) scores on its tape: the fetch's
    // backward is collective.
    Var l =
        b.src.empty() ? scale(sum(logits), 0.f) : bce_with_logits(logits, b.target, 1.0, b.weight);
    loss = loss.defined() ? add(loss, l) : l;
    ++*in_window;
  }
  if (!loss.defined()) return 0.0;
  double value = loss.value().item();
  comm_.allreduce_sum(&value, 1);
  scale(loss, 1.f / float(*in_window)).backward();
  allreduce_gradients(comm_, params_, flat_);
  return value;
}

void LinkPredictionTrainer::gather_all(const Tensor& logits, const Batch& local,
                                       std::vector<float>* scores, std::vector<float>* labels,
                                       std::vector<float>* groups) {
  // Three floats per pair (score, label, source id: exact below 2^24 vertices), all to all.
  const int p = comm_.size();
  std::vector<float> mine;
  const Tensor host = logits.to(Device::cpu);
  for (size_t i = 0; i < local.src.size(); ++i) {
    mine.push_back(host.data()[i]);
    mine.push_back(local.target[i]);
    mine.push_back(float(local.src[i]));
  }
  std::vector<int64_t> counts(size_t(p), 0);
  counts[size_t(comm_.rank())] = int64_t(mine.size()) * 4;
  comm_.allreduce_sum(counts.data(), p);
  std::vector<int64_t> send_counts(size_t(p), int64_t(mine.size()) * 4), send_displs(size_t(p), 0);
  std::vector<int64_t> recv_displs(size_t(p), 0);
  int64_t total = 0;
  for (int r = 0; r < p; ++r) {
    recv_displs[size_t(r)] = total;
    total += counts[size_t(r)];
  }
  std::vector<float> all(size_t(total / 4));
  comm_.alltoallv(mine.data(), send_counts, send_displs, all.data(), counts, recv_displs);
  for (size_t i = 0; i + 2 < all.size(); i += 3) {
    scores->push_back(all[i]);
    labels->push_back(all[i + 1]);
    groups->push_back(all[i + 2]);
  }
}

namespace {

// TGB's reciprocal ranks summed over a batch's `kept` positives (logits z: the positives, then
// k negatives each).
double reciprocal_ranks(const float* z, size_t kept, size_t k) {
  double rr = 0;
  for (size_t j = 0; j < kept; ++j)
    rr += one_vs_many_reciprocal_rank(z[j], z + kept + j * k, int64_t(k), kLogitTie);
  return rr;
}

}  // namespace

namespace {

// Why a fused evaluation step failed (add_fused_eval_step's *failed), as the error every rank
// throws.
constexpr int kFusedOk = 0, kFusedNaN = 1, kFusedTwoPasses = 2;
[[noreturn]] void throw_fused_failure(int failure, int step) {
  if (failure == kFusedNaN)
    throw Error("link evaluation: a pair scored NaN at step " + std::to_string(step) +
                " (the model diverged)");
  throw Error("link evaluation: a positive scored differently in its two passes at step " +
              std::to_string(step) + " (the pair scorer must be deterministic)");
}

}  // namespace

void LinkPredictionTrainer::add_fused_eval_step(EvalSums& acc, int step, const Tensor& h,
                                                Communicator& comm,
                                                const std::function<bool(int32_t)>& mine,
                                                int* failed) {
  const FactoredPairs f = head_.factor(h);
  const size_t k = size_t(opt_.neg_eval);
  const bool tgb = history_ != nullptr;
  const size_t threads = static_cast<size_t>(omp_get_max_threads());
  LinkWeights w{};
  // Per positive j: its score, its loss term and (tgb) its reciprocal rank; per source with
  // positives: its MRR group value. Each rank fills those of its sources (zeros elsewhere), so
  // sums over ranks are the values; all are then summed in j and source order, as one process
  // sums them (the same bits on any rank and thread count).
  std::vector<float>& pos = acc.logits;
  std::vector<double>& loss = acc.loss;
  std::vector<double>& rr = acc.rr;
  std::vector<double>& group = acc.group;
  std::vector<RankCounter::Part>& parts = acc.parts;
  if (eval_plans_.size() < size_t(n_steps_)) eval_plans_.resize(size_t(n_steps_));
  std::shared_ptr<const LinkStepPlan>& plan = eval_plans_[size_t(step)];
  if (!plan) plan = plan_link_step(g_, step);
  const std::vector<int32_t>& sources = link_step_sources(*plan);
  // This rank's troubles, counted per thread: NaN scores, and positives that scored otherwise
  // in their second pass. Summed over ranks, so that all throw alike.
  std::vector<int64_t> bad(2 * threads, 0);
  // False when the step failed and `failed` takes the reason; throws without `failed`.
  auto check = [&] {
    int64_t sums[2] = {0, 0};
    for (size_t t = 0; t < threads; ++t) sums[0] += bad[2 * t], sums[1] += bad[2 * t + 1];
    comm.allreduce_sum(sums, 2);
    const int failure = sums[0] > 0 ? kFusedNaN : sums[1] > 0 ? kFusedTwoPasses : kFusedOk;
    if (failure == kFusedOk) return true;
    if (!failed) throw_fused_failure(failure, step);
    *failed = failure;
    return false;
  };
  // The sources' positives alone first (1 / (1 + k) of the pairs): every rank needs all their
  // scores, which place its negatives among them.
  const size_t kept = visit_link_sources(
      g_, step, 0, opt_.seed, kEvalSalt, history_.get(),
      [&](size_t n, size_t total) {
        w = link_weights(total, k);
        pos.assign(n, 0.f);
        loss.assign(n, 0.0);
        rr.assign(tgb ? n : 0, 0.0);
        group.assign(sources.size(), 0.0);
        parts.resize(threads);
        for (auto& part : parts) part.clear();
      },
      [&](int32_t u, size_t count, const uint32_t* js, const int32_t* vs, const int32_t*) {
        thread_local std::vector<float> score, scratch;
        score.resize(count);
        f.score_list(u, vs, int64_t(count), score.data(), scratch);
        for (size_t c = 0; c < count; ++c) {
          bad[2 * size_t(omp_get_thread_num())] += std::isnan(score[c]);
          pos[js[c]] = score[c];
        }
      },
      plan.get(), mine);
  if (!check()) return;
  ++acc.counted;
  if (kept == 0) {
    const double nan_v = std::numeric_limits<double>::quiet_NaN();
    acc.m.auc += nan_v, acc.m.map += nan_v, acc.m.mrr += nan_v;
    return;
  }
  // -0 + 0 is +0: a score of -0 arrives as +0, which every use treats alike (order keys,
  // the loss, the comparisons below).
  comm.allreduce_sum(pos.data(), int64_t(kept));
  const RankCounter counter(pos.data(), kept, kLogitTie);
  visit_link_sources(
      g_, step, opt_.neg_eval, opt_.seed, kEvalSalt, history_.get(), [](size_t, size_t) {},
      [&](int32_t u, size_t count, const uint32_t* js, const int32_t* vs, const int32_t*) {
        const size_t t = size_t(omp_get_thread_num());
        thread_local std::vector<float> score, scratch;
        thread_local GroupRankScratch gs;
        // The source's positives, then their negatives (drawn follows vs): one list (a pair
        // scores alike anywhere).
        score.resize(count * (1 + k));
        f.score_list(u, vs, int64_t(score.size()), score.data(), scratch);
        const float* neg = score.data() + count;
        if (!RankCounter::add(neg, count * k, parts[t])) {
          ++bad[2 * t];
          return;
        }
        // The counter holds the first pass's scores: a positive must score the same again.
        for (size_t c = 0; c < count; ++c)
          if (!(score[c] == pos[js[c]])) {
            ++bad[2 * t + 1];
            return;
          }
        for (size_t c = 0; c < count; ++c) {
          const size_t j = js[c];
          const float* nj = neg + c * k;
          loss[j] = double(w.positive) * kernels::softplus_sum(Device::cpu, &score[c], 1, -1.f) +
                    double(w.negative) * kernels::softplus_sum(Device::cpu, nj, int64_t(k), 1.f);
          if (tgb) rr[j] = one_vs_many_reciprocal_rank(score[c], nj, int64_t(k), kLogitTie);
        }
        // Last: it sorts the positives' scores in place (the negatives after them stay).
        const size_t at =
            size_t(std::lower_bound(sources.begin(), sources.end(), u) - sources.begin());
        group[at] = group_reciprocal_rank(score.data(), count, neg, count * k, kLogitTie, gs);
      },
      plan.get(), mine);
  if (!check()) return;
  // AUC and AP: the positives (in ordinal order) place the negatives every thread and rank
  // collected.
  std::vector<int64_t> tally = counter.tally(parts);
  comm.allreduce_sum(tally.data(), int64_t(tally.size()));
  comm.allreduce_sum(loss.data(), int64_t(kept));
  comm.allreduce_sum(group.data(), int64_t(group.size()));
  if (tgb) comm.allreduce_sum(rr.data(), int64_t(kept));
  double l = 0;
  for (size_t j = 0; j < kept; ++j) l += loss[j];
  acc.m.loss += double(float(l));  // bce_with_logits returns a float
  const auto [auc, map] = counter.finish(tally);
  acc.m.auc += auc;
  acc.m.map += map;
  // MRR: the mean over sources with positives, in ascending id (rank_metrics' group order).
  double mrr = 0;
  for (double v : group) mrr += v;
  acc.m.mrr += mrr / double(group.size());
  if (tgb) {
    // The step's sum first, as every path sums its ranks (the snapshot strategy per owned step,
    // the batched path per batch).
    double step_rr = 0;
    for (size_t j = 0; j < kept; ++j) step_rr += rr[j];
    acc.tgb_rr += step_rr;
    acc.tgb_positives += double(kept);
  }
}

void LinkPredictionTrainer::add_eval_step(EvalSums& acc, const Var& logits, const Batch& local) {
  double part_loss = local.src.empty()
                         ? 0.0
                         : bce_with_logits(logits, local.target, 1.0, local.weight).value().item();
  comm_.allreduce_sum(&part_loss, 1);
  acc.m.loss += part_loss;
  ++acc.counted;
  // Metrics need every pair's score: gathered on all ranks (in rank order). One process reads
  // them in place: the logits, the batch's targets and sources.
  const size_t n = local.src.size();
  std::vector<float> scores, label_f, group_f;
  std::vector<int32_t> groups;
  // This rank's logits on the host: the metrics on one process, TGB's ranks on any.
  const bool tgb = opt_.eval_protocol == EvalProtocol::tgb;
  const Tensor mine =
      n > 0 && (comm_.size() == 1 || tgb) ? logits.value().to(Device::cpu) : Tensor();
  const float *s = nullptr, *l = nullptr;
  const int32_t* gr = nullptr;
  size_t total = n;
  if (comm_.size() == 1) {
    s = mine.data(), l = local.target.data(), gr = local.src.data();
  } else {
    const Tensor none;
    gather_all(local.src.empty() ? none : logits.value(), local, &scores, &label_f, &group_f);
    groups.assign(group_f.begin(), group_f.end());
    s = scores.data(), l = label_f.data(), gr = groups.data(), total = scores.size();
  }
  if (opt_.task == TemporalTask::edge) {
    acc.all_scores.insert(acc.all_scores.end(), s, s + total);
    for (size_t i = 0; i < total; ++i) acc.all_labels.push_back(uint8_t(l[i]));
    return;
  }
  const RankMetrics r = rank_metrics(s, l, gr, total, kLogitTie);
  acc.m.auc += r.auc;
  acc.m.map += r.map;
  acc.m.mrr += r.mrr;
  if (tgb) {
    // Each positive against its own negatives, on the rank that scored them (both strategies
    // score whole positives: their negatives follow them in the batch).
    double rr[2] = {0, 0};
    const size_t per = size_t(opt_.neg_eval) + 1, kept = local.src.size() / per;
    if (kept > 0) rr[0] = reciprocal_ranks(mine.data(), kept, per - 1), rr[1] = double(kept);
    comm_.allreduce_sum(rr, 2);
    acc.tgb_rr += rr[0];
    acc.tgb_positives += rr[1];
  }
}

PairTargets LinkPredictionTrainer::targets_for(int step) const {
  const SnapshotEvents& ev = g_.events[size_t(step + 1)];
  std::vector<std::pair<int32_t, int32_t>> pairs;
  for (size_t i = 0; i < ev.src.size(); ++i) {
    const int32_t u = ev.src[i], v = ev.dst[i];
    if (u == v) continue;  // as in the sampled batches: a self-loop is no target
    pairs.emplace_back(u, v);
    if (!g_.directed) pairs.emplace_back(v, u);
  }
  return PairTargets::from_pairs(g_.num_vertices, std::move(pairs));
}

void LinkPredictionTrainer::add_all_pairs_step(EvalSums& acc, int step, const Tensor& h,
                                               const std::vector<int32_t>& rows,
                                               Communicator& comm) {
  const FactoredPairs f = head_.factor(h);
  const AllPairsMetrics m = all_pairs_metrics(
      targets_for(step), rows,
      [&f](int32_t u, float* out, std::vector<float>& scratch) { f.score_row(u, out, scratch); },
      comm, kLogitTie);
  acc.m.auc += m.auc;
  acc.m.map += m.map;
  acc.m.mrr += m.mrr;
  ++acc.counted;
}

LinkMetrics LinkPredictionTrainer::finish_eval(EvalSums& acc) const {
  LinkMetrics m = acc.m;
  const int counted = acc.counted;
  if (opt_.task == TemporalTask::edge) {
    if (counted) m.loss /= counted;
    const auto& all_scores = acc.all_scores;
    const auto& all_labels = acc.all_labels;
    std::vector<uint8_t> pred(all_scores.size());
    std::vector<int32_t> pred_i(all_scores.size()), label_i(all_scores.size());
    for (size_t i = 0; i < all_scores.size(); ++i) {
      pred[i] = all_scores[i] > 0;  // logit > 0: predicted negative rating
      pred_i[i] = pred[i];
      label_i[i] = all_labels[i];
    }
    if (!all_scores.empty()) {
      m.f1 = binary_f1(pred, all_labels).f1;
      m.macro_f1 = macro_f1(pred_i, label_i);
      m.auc = roc_auc(all_scores, all_labels, kLogitTie);
    }
    return m;
  }
  if (counted) {
    m.auc /= counted;
    m.map /= counted;
    m.mrr /= counted;
    m.loss /= counted;
  }
  // Scoring all pairs computes no loss (a sum over n^2 pairs that nothing reads).
  if (opt_.eval_all_pairs) m.loss = std::numeric_limits<double>::quiet_NaN();
  // TGB's MRR is the mean over the split's positives, not over its steps.
  if (opt_.eval_protocol == EvalProtocol::tgb)
    m.mrr = acc.tgb_positives > 0 ? acc.tgb_rr / acc.tgb_positives
                                  : std::numeric_limits<double>::quiet_NaN();
  return m;
}

LinkMetrics LinkPredictionTrainer::evaluate(int begin, int end, const std::vector<Var>* from) {
  if (plan_) return evaluate_snapshots(begin, end);
  NoGradGuard no_grad;
  model_.reset_state();
  if (from) model_.load_state(*from);
  EvalSums acc;
  for (int s = from ? begin : 0; s < end; ++s) {
    ForwardContext ctx{*graphs_[size_t(s)], false, opt_.seed, 0};
    const Var& x = features_.size() == 1 ? features_[0] : features_[size_t(s)];
    Var h = model_.step(ctx, x);
    if (s < begin) continue;
    if (opt_.eval_all_pairs) {
      // Every rank needs every vertex's embedding (the pairs span all of them) and scores the
      // source rows of the vertices it owns. All ranks agree on has_targets_: collective.
      if (!has_targets_[size_t(s)]) continue;
      const int64_t n = g_.num_vertices;
      std::vector<int32_t> ids(static_cast<size_t>(n)), rows;
      std::iota(ids.begin(), ids.end(), 0);
      if (comm_.size() == 1) {
        add_all_pairs_step(acc, s, h.value().to(Device::cpu), ids, comm_);
      } else {
        for (int32_t v : ids)
          if (dir_.owner[size_t(v)] == comm_.rank()) rows.push_back(v);
        add_all_pairs_step(acc, s, fetch_rows(comm_, dir_, h, ids).value().to(Device::cpu), rows,
                           comm_);
      }
      continue;
    }
    if (!has_targets_[size_t(s)]) continue;
    if (fused_eval()) {
      if (comm_.size() == 1) {
        add_fused_eval_step(acc, s, h.value(), comm_, {});
      } else {
        // Every rank scores the sources it owns, against every vertex's rows.
        std::vector<int32_t> ids(static_cast<size_t>(g_.num_vertices));
        std::iota(ids.begin(), ids.end(), 0);
        const int me = comm_.rank();
        add_fused_eval_step(acc, s, fetch_rows(comm_, dir_, h, ids).value(), comm_,
                            [&](int32_t u) { return dir_.owner[size_t(u)] == me; });
      }
      continue;
    }
    const Batch local = local_batch(s, opt_.neg_eval, kEvalSalt);
    Var logits = eval_logits(ctx, h, local, comm_.size() == 1);
    add_eval_step(acc, logits, local);
  }
  return finish_eval(acc);
}

// ---- the snapshot strategy ------------------------------------------------------------------

double LinkPredictionTrainer::window_gradients_snapshots(int epoch, int start, int end,
                                                         int* in_window) {
  optimizer_->zero_grad();
  SnapshotWindow w(comm_, *plan_, start, end, graphs_, features_, true, opt_.seed, uint64_t(epoch),
                   device());
  const std::vector<Var> h = model_.window(w);
  // The owner of a step scores the whole of its batch (same samples and weights as one
  // process); every rank knows which steps have targets, so all agree on the window's count.
  *in_window = 0;
  for (int s = start; s < end; ++s) *in_window += has_targets_[size_t(s)];
  Var loss;
  for (int s = w.own_begin(); s < w.own_end(); ++s) {
    if (!has_targets_[size_t(s)]) continue;
    const Batch b = batch_for(s, opt_.neg_train, train_salt(epoch));
    Var logits = head_.score(w.ctx(s), h[size_t(s - w.own_begin())], b.src, b.dst);
    Var l = bce_with_logits(logits, b.target, 1.0, b.weight);
    loss = loss.defined() ? add(loss, l) : l;
  }
  if (*in_window == 0) return 0.0;
  double value = loss.defined() ? loss.value().item() : 0.0;
  comm_.allreduce_sum(&value, 1);
  // The anchor (a zero) puts the window's communication on every rank's tape: their
  // backwards are collective.
  Var anchored = loss.defined() ? add(loss, w.anchor()) : w.anchor();
  scale(anchored, 1.f / float(*in_window)).backward();
  allreduce_gradients(comm_, params_, flat_);
  return value;
}

LinkMetrics LinkPredictionTrainer::evaluate_snapshots(int begin, int end) {
  NoGradGuard no_grad;
  model_.reset_state();
  EvalSums acc;
  // The fused evaluation's sums per step of [begin, end): auc, map, mrr, loss, the tgb
  // reciprocal ranks and positives, whether the step was counted, and why it failed (0: it did
  // not).
  constexpr int kStepSums = 8;
  std::vector<double> by_step(fused_eval() ? size_t(end - begin) * kStepSums : 0, 0.0);
  const std::vector<int>& bounds = plan_->windows;
  for (size_t wi = 0; wi + 1 < bounds.size() && bounds[wi] < end; ++wi) {
    const int start = bounds[wi], stop = std::min(end, bounds[wi + 1]);
    SnapshotWindow w(comm_, *plan_, start, stop, graphs_, features_, false, opt_.seed, 0, device());
    const std::vector<Var> h = model_.window(w);
    for (int s = std::max(start, begin); s < stop; ++s) {
      if (!has_targets_[size_t(s)]) continue;
      if (opt_.eval_all_pairs) {
        // The owner holds every vertex's embedding: it scores the whole step alone; the sums
        // are combined after the loop.
        if (w.owns(s)) {
          SelfCommunicator self;
          std::vector<int32_t> rows(size_t(g_.num_vertices));
          std::iota(rows.begin(), rows.end(), 0);
          add_all_pairs_step(acc, s, h[size_t(s - w.own_begin())].value().to(Device::cpu), rows,
                             self);
        }
        continue;
      }
      if (fused_eval()) {
        // The step's owner scores it alone; its sums are combined in step order after the loop.
        if (w.owns(s)) {
          SelfCommunicator self;
          EvalSums one;
          int failed = kFusedOk;
          add_fused_eval_step(one, s, h[size_t(s - w.own_begin())].value(), self, {}, &failed);
          const double v[kStepSums] = {one.m.auc,           one.m.map,     one.m.mrr,
                                       one.m.loss,          one.tgb_rr,    one.tgb_positives,
                                       double(one.counted), double(failed)};
          std::copy(v, v + kStepSums, by_step.begin() + int64_t(s - begin) * kStepSums);
        }
        continue;
      }
      // The step's owner scores all of its pairs; the others add none.
      Batch local;
      Var logits;
      if (w.owns(s)) {
        local = batch_for(s, opt_.neg_eval, kEvalSalt);
        logits = eval_logits(w.ctx(s), h[size_t(s - w.own_begin())], local, true);
      }
      add_eval_step(acc, logits, local);
    }
  }
  if (fused_eval()) {
    // Every step's sums from its owner (zeros from the others: x + 0 is x), added in step
    // order as one process adds them (the same bits).
    comm_.allreduce_sum(by_step.data(), int64_t(by_step.size()));
    for (size_t at = 0; at < by_step.size(); at += kStepSums)
      if (by_step[at + 7] != kFusedOk)  // every rank throws what the owner found
        throw_fused_failure(int(by_step[at + 7]), begin + int(at / kStepSums));
    for (size_t at = 0; at < by_step.size(); at += kStepSums) {
      const double* v = by_step.data() + at;
      if (v[6] == 0) continue;  // no targets
      acc.m.auc += v[0], acc.m.map += v[1], acc.m.mrr += v[2], acc.m.loss += v[3];
      acc.tgb_rr += v[4], acc.tgb_positives += v[5], acc.counted += int(v[6]);
    }
  }
  if (opt_.eval_all_pairs) {
    double sums[4] = {acc.m.auc, acc.m.map, acc.m.mrr, double(acc.counted)};
    comm_.allreduce_sum(sums, 4);
    acc.m.auc = sums[0];
    acc.m.map = sums[1];
    acc.m.mrr = sums[2];
    acc.counted = int(sums[3]);
  }
  return finish_eval(acc);
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

TemporalResult LinkPredictionTrainer::run(const std::function<void(const TemporalEpoch&)>& cb) {
  TemporalResult res;
  res.train_steps = n_train_;
  res.val_steps = n_val_;
  res.test_steps = n_steps_ - n_train_ - n_val_;
  const LoopResult r = loop_->run([&](const EpochRecord& rec) {
    TemporalEpoch st;
    static_cast<StepSplit&>(st) = rec;
    st.epoch = rec.epoch;
    st.loss = rec.loss;
    st.val = to_metrics(rec.val);
    st.eval_ms = rec.eval_ms;
    if (cb) cb(st);
  });
  res.epochs_run = r.epochs_run;
  res.last_epoch = r.last_epoch;
  res.stopped_early = r.stopped_early;
  res.best_epoch = r.best_epoch;
  res.best_val = to_metrics(r.best_val);
  res.test = to_metrics(r.test);
  res.median_epoch_ms = r.median_epoch_ms;
  res.test_ms = r.test_ms;
  return res;
}

}  // namespace dgnn
