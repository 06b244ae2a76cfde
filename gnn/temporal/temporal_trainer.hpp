#pragma once
// Tasks on a snapshot sequence, with EvolveGCN's protocols:
//  - link prediction: the embeddings after snapshot t score the edges of snapshot t+1 against
//    sampled non-edges, or in validation and test against every other vertex pair
//    (TemporalOptions::eval_all_pairs, the paper's protocol) (metrics AUC, MAP, MRR, each the
//    mean over the steps of a split);
//  - edge classification: the embeddings after snapshot t classify the edges of snapshot t by
//    the sign of their weight, e.g. a negative bitcoin rating (metrics F1 of the negative
//    class, macro F1, AUC).
// Steps are split by time: the first
// 70% train, the next 10% validate, the rest test. Training back-propagates through windows of
// `bptt` consecutive steps (the whole training span when 0); evaluation runs the whole sequence
// so that validation and test steps see their history.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "dgnn/comm/communicator.hpp"
#include "dgnn/gnn/core/fetch.hpp"
#include "dgnn/gnn/temporal/link_eval.hpp"
#include "dgnn/gnn/temporal/temporal_models.hpp"
#include "dgnn/gnn/temporal/temporal_snapshot.hpp"
#include "dgnn/gnn/train/metrics.hpp"
#include "dgnn/gnn/train/optimizer.hpp"
#include "dgnn/gnn/train/trainer.hpp"
#include "dgnn/gnn/train/training_loop.hpp"
#include "dgnn/graph/temporal.hpp"

namespace dgnn {

// Vertex features per snapshot: static ones if given, else a one-hot of each vertex's log2
// degree bucket in that snapshot (in- and out-degree for directed graphs).
std::vector<Var> snapshot_features(const TemporalGraph& g, const std::vector<float>& features,
                                   int64_t feature_dim, int64_t* out_dim);
// The same for the vertices `rows` only (row i = vertex rows[i]): a rank's own vertices under
// the vertex strategy, whose degrees its vertex_share of each snapshot holds whole.
std::vector<Var> snapshot_features(const TemporalGraph& g, const std::vector<int64_t>& rows,
                                   const std::vector<float>& features, int64_t feature_dim,
                                   int64_t* out_dim);
// The width of the degree-bucket features snapshot_features makes when no static ones are given.
int64_t degree_feature_dim(const TemporalGraph& g);
// The same on a rank that holds some snapshots only (`held[s]`, an empty Csr elsewhere, as
// move_snapshots leaves them): steps not held get an undefined Var.
std::vector<Var> snapshot_features(const TemporalGraph& g, const std::vector<Csr>& held,
                                   const std::vector<float>& features, int64_t feature_dim,
                                   int64_t* out_dim);

// Snapshots moved to a GPU as differences (Chakaravarthy et al., SC'21): the first snapshot held
// goes whole, every later one as its difference from the previous one held, applied on the
// device, where its GCN adjacency is built and handed to views[t] (which then never uploads it).
// `views` has one slot per snapshot of g, whole-graph views, null where a snapshot is not held
// here (the snapshot strategy: a rank holds blocks of consecutive steps). The difference is
// g.diffs[t - 1] when the previous snapshot is held and g has its differences (unweighted),
// otherwise the structural difference of the two held snapshots. Counts what crossed the bus
// against the whole adjacencies.
struct SnapshotUploads {
  int snapshots = 0, as_difference = 0;
  int64_t bytes = 0;        // uploaded: the first structure, then the differences
  int64_t whole_bytes = 0;  // the GCN adjacencies (directed: and transposes) uploaded whole
};
SnapshotUploads upload_snapshots_by_difference(const TemporalGraph& g,
                                               const std::vector<std::unique_ptr<GraphView>>& views,
                                               Device dev);

enum class TemporalTask : uint8_t { link, edge };
TemporalTask parse_temporal_task(const std::string& name);  // OptionError for unknown names

// How validation and test rank link predictions.
//  - evolvegcn: EvolveGCN's sampled protocol (Pareja et al., AAAI'20): every positive of a step
//    with neg_eval random non-edges, AUC and MAP over the step's pairs, MRR per source vertex;
//    the means over steps. (eval_all_pairs: every vertex pair instead of the samples.)
//  - tgb: the Temporal Graph Benchmark's one-vs-many protocol (Huang et al., NeurIPS'23,
//    tgb.linkproppred.Evaluator): each positive (u, v) against its own neg_eval negatives (u, w),
//    half of them historical (destinations of u in the training span that are not linked to u
//    in this step), the rest random; its rank is the mean of the optimistic and the pessimistic
//    one; MRR is the mean of 1 / rank over every positive of the split, and selects the model.
//    AUC and MAP are still reported over the same pairs.
enum class EvalProtocol : uint8_t { evolvegcn, tgb };
EvalProtocol parse_eval_protocol(const std::string& name);  // OptionError for unknown names

// The loop's options (epochs, optimiser, checkpoints, patience; 50 epochs by default) and the
// task's.
struct TemporalOptions : TrainOptions {
  TemporalOptions() { epochs = 50; }
  TemporalTask task = TemporalTask::link;
  int bptt = 0;        // steps per truncated-BPTT window; 0 = the whole training span
  int neg_train = 5;   // sampled non-edges per positive in training
  int neg_eval = 100;  // ... in validation and test
  // Validation and test score every ordered vertex pair of each step instead (EvolveGCN's
  // protocol, gnn/temporal/link_eval.hpp); neg_eval is then unused. Link prediction only.
  bool eval_all_pairs = false;
  EvalProtocol eval_protocol = EvalProtocol::evolvegcn;
  double train_frac = 0.7;
  double val_frac = 0.1;
  int64_t classifier_hidden = 64;
};

// How the steps split by time (step s feeds snapshot s to the model). OptionError when the
// options do not fit the graph (too few snapshots for three splits, --task edge without
// weights, a negative --bptt, ...).
struct TemporalSplit {
  int steps = 0, train = 0, val = 0;
};
TemporalSplit temporal_split(const TemporalGraph& g, const TemporalOptions& opt);
// The windows the trainer runs steps in, as boundaries from 0 to the step count: training
// windows of `bptt` steps (the whole training span when 0), then validation and test cut the
// same way. The snapshot strategy gives each rank a block of every window.
std::vector<int> temporal_windows(const TemporalGraph& g, const TemporalOptions& opt);

// The pairs one step scores, with their targets and loss weights: link prediction, the distinct
// edges of snapshot step + 1 (no self loops; an undirected edge once) against `negatives`
// corrupted pairs (u, w) each, drawn by (seed, salt, step); edge classification, the edges of
// snapshot `step`, target 1 for a negative weight. Both classes weigh half of the loss.
struct PairBatch {
  std::vector<int32_t> src, dst;
  std::vector<float> target, weight;
};
// The distinct positives of link step `step` (the edges of snapshot step + 1, no self loops, an
// undirected edge once) whose first vertex `keep` accepts, with their ordinals among all of the
// step's distinct positives (what keys their negatives). They depend on the step alone: a rank
// finds them once and passes them to step_pairs every epoch, which then reads only the edges
// that touch its vertices instead of deduplicating the whole step again.
struct StepPositives {
  std::vector<uint32_t> event;  // position in the step's events
  std::vector<uint32_t> index;  // ordinal among the step's distinct positives
  size_t total = 0;             // distinct positives of the whole step
};
StepPositives step_positives(const TemporalGraph& g, int step,
                             const std::function<bool(int32_t)>& keep = {});
// A step's pairs. With `keep`, only the pairs whose first vertex it accepts (a rank's share under
// the vertex strategy): the same pairs, draws and weights as the whole batch's, in the same
// order, without drawing the others' negatives. `known`: step_positives(g, step, keep) for the
// same `keep` (link prediction only); the result is the same as without it.
PairBatch step_pairs(const TemporalGraph& g, TemporalTask task, int step, int negatives,
                     uint64_t seed, uint64_t salt, const std::function<bool(int32_t)>& keep = {},
                     const StepPositives* known = nullptr);
// TGB's historical destinations: per vertex u, the distinct v with an edge u -> v (either
// direction on an undirected graph) in snapshots 0..last_snapshot, ascending. Listed by the
// sources that have some (a rank's share of the events names few of the graph's vertices: no
// entry per vertex of the whole graph).
struct EdgeHistory {
  int64_t num_vertices = 0;
  std::vector<int32_t> src;      // the sources with a history, ascending
  std::vector<int64_t> offsets;  // src.size() + 1: src[i]'s are dst[offsets[i], offsets[i + 1])
  std::vector<int32_t> dst;
  // u's historical destinations (empty when it has none).
  std::pair<const int32_t*, const int32_t*> of(int32_t u) const;
};
EdgeHistory edge_history(const TemporalGraph& g, int last_snapshot);
// step_pairs' negatives as the tgb protocol draws them (the same layout: the kept positives,
// then `negatives` pairs (u, w) per positive, in order): half (rounded down) from u's history
// without repeats, skipping destinations linked to u in this step (all of them when fewer), the
// rest uniform over the vertices, neither u, nor linked to u, nor drawn already for this positive
// (tried 16 times, then taken as drawn: a graph with fewer vertices than that has repeats).
// Seeded by (seed, salt, step, the positive's ordinal): the same draws on any rank count.
PairBatch tgb_step_pairs(const TemporalGraph& g, int step, int negatives, uint64_t seed,
                         uint64_t salt, const EdgeHistory& history,
                         const std::function<bool(int32_t)>& keep = {},
                         const StepPositives* known = nullptr);

// The loss weights of a link step's pairs: each class half of the whole step's loss.
struct LinkWeights {
  float positive, negative;
};
LinkWeights link_weights(size_t positives, size_t negatives_each);
// A link step's pairs as step_pairs (history null) or tgb_step_pairs draw them, without the
// batch, grouped by source vertex: what evaluation streams a step from: sized(kept, total)
// first (the positives the plan holds, and the step's distinct positives: all of them, numbered
// from 0, unless the events are a share), then visit(u, count, js, vs, drawn) once per source u
// with positives, on all threads: js its positives' ordinals in the whole step (ascending), vs
// their destinations, drawn their `negatives` draws each (count x negatives,
// positive by positive; drawn follows vs in memory, drawn == vs + count, so the candidates are
// one list), valid during the call; with `keep`, only the sources it accepts are visited (and
// drawn for). Returns the count of positives (all of them, visited or not).
using SourceVisit = std::function<void(int32_t u, size_t count, const uint32_t* js,
                                       const int32_t* vs, const int32_t* drawn)>;
// plan: plan_link_step(g, step), what the call derives from the step's edges alone (its
// positives, the links draws avoid, the positives by source), kept to be reused by every
// evaluation of the step; null: made for this call. With `keep`, only the sources it accepts
// (what a rank holding a share of the events (shard_events) plans: its own).
struct LinkStepPlan;
std::shared_ptr<const LinkStepPlan> plan_link_step(const TemporalGraph& g, int step,
                                                   const std::function<bool(int32_t)>& keep = {});
size_t visit_link_sources(const TemporalGraph& g, int step, int negatives, uint64_t seed,
                          uint64_t salt, const EdgeHistory* history,
                          const std::function<void(size_t kept, size_t total)>& sized,
                          const SourceVisit& visit, const LinkStepPlan* plan = nullptr,
                          const std::function<bool(int32_t)>& keep = {});
// The sources of the plan's positives, ascending.
const std::vector<int32_t>& link_step_sources(const LinkStepPlan& plan);
// The positives the plan holds (its sources', all of them, or a share's).
size_t link_step_positives(const LinkStepPlan& plan);

// The salt of training epoch `epoch`'s negatives (from 1), as the trainer draws them.
inline uint64_t train_salt(int epoch) { return uint64_t(epoch) * 0x9e3779b9u + 1; }

struct LinkMetrics {
  double auc = 0, map = 0, mrr = 0;  // means over the steps of a split (link prediction)
  double f1 = 0, macro_f1 = 0;       // edge classification, over all edges of a split
  double loss = 0;
  // The number model selection maximises: MAP for links, F1 for edges.
  double selection(TemporalTask t) const { return t == TemporalTask::link ? map : f1; }
};

struct TemporalResult : LoopSummary {
  LinkMetrics best_val, test;  // test with the best-validation parameters
  int train_steps = 0, val_steps = 0, test_steps = 0;
};

// Link prediction and edge classification over snapshots as a task of the training loop
// (gnn/train/training_loop.hpp): one optimiser step per training window.
class LinkPredictionTrainer : private TrainingTask {
 public:
  // `graphs[t]` and `features[t]` (or one feature matrix for all steps) for every snapshot, and
  // `dir`, must outlive the trainer.
  // Distributed (vertex strategy): `graphs` and `features` are this rank's, `dir` says where
  // every vertex lives (null: all on this one rank); each rank scores the pairs whose first
  // vertex it owns, and gradients are summed over ranks.
  // Snapshot strategy (`plan` given, made for temporal_windows(g, opt)): `graphs` and
  // `features` hold the whole snapshots of the steps this rank owns (null / undefined for the
  // others, unless features are one matrix); the models run window by window
  // (TemporalModel::window), each rank scores the targets of its own steps, and losses, metrics
  // and gradients are combined as in the vertex strategy.
  LinkPredictionTrainer(TemporalModel& model, PairClassifier& head, const TemporalGraph& g,
                        const std::vector<std::unique_ptr<GraphView>>& graphs,
                        const std::vector<Var>& features, Communicator& comm, TemporalOptions opt,
                        const RowDirectory* dir = nullptr, const SnapshotPlan* plan = nullptr);
  ~LinkPredictionTrainer() override;

  // The loop's run (resume, epochs, checkpoints, patience, best-validation selection); afterwards
  // the model holds the best-validation parameters, those the test used. Each epoch's record
  // has the validation metrics auc, map, mrr and loss (link prediction) or f1, macro_f1, auc
  // and loss (edge classification).
  TemporalResult run(const std::function<void(const EpochRecord&)>& on_epoch = {});
  // One training pass over the training steps (an optimiser step per window); returns the
  // mean loss.
  double train_epoch(int epoch) { return loop_->train_epoch(epoch); }
  // Per training window of `epoch`, from a fresh state and without updating (the parameters
  // stay as they are): the loss summed over the window's steps, the steps with targets in it
  // (count), and every parameter's gradient (summed over ranks, flattened in parameter order),
  // what an optimiser step would apply after that window. Collective.
  std::vector<StepGradients> epoch_gradients(int epoch) { return loop_->epoch_gradients(epoch); }
  // Metrics over steps [begin, end) after running the sequence from the start (or, with `from`,
  // from the state after step begin - 1 that it holds).
  LinkMetrics evaluate(int begin, int end, const std::vector<Var>* from = nullptr);

  int train_steps() const { return n_train_; }
  // The salt of validation's and test's draws (the tgb protocol draws those its own way).
  static constexpr uint64_t kEvalSalt = 0xe7a1;

  // The test steps' pairs with their scores (logits) and labels, with the current parameters,
  // on rank 0 (empty elsewhere), ordered by step, source, destination: what --predictions
  // writes. Link prediction: each step's positives and the non-edges its test drew; with
  // eval_all_pairs the positives alone (every vertex pair would not fit a file). Edge
  // classification: each step's edges, label 1 for a negative weight. Collective.
  struct ScoredPair {
    int32_t step = 0, src = 0, dst = 0;
    float label = 0, score = 0;
  };
  std::vector<ScoredPair> test_pairs();
  // Every vertex's embedding (n x out_dim, dense ids) after the last step the model runs (link
  // prediction: the one that predicts the last snapshot), with the current parameters, on rank
  // 0 (empty elsewhere): what --embeddings writes. Collective.
  Tensor final_embeddings();

 private:
  // TrainingTask: one optimiser step per training window.
  const std::vector<std::pair<std::string, Parameter*>>& parameters() override { return params_; }
  Optimizer& optimizer() override { return *optimizer_; }
  int64_t steps_in_epoch(int) override { return int64_t(training_windows().size()) - 1; }
  void begin_epoch(int) override { model_.reset_state(); }
  StepLoss step_loss(int epoch, int64_t window) override;
  void end_step(int, int64_t) override { model_.detach_state(); }
  Evaluation validate() override;
  Evaluation test() override;

  using Batch = PairBatch;
  Batch batch_for(int step, int negatives, uint64_t salt) const {
    if (history_ && salt == kEvalSalt)
      return tgb_step_pairs(g_, step, negatives, opt_.seed, salt, *history_);
    return step_pairs(g_, opt_.task, step, negatives, opt_.seed, salt);
  }
  // The pairs of a step this rank scores (vertex strategy: those whose first vertex it owns).
  Batch local_batch(int step, int negatives, uint64_t salt) const;
  // Logits of a local batch; collective (every rank calls it, even with no pairs).
  Var score(ForwardContext& ctx, const Var& h, const Batch& local);
  // Training's loss of a local batch, term `round` of comm.size() (backward_to_parts): the
  // pairs whose second vertex rank (rank + round) % size owns, scored against that rank's rows
  // alone. One round's fetched rows and head buffers are alive at a time: about n / P rows,
  // where scoring every pair at once held a row of nearly every vertex on every rank (random
  // negatives name them all). `by_owner`: the batch's pairs grouped by their second vertex's
  // owner, in batch order. Collective in rounds 1.. (every rank calls each, even with no pairs).
  // The distinct vertices of `dst` in order of first appearance (the rows to fetch: the
  // negatives repeat vertices); slot[i] is dst[i]'s place among them.
  std::vector<int32_t> distinct_ends(const std::vector<int32_t>& dst, std::vector<int32_t>& slot);
  Var round_loss(ForwardContext& ctx, const Var& h, const Batch& local,
                 const std::vector<std::vector<int32_t>>& by_owner, int round);
  // Validation's and test's logits of a sampled batch (its positives, then neg_eval negatives
  // each): on the CPU the factored scorer (FactoredPairs::score_list) takes each positive with
  // its negatives as one block of gathered rows, a third of the pair MLP's first-layer work;
  // otherwise score(). `whole`: h holds every vertex's row (one process, a snapshot owner);
  // else the rows are fetched from their owners (collective, as score() is).
  Var eval_logits(ForwardContext& ctx, const Var& h, const Batch& local, bool whole);
  void gather_all(const Tensor& logits, const Batch& local, std::vector<float>* scores,
                  std::vector<float>* labels, std::vector<float>* groups);
  // Evaluation sums over steps; every rank adds every step (collective), with its local pairs.
  struct EvalSums {
    LinkMetrics m;
    int counted = 0;
    double tgb_rr = 0;  // the tgb protocol: 1 / rank summed over the split's positives
    double tgb_positives = 0;
    std::vector<float> all_scores;  // edge classification pools the split's edges
    std::vector<uint8_t> all_labels;
    // add_fused_eval_step's buffers, reused by every step of the evaluation.
    std::vector<float> logits;             // per positive: its score
    // Per thread, this rank's: each positive's loss term and TGB reciprocal rank (with its
    // negatives) by its ordinal; each source's MRR value.
    struct PositiveTerm {
      uint32_t j;
      double loss, rr;
    };
    struct SourceTerm {
      int32_t u;
      double v;
    };
    std::vector<std::vector<PositiveTerm>> terms;
    std::vector<std::vector<SourceTerm>> groups;
    std::vector<RankCounter::Part> parts;  // per thread: its candidates' keys (RankCounter)
  };
  void add_eval_step(EvalSums& acc, const Var& logits, const Batch& local);
  // Link prediction with sampled negatives on the CPU: step `step` scored from every vertex's
  // rows `h` as visit_link_sources draws it (the pairs batch_for would list), source by source
  // on all threads: first the positives alone, whose scores every rank needs, then each
  // positive with its negatives through the factored scorer, the source's MRR group, the TGB
  // ranks and the loss at once, the negatives counted where they fall among the positives
  // (RankCounter, per thread; AUC, AP), not kept. This rank visits the sources `mine` accepts (all
  // when empty); the per-positive and per-source values and the tallies are summed over `comm`
  // (collective there), and every rank adds the step's metrics to acc as one process would
  // (the same bits). No batch and no list of the step's pair scores is built.
  // A NaN score, or a positive scoring otherwise in its two passes, throws on every rank of
  // `comm`; with `failed`, it is set to why instead (and acc is left part-way).
  // `rows`: the vertices h holds (sorted; null: every vertex, row v = vertex v), at least this
  // rank's sources and every candidate their draws name (eval_rows). h is let go of once the
  // pairs are scored (fetched rows: one per vertex), before the counts are summed.
  void add_fused_eval_step(EvalSums& acc, int step, Var h, Communicator& comm,
                           const std::function<bool(int32_t)>& mine, int* failed = nullptr,
                           const std::vector<int32_t>* rows = nullptr);
  // The step's evaluation plan (made on first use; with a share of the events, of `mine`'s
  // sources), and the vertices the sources `mine` accepts score against: themselves and their
  // candidates (positives' destinations and drawn negatives), sorted, distinct.
  const LinkStepPlan& eval_plan(int step, const std::function<bool(int32_t)>& mine);
  std::vector<int32_t> eval_rows(int step, const std::function<bool(int32_t)>& mine);
  // Whether evaluating `step` fetches eval_rows' rows (its candidates name few of the vertices)
  // rather than every vertex's.
  bool fetch_candidates(int step, const std::function<bool(int32_t)>& mine);
  bool fused_eval() const {
    return opt_.task == TemporalTask::link && !opt_.eval_all_pairs && device() == Device::cpu;
  }
  // test_pairs: this rank's scored pairs of step s, appended to `all` on rank 0 in order.
  void gather_pairs(int step, const Var& logits, const Batch& local, std::vector<ScoredPair>* all);
  // eval_all_pairs: the positives of a step (both directions for an undirected graph), and one
  // step's metrics from the embeddings of every vertex (`h`), scoring source rows `rows`.
  PairTargets targets_for(int step) const;
  void add_all_pairs_step(EvalSums& acc, int step, const Tensor& h,
                          const std::vector<int32_t>& rows, Communicator& comm);
  LinkMetrics finish_eval(EvalSums& acc) const;
  // Where the model's parameters live (and so every matrix of a step).
  Device device() const { return params_.front().second->var.device(); }
  // The training windows' bounds, from 0 to the training steps (both strategies).
  std::vector<int> training_windows() const;
  // The loss of window [start, end) from the model's current state: its value the window's
  // loss summed over steps (and ranks), its count the steps with targets. Collective.
  StepLoss window_loss(int epoch, int start, int end);
  // The snapshot strategy's window and evaluation.
  StepLoss window_loss_snapshots(int epoch, int start, int end);
  LinkMetrics evaluate_snapshots(int begin, int end);

  TemporalModel& model_;
  PairClassifier& head_;
  const TemporalGraph& g_;
  const std::vector<std::unique_ptr<GraphView>>& graphs_;
  const std::vector<Var>& features_;
  Communicator& comm_;
  TemporalOptions opt_;
  std::unique_ptr<Optimizer> optimizer_;
  std::vector<std::pair<std::string, Parameter*>> params_;
  int n_steps_ = 0, n_train_ = 0, n_val_ = 0;
  const SnapshotPlan* plan_ = nullptr;
  std::vector<uint8_t> has_targets_;  // per step: its batch is not empty
  RowDirectory single_;       // one process's directory, when none is given
  const RowDirectory& dir_;   // the rank's, or single_
  std::unique_ptr<const EdgeHistory> history_;  // the tgb protocol's training-span edges
  // add_fused_eval_step(): per link step, its plan_link_step (made on first use).
  std::vector<std::shared_ptr<const LinkStepPlan>> eval_plans_;
  std::unique_ptr<TrainingLoop> loop_;
  // The vertex strategy's validation leaves the model's state at the end of the validation span:
  // the best one's (by the loop's rule: the first, then strictly higher selections) is kept with
  // the parameters it ran with, and the test continues from it instead of rerunning the sequence
  // from step 0 when the model holds those parameters still (the loop restores the best ones).
  struct ValidationState {
    std::vector<Var> state;
    std::vector<Tensor> params;  // on the host
    double selection = 0;
  };
  std::unique_ptr<ValidationState> after_val_;
  bool holds_validated_params() const;
};

}  // namespace dgnn
