// The pipeline strategy: stages of graph layers, chunks streamed through them
// (gnn/train/pipeline.hpp).
#include "dgnn/gnn/train/pipeline.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>

#include "dgnn/comm/halo.hpp"
#include "dgnn/common/error.hpp"
#include "dgnn/common/timer.hpp"
#include "dgnn/gnn/core/loss.hpp"
#include "dgnn/gnn/core/ops.hpp"
#include "dgnn/partition/partition.hpp"

namespace dgnn {

std::vector<int> balance_stages(const std::vector<double>& layer_cost, double stem, double head,
                                double every, int stages) {
  const int layers = int(layer_cost.size());
  if (stages < 1) throw OptionError("the pipeline needs at least one stage");
  if (stages > layers)
    throw OptionError("--strategy pipeline: " + std::to_string(stages) + " stages for " +
                      std::to_string(layers) +
                      " graph layers: every stage runs at least one layer (give --layers >= " +
                      std::to_string(stages) + ", or fewer ranks)");
  std::vector<double> prefix(size_t(layers) + 1, 0);
  for (int l = 0; l < layers; ++l) prefix[size_t(l) + 1] = prefix[size_t(l)] + layer_cost[size_t(l)];
  // cost of a stage s running layers [i, j) (0-based)
  auto cost = [&](int s, int i, int j) {
    return prefix[size_t(j)] - prefix[size_t(i)] + every + (s == 0 ? stem : 0) +
           (s == stages - 1 ? head : 0);
  };
  const double inf = std::numeric_limits<double>::infinity();
  // best[s][j]: the smallest largest stage cost of stages 0..s running layers [0, j).
  std::vector<std::vector<double>> best(size_t(stages), std::vector<double>(size_t(layers) + 1, inf));
  std::vector<std::vector<int>> from(size_t(stages), std::vector<int>(size_t(layers) + 1, 0));
  for (int j = 1; j <= layers; ++j) best[0][size_t(j)] = cost(0, 0, j);
  for (int s = 1; s < stages; ++s)
    for (int j = s + 1; j <= layers; ++j)
      for (int i = s; i < j; ++i) {
        const double c = std::max(best[size_t(s - 1)][size_t(i)], cost(s, i, j));
        if (c < best[size_t(s)][size_t(j)]) {  // the first (earliest cut) among equals
          best[size_t(s)][size_t(j)] = c;
          from[size_t(s)][size_t(j)] = i;
        }
      }
  std::vector<int> first(size_t(stages) + 1);
  first[size_t(stages)] = layers + 1;
  int j = layers;
  for (int s = stages - 1; s > 0; --s) {
    j = from[size_t(s)][size_t(j)];
    first[size_t(s)] = j + 1;
  }
  first[0] = 1;
  return first;
}

std::vector<int> pipeline_stages(int64_t n, int64_t entries, int64_t features, int64_t hidden,
                                 int64_t classes, int layers, bool stem_everywhere, int stages) {
  const double nn = double(n), hid = double(hidden);
  const double layer = 2 * double(entries) * hid + 2 * nn * hid * hid;
  const double stem = 2 * nn * double(features) * hid;
  const double head = 2 * nn * hid * double(classes);
  return balance_stages(std::vector<double>(size_t(layers), layer), stem_everywhere ? 0 : stem,
                        head, stem_everywhere ? stem : 0, stages);
}

// The historical rows: per graph layer of this stage, one row per vertex that has a neighbour in
// another chunk, as the last exact pass computed the layer's input (refresh: every evaluation,
// and once before training).
class PipelineHistory {
 public:
  PipelineHistory(int64_t rows, int64_t dim, int first_layer, int last_layer)
      : rows_(rows), dim_(dim), first_(first_layer) {
    for (int l = first_layer; l <= last_layer; ++l)
      tables_.emplace_back(size_t(rows * dim), 0.f);
  }
  int64_t rows() const { return rows_; }
  int64_t dim() const { return dim_; }
  float* table(int l) { return tables_.at(size_t(l - first_)).data(); }
  int64_t bytes() const { return int64_t(tables_.size()) * rows_ * dim_ * 4; }

  int layer = 0;  // the graph layer running now

 private:
  int64_t rows_, dim_;
  int first_;
  std::vector<std::vector<float>> tables_;
};

namespace {

// A chunk's "halo exchange": its out-of-chunk neighbours' rows come from the history, and no
// gradient leaves the chunk.
class HistoryHalo final : public HaloExchange {
 public:
  HistoryHalo(PipelineHistory& h, int64_t n_owned, std::vector<int32_t> halo)
      : h_(h), n_owned_(n_owned), halo_(std::move(halo)) {}
  void forward_begin(ConstMatView x) override { check(x.cols); }
  void forward_end(MatView x) override {
    check(x.cols);
    const float* src = h_.table(h_.layer);
    for (size_t j = 0; j < halo_.size(); ++j)
      std::memcpy(x.row(n_owned_ + int64_t(j)), src + int64_t(halo_[j]) * x.cols,
                  size_t(x.cols) * 4);
  }
  void backward_begin(ConstMatView) override {}
  void backward_end(MatView) override {}

 private:
  void check(int64_t cols) const {
    DGNN_CHECK(cols == h_.dim(), ShapeError,
               "--strategy pipeline: a graph layer aggregated " + std::to_string(cols) +
                   " columns; the history keeps " + std::to_string(h_.dim()) +
                   " (the deep models aggregate hidden-wide rows)");
  }
  PipelineHistory& h_;
  int64_t n_owned_;
  std::vector<int32_t> halo_;  // history row of each halo row
};

}  // namespace

struct PipelineRun::Chunk {
  LocalPart part;  // ids, labels and splits (the structure moved into the view)
  std::unique_ptr<HistoryHalo> halo;
  std::unique_ptr<HaloExchange> exchange;  // the hybrid: the part's halo, over the stage's ranks
  std::unique_ptr<GraphView> graph;
  Var features;                                        // where this stage runs the stem
  std::vector<int32_t> train_labels;                   // of part.train
  std::vector<std::pair<int32_t, int32_t>> boundary;   // (owned row, history row)
  int64_t rows() const { return part.n_owned; }
};

namespace {

// Rank 0 cuts the graph into `wanted` pieces (chunks, or the hybrid's parts) and every rank
// receives them; it decodes those `keep` says (all when unset).
std::vector<LocalPart> pieces_everywhere(const std::function<Dataset()>& read,
                                         const StaticRunConfig& cfg, int wanted, bool parts,
                                         int keep, Communicator& comm) {
  std::string bytes;
  int64_t count = 0;
  std::vector<int64_t> sizes;
  if (comm.rank() == 0) {
    const Dataset d = read();
    if (d.labels.empty()) throw OptionError("the dataset has no labels (give --labels FILE)");
    const int64_t n = d.num_vertices();
    if (wanted > n)
      throw OptionError((parts ? "--strategy pipeline: " + std::to_string(wanted) + " parts"
                               : "--chunks " + std::to_string(wanted)) +
                        ": the graph has only " + std::to_string(n) + " vertices");
    std::vector<int32_t> part(size_t(n), 0);
    if (wanted > 1) {
      PartitionOptions o = cfg.partition;
      o.parts = wanted;
      part = partition_vertices(d.graph.in, o, d.train);
    }
    for (int c = 0; c < wanted; ++c) {
      LocalPart p = extract_part(d, part, wanted, c);
      if (p.n_owned == 0 && !parts) continue;  // a chunk METIS left empty streams nothing
      const std::string e = encode_part(p);
      sizes.push_back(int64_t(e.size()));
      bytes += e;
    }
    count = int64_t(sizes.size());
  }
  comm.broadcast(&count, 8, 0);
  sizes.resize(size_t(count));
  comm.broadcast(sizes.data(), count * 8, 0);
  int64_t total = 0;
  for (int64_t s : sizes) total += s;
  bytes.resize(size_t(total));
  comm.broadcast(bytes.data(), total, 0);
  std::vector<LocalPart> out;
  int64_t at = 0;
  for (int64_t i = 0; i < count; ++i) {
    if (keep < 0 || keep == i)
      out.push_back(decode_part(bytes.substr(size_t(at), size_t(sizes[size_t(i)])),
                                (parts ? "pipeline part " : "pipeline chunk ") + std::to_string(i)));
    at += sizes[size_t(i)];
  }
  return out;
}

}  // namespace

PipelineRun::PipelineRun(const std::function<Dataset()>& read, StaticRunConfig cfg,
                         PipelineOptions popt, Communicator& comm)
    : cfg_(std::move(cfg)), comm_(comm) {
  if (!cfg_.deep)
    throw OptionError(
        "--strategy pipeline runs the deep models (--model gcnii or resgcn): it splits their "
        "graph layers into stages");
  check_deep_options(*cfg_.deep);
  if (cfg_.minibatch)
    throw OptionError("--strategy pipeline streams chunks of the whole graph: drop --batch-size");
  if (!cfg_.partition_dir.empty())
    throw OptionError(
        "--strategy pipeline: every stage holds the whole graph (cut into chunks), not a "
        "part: drop --partition");
  if (cfg_.device != Device::cpu)
    throw OptionError("--strategy pipeline runs on the CPU for now (drop --device)");
  check_train_options(cfg_.train);
  const int P = comm.size();
  if (popt.stages < 0) throw OptionError("--stages must be >= 1");
  stages_ = popt.stages > 0 ? popt.stages : P;
  if (P % stages_ != 0)
    throw OptionError("--stages " + std::to_string(stages_) + ": the " + std::to_string(P) +
                      " ranks do not split into " + std::to_string(stages_) +
                      " stages of equal parts (give a divisor of the rank count)");
  parts_ = P / stages_;
  stage_ = comm.rank() / parts_;
  const int part = comm.rank() % parts_;
  prev_rank_ = stage_ > 0 ? comm.rank() - parts_ : -1;
  next_rank_ = stage_ + 1 < stages_ ? comm.rank() + parts_ : -1;
  const DeepModelOptions& deep = *cfg_.deep;
  if (stages_ > deep.layers)  // before any data is read
    balance_stages(std::vector<double>(size_t(deep.layers), 1.0), 0, 0, 0, stages_);
  if (popt.chunks < 0) throw OptionError("--chunks must be >= 1 (1: exact mode)");
  if (parts_ > 1 && popt.chunks > 1)
    throw OptionError("--chunks " + std::to_string(popt.chunks) + ": the hybrid (--stages " +
                      std::to_string(stages_) + " on " + std::to_string(P) +
                      " ranks) streams one chunk per graph part for now (drop --chunks)");
  const int wanted = parts_ > 1 ? parts_ : popt.chunks > 0 ? popt.chunks : 4 * stages_;
  if (parts_ > 1) group_ = comm.split(stage_);

  std::vector<LocalPart> parts =
      pieces_everywhere(read, cfg_, wanted, parts_ > 1, parts_ > 1 ? part : -1, comm);
  DGNN_CHECK(!parts.empty(), OptionError, "--strategy pipeline: the graph has no vertices");
  vertices_ = parts.front().global_vertices;
  feature_dim_ = parts.front().feature_dim;
  num_classes_ = parts.front().num_classes;
  global_[0] = parts.front().global_train;
  global_[1] = parts.front().global_val;
  global_[2] = parts.front().global_test;
  if (num_classes_ <= 0) throw OptionError("the dataset has no labels (give --labels FILE)");
  if (global_[0] == 0) throw OptionError("no labelled training vertices: nothing to train");

  model_ = make_deep_model(feature_dim_, num_classes_, deep);
  model_->reset_parameters(cfg_.train.seed);

  // The stages: equal graph layers cost alike; the stem (on every stage for GCNII, which
  // recomputes h0) and the head move the cuts.
  int64_t entries = 0;
  for (const LocalPart& p : parts) entries += p.local_in.nnz() + p.n_owned;
  if (group_) group_->allreduce_sum(&entries, 1);  // the hybrid: the stage's parts together
  first_ = pipeline_stages(vertices_, entries, feature_dim_, deep.hidden, num_classes_, deep.layers,
                           model_->reads_h0(), stages_);
  // Every rank takes rank 0's stages (they agree; a broadcast makes sure).
  comm.broadcast(first_.data(), int64_t(first_.size()) * int64_t(sizeof(int)), 0);

  // The history: every vertex some chunk reads from another.
  // (The hybrid's halo rows come from the stage's other ranks, current: no history.)
  std::vector<int32_t> row_of(size_t(parts_ > 1 ? 0 : vertices_), -1);
  int32_t rows = 0;
  for (const LocalPart& p : parts)
    for (size_t j = size_t(p.n_owned); parts_ == 1 && j < p.global_ids.size(); ++j) {
      int32_t& r = row_of[size_t(p.global_ids[j])];
      if (r < 0) r = rows++;
    }
  history_ = std::make_unique<PipelineHistory>(rows, deep.hidden, first_layer(), last_layer());
  const bool needs_features = stage_ == 0 || model_->reads_h0();
  for (LocalPart& p : parts) {
    if (cfg_.normalize_features) {
      const int64_t bad = normalize_feature_rows(p.features, p.feature_dim);
      if (bad >= 0)
        throw OptionError("--normalize-features: vertex " +
                          std::to_string(p.original_ids[size_t(bad)]) +
                          " has a negative feature; row normalisation is for non-negative "
                          "features (bag-of-words counts, as Planetoid's)");
    }
    auto ch = std::make_unique<Chunk>();
    HaloExchange* exchange = nullptr;
    if (parts_ > 1) {
      ch->exchange = make_halo_exchange(p.plan, *group_, Device::cpu);
      exchange = ch->exchange.get();
    } else {
      std::vector<int32_t> halo;
      for (size_t j = size_t(p.n_owned); j < p.global_ids.size(); ++j)
        halo.push_back(row_of[size_t(p.global_ids[j])]);
      for (int64_t i = 0; i < p.n_owned; ++i)
        if (int32_t r = row_of[size_t(p.global_ids[size_t(i)])]; r >= 0)
          ch->boundary.emplace_back(int32_t(i), r);
      ch->halo = std::make_unique<HistoryHalo>(*history_, p.n_owned, std::move(halo));
      exchange = ch->halo.get();
    }
    ch->graph = std::make_unique<GraphView>(std::move(p.local_in), p.n_owned, p.global_ids,
                                            p.halo_in_degree, exchange);
    if (needs_features)
      ch->features = Var(Tensor::from_host(p.features.data(), p.n_owned, p.feature_dim));
    std::vector<float>().swap(p.features);
    for (int32_t r : p.train) ch->train_labels.push_back(p.labels[size_t(r)]);
    ch->part = std::move(p);
    chunks_.push_back(std::move(ch));
  }

  params_ = model_->named_parameters();
  optimizer_ = make_optimizer(params_, cfg_.train);
  loop_ = std::make_unique<TrainingLoop>(static_cast<TrainingTask&>(*this), comm_, cfg_.train);
}

PipelineRun::~PipelineRun() = default;

int64_t PipelineRun::history_bytes() const { return history_->bytes(); }

void PipelineRun::send_rows(int peer, const Tensor& rows) {
  sending_.push_back(rows.clone());
  const Tensor& t = sending_.back();
  const int64_t bytes = t.rows() * t.cols() * 4;
  pipeline_bytes_ += bytes;
  pending_.push_back(comm_.exchange_begin({PeerBuffer{peer, const_cast<float*>(t.data()), bytes}}, {}));
}

Tensor PipelineRun::receive_rows(int peer, int64_t rows, int64_t cols) {
  Tensor t = Tensor::uninitialized(rows, cols);  // every entry is received
  Timer wait;
  comm_.exchange_begin({}, {PeerBuffer{peer, t.data(), rows * cols * 4}})->wait();
  bubble_ms_ += wait.ms();
  return t;
}

void PipelineRun::fold_group_stats() {
  if (!group_) return;
  CommStats& g = group_->stats();
  CommStats& w = comm_.stats();
  w.comm_ms += g.comm_ms;
  w.wait_ms += g.wait_ms;
  w.bytes_sent += g.bytes_sent;
  w.messages += g.messages;
  g.reset();
}

void PipelineRun::finish_sends() {
  for (auto& p : pending_) p->wait();
  pending_.clear();
  sending_.clear();
}

double PipelineRun::forward_backward(uint64_t step) {
  return loop_->gradients(pipelined_loss(step));
}

StepLoss PipelineRun::step_loss(int epoch, int64_t) { return pipelined_loss(uint64_t(epoch - 1)); }

StepLoss PipelineRun::pipelined_loss(uint64_t step) {
  // Collective: every rank's flag and row count are alike (none without out-of-chunk rows).
  if (!history_filled_ && history_->rows() > 0) exact_forward(false);
  optimizer_->zero_grad();
  bubble_ms_ = 0;
  pipeline_bytes_ = 0;
  const bool is_first = stage_ == 0, is_last = stage_ == stages_ - 1;
  const int64_t hidden = model_->hidden();
  struct Live {
    Var in, out, loss;
  };
  std::vector<Live> live(chunks_.size());
  double value = 0;
  // Forward: chunk after chunk; a stage starts chunk c as soon as the previous stage sent it.
  for (size_t c = 0; c < chunks_.size(); ++c) {
    Chunk& ch = *chunks_[c];
    ForwardContext ctx{*ch.graph, true, cfg_.train.seed, step};
    Var h, t;
    if (is_first || model_->reads_h0()) {
      Var h0 = model_->stem(ctx, ch.features);
      t = model_->initial_term(h0);
      if (is_first) h = h0;
    }
    if (!is_first) h = live[c].in = Var(receive_rows(prev_rank_, ch.rows(), hidden), true);
    for (int l = first_layer(); l <= last_layer(); ++l) {
      history_->layer = l;
      h = model_->graph_layer(ctx, l, h, t);
    }
    if (is_last) {
      Var logits = model_->head(ctx, h);
      if (!ch.part.train.empty()) {
        live[c].loss =
            cross_entropy(logits, ch.part.train, ch.train_labels, double(global_[0]));
        value += double(live[c].loss.value().item());
      }
    } else {
      send_rows(next_rank_, h.value());
      live[c].out = h;
    }
  }
  // Backward: the last chunk first (its tape is the newest), every stage in the same order.
  for (size_t k = chunks_.size(); k-- > 0;) {
    Chunk& ch = *chunks_[k];
    Live& lv = live[k];
    if (is_last) {
      if (lv.loss.defined()) lv.loss.backward();
    } else {
      Tensor g = receive_rows(next_rank_, ch.rows(), hidden);
      gradient_from(lv.out, std::move(g)).backward();
    }
    if (!is_first) {
      const Tensor& g = lv.in.grad();
      if (g.rows() == ch.rows())
        send_rows(prev_rank_, g);
      else  // no gradient reached the chunk's input (no training vertex downstream)
        send_rows(prev_rank_, Tensor::zeros(ch.rows(), hidden));
    }
    lv = Live{};
  }
  finish_sends();
  fold_group_stats();
  StepLoss out;
  out.accumulated = true;  // zeroed above, then every chunk's share back-propagated
  out.value = value;       // the last stage's; the all-reduce sums it with the gradients
  return out;
}

std::vector<std::pair<std::string, double>> PipelineRun::epoch_figures() {
  double bubble[2] = {bubble_ms_, bubble_ms_};
  comm_.allreduce_sum(&bubble[0], 1);
  comm_.allreduce_max(&bubble[1], 1);
  int64_t bytes = pipeline_bytes_;
  comm_.allreduce_sum(&bytes, 1);
  return {{"bubble_ms", bubble[0] / double(comm_.size())},
          {"max_bubble_ms", bubble[1]},
          {"pipeline_bytes", double(bytes)},
          {"stages", double(stages_)},
          {"chunks", double(chunks_.size())}};
}

void PipelineRun::on_start(int) {
  if (history_->rows() > 0) exact_forward(false);  // (after a checkpoint, with its parameters)
}

std::vector<Tensor> PipelineRun::exact_forward(bool logits) {
  NoGradGuard no_grad;
  const bool is_first = stage_ == 0, is_last = stage_ == stages_ - 1;
  const size_t nc = chunks_.size();
  std::vector<Var> h(nc), t(nc);
  for (size_t c = 0; c < nc; ++c) {
    Chunk& ch = *chunks_[c];
    ForwardContext ctx{*ch.graph, false, cfg_.train.seed, 0};
    if (is_first || model_->reads_h0()) {
      Var h0 = model_->stem(ctx, ch.features);
      t[c] = model_->initial_term(h0);
      if (is_first) h[c] = h0;
    }
    if (!is_first) h[c] = Var(receive_rows(prev_rank_, ch.rows(), model_->hidden()));
  }
  PipelineHistory& hist = *history_;
  history_filled_ = true;
  const int64_t dim = hist.dim();
  for (int l = first_layer(); l <= last_layer(); ++l) {
    hist.layer = l;
    // Every chunk's boundary rows of this layer's input, before any chunk aggregates them: the
    // pass is exact, and the rows stay for the training chunks of the next epoch.
    float* table = hist.table(l);
    for (size_t c = 0; c < nc; ++c) {
      const float* rows = h[c].value().data();
      for (auto [local, row] : chunks_[c]->boundary)
        std::memcpy(table + int64_t(row) * dim, rows + int64_t(local) * dim, size_t(dim) * 4);
    }
    for (size_t c = 0; c < nc; ++c) {
      ForwardContext ctx{*chunks_[c]->graph, false, cfg_.train.seed, 0};
      h[c] = model_->graph_layer(ctx, l, h[c], t[c]);
    }
  }
  std::vector<Tensor> out;
  if (!is_last) {
    for (size_t c = 0; c < nc; ++c) send_rows(next_rank_, h[c].value());
    finish_sends();
    fold_group_stats();
    return out;
  }
  for (size_t c = 0; c < nc; ++c) {
    if (!logits) {
      out.push_back(h[c].value().clone());
      continue;
    }
    ForwardContext ctx{*chunks_[c]->graph, false, cfg_.train.seed, 0};
    out.push_back(std::move(model_->head(ctx, h[c]).value()));
  }
  fold_group_stats();
  return out;
}

std::array<double, 4> PipelineRun::evaluate_with_loss() {
  const std::vector<Tensor> logits = exact_forward(true);  // the last stage's; none elsewhere
  NodeSplitCounts counts;
  for (size_t c = 0; c < logits.size(); ++c) {
    const LocalPart& p = chunks_[c]->part;
    counts.add(logits[c], p.labels, p.train, p.val, p.test);
  }
  return counts.reduce(comm_, global_[0], global_[1], global_[2]);
}

Evaluation PipelineRun::validate() {
  return node_validation(evaluate_with_loss(), cfg_.train.select);
}

Evaluation PipelineRun::test() { return node_test(evaluate_with_loss()[2]); }

namespace {

Tensor stack_rows(const std::vector<Tensor>& parts, int64_t cols) {
  int64_t rows = 0;
  for (const Tensor& p : parts) rows += p.rows();
  Tensor out(rows, cols);
  int64_t at = 0;
  for (const Tensor& p : parts) {
    std::memcpy(out.data() + at * cols, p.data(), size_t(p.rows() * cols) * 4);
    at += p.rows();
  }
  return out;
}

}  // namespace

Tensor PipelineRun::predict() { return stack_rows(exact_forward(true), num_classes_); }

Tensor PipelineRun::embeddings() { return stack_rows(exact_forward(false), model_->hidden()); }

std::vector<int64_t> PipelineRun::row_ids() const {
  std::vector<int64_t> ids;
  if (stage_ != stages_ - 1) return ids;
  for (const auto& ch : chunks_)
    ids.insert(ids.end(), ch->part.original_ids.begin(),
               ch->part.original_ids.begin() + ch->part.n_owned);
  return ids;
}

TrainResult PipelineRun::train(const std::function<void(const EpochRecord&)>& on_epoch) {
  return node_result(loop_->run(on_epoch));
}

EpochFormat PipelineRun::epoch_format() const {
  EpochFormat f;
  f.metrics = node_epoch_metrics(cfg_.train.select);
  f.counts = {"pipeline_bytes", "stages", "chunks"};
  f.suffix = [](const EpochRecord& r) {
    char buf[128];
    std::snprintf(buf, sizeof buf, "  [bubble %.1f ms, max %.1f; %.2f MB between stages]",
                  r.figure("bubble_ms"), r.figure("max_bubble_ms"),
                  r.figure("pipeline_bytes") / 1e6);
    return std::string(buf);
  };
  return f;
}

}  // namespace dgnn
