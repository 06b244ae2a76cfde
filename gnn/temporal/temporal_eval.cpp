// The link-prediction / edge-classification task's evaluation: a split's steps scored under
// either strategy, streamed (add_fused_eval_step: link prediction on the CPU), as batches
// (edge classification, the GPU) or against every vertex pair (--neg-eval all); the training
// is gnn/temporal/temporal_trainer.cpp's.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <numeric>

#include "dgnn/comm/collectives.hpp"
#include "dgnn/common/error.hpp"
#include "dgnn/gnn/core/loss.hpp"
#include "dgnn/gnn/temporal/temporal_trainer.hpp"
#include "dgnn/gnn/train/metrics.hpp"

namespace dgnn {

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
    fetched = fetch_rows(comm_, dir_, h, ids, true);
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

const LinkStepPlan& LinkPredictionTrainer::eval_plan(int step,
                                                     const std::function<bool(int32_t)>& mine) {
  if (eval_plans_.size() < size_t(n_steps_)) eval_plans_.resize(size_t(n_steps_));
  // A share of the events (shard_events) plans this rank's sources only, each positive at its
  // ordinal in the whole step; whole events plan every source (each rank visits its own).
  const bool share = g_.events[size_t(step + 1)].sharded();
  std::shared_ptr<const LinkStepPlan>& plan = eval_plans_[size_t(step)];
  if (!plan) plan = plan_link_step(g_, step, share ? mine : nullptr);
  return *plan;
}

bool LinkPredictionTrainer::fetch_candidates(int step, const std::function<bool(int32_t)>& mine) {
  // DGNN_EVAL_FETCH=candidates|all forces one way (tests); by default a rank fetches its
  // candidates' rows when they are at most a quarter of the vertices (each positive names 1 +
  // neg_eval of them at most). Per rank: fetch_rows takes each rank's own list.
  if (const char* e = std::getenv("DGNN_EVAL_FETCH")) {
    if (std::strcmp(e, "candidates") == 0) return true;
    if (std::strcmp(e, "all") == 0) return false;
  }
  const double named =
      double(link_step_positives(eval_plan(step, mine))) * double(1 + std::max(opt_.neg_eval, 0));
  return named * 4 <= double(g_.num_vertices);
}

std::vector<int32_t> LinkPredictionTrainer::eval_rows(int step,
                                                      const std::function<bool(int32_t)>& mine) {
  // The candidates are drawn as add_fused_eval_step draws them (the same seeds), collected
  // instead of scored.
  const size_t k = size_t(opt_.neg_eval);
  std::vector<std::vector<int32_t>> per(static_cast<size_t>(omp_get_max_threads()));
  visit_link_sources(
      g_, step, opt_.neg_eval, opt_.seed, kEvalSalt, history_.get(), [](size_t, size_t) {},
      [&](int32_t u, size_t count, const uint32_t*, const int32_t* vs, const int32_t*) {
        std::vector<int32_t>& out = per[size_t(omp_get_thread_num())];
        out.push_back(u);
        out.insert(out.end(), vs, vs + count * (1 + k));
      },
      &eval_plan(step, mine), mine);
  std::vector<int32_t> rows;
  for (auto& v : per) {
    rows.insert(rows.end(), v.begin(), v.end());
    std::vector<int32_t>().swap(v);
  }
  std::sort(rows.begin(), rows.end());
  rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
  return rows;
}

void LinkPredictionTrainer::add_fused_eval_step(EvalSums& acc, int step, Var h, Communicator& comm,
                                                const std::function<bool(int32_t)>& mine,
                                                int* failed, const std::vector<int32_t>* rows) {
  const FactoredPairs f = head_.factor(h.value());
  // h's row of vertex v: v itself, or its place among `rows`.
  auto slot = [rows](int32_t v) {
    if (!rows) return v;
    const auto it = std::lower_bound(rows->begin(), rows->end(), v);
    DGNN_CHECK(it != rows->end() && *it == v, Error,
               "link evaluation: vertex " + std::to_string(v) + " is not among the fetched rows");
    return int32_t(it - rows->begin());
  };
  // The candidates of a source as rows of h (into `buf` when they need a lookup).
  auto as_rows = [&](const int32_t* vs, size_t n, std::vector<int32_t>& buf) -> const int32_t* {
    if (!rows) return vs;
    buf.resize(n);
    for (size_t i = 0; i < n; ++i) buf[i] = slot(vs[i]);
    return buf.data();
  };
  const size_t k = size_t(opt_.neg_eval);
  const bool tgb = history_ != nullptr;
  const size_t threads = static_cast<size_t>(omp_get_max_threads());
  LinkWeights w{};
  // Per positive j: its score (every rank fills its sources' and the sums over ranks are the
  // scores), its loss term and (tgb) its reciprocal rank; per source with positives: its MRR
  // group value. The last three are kept by the rank that makes them and summed in j and source
  // order, as one process sums them (the same bits on any rank and thread count).
  std::vector<float>& pos = acc.logits;
  std::vector<std::vector<EvalSums::PositiveTerm>>& terms = acc.terms;
  std::vector<std::vector<EvalSums::SourceTerm>>& groups = acc.groups;
  std::vector<RankCounter::Part>& parts = acc.parts;
  const LinkStepPlan* plan = &eval_plan(step, mine);
  size_t total = 0;  // the step's distinct positives
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
  visit_link_sources(
      g_, step, 0, opt_.seed, kEvalSalt, history_.get(),
      [&](size_t, size_t all) {
        total = all;
        w = link_weights(total, k);
        pos.assign(total, 0.f);
        terms.resize(threads);
        groups.resize(threads);
        for (size_t t = 0; t < threads; ++t) terms[t].clear(), groups[t].clear();
        parts.resize(threads);
        for (auto& part : parts) part.clear();
      },
      [&](int32_t u, size_t count, const uint32_t* js, const int32_t* vs, const int32_t*) {
        thread_local std::vector<float> score, scratch;
        thread_local std::vector<int32_t> buf;
        score.resize(count);
        f.score_list(slot(u), as_rows(vs, count, buf), int64_t(count), score.data(), scratch);
        for (size_t c = 0; c < count; ++c) {
          bad[2 * size_t(omp_get_thread_num())] += std::isnan(score[c]);
          pos[js[c]] = score[c];
        }
      },
      plan, mine);
  if (!check()) return;
  ++acc.counted;
  const size_t kept = total;
  if (kept == 0) {
    const double nan_v = std::numeric_limits<double>::quiet_NaN();
    acc.m.auc += nan_v, acc.m.map += nan_v, acc.m.mrr += nan_v;
    return;
  }
  // -0 + 0 is +0: a score of -0 arrives as +0, which every use treats alike (order keys,
  // the loss, the comparisons below).
  comm.allreduce_sum(pos.data(), int64_t(kept));
  // Each rank keeps its slice of the positives' interval ends (RankCounter: O(step / ranks)
  // of them, and 18 bytes a positive to place its own candidates).
  const RankCounter counter(pos.data(), kept, kLogitTie, comm.size(), comm.rank());
  visit_link_sources(
      g_, step, opt_.neg_eval, opt_.seed, kEvalSalt, history_.get(), [](size_t, size_t) {},
      [&](int32_t u, size_t count, const uint32_t* js, const int32_t* vs, const int32_t*) {
        const size_t t = size_t(omp_get_thread_num());
        thread_local std::vector<float> score, scratch;
        thread_local std::vector<int32_t> buf;
        thread_local GroupRankScratch gs;
        // The source's positives, then their negatives (drawn follows vs): one list (a pair
        // scores alike anywhere).
        score.resize(count * (1 + k));
        f.score_list(slot(u), as_rows(vs, score.size(), buf), int64_t(score.size()), score.data(),
                     scratch);
        const float* neg = score.data() + count;
        if (!counter.add(neg, count * k, parts[t])) {
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
          const float* nj = neg + c * k;
          const double loss =
              double(w.positive) * kernels::softplus_sum(Device::cpu, &score[c], 1, -1.f) +
              double(w.negative) * kernels::softplus_sum(Device::cpu, nj, int64_t(k), 1.f);
          const double rr =
              tgb ? one_vs_many_reciprocal_rank(score[c], nj, int64_t(k), kLogitTie) : 0.0;
          terms[t].push_back({js[c], loss, rr});
        }
        // Last: it sorts the positives' scores in place (the negatives after them stay).
        groups[t].push_back(
            {u, group_reciprocal_rank(score.data(), count, neg, count * k, kLogitTie, gs)});
      },
      plan, mine);
  // Nothing reads the rows now (f's view of them included): fetched from the other ranks,
  // they are n rows, dropped before the tally's buffers come.
  h = Var();
  if (!check()) return;
  // AUC and AP: the positives (in ordinal order) place the negatives every thread and rank
  // collected.
  const auto [auc, map] = counter.finish(parts, comm);
  // The loss terms and TGB ranks in ordinal order, the MRR values in ascending source id
  // (rank_metrics' group order): each goes to the rank holding its range of ordinals or ids,
  // which adds its range after the ranks below it (fold_along_ranks). No rank holds the whole
  // step's; one process's sums, the same bits.
  const size_t ranks = size_t(comm.size()), me = size_t(comm.rank());
  const size_t n = size_t(g_.num_vertices);
  const std::vector<EvalSums::PositiveTerm> pin =
      route_to_owners(comm, terms, [&](const EvalSums::PositiveTerm& x) {
        return index_range_owner(x.j, kept, ranks);
      });
  const size_t j0 = index_range_begin(me, kept, ranks);
  std::vector<double> loss(index_range_begin(me + 1, kept, ranks) - j0, 0.0);
  std::vector<double> rr(tgb ? loss.size() : 0, 0.0);
  for (const auto& x : pin) {
    loss[x.j - j0] = x.loss;
    if (tgb) rr[x.j - j0] = x.rr;
  }
  int64_t sources_n = 0;
  for (const auto& v : groups) sources_n += int64_t(v.size());
  sources_n = global_sum(comm, sources_n);
  std::vector<EvalSums::SourceTerm> gin =
      route_to_owners(comm, groups, [&](const EvalSums::SourceTerm& x) {
        return index_range_owner(size_t(x.u), n, ranks);
      });
  std::sort(gin.begin(), gin.end(),
            [](const EvalSums::SourceTerm& a, const EvalSums::SourceTerm& b) { return a.u < b.u; });
  double sums[3];  // the loss, the TGB ranks, the MRR values
  fold_along_ranks(comm, sums, 3, [&](double* s) {
    for (double v : loss) s[0] += v;
    for (double v : rr) s[1] += v;
    for (const auto& x : gin) s[2] += x.v;
  });
  acc.m.loss += double(float(sums[0]));  // bce_with_logits returns a float
  acc.m.auc += auc;
  acc.m.map += map;
  acc.m.mrr += sums[2] / double(sources_n);
  if (tgb) {
    // The step's sum first, as every path sums its ranks (the snapshot strategy per owned step,
    // the batched path per batch).
    acc.tgb_rr += sums[1];
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
  // The memory pool's cached blocks are the training tape's shapes, which evaluation (no tape,
  // other shapes) seldom asks for: held, they stack on what evaluation holds, and were the
  // peak of a run (100k x 30 evolving SBM, 4 ranks: 445 -> 390 MB a rank, the load's peak
  // now; one process 0.90 -> 0.85 GB). Training's next window takes fresh blocks once (about
  // 2% of an epoch there).
  kernels::release_cached(device());
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
        add_all_pairs_step(acc, s, fetch_rows(comm_, dir_, h, ids, true).value().to(Device::cpu),
                           rows, comm_);
      }
      continue;
    }
    if (!has_targets_[size_t(s)]) continue;
    if (fused_eval()) {
      if (comm_.size() == 1) {
        add_fused_eval_step(acc, s, h, comm_, {});
      } else {
        // Every rank scores the sources it owns against every vertex's rows, or, when its
        // candidates name few of the vertices, against theirs alone (the draws once more, to
        // know them): a rank of a graph too big for one node cannot hold every vertex's rows.
        const int me = comm_.rank();
        const std::function<bool(int32_t)> mine = [&](int32_t u) {
          return dir_.owner[size_t(u)] == me;
        };
        if (fetch_candidates(s, mine)) {
          const std::vector<int32_t> ids = eval_rows(s, mine);
          // Peer by peer as the whole fetch below: ranks may choose differently, and each
          // must make the same collectives.
          add_fused_eval_step(acc, s, fetch_rows(comm_, dir_, h, ids, true), comm_, mine, nullptr,
                              &ids);
        } else {
          std::vector<int32_t> ids(static_cast<size_t>(g_.num_vertices));
          std::iota(ids.begin(), ids.end(), 0);
          add_fused_eval_step(acc, s, fetch_rows(comm_, dir_, h, ids, true), comm_, mine);
        }
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
          add_fused_eval_step(one, s, h[size_t(s - w.own_begin())], self, {}, &failed);
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

}  // namespace dgnn
