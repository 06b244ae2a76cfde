// GCN training epoch on a generated graph (default 100k vertices, ~2M stored edges, 128
// features), against the floor of the same epoch's kernels (the SpMMs and GEMMs it must do,
// timed alone in this run), with peak memory.
//   bench_gcn [vertices] [avg_degree] [features] [hidden] [epochs]
#include <omp.h>
#include <sys/resource.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <vector>

#include "dgnn/comm/communicator.hpp"
#include "dgnn/common/timer.hpp"
#include "dgnn/datasets/sbm.hpp"
#include "dgnn/gnn/models/layers.hpp"
#include "dgnn/gnn/train/trainer.hpp"
#include "dgnn/kernels/kernels.hpp"

using namespace dgnn;

static double peak_rss_mb() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return double(u.ru_maxrss) / 1024.0;
}

static double best_of(int reps, const std::function<void()>& f) {
  double best = 1e30;
  for (int i = 0; i < reps; ++i) {
    Timer t;
    f();
    best = std::min(best, t.ms());
  }
  return best;
}

int main(int argc, char** argv) {
  SbmConfig cfg;
  cfg.vertices = argc > 1 ? std::atoll(argv[1]) : 100000;
  cfg.avg_degree = argc > 2 ? std::atof(argv[2]) : 20.0;
  cfg.feature_dim = argc > 3 ? std::atoll(argv[3]) : 128;
  cfg.classes = 16;
  const int64_t hidden = argc > 4 ? std::atoll(argv[4]) : 128;
  const int epochs = argc > 5 ? std::atoi(argv[5]) : 10;
  cfg.seed = 1;

  Timer gen;
  Dataset data = generate_sbm(cfg).to_dataset();
  std::printf("graph: %lld vertices, %lld stored edges, %lld features, hidden %lld, %d threads "
              "(generated in %.0f ms)\n",
              (long long)data.num_vertices(), (long long)data.graph.num_edges(),
              (long long)data.feature_dim, (long long)hidden, omp_get_max_threads(), gen.ms());
  const double rss_data = peak_rss_mb();

  NodeTask task = make_node_task(data);
  GraphView graph(data.graph.in);
  StackModel model(builtin_layer(ModelKind::gcn), {data.feature_dim, hidden, data.num_classes},
                   0.5f);
  model.reset_parameters(1);
  TrainOptions opt;
  opt.epochs = epochs;
  SelfCommunicator comm;
  Trainer trainer(model, graph, task, comm, opt);
  trainer.train_step(0);  // warm-up: builds the normalised adjacency once
  std::vector<double> times;
  for (int e = 1; e <= epochs; ++e) {
    Timer t;
    trainer.train_step(uint64_t(e));
    times.push_back(t.ms());
  }
  std::sort(times.begin(), times.end());
  const double epoch_ms = times[times.size() / 2];

  // The floor: what one epoch must compute. Layer 1 (F > hidden): X W1 (N x F x H), aggregate
  // (H wide); layer 2: H1 W2, aggregate (C wide). Backward: the transposed aggregates and the
  // weight / input gradients (layer 1 needs no input gradient).
  const auto& adj = graph.adjacency(Norm::gcn);
  const int64_t n = data.num_vertices(), f = data.feature_dim, c = data.num_classes;
  Tensor x = task.features.value().clone(), w1(f, hidden), h(n, hidden), h2(n, hidden), w2(hidden, c),
         o(n, c), o2(n, c), gw1(f, hidden), gw2(hidden, c);
  const Device cpu = Device::cpu;
  auto floor_epoch = [&] {
    kernels::gemm(cpu, false, false, 1.f, x.view(), w1.view(), 0.f, h.view());
    kernels::spmm(cpu, adj.forward.view(), h.view(), h2.view());
    kernels::gemm(cpu, false, false, 1.f, h2.view(), w2.view(), 0.f, o.view());
    kernels::spmm(cpu, adj.forward.view(), o.view(), o2.view());
    kernels::spmm(cpu, adj.backward().view(), o2.view(), o.view());
    kernels::gemm(cpu, true, false, 1.f, h2.view(), o.view(), 0.f, gw2.view());
    kernels::gemm(cpu, false, true, 1.f, o.view(), w2.view(), 0.f, h2.view());
    kernels::spmm(cpu, adj.backward().view(), h2.view(), h.view());
    kernels::gemm(cpu, true, false, 1.f, x.view(), h.view(), 0.f, gw1.view());
  };
  const double floor_ms = best_of(5, floor_epoch);

  std::printf("GCN epoch (median of %d): %.1f ms\n", epochs, epoch_ms);
  std::printf("kernel floor of one epoch (best of 5): %.1f ms\n", floor_ms);
  std::printf("ratio epoch / floor: %.2fx  (1.0 = no framework overhead)\n", epoch_ms / floor_ms);
  std::printf("peak RSS: %.0f MB (dataset alone: %.0f MB; features %.0f MB)\n", peak_rss_mb(),
              rss_data, double(n * f * 4) / 1e6);
  return 0;
}
