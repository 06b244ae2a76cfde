// A run of node classification over snapshots, assembled (gnn/temporal/node_sequence_run.hpp).
#include "dgnn/gnn/temporal/node_sequence_run.hpp"

#include <nlohmann/json.hpp>

#include "dgnn/comm/collectives.hpp"
#include "dgnn/common/error.hpp"
#include "dgnn/gnn/temporal/temporal_trainer.hpp"
#include "dgnn/graph/dataset.hpp"

namespace dgnn {

void NodeSequenceRun::check(const NodeSequenceRunConfig& cfg, int ranks) {
  if (cfg.hidden < 1) throw OptionError("--hidden must be >= 1");
  if (cfg.layers < 1) throw OptionError("--layers must be >= 1");
  const TemporalKind kind = parse_temporal_kind(cfg.model);
  if (ranks > 1 && kind == TemporalKind::evolvegcn_h)
    throw OptionError("--model evolvegcn-h runs on one rank for now: its top-k summary over all "
                      "vertices is not distributed yet (evolvegcn-o, gcrn and tgcn are)");
  if (cfg.strategy != "vertex")
    throw OptionError("--task node --strategy " + cfg.strategy +
                      ": node classification over snapshots runs with the vertex strategy");
  if (!(cfg.train_frac > 0 && cfg.val_frac >= 0 && cfg.train_frac + cfg.val_frac < 1))
    throw OptionError("--train-frac and --val-frac must leave vertices for training and testing");
}

NodeSequenceRun::NodeSequenceRun(const std::function<TemporalGraph()>& read,
                                 NodeSequenceRunConfig cfg, Communicator& comm)
    : cfg_(std::move(cfg)) {
  check(cfg_, comm.size());
  const bool several = comm.size() > 1;
  const bool on_root = several && cfg_.root_labels;  // labels on rank 0 alone
  if (!cfg_.labels && !on_root)
    throw OptionError("node classification needs vertex labels (--labels)");
  const Device dev = cfg_.device;
  // Several ranks: a file is read in shards (no rank holds the whole graph); otherwise rank 0
  // reads and partitions the graph and sends every rank its share of every snapshot, as base +
  // differences. Either way each rank keeps its share.
  if (several && cfg_.source && can_load_temporal_sharded(cfg_.source->path, cfg_.source->edges))
    in_ = load_temporal_sharded(cfg_.source->path, cfg_.source->edges, cfg_.source->snapshots,
                                comm, cfg_.partition);
  else
    in_ = load_temporal_vertex_shares(read, comm, cfg_.partition);
  const TemporalGraph& g = in_.g;
  int32_t classes = 0;
  std::vector<int32_t> labels =
      on_root ? cfg_.root_labels(g, &classes, comm) : cfg_.labels(g, &classes);
  if (!on_root)
    DGNN_CHECK(int64_t(labels.size()) == g.num_vertices, ShapeError,
               "NodeSequenceRunConfig::labels: one label (or -1) per vertex");
  if (on_root) {
    int64_t size = int64_t(labels.size());
    comm.broadcast(&size, 8, 0);
    DGNN_CHECK(size == g.num_vertices, ShapeError,
               "NodeSequenceRunConfig::root_labels: one label (or -1) per vertex on rank 0");
  }
  int64_t static_dim = 0;
  std::vector<float> statics;
  const bool by_rows = several && cfg_.feature_rows;  // each rank its own vertices' rows
  if (cfg_.features && !by_rows) statics = cfg_.features(g, &static_dim);
  if (statics.empty()) static_dim = 0;
  if (comm.size() == 1) features_ = snapshot_features(g, statics, static_dim, &feature_dim_);

  // A seeded split of the labelled vertices by global id, the same on every rank (or drawn on
  // rank 0 alone, which holds the labels).
  const uint64_t seed = cfg_.train.seed;
  std::vector<int8_t> split;  // per vertex: 0 train, 1 val, 2 test, -1 none
  int64_t counts[3] = {0, 0, 0};
  if (!on_root || comm.rank() == 0) {
    const LabelSplit sets = split_labelled(labels, cfg_.train_frac, cfg_.val_frac, seed);
    split.assign(size_t(g.num_vertices), -1);
    for (int8_t k = 0; k < 3; ++k) {
      for (int32_t v : sets[size_t(k)]) split[size_t(v)] = k;
      counts[k] = int64_t(sets[size_t(k)].size());
    }
  }
  if (on_root) comm.broadcast(counts, 24, 0);
  require_split(counts[0], counts[1], counts[2], cfg_.train_frac, cfg_.val_frac);

  std::vector<int64_t> owned;
  if (comm.size() == 1) {
    SnapshotCursor cur(g);
    do graphs_.push_back(std::make_unique<GraphView>(cur.current()));
    while (cur.next());
    for (int64_t v = 0; v < g.num_vertices; ++v) owned.push_back(v);
  } else {
    // Each rank makes its own vertices' rows only, from its shares (which hold their degrees).
    rank_data_ = make_temporal_rank(g, {}, in_.part, comm, dev);
    add_rank_features(g, *rank_data_, by_rows ? cfg_.feature_rows : FeatureRowsFn{}, statics,
                      &static_dim, comm, dev, &feature_dim_);
    owned = rank_data_->owned;
  }
  if (on_root) {
    // Rank 0 sends each rank (label, set) of its vertices, in ascending id: `owned`'s order.
    std::vector<std::vector<int32_t>> out(size_t(comm.size()), std::vector<int32_t>{});
    if (comm.rank() == 0)
      for (int64_t v = 0; v < g.num_vertices; ++v) {
        std::vector<int32_t>& o = out[size_t(in_.part[size_t(v)])];
        o.push_back(labels[size_t(v)]);
        o.push_back(split[size_t(v)]);
      }
    std::vector<int32_t>().swap(labels);
    std::vector<int8_t>().swap(split);
    const std::vector<int32_t> mine = route(comm, out);
    DGNN_CHECK(mine.size() == 2 * owned.size(), Error, "labels: a rank got another rank's vertices");
    for (size_t i = 0; i < owned.size(); ++i) {
      labels.push_back(mine[2 * i]);
      split.push_back(int8_t(mine[2 * i + 1]));
    }
  }
  task_.num_classes = classes;
  for (size_t i = 0; i < owned.size(); ++i) {
    const size_t at = on_root ? i : size_t(owned[i]);  // labels per owned row, or per vertex
    task_.labels.push_back(labels[at]);
    if (split[at] == 0) task_.train.push_back(int32_t(i));
    if (split[at] == 1) task_.val.push_back(int32_t(i));
    if (split[at] == 2) task_.test.push_back(int32_t(i));
    row_ids_.push_back(g.original_ids[size_t(owned[i])]);
  }
  task_.global_train = counts[0];
  task_.global_val = counts[1];
  task_.global_test = counts[2];

  std::vector<int64_t> dims{feature_dim_};
  for (int i = 0; i < cfg_.layers; ++i) dims.push_back(cfg_.hidden);
  model_ = make_temporal_model(parse_temporal_kind(cfg_.model), dims);
  model_->reset_parameters(seed);
  std::vector<Var>& x = rank_data_ ? rank_data_->features : features_;
  if (dev != Device::cpu) {
    model_->to(dev);
    if (!rank_data_)  // vertex_partition_rank put its features on the device already
      for (Var& f : x) f = Var(f.value().to(dev));
  }
  // Checkpoints record the snapshot count beside the caller's settings.
  nlohmann::json meta = nlohmann::json::parse(cfg_.train.meta_json);
  meta["snapshots"] = g.num_snapshots();
  cfg_.train.meta_json = meta.dump();
  trainer_ = std::make_unique<NodeSequenceTrainer>(
      *model_, rank_data_ ? rank_data_->graphs : graphs_, x, task_, comm, cfg_.train);
}

NodeSequenceRun::~NodeSequenceRun() = default;

NodeSequenceResult NodeSequenceRun::train(
    const std::function<void(const EpochRecord&)>& on_epoch) {
  return trainer_->run(on_epoch);
}

EpochFormat NodeSequenceRun::epoch_format() const {
  EpochFormat f;
  f.metrics = {{"train_acc", "train_acc", "  train"},
               {"val_acc", "val_acc", "  val"},
               {"val_macro_f1", "val_macro_f1", " macro-f1"}};
  return f;
}

}  // namespace dgnn
