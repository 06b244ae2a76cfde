// GPU benchmarks (CUDA builds): on a generated graph (default 1M vertices, 20M stored edges,
// 128 features),
//   - device-to-device copy bandwidth: the baseline, measured in this run;
//   - SpMM with cuSPARSE and with our row-group kernel: achieved bytes/s (the bytes an SpMM
//     must move: offsets, indices, values, one F-wide row of X per entry, Y) over the copy's;
//   - a GCN training step (forward, backward, Adam) on the GPU: median ms.
// Writes the graph for bench/gpu/pyg_gcn.py (same graph, model and sizes in PyTorch Geometric)
// when an export folder is given, and prints one JSON line of results last.
//   bench_gpu [vertices] [avg_degree] [features] [hidden] [epochs] [export_dir]
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "dgnn/comm/communicator.hpp"
#include "dgnn/common/timer.hpp"
#include "dgnn/datasets/sbm.hpp"
#include "dgnn/gnn/models/layers.hpp"
#include "dgnn/gnn/train/trainer.hpp"
#include "dgnn/kernels/buffer.hpp"
#include "dgnn/kernels/cuda/cuda_kernels.hpp"
#include "dgnn/kernels/kernels.hpp"

using namespace dgnn;

namespace {

// Median of `reps` timings of f (each synchronised), after one warm-up call.
double median_ms(int reps, const std::function<void()>& f) {
  f();
  kernels::synchronize(Device::cuda);
  std::vector<double> t;
  for (int i = 0; i < reps; ++i) {
    Timer timer;
    f();
    kernels::synchronize(Device::cuda);
    t.push_back(timer.ms());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

template <typename T>
void write_raw(const std::string& path, const std::vector<T>& v) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(v.data()), std::streamsize(v.size() * sizeof(T)));
  if (!out) throw IoError("cannot write " + path);
}

}  // namespace

int main(int argc, char** argv) try {
  SbmConfig cfg;
  cfg.vertices = argc > 1 ? std::atoll(argv[1]) : 1000000;
  cfg.avg_degree = argc > 2 ? std::atof(argv[2]) : 20.0;
  cfg.feature_dim = argc > 3 ? std::atoll(argv[3]) : 128;
  cfg.classes = 16;
  cfg.seed = 1;
  const int64_t hidden = argc > 4 ? std::atoll(argv[4]) : 128;
  const int epochs = argc > 5 ? std::atoi(argv[5]) : 20;
  const std::string export_dir = argc > 6 ? argv[6] : "";

  std::string why;
  if (!kernels::cuda_available(&why)) {
    std::printf("bench_gpu: no usable GPU (%s)\n", why.c_str());
    return 77;
  }
  kernels::bind_cuda_device(0);
  std::printf("device: %s\n", kernels::cuda_device_description().c_str());

  Timer gen;
  Dataset data = generate_sbm(cfg).to_dataset();
  const int64_t n = data.num_vertices(), f = data.feature_dim;
  std::printf("graph: %lld vertices, %lld stored edges, %lld features (generated in %.0f ms)\n",
              (long long)n, (long long)data.graph.num_edges(), (long long)f, gen.ms());

  if (!export_dir.empty()) {
    std::filesystem::create_directories(export_dir);
    const Csr& in = data.graph.in;
    std::vector<int32_t> src, dst;
    src.reserve(size_t(in.nnz()));
    dst.reserve(size_t(in.nnz()));
    for (int64_t v = 0; v < in.rows; ++v)
      for (int64_t e = in.offsets[size_t(v)]; e < in.offsets[size_t(v) + 1]; ++e) {
        src.push_back(in.indices[size_t(e)]);  // message from src to its in-neighbour v
        dst.push_back(int32_t(v));
      }
    write_raw(export_dir + "/src.i32", src);
    write_raw(export_dir + "/dst.i32", dst);
    std::ofstream meta(export_dir + "/meta.json");
    meta << "{\"vertices\": " << n << ", \"edges\": " << src.size() << ", \"features\": " << f
         << ", \"hidden\": " << hidden << ", \"classes\": " << data.num_classes
         << ", \"epochs\": " << epochs << "}\n";
  }

  // ---- the baseline: device-to-device copy -----------------------------------------------
  const size_t copy_bytes = size_t(1) << 30;
  double copy_gbs = 0;
  {
    kernels::Buffer a(Device::cuda, copy_bytes), b(Device::cuda, copy_bytes);
    kernels::fill(Device::cuda, a.as<float>(), int64_t(copy_bytes / 4), 1.f);
    const double ms = median_ms(10, [&] {
      kernels::copy(Device::cuda, b.as<void>(), Device::cuda, a.as<void>(), copy_bytes);
    });
    copy_gbs = 2.0 * double(copy_bytes) / (ms * 1e-3) / 1e9;  // read + write
    std::printf("d2d copy: %.3f ms for 1 GiB, %.0f GB/s (read + write)\n", ms, copy_gbs);
  }

  // ---- SpMM --------------------------------------------------------------------------------
  GraphView graph(data.graph.in);
  const kernels::DeviceCsr& adj = graph.adjacency(Norm::gcn).forward_on(Device::cuda);
  const CsrView av = adj.view();
  const int64_t nnz = av.device_nnz;
  const double spmm_bytes = double(n + 1) * 8 + double(nnz) * 8 + double(nnz) * double(f) * 4 +
                            double(n) * double(f) * 4;
  const Tensor x = Tensor::from_host(data.features.data(), n, f, Device::cuda);
  Tensor y = Tensor::uninitialized(n, f, Device::cuda);
  double spmm_ms[2] = {0, 0};
  const char* names[2] = {"cusparse", "rowwarp"};
  const kernels::cuda::SpmmAlgo algos[2] = {kernels::cuda::SpmmAlgo::cusparse,
                                            kernels::cuda::SpmmAlgo::rowwarp};
  for (int i = 0; i < 2; ++i) {
    kernels::cuda::set_spmm_algo(algos[i]);
    spmm_ms[i] = median_ms(10, [&] { kernels::spmm(Device::cuda, av, x.view(), y.view()); });
    const double gbs = spmm_bytes / (spmm_ms[i] * 1e-3) / 1e9;
    std::printf("spmm %-8s: %.3f ms, %.0f GB/s = %.2fx of the copy's bandwidth\n", names[i],
                spmm_ms[i], gbs, gbs / copy_gbs);
  }
  kernels::cuda::set_spmm_algo(kernels::cuda::SpmmAlgo::automatic);

  // ---- GCN training step ------------------------------------------------------------------
  NodeTask task = make_node_task(data);
  StackModel model(builtin_layer(ModelKind::gcn), {f, hidden, data.num_classes}, 0.5f);
  model.reset_parameters(1);
  model.to(Device::cuda);
  task.features = Var(task.features.value().to(Device::cuda));
  TrainOptions opt;
  opt.epochs = epochs;
  SelfCommunicator comm;
  Trainer trainer(model, graph, task, comm, opt);
  std::vector<double> steps;
  trainer.run([&](const EpochRecord& s) { steps.push_back(s.time_ms); });
  // The first epoch pays for the adjacency's transfer and the SpMM choice: leave it out.
  std::vector<double> warm(steps.begin() + (steps.size() > 1 ? 1 : 0), steps.end());
  std::sort(warm.begin(), warm.end());
  const double epoch_ms = warm[warm.size() / 2];
  std::printf("gcn epoch (train step: forward, backward, Adam): median %.2f ms over %zu epochs "
              "(first %.1f ms); spmm auto chose %s\n",
              epoch_ms, warm.size(), steps.front(), kernels::cuda::last_spmm_algo());

  std::printf(
      "{\"bench\": \"gpu\", \"vertices\": %lld, \"edges\": %lld, \"features\": %lld, "
      "\"copy_gbs\": %.1f, \"spmm_cusparse_ms\": %.4f, \"spmm_rowwarp_ms\": %.4f, "
      "\"spmm_cusparse_of_copy\": %.3f, \"spmm_rowwarp_of_copy\": %.3f, \"gcn_epoch_ms\": %.3f}\n",
      (long long)n, (long long)nnz, (long long)f, copy_gbs, spmm_ms[0], spmm_ms[1],
      spmm_bytes / (spmm_ms[0] * 1e-3) / 1e9 / copy_gbs,
      spmm_bytes / (spmm_ms[1] * 1e-3) / 1e9 / copy_gbs, epoch_ms);
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "bench_gpu: error: %s\n", e.what());
  return 1;
}
