// The deep models (GCNII, residual GCN) on the GPU against the CPU: the same dropout masks and
// arithmetic up to summation order, so the losses of every epoch stay together.
#include <catch2/catch.hpp>
#include <memory>
#include <vector>

#include "dgnn/comm/communicator.hpp"
#include "dgnn/datasets/sbm.hpp"
#include "dgnn/gnn/models/deep.hpp"
#include "dgnn/gnn/train/trainer.hpp"
#include "gpu_util.hpp"

using namespace dgnn;

namespace {

std::vector<double> deep_losses(const Dataset& data, const DeepModelOptions& o, Device dev,
                                double* test_acc) {
  NodeTask task = make_node_task(data);
  GraphView graph(data.graph.in);
  std::unique_ptr<NodeModel> model = make_deep_model(data.feature_dim, data.num_classes, o);
  model->reset_parameters(1);
  model->to(dev);
  task.features = Var(task.features.value().to(dev));
  TrainOptions opt;
  opt.epochs = 20;
  opt.weight_decay = 5e-4f;
  opt.select = "loss";
  SelfCommunicator comm;
  Trainer trainer(*model, graph, task, comm, opt);
  std::vector<double> losses;
  *test_acc = trainer.run([&](const EpochRecord& s) { losses.push_back(s.loss); }).test_acc;
  return losses;
}

}  // namespace

TEST_CASE("GCNII and the residual deep GCN train on the GPU as on the CPU", "[gpu]") {
  SbmConfig cfg;
  cfg.vertices = 3000;
  cfg.classes = 4;
  cfg.seed = 5;
  const Dataset data = generate_sbm(cfg).to_dataset();
  for (DeepKind kind : {DeepKind::gcnii, DeepKind::resgcn}) {
    INFO(deep_kind_name(kind));
    DeepModelOptions o;
    o.kind = kind;
    o.layers = 8;
    o.hidden = 32;
    o.dropout = 0.5f;
    o.conv_weight_decay = 0.01f;
    double acc_cpu = 0, acc_gpu = 0;
    const auto cpu = deep_losses(data, o, Device::cpu, &acc_cpu);
    const auto gpu = deep_losses(data, o, Device::cuda, &acc_gpu);
    REQUIRE(cpu.size() == gpu.size());
    for (size_t e = 0; e < cpu.size(); ++e) {
      INFO("epoch " << e + 1);
      CHECK(gpu[e] == Approx(cpu[e]).epsilon(1e-4));
    }
    CHECK(acc_gpu == Approx(acc_cpu).margin(0.01));
  }
}
