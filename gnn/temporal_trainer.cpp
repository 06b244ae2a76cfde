#include "dgnn/gnn/temporal_trainer.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <tuple>
#include <unordered_set>

#include "dgnn/common/error.hpp"
#include "dgnn/common/format.hpp"
#include "dgnn/common/hash_rng.hpp"
#include "dgnn/common/key_set.hpp"
#include "dgnn/common/timer.hpp"
#include "dgnn/gnn/loss.hpp"
#include "dgnn/gnn/metrics.hpp"
#include "dgnn/gnn/trainer.hpp"
#include "dgnn/kernels/device_snapshot.hpp"

namespace dgnn {

namespace {

// log2 degree buckets: 0, 1, 2-3, 4-7, ... up to 2^14+; in and (when directed) out degree.
constexpr int kBuckets = 16;

Tensor degree_features(const Csr& a, int64_t n, bool directed) {
  auto bucket = [](int64_t d) {
    int b = 0;
    while (d > 0 && b < kBuckets - 1) {
      d >>= 1;
      ++b;
    }
    return b;
  };
  Tensor x(n, directed ? 2 * kBuckets : kBuckets);
  std::vector<int64_t> out_deg(size_t(directed ? n : 0), 0);
  for (int64_t v = 0; v < n; ++v) {
    x.at(v, bucket(a.degree(v))) = 1.f;
    if (directed)
      for (int64_t e = a.offsets[v]; e < a.offsets[v + 1]; ++e) ++out_deg[size_t(a.indices[e])];
  }
  if (directed)
    for (int64_t v = 0; v < n; ++v) x.at(v, kBuckets + bucket(out_deg[size_t(v)])) = 1.f;
  return x;
}

}  // namespace

int64_t degree_feature_dim(const TemporalGraph& g) { return g.directed ? 2 * kBuckets : kBuckets; }

std::vector<Var> snapshot_features(const TemporalGraph& g, const std::vector<float>& features,
                                   int64_t feature_dim, int64_t* out_dim) {
  std::vector<Var> out;
  const int64_t n = g.num_vertices;
  if (feature_dim > 0) {
    *out_dim = feature_dim;
    out.emplace_back(Tensor::from_host(features.data(), n, feature_dim));
    return out;  // one tensor: the same features at every step
  }
  *out_dim = degree_feature_dim(g);
  SnapshotCursor cur(g);
  do out.emplace_back(degree_features(cur.current(), n, g.directed));
  while (cur.next());
  return out;
}

std::vector<Var> snapshot_features(const TemporalGraph& g, const std::vector<Csr>& held,
                                   const std::vector<float>& features, int64_t feature_dim,
                                   int64_t* out_dim) {
  if (feature_dim > 0) return snapshot_features(g, features, feature_dim, out_dim);
  DGNN_CHECK(int(held.size()) == g.num_snapshots(), ShapeError, "need a slot per snapshot");
  *out_dim = degree_feature_dim(g);
  std::vector<Var> out(held.size());
  for (size_t s = 0; s < held.size(); ++s)
    if (held[s].rows == g.num_vertices)
      out[s] = Var(degree_features(held[s], g.num_vertices, g.directed));
  return out;
}

SnapshotUploads upload_snapshots_by_difference(const TemporalGraph& g,
                                               const std::vector<std::unique_ptr<GraphView>>& views,
                                               Device dev) {
  DGNN_CHECK(int(views.size()) == g.num_snapshots(), ShapeError, "need one view per snapshot");
  SnapshotUploads up;
  kernels::DeviceStructure cur;
  const GraphView* prev = nullptr;
  int prev_t = -1;
  for (int t = 0; t < g.num_snapshots(); ++t) {
    if (!views[size_t(t)]) continue;  // not held here
    const GraphView& v = *views[size_t(t)];
    DGNN_CHECK(v.n_halo() == 0 && !v.bipartite() && v.structure().rows == g.num_vertices,
               ShapeError, "upload_snapshots_by_difference: whole-graph views only");
    if (!prev) {
      cur = kernels::upload_structure(dev, v.structure().view());
      up.bytes += cur.bytes();
    } else {
      SnapshotDiff computed;
      // g's differences delete and re-add an entry whose weight changes; the GCN adjacency
      // does not read weights, so a weighted graph's structural difference is smaller.
      const bool from_g = prev_t == t - 1 && g.diffs.size() >= size_t(t) && !g.weighted;
      if (!from_g) computed = csr_difference(prev->structure(), v.structure(), false);
      const SnapshotDiff& d = from_g ? g.diffs[size_t(t) - 1] : computed;
      cur =
          kernels::apply_structure_diff(cur, d.add_src, d.add_dst, d.del_src, d.del_dst, &up.bytes);
      ++up.as_difference;
    }
    prev = &v;
    prev_t = t;
    const GraphView::Adjacency& adj = v.adjacency(Norm::gcn);
    const int64_t n = adj.forward.rows, nnz = adj.forward.nnz();
    // What uploading it whole would move: offsets (and their 32-bit copy), indices, values; a
    // directed snapshot's transpose as much again.
    const int64_t whole = 8 * (n + 1) + (nnz < (int64_t(1) << 31) ? 4 * (n + 1) : 0) + 8 * nnz;
    up.whole_bytes += adj.symmetric ? whole : 2 * whole;
    auto forward = std::make_unique<kernels::DeviceCsr>(
        kernels::gcn_adjacency_on_device(cur, adj.forward.offsets));
    // Directed: the backward (transposed) adjacency is built from it on the device too.
    if (!adj.symmetric)
      adj.adopt_backward(dev, std::make_unique<kernels::DeviceCsr>(kernels::transpose_on_device(
                                  *forward, adj.transposed.offsets)));
    adj.adopt_forward(dev, std::move(forward));
    ++up.snapshots;
  }
  return up;
}

TemporalTask parse_temporal_task(const std::string& name) {
  if (name == "link") return TemporalTask::link;
  if (name == "edge") return TemporalTask::edge;
  throw OptionError("--task: unknown temporal task '" + name + "' (expected link or edge)");
}

TemporalSplit temporal_split(const TemporalGraph& g, const TemporalOptions& opt) {
  const int t = g.num_snapshots();
  TemporalSplit sp;
  // Link prediction: step s predicts the edges of snapshot s + 1; edge classification: step s
  // labels the edges of snapshot s itself.
  sp.steps = opt.task == TemporalTask::link ? t - 1 : t;
  if (opt.eval_all_pairs && opt.task != TemporalTask::link)
    throw OptionError("--neg-eval all scores every vertex pair: it is for --task link");
  if (opt.task == TemporalTask::edge && !g.weighted)
    throw OptionError(
        "--task edge classifies edges by the sign of their weight: give the "
        "weight column (--weight-col)");
  if (opt.task == TemporalTask::edge) {
    bool negative = false, positive = false;
    for (const SnapshotEvents& ev : g.events)
      for (float w : ev.weight) (w < 0 ? negative : positive) = true;
    if (!negative || !positive)
      throw OptionError(std::string("--task edge classifies edges by the sign of their weight, "
                                    "but every weight is ") +
                        (negative ? "negative" : "positive") + ": one class, nothing to learn");
  }
  sp.train = int(std::floor(opt.train_frac * sp.steps));
  sp.val = int(std::floor(opt.val_frac * sp.steps));
  // Rounding down may leave a set empty (7 steps at 0.7 / 0.1: 4 / 0 / 3): when the fractions
  // ask for all three sets and there are steps enough, an empty set takes one step from the
  // largest. Splits with every set filled stay as floor() makes them.
  if (opt.train_frac > 0 && opt.val_frac > 0 && opt.train_frac + opt.val_frac < 1 &&
      sp.steps >= 3) {
    int sizes[3] = {sp.train, sp.val, sp.steps - sp.train - sp.val};
    for (int& empty : sizes)
      if (empty < 1) {
        int* largest = std::max_element(sizes, sizes + 3);
        --*largest;
        ++empty;
      }
    sp.train = sizes[0];
    sp.val = sizes[1];
  }
  if (sp.train < 1 || sp.val < 1 || sp.steps - sp.train - sp.val < 1)
    throw OptionError(
        std::string(opt.task == TemporalTask::link ? "link prediction" : "edge classification") +
        " needs at least one training, validation and test step: " + std::to_string(t) +
        " snapshots give " + std::to_string(sp.steps) + " steps, split " +
        std::to_string(sp.train) + " / " + std::to_string(sp.val) + " / " +
        std::to_string(sp.steps - sp.train - sp.val) + " by --train-frac " +
        fmt_double(opt.train_frac) + " and --val-frac " + fmt_double(opt.val_frac) +
        " (use more snapshots: --snapshots or a shorter --snapshot-seconds; or other fractions)");
  if (opt.bptt < 0) throw OptionError("--bptt must be >= 0");
  if (opt.neg_train < 1)
    throw OptionError("--neg-train: sampled non-edges per edge must be >= 1, got " +
                      std::to_string(opt.neg_train));
  if (opt.neg_eval < 1)
    throw OptionError("--neg-eval: sampled non-edges per edge must be >= 1 (or all), got " +
                      std::to_string(opt.neg_eval));
  return sp;
}

std::vector<int> temporal_windows(const TemporalGraph& g, const TemporalOptions& opt) {
  const TemporalSplit sp = temporal_split(g, opt);
  std::vector<int> bounds{0};
  for (int end : {sp.train, sp.train + sp.val, sp.steps}) {
    const int window = opt.bptt > 0 ? opt.bptt : end - bounds.back();
    for (int s = bounds.back() + window; s < end; s += window) bounds.push_back(s);
    bounds.push_back(end);
  }
  return bounds;
}

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
  for (auto [name, begin, end] : {std::tuple{"training", 0, n_train_},
                                  std::tuple{"validation", n_train_, n_train_ + n_val_},
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
  loop_ = std::make_unique<TrainingLoop>(static_cast<TrainingTask&>(*this), comm_, opt_);
}

LinkPredictionTrainer::~LinkPredictionTrainer() = default;

namespace {

// The edges of snapshot `step`, target 1 for a negative weight (the minority class in signed
// networks such as bitcoin ratings), weighted so that both classes count equally.
PairBatch edge_pairs(const TemporalGraph& g, int step, const std::function<bool(int32_t)>& keep) {
  const SnapshotEvents& ev = g.events[size_t(step)];
  PairBatch b;
  size_t neg = 0, all = 0;  // over the whole batch: the weights are its
  for (size_t i = 0; i < ev.src.size(); ++i) {
    if (ev.src[i] == ev.dst[i]) continue;
    const bool negative = ev.weight[i] < 0;
    neg += negative;
    ++all;
    if (keep && !keep(ev.src[i])) continue;
    b.src.push_back(ev.src[i]);
    b.dst.push_back(ev.dst[i]);
    b.target.push_back(negative ? 1.f : 0.f);
  }
  const size_t pos = all - neg;
  for (float t : b.target)
    b.weight.push_back(t > 0 ? 0.5f / float(std::max<size_t>(neg, 1))
                             : 0.5f / float(std::max<size_t>(pos, 1)));
  return b;
}

}  // namespace

namespace {

// An edge's key in the step's edge set: (u, v), or for an undirected graph (min, max), so that
// either direction finds it.
uint64_t edge_key(bool directed, int64_t u, int64_t v) {
  if (!directed && v < u) std::swap(u, v);
  return uint64_t(u) << 32 | uint64_t(v);
}

// Every edge of link step `step` into `edges`; the distinct ones `keep` accepts (in event order)
// and their ordinals among all distinct ones.
StepPositives collect_positives(const TemporalGraph& g, int step,
                                const std::function<bool(int32_t)>& keep, KeySet& edges) {
  const SnapshotEvents& ev = g.events[size_t(step + 1)];
  StepPositives p;
  for (size_t i = 0; i < ev.src.size(); ++i) {
    const int32_t u = ev.src[i], v = ev.dst[i];
    if (u == v || !edges.insert(edge_key(g.directed, u, v))) continue;
    if (!keep || keep(u)) {
      p.event.push_back(uint32_t(i));
      p.index.push_back(uint32_t(p.total));
    }
    ++p.total;
  }
  return p;
}

}  // namespace

StepPositives step_positives(const TemporalGraph& g, int step,
                             const std::function<bool(int32_t)>& keep) {
  KeySet edges(g.events[size_t(step + 1)].src.size());
  return collect_positives(g, step, keep, edges);
}

PairBatch step_pairs(const TemporalGraph& g, TemporalTask task, int step, int negatives,
                     uint64_t seed, uint64_t salt, const std::function<bool(int32_t)>& keep,
                     const StepPositives* known) {
  if (task == TemporalTask::edge) return edge_pairs(g, step, keep);
  const SnapshotEvents& ev = g.events[size_t(step + 1)];
  // Negatives avoid the step's edges: all of them, or with `known` only those a kept vertex's
  // draws can meet (its own, and on an undirected graph those into it).
  // (Sized for twice a share's own edges: undirected, those into it come too; a lower load
  // measured faster for the draws' misses.)
  KeySet edges(known ? known->event.size() * 2 : ev.src.size());
  StepPositives found;
  if (known) {
    for (size_t i = 0; i < ev.src.size(); ++i) {
      const int32_t u = ev.src[i], v = ev.dst[i];
      if (u != v && (!keep || keep(u) || (!g.directed && keep(v))))
        edges.insert(edge_key(g.directed, u, v));
    }
  } else {
    found = collect_positives(g, step, keep, edges);
    known = &found;
  }
  const size_t kept = known->event.size();
  const size_t most = kept * size_t(1 + negatives);
  PairBatch b;
  b.src.reserve(most);
  b.dst.reserve(most);
  for (uint32_t i : known->event) {
    b.src.push_back(ev.src[i]);
    b.dst.push_back(ev.dst[i]);
  }
  b.target.assign(kept, 1.f);
  b.target.reserve(most);
  // Each positive (u, v) gets `negatives` corrupted pairs (u, w): MRR ranks v among them.
  const int64_t n = g.num_vertices;
  for (size_t j = 0; j < kept; ++j) {
    const int32_t u = b.src[j];
    const uint64_t i = known->index[j];
    for (int k = 0; k < negatives; ++k) {
      uint64_t h = hash_combine(hash_combine(seed ^ salt, uint64_t(step)), i * 1315423911u + k);
      int32_t w = int32_t(h % uint64_t(n));
      for (int tries = 0; (w == u || edges.contains(edge_key(g.directed, u, w))) && tries < 16;
           ++tries)
        w = int32_t((h = mix64(h)) % uint64_t(n));
      b.src.push_back(u);
      b.dst.push_back(w);
      b.target.push_back(0.f);
    }
  }
  // Every positive of the whole batch has exactly `negatives` negatives.
  const size_t n_pos = known->total, n_neg = n_pos * size_t(negatives);
  b.weight.resize(b.src.size());
  for (size_t j = 0; j < b.src.size(); ++j)
    b.weight[j] = j < kept ? 0.5f / float(std::max<size_t>(n_pos, 1))
                           : 0.5f / float(std::max<size_t>(n_neg, 1));
  return b;
}

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

void LinkPredictionTrainer::add_eval_step(EvalSums& acc, const Var& logits, const Batch& local) {
  double part_loss = local.src.empty()
                         ? 0.0
                         : bce_with_logits(logits, local.target, 1.0, local.weight).value().item();
  comm_.allreduce_sum(&part_loss, 1);
  acc.m.loss += part_loss;
  // Metrics need every pair's score: gather them on all ranks (in rank order).
  std::vector<float> scores, label_f, group_f;
  const Tensor none;
  gather_all(local.src.empty() ? none : logits.value(), local, &scores, &label_f, &group_f);
  std::vector<uint8_t> labels(label_f.begin(), label_f.end());
  std::vector<int32_t> groups(group_f.begin(), group_f.end());
  ++acc.counted;
  if (opt_.task == TemporalTask::edge) {
    acc.all_scores.insert(acc.all_scores.end(), scores.begin(), scores.end());
    acc.all_labels.insert(acc.all_labels.end(), labels.begin(), labels.end());
    return;
  }
  acc.m.auc += roc_auc(scores, labels, kLogitTie);
  acc.m.map += average_precision(scores, labels, kLogitTie);
  acc.m.mrr += mean_reciprocal_rank(scores, labels, groups, kLogitTie);
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
  return m;
}

LinkMetrics LinkPredictionTrainer::evaluate(int begin, int end) {
  if (plan_) return evaluate_snapshots(begin, end);
  NoGradGuard no_grad;
  model_.reset_state();
  EvalSums acc;
  for (int s = 0; s < end; ++s) {
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
    const Batch local = local_batch(s, opt_.neg_eval, 0xe7a1);
    Var logits = score(ctx, h, local);
    add_eval_step(acc, logits, local);
  }
  return finish_eval(acc);
}

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
      return whole_step ? batch_for(s, opt_.neg_eval, 0xe7a1)
                        : local_batch(s, opt_.neg_eval, 0xe7a1);
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
          logits = head_.score(w.ctx(s), h[size_t(s - w.own_begin())], local.src, local.dst);
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
    gather_pairs(s, score(ctx, h, local), local, &all);
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
      // The step's owner scores all of its pairs; the others add none.
      Batch local;
      Var logits;
      if (w.owns(s)) {
        local = batch_for(s, opt_.neg_eval, 0xe7a1);
        logits = head_.score(w.ctx(s), h[size_t(s - w.own_begin())], local.src, local.dst);
      }
      add_eval_step(acc, logits, local);
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

Evaluation to_evaluation(const LinkMetrics& m, TemporalTask task) {
  Evaluation e;
  if (task == TemporalTask::link)
    e.metrics = {{"auc", m.auc}, {"map", m.map}, {"mrr", m.mrr}, {"loss", m.loss}};
  else
    e.metrics = {{"f1", m.f1}, {"macro_f1", m.macro_f1}, {"auc", m.auc}, {"loss", m.loss}};
  e.selection = m.selection(task);
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
  return to_evaluation(evaluate(n_train_, n_train_ + n_val_), opt_.task);
}

Evaluation LinkPredictionTrainer::test() {
  return to_evaluation(evaluate(n_train_ + n_val_, n_steps_), opt_.task);
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
  return res;
}

}  // namespace dgnn
