// A custom GNN layer (gated_sage.hpp) trained from C++ against the installed dgnn: its gradient
// check, full-batch training, and mini-batch training. Run it as it is, or under mpirun (the
// full-batch part then trains one part per rank). my_dgnn.cpp gives the same layer to the
// command line instead.
#include <cstdio>

#include "gated_sage.hpp"

int main() {
  try {
    // One process, or every rank of `mpirun -np P custom_layer`: world() is the job.
    dgnn::Communicator& comm = dgnn::world();
    const bool root = comm.rank() == 0;
    dgnn::SbmConfig cfg;
    cfg.vertices = 4000;
    cfg.seed = 1;
    dgnn::Dataset data = dgnn::generate_sbm(cfg).to_dataset();
    dgnn::NodeTask task = dgnn::make_node_task(data);
    dgnn::GraphView graph(data.graph.in);

    auto make_layer = [](int64_t in, int64_t out, int) -> std::unique_ptr<dgnn::Module> {
      return std::make_unique<GatedSage>(in, out);
    };

    // First, the layer's backward (derived by the engine) against finite differences.
    {
      GatedSage layer(data.feature_dim, 8);
      layer.reset_parameters(3);
      const dgnn::GradCheckResult g =
          dgnn::check_layer_gradients(layer, graph, task.features.value());
      if (root)
        std::printf("gradient check: %lld entries, %lld beyond tolerance (worst: %s)\n",
                    (long long)g.checked, (long long)g.failed, g.worst.c_str());
      if (!g.ok()) return 1;
    }

    // Full-batch training of this rank's part: rank 0 partitions with METIS and sends each rank
    // its vertices, halo plan and features; halo rows and gradients go through `comm`.
    dgnn::PartitionOptions popt;
    auto setup = dgnn::make_rank_setup(dgnn::partition_and_scatter(&data, popt, comm), comm);
    dgnn::StackModel model(make_layer, {data.feature_dim, 32, data.num_classes}, 0.5f);
    model.reset_parameters(1);

    dgnn::TrainOptions opt;
    opt.epochs = 60;
    opt.lr = 0.01f;
    opt.weight_decay = 5e-4f;
    dgnn::Trainer trainer(model, *setup->graph, setup->task, comm, opt);
    dgnn::TrainResult res = trainer.run([root](const dgnn::EpochRecord& s) {
      if (root && s.epoch % 10 == 0)
        std::printf("epoch %3d  loss %.4f  val %.4f\n", s.epoch, s.loss, s.val.get("val_acc"));
    });
    if (root)
      std::printf("custom layer on %d rank(s): test accuracy %.4f (best val %.4f at epoch %d)\n",
                  comm.size(), res.test_acc, res.best_val_acc, res.best_epoch);

    // The same layer, mini-batch: 256 seeds a step, 10 sampled neighbours per layer.
    dgnn::StackModel mb_model(make_layer, {data.feature_dim, 32, data.num_classes}, 0.5f);
    mb_model.reset_parameters(1);
    auto store = dgnn::make_local_store(data.graph.in, task.features.value());
    std::vector<int64_t> seeds(task.train.begin(), task.train.end());
    std::vector<int32_t> labels;
    for (int32_t v : task.train) labels.push_back(task.labels[size_t(v)]);
    dgnn::MiniBatchOptions mo;
    mo.batch_size = 256;
    mo.sampler.fanouts = {10, 10};
    dgnn::SelfCommunicator self;  // each process trains its own mini-batch copy
    dgnn::MiniBatchLoader loader(*store, seeds, labels, mo, self);
    opt.epochs = 10;
    dgnn::Trainer mb_trainer(mb_model, graph, task, self, opt);
    mb_trainer.set_minibatch(&loader);
    dgnn::TrainResult mb = mb_trainer.run();
    if (root) std::printf("custom layer, mini-batch: test accuracy %.4f\n", mb.test_acc);
    // Chance is 1/8 on this graph: a layer that learns nothing fails the example.
    return res.test_acc > 0.5 && mb.test_acc > 0.5 ? 0 : 1;
  } catch (const dgnn::Error& e) {
    std::fprintf(stderr, "custom_layer: error: %s\n", e.what());
    return 1;
  }
}
