// Neighbour sampling and mini-batch GraphSAGE on a real graph with generated features. MODE:
//   sample    sampled edges per second: blocks alone, and whole batches with their feature rows
//   prefetch  training epoch (SAGE, 2 layers) with the sampler one step ahead on its own thread
//   inline    the same with each batch sampled when the step needs it
// One mode per process (a finished prefetch thread's OpenMP pool must not disturb the next
// measurement). Prints one JSON line at the end for bench_sampling.sh, which runs PyG's
// NeighborLoader + SAGEConv beside it.
//   bench_sampling GRAPH MODE [batch=1024] [fanouts=10,25] [features=64] [hidden=64] [epochs=2]
// Training vertices: ids with id % 10 < 6 (the PyG script takes the same ones); labels random.
#include <omp.h>

#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "dgnn/comm/communicator.hpp"
#include "dgnn/common/hash_rng.hpp"
#include "dgnn/common/timer.hpp"
#include "dgnn/gnn/models/layers.hpp"
#include "dgnn/gnn/train/minibatch.hpp"
#include "dgnn/gnn/train/trainer.hpp"
#include "dgnn/graph/graph.hpp"

using namespace dgnn;

int main(int argc, char** argv) {
  const std::string mode = argc > 2 ? argv[2] : "";
  if (mode != "sample" && mode != "prefetch" && mode != "inline") {
    std::fprintf(stderr,
                 "usage: bench_sampling GRAPH sample|prefetch|inline [batch] [fanouts] [features] "
                 "[hidden] [epochs]\n");
    return 2;
  }
  const std::string path = argv[1];
  const int64_t batch = argc > 3 ? std::atoll(argv[3]) : 1024;
  const std::vector<int> fanouts = parse_fanouts(argc > 4 ? argv[4] : "10,25");
  const int64_t feat = argc > 5 ? std::atoll(argv[5]) : 64;
  const int64_t hidden = argc > 6 ? std::atoll(argv[6]) : 64;
  const int epochs = argc > 7 ? std::atoi(argv[7]) : 2;
  const int classes = 8;

  Timer load;
  Graph g = load_graph(path, EdgeListOptions{});
  const int64_t n = g.num_vertices();
  std::printf("graph: %lld vertices, %lld stored edges (loaded in %.0f ms), %d threads\n",
              (long long)n, (long long)g.num_edges(), load.ms(), omp_get_max_threads());

  NodeTask task;
  Tensor x(n, feat);
  Rng rng(1);
  for (int64_t i = 0; i < x.numel(); ++i) x.data()[i] = rng.uniform() * 2 - 1;
  task.features = Var(std::move(x));
  task.labels.resize(size_t(n));
  for (int64_t v = 0; v < n; ++v) {
    task.labels[size_t(v)] = int32_t(rng.below(classes));
    const int64_t orig = g.original_ids[size_t(v)] % 10;
    (orig < 6 ? task.train : orig < 8 ? task.val : task.test).push_back(int32_t(v));
  }
  task.global_train = int64_t(task.train.size());
  task.global_val = int64_t(task.val.size());
  task.global_test = int64_t(task.test.size());
  task.num_classes = classes;
  std::vector<int64_t> train_ids(task.train.begin(), task.train.end());
  std::vector<int32_t> train_labels;
  for (int32_t v : task.train) train_labels.push_back(task.labels[size_t(v)]);

  SelfCommunicator comm;
  auto store = make_local_store(g.in, task.features.value());
  MiniBatchOptions mo;
  mo.batch_size = batch;
  mo.sampler.fanouts = fanouts;
  mo.sampler.seed = 1;

  // Sampling alone: every batch of an epoch (after one warm-up epoch).
  nlohmann::json out = {{"mode", mode}, {"threads", omp_get_max_threads()}};
  if (mode == "sample") {
    NeighborSampler sampler(*store, mo.sampler);
    auto batches = epoch_batches(train_ids, batch, 1, 0);
    for (auto& b : batches) sampler.sample(b, 0);
    double best = 1e30;
    int64_t edges = 0;
    for (int rep = 1; rep <= 3; ++rep) {
      batches = epoch_batches(train_ids, batch, 1, uint64_t(rep));
      edges = 0;
      Timer t;
      for (auto& b : batches) edges += sampler.sample(b, uint64_t(rep)).edges();
      best = std::min(best, t.ms());
    }
    out["sample_epoch_ms"] = best;
    out["sampled_edges_per_epoch"] = edges;
    out["sampled_edges_per_s"] = double(edges) / best * 1e3;
    std::printf("sampling only: %zu batches, %lld block entries in %.1f ms: %.2f M edges/s\n",
                batches.size(), (long long)edges, best, double(edges) / best / 1e3);
  }
  // Whole batches: blocks, input feature rows, views (what a training step takes).
  if (mode == "sample") {
    MiniBatchLoader loader(*store, train_ids, train_labels, mo, comm);
    for (int64_t s = 0; s < loader.steps_per_epoch(); ++s) loader.make(0, s);
    Timer t;
    int64_t edges = 0, inputs = 0;
    for (int64_t s = 0; s < loader.steps_per_epoch(); ++s) {
      MiniBatch b = loader.make(1, s);
      edges += b.edges;
      inputs += b.inputs.rows();
    }
    const double ms = t.ms();
    out["batch_epoch_ms"] = ms;
    out["batch_edges_per_s"] = double(edges) / ms * 1e3;
    out["input_rows_per_epoch"] = inputs;
    std::printf("batches with features: %.1f ms per epoch, %.2f M edges/s, %lld input rows\n", ms,
                double(edges) / ms / 1e3, (long long)inputs);
  }
  // Training: SAGE, 2 layers, mean aggregation; epoch time without evaluation.
  if (mode != "sample") {
    GraphView whole(g.in);
    StackModel model(builtin_layer(ModelKind::sage), {feat, hidden, classes}, 0.f);
    model.reset_parameters(1);
    TrainOptions opt;
    opt.epochs = epochs + 1;  // the first epoch warms the allocator
    opt.seed = 1;
    MiniBatchOptions m = mo;
    m.prefetch = mode == "prefetch";
    m.norms = {Norm::mean};
    MiniBatchLoader loader(*store, train_ids, train_labels, m, comm);
    Trainer trainer(model, whole, task, comm, opt);
    trainer.set_minibatch(&loader);
    std::vector<double> times, sample, waited;
    trainer.run([&](const EpochRecord& s) {
      if (s.epoch == 1) return;
      times.push_back(s.time_ms);
      sample.push_back(s.figure("sample_ms"));
      waited.push_back(s.figure("sample_wait_ms"));
    });
    out["epoch_ms"] = median(times);
    out["sample_ms"] = median(sample);
    out["sample_wait_ms"] = median(waited);
    out["steps"] = loader.steps_per_epoch();
    std::printf("train epoch (%s): %.1f ms, sampling %.1f ms of which training waited %.1f ms "
                "(%.0f%% hidden), %lld steps\n",
                mode.c_str(), median(times), median(sample), median(waited),
                median(sample) > 0 ? 100.0 * (1 - median(waited) / median(sample)) : 0.0,
                (long long)loader.steps_per_epoch());
  }
  std::printf("%s\n", out.dump().c_str());
  return 0;
}
