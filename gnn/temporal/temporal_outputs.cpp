// What a temporal run writes besides its log: the test steps' scored pairs and every vertex's
// final embedding, gathered on rank 0 whatever the strategy.
#include <algorithm>
#include <numeric>
#include <tuple>

#include "dgnn/common/error.hpp"
#include "dgnn/gnn/temporal/temporal_trainer.hpp"

namespace dgnn {

// ---- outputs -----------------------------------------------------------------------------

void LinkPredictionTrainer::gather_pairs(int step, const Var& logits, const Batch& local,
                                         std::vector<ScoredPair>* all) {
  std::vector<ScoredPair> mine(local.src.size());
  if (!local.src.empty()) {
    const Tensor host = logits.value().to(Device::cpu);
    for (size_t i = 0; i < mine.size(); ++i)
      mine[i] = {step, local.src[i], local.dst[i], local.target[i], host.data()[i]};
  }
  // Every rank's pairs to rank 0 (bytes: the struct is plain data).
  const int p = comm_.size();
  std::vector<int64_t> counts(size_t(p), 0);
  counts[size_t(comm_.rank())] = int64_t(mine.size() * sizeof(ScoredPair));
  comm_.allreduce_sum(counts.data(), p);
  std::vector<int64_t> send_counts(size_t(p), 0), displs(size_t(p), 0), recv_counts(size_t(p), 0),
      recv_displs(size_t(p), 0);
  send_counts[0] = counts[size_t(comm_.rank())];
  int64_t total = 0;
  if (comm_.rank() == 0)
    for (int r = 0; r < p; ++r) {
      recv_counts[size_t(r)] = counts[size_t(r)];
      recv_displs[size_t(r)] = total;
      total += counts[size_t(r)];
    }
  std::vector<ScoredPair> got(size_t(total) / sizeof(ScoredPair));
  comm_.alltoallv(mine.data(), send_counts, displs, got.data(), recv_counts, recv_displs);
  if (comm_.rank() != 0) return;
  // One order whatever the rank count: by source, destination, then label.
  std::sort(got.begin(), got.end(), [](const ScoredPair& a, const ScoredPair& b) {
    return std::tie(a.src, a.dst, a.label) < std::tie(b.src, b.dst, b.label);
  });
  all->insert(all->end(), got.begin(), got.end());
}

std::vector<LinkPredictionTrainer::ScoredPair> LinkPredictionTrainer::test_pairs() {
  NoGradGuard no_grad;
  model_.reset_state();
  std::vector<ScoredPair> all;
  const int begin = n_train_ + n_val_;
  // The pairs of step s this rank scores: as the test's batch, or the positives alone.
  auto pairs_of = [&](int s, bool whole_step) {
    if (!opt_.eval_all_pairs)
      return whole_step ? batch_for(s, opt_.neg_eval, kEvalSalt)
                        : local_batch(s, opt_.neg_eval, kEvalSalt);
    Batch b;
    const PairTargets t = targets_for(s);
    for (int32_t u = 0; u < int32_t(t.n); ++u)
      if (whole_step || dir_.owner[size_t(u)] == comm_.rank())
        for (int64_t i = t.offsets[size_t(u)]; i < t.offsets[size_t(u) + 1]; ++i) {
          b.src.push_back(u);
          b.dst.push_back(t.dst[size_t(i)]);
          b.target.push_back(1.f);
        }
    return b;
  };
  if (plan_) {
    const std::vector<int>& bounds = plan_->windows;
    for (size_t wi = 0; wi + 1 < bounds.size(); ++wi) {
      const int start = bounds[wi], stop = bounds[wi + 1];
      SnapshotWindow w(comm_, *plan_, start, stop, graphs_, features_, false, opt_.seed, 0,
                       device());
      const std::vector<Var> h = model_.window(w);
      for (int s = std::max(start, begin); s < stop; ++s) {
        if (!has_targets_[size_t(s)]) continue;
        Batch local;  // the step's owner scores all of it
        Var logits;
        if (w.owns(s)) {
          local = pairs_of(s, true);
          logits = eval_logits(w.ctx(s), h[size_t(s - w.own_begin())], local, true);
        }
        gather_pairs(s, logits, local, &all);
      }
    }
    return all;
  }
  for (int s = 0; s < n_steps_; ++s) {
    ForwardContext ctx{*graphs_[size_t(s)], false, opt_.seed, 0};
    const Var& x = features_.size() == 1 ? features_[0] : features_[size_t(s)];
    Var h = model_.step(ctx, x);
    if (s < begin || !has_targets_[size_t(s)]) continue;
    const Batch local = pairs_of(s, comm_.size() == 1);
    gather_pairs(s, eval_logits(ctx, h, local, comm_.size() == 1), local, &all);
  }
  return all;
}

Tensor LinkPredictionTrainer::final_embeddings() {
  NoGradGuard no_grad;
  model_.reset_state();
  const int last = n_steps_ - 1;
  if (plan_) {
    // The last step's owner holds every vertex's embedding; it sends them to rank 0.
    Tensor h;
    const std::vector<int>& bounds = plan_->windows;
    for (size_t wi = 0; wi + 1 < bounds.size(); ++wi) {
      SnapshotWindow w(comm_, *plan_, bounds[wi], bounds[wi + 1], graphs_, features_, false,
                       opt_.seed, 0, device());
      const std::vector<Var> out = model_.window(w);
      if (w.owns(last)) h = out.back().value().to(Device::cpu);
    }
    const int owner = plan_->owner[size_t(last)];
    Tensor all(g_.num_vertices, model_.out_dim());
    if (comm_.rank() == owner) all = std::move(h);
    comm_.broadcast(all.data(), all.numel() * int64_t(sizeof(float)), owner);
    return comm_.rank() == 0 ? std::move(all) : Tensor();
  }
  Var h;
  for (int s = 0; s <= last; ++s) {
    ForwardContext ctx{*graphs_[size_t(s)], false, opt_.seed, 0};
    const Var& x = features_.size() == 1 ? features_[0] : features_[size_t(s)];
    h = model_.step(ctx, x);
  }
  if (comm_.size() == 1) return h.value().to(Device::cpu);
  // The vertex strategy: every owner's rows, in dense id order.
  std::vector<int32_t> ids(size_t(g_.num_vertices));
  std::iota(ids.begin(), ids.end(), 0);
  Tensor all = fetch_rows(comm_, dir_, h, ids).value().to(Device::cpu);
  return comm_.rank() == 0 ? std::move(all) : Tensor();
}

}  // namespace dgnn
