#include "dgnn/gnn/temporal/temporal_run.hpp"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "dgnn/comm/collectives.hpp"
#include "dgnn/common/error.hpp"
#include "dgnn/partition/dist_read.hpp"
#include "dgnn/common/memory.hpp"
#include "dgnn/common/timer.hpp"
#include "dgnn/kernels/kernels.hpp"

namespace dgnn {

LoadedTemporal load_temporal_on_ranks(
    const std::function<TemporalGraph()>& read, Communicator& comm,
    const std::function<std::function<bool(int, int)>(const LoadedTemporal&)>& make_need) {
  Timer t;
  LoadedTemporal out;
  if (comm.size() == 1 || comm.rank() == 0) out.g = read();
  if (comm.size() > 1) {
    broadcast_temporal_meta(out.g, out.nnz, comm, out.moves);
    const std::function<bool(int, int)> need = make_need(out);
    move_snapshots(out.g, out.held, comm, need, out.moves);
  }
  out.ms = t.ms();
  return out;
}

LoadedTemporal load_temporal_everywhere(const std::function<TemporalGraph()>& read,
                                        Communicator& comm) {
  return load_temporal_on_ranks(read, comm, [](const LoadedTemporal&) {
    return std::function<bool(int, int)>([](int, int) { return true; });
  });
}

LoadedTemporal load_temporal_vertex_shares(const std::function<TemporalGraph()>& read,
                                           Communicator& comm, PartitionOptions popt) {
  if (comm.size() == 1) {
    LoadedTemporal out = load_temporal_everywhere(read, comm);
    out.part.assign(size_t(out.g.num_vertices), 0);
    return out;
  }
  Timer t;
  LoadedTemporal out;
  if (comm.rank() == 0) out.g = read();
  broadcast_temporal_meta(out.g, out.nnz, comm, out.moves);
  popt.parts = comm.size();
  out.part.assign(size_t(out.g.num_vertices), 0);
  if (comm.rank() == 0) out.part = partition_temporal(out.g, popt);
  comm.broadcast(out.part.data(), int64_t(out.part.size()) * 4, 0);
  move_vertex_shares(out.g, out.part, comm, out.moves);
  shard_events(out.g, out.part, comm);
  out.ms = t.ms();
  return out;
}

std::unique_ptr<TemporalRank> vertex_partition_rank(const TemporalGraph& g,
                                                    const std::vector<Var>& features,
                                                    PartitionOptions popt, Communicator& comm,
                                                    Device dev) {
  popt.parts = comm.size();
  std::vector<int32_t> part(size_t(g.num_vertices));
  if (comm.rank() == 0) part = partition_temporal(g, popt);
  comm.broadcast(part.data(), int64_t(part.size()) * 4, 0);
  return make_temporal_rank(g, features, part, comm, dev);
}

void add_rank_features(const TemporalGraph& g, TemporalRank& rank, const FeatureRowsFn& rows,
                       std::vector<float>& statics, int64_t* static_dim, Communicator& comm,
                       Device dev, int64_t* feature_dim) {
  const std::vector<int64_t>& owned = rank.owned;
  std::vector<Var> own;
  if (rows) {
    dist_read::agreed(comm, [&] { statics = rows(g, owned, static_dim); });
    // A rank with no vertex still read the width from the file.
    if (statics.empty() && !owned.empty()) *static_dim = 0;
    DGNN_CHECK(global_max(comm, *static_dim) == global_min(comm, *static_dim), Error,
               "feature_rows gave the ranks different widths");
    // Every rank agrees before any may throw: one rank's wrong size alone would leave the
    // others waiting.
    const int64_t wrong = statics.size() != owned.size() * size_t(*static_dim);
    DGNN_CHECK(*static_dim <= 0 || global_max(comm, wrong) == 0, ShapeError,
               "feature_rows: need rows.size() x dim features");
    if (*static_dim > 0) {
      Tensor x = Tensor::uninitialized(int64_t(owned.size()), *static_dim);
      std::copy(statics.begin(), statics.end(), x.data());
      own.emplace_back(std::move(x));
      *feature_dim = *static_dim;
    }
    std::vector<float>().swap(statics);
  }
  if (own.empty())  // static rows of the whole matrix, or degree buckets
    own = snapshot_features(g, owned, statics, *static_dim, feature_dim);
  for (Var& f : own)
    rank.features.push_back(dev == Device::cpu ? std::move(f) : Var(f.value().to(dev)));
}

TemporalRun::TemporalRun(const std::function<TemporalGraph()>& read, TemporalRunConfig cfg,
                         Communicator& comm)
    : cfg_(std::move(cfg)), comm_(comm) {
  if (cfg_.hidden < 1) throw OptionError("--hidden must be >= 1");
  if (cfg_.layers < 1) throw OptionError("--layers must be >= 1");
  const bool by_snapshot = cfg_.strategy == "snapshot";
  if (cfg_.strategy != "vertex" && !by_snapshot)
    throw OptionError("--strategy: unknown strategy '" + cfg_.strategy +
                      "' (expected vertex or snapshot)");
  std::optional<TemporalKind> kind;
  if (!cfg_.make_model) kind = parse_temporal_kind(cfg_.model);
  if (comm.size() > 1 && !by_snapshot && kind == TemporalKind::evolvegcn_h)
    throw OptionError(
        "--model evolvegcn-h does not run under --strategy vertex on several ranks: "
        "its top-k summary spans all vertices (use --strategy snapshot)");
  TemporalOptions& opt = cfg_.train;
  opt.classifier_hidden = cfg_.hidden;
  const Device dev = cfg_.device;

  // One process: the whole snapshots. Several ranks: rank 0 reads the graph and sends each rank
  // what it needs (snapshot strategy: the whole snapshots of its own steps; vertex strategy:
  // after rank 0's partition, its share of every snapshot, as base + differences) -- except that
  // a file (cfg_.source) is read in shards, where no rank holds the whole graph: by vertex
  // (load_temporal_sharded) or, for the snapshot strategy, by step (load_temporal_steps_sharded:
  // every rank then holds its own steps' whole snapshots and the events of the steps it
  // scores, the others' counts only).
  std::optional<SnapshotPlan> plan;
  const bool shares = !by_snapshot && comm.size() > 1;
  if (shares && cfg_.source && can_load_temporal_sharded(cfg_.source->path, cfg_.source->edges))
    in_ = load_temporal_sharded(cfg_.source->path, cfg_.source->edges, cfg_.source->snapshots,
                                comm, cfg_.partition);
  else if (shares)
    in_ = load_temporal_vertex_shares(read, comm, cfg_.partition);
  else {
    auto make_need = [&](const LoadedTemporal& m) {
      if (!by_snapshot) return std::function<bool(int, int)>([](int, int) { return true; });
      plan = snapshot_strategy_plan(m.g, m.nnz, opt, comm.size());
      return std::function<bool(int, int)>(
          [&p = *plan](int r, int s) { return s < p.num_steps() && p.owner[size_t(s)] == r; });
    };
    // A step's events are read by the rank that scores it (its owner: link prediction's
    // step s scores the events of snapshot s + 1); the TGB protocol's history reads every
    // training snapshot's on every rank.
    auto keep_events = [&](int r, int t) {
      if (opt.eval_protocol == EvalProtocol::tgb) return true;
      const int s = opt.task == TemporalTask::link ? t - 1 : t;
      return s >= 0 && s < plan->num_steps() && plan->owner[size_t(s)] == r;
    };
    if (by_snapshot && comm.size() > 1 && cfg_.source &&
        can_load_temporal_sharded(cfg_.source->path, cfg_.source->edges))
      in_ = load_temporal_steps_sharded(cfg_.source->path, cfg_.source->edges,
                                        cfg_.source->snapshots, comm, make_need, keep_events);
    else
      in_ = load_temporal_on_ranks(read, comm, make_need);
  }
  const TemporalGraph& g = in_.g;
  // Parts read from a directory that this run does not cut by (one process): still the graph
  // and rank count it was made for, or the user hears so.
  if (!cfg_.partition.from_dir.empty() && !shares)
    (void)read_temporal_partition(cfg_.partition.from_dir, g.num_vertices, g.original_ids,
                                  comm.size(), &comm);
  std::vector<float> static_features;
  const bool by_rows = shares && cfg_.feature_rows;  // each rank its own vertices' rows
  if (cfg_.features && !by_rows) static_features = cfg_.features(g, &static_dim_);
  if (static_features.empty()) static_dim_ = 0;
  if (by_snapshot && plan) {
    // Rank 0's read: rank 0 keeps the whole graph; its own steps become `held` too.
    if (comm.rank() == 0 && !in_.sharded) in_.held = owned_snapshots(g, *plan, 0);
    features_ = snapshot_features(g, in_.held, static_features, static_dim_, &feature_dim_);
    snap_data_ = make_snapshot_rank(std::move(*plan), in_.held, features_, comm.rank());
    std::vector<Csr>().swap(in_.held);  // the views hold their own copies
    features_ = snap_data_->features;
  } else if (shares) {
    // Each rank makes its own vertices' rows only, from its shares (which hold their degrees).
    rank_data_ = make_temporal_rank(g, {}, in_.part, comm, dev);
    std::vector<int32_t>().swap(in_.part);  // the rank's directory holds the owners
    add_rank_features(g, *rank_data_, by_rows ? cfg_.feature_rows : FeatureRowsFn{},
                      static_features, &static_dim_, comm, dev, &feature_dim_);
  } else {
    features_ = snapshot_features(g, static_features, static_dim_, &feature_dim_);
    if (by_snapshot) {
      snap_data_ = make_snapshot_rank(g, features_, opt, comm.size(), comm.rank());
      features_ = snap_data_->features;  // drops the other ranks' per-snapshot features
    } else if (comm.size() == 1) {
      SnapshotCursor cur(g);
      do graphs_.push_back(std::make_unique<GraphView>(cur.current()));
      while (cur.next());
    }
  }
  std::vector<int64_t> dims{feature_dim_};
  for (int i = 0; i < cfg_.layers; ++i) dims.push_back(cfg_.hidden);
  refuse_model_past_memory(dims, g.num_vertices / comm.size(), cfg_.hidden, cfg_.layers);
  model_ = cfg_.make_model ? cfg_.make_model(dims) : make_temporal_model(*kind, dims);
  if (!model_) throw Error("TemporalRunConfig::make_model returned no model");
  head_ = std::make_unique<PairClassifier>(model_->out_dim(), cfg_.hidden, 1);
  model_->reset_parameters(opt.seed);
  head_->reset_parameters(opt.seed + 1);
  if (dev != Device::cpu) {
    model_->to(dev);
    head_->to(dev);
    // Under the snapshot strategy, steps of other ranks have no features here.
    for (Var& f : features_)
      if (f.defined()) f = Var(f.value().to(dev));
  }
  // Whole snapshots on a GPU (one process, or the snapshot strategy's blocks of steps): they go
  // to the device as differences, adjacencies built there; the report sums every rank's.
  if (dev != Device::cpu && (!graphs_.empty() || snap_data_)) {
    uploads_ = upload_snapshots_by_difference(g, snap_data_ ? snap_data_->graphs : graphs_, dev);
    if (comm.size() > 1) {
      int64_t sums[4] = {uploads_->snapshots, uploads_->as_difference, uploads_->bytes,
                         uploads_->whole_bytes};
      comm.allreduce_sum(sums, 4);
      uploads_->snapshots = int(sums[0]);
      uploads_->as_difference = int(sums[1]);
      uploads_->bytes = sums[2];
      uploads_->whole_bytes = sums[3];
    }
  }
  // Checkpoints record what they were trained for; a resumed run checks the model and task.
  nlohmann::json meta = nlohmann::json::parse(opt.meta_json);
  meta["model"] = kind ? temporal_kind_name(*kind) : cfg_.model;
  meta["task"] = opt.task == TemporalTask::link ? "link" : "edge";
  meta["features"] = feature_dim_;
  opt.meta_json = meta.dump();
  const auto& views = rank_data_ ? rank_data_->graphs : snap_data_ ? snap_data_->graphs : graphs_;
  // The views hold their own copies of the snapshots: the graph's are dropped unless asked for
  // (the trainer reads the events, ids and vertex count only).
  TemporalGraph& held = in_.g;
  topology_.diff_bytes = held.diff_bytes();
  topology_.full_bytes = held.full_bytes();
  topology_.steps = int(held.diffs.size());
  topology_.whole_steps =
      int(std::count_if(held.diffs.begin(), held.diffs.end(),
                        [](const SnapshotDiff& d) { return d.whole.has_value(); }));
  if (!cfg_.keep_snapshots) {
    Csr empty;
    empty.rows = 0;  // a snapshot asked of it fails loudly (broadcast_temporal_meta's convention)
    held.base = std::move(empty);
    std::vector<SnapshotDiff>().swap(held.diffs);
  }
  trainer_ = std::make_unique<LinkPredictionTrainer>(
      *model_, *head_, g, views, rank_data_ ? rank_data_->features : features_, comm, opt,
      rank_data_ ? &rank_data_->dir : nullptr, snap_data_ ? &snap_data_->plan : nullptr);
  kernels::release_cached(Device::cpu);
}

TemporalRun::~TemporalRun() = default;

const std::vector<int32_t>& TemporalRun::part() const {
  // The rank's directory holds the owners once it is made (the loader's copy is dropped).
  return rank_data_ ? rank_data_->dir.owner : in_.part;
}

TemporalResult TemporalRun::train(const std::function<void(const EpochRecord&)>& on_epoch) {
  return trainer_->run(on_epoch);
}

EpochFormat TemporalRun::epoch_format() const {
  EpochFormat f;
  if (cfg_.train.task == TemporalTask::link)
    f.metrics = {{"auc", "val_auc", "  val auc"}, {"map", "val_map", " map"}, {"mrr", "val_mrr", " mrr"}};
  else
    f.metrics = {{"f1", "val_f1", "  val f1"},
                 {"macro_f1", "val_macro_f1", " macro-f1"},
                 {"auc", "val_auc", " auc"}};
  return f;
}

}  // namespace dgnn
