// Link prediction over snapshots from a program, on one process or every rank of
// `mpirun -np P temporal_run`: the same numbers on any rank count, under either strategy.
//   temporal_run [vertex|snapshot] [EVENTS.csv TIME_COL SECONDS]
// Without a file it trains on a generated evolving planted partition (no download).
#include <cstdio>
#include <cstdlib>
#include <dgnn/dgnn.hpp>
#include <string>

int main(int argc, char** argv) {
  try {
    dgnn::Communicator& comm = dgnn::world();
    const bool root = comm.rank() == 0;
    const std::string strategy = argc > 1 ? argv[1] : "vertex";

    // The generated graph (seeded: every rank makes the same one, and takes its features).
    dgnn::EvolvingSbmConfig gen;
    gen.vertices = 600;
    gen.snapshots = 12;
    gen.classes = 4;
    gen.avg_degree = 8;
    gen.homophily = 0.9;
    gen.drift = 0.02;
    gen.feature_dim = 16;
    gen.seed = 2;
    const bool from_file = argc > 4;
    const dgnn::EvolvingSbm sbm = dgnn::generate_evolving_sbm(gen);

    // What rank 0 reads (the others receive their share): a file, or the generated graph.
    auto read = [&]() -> dgnn::TemporalGraph {
      if (!from_file) return sbm.to_temporal();
      dgnn::EdgeListOptions edges;
      edges.time_col = std::atoi(argv[3]);
      dgnn::SnapshotOptions snapshots;
      snapshots.seconds = std::atof(argv[4]);
      return dgnn::load_temporal(argv[2], edges, snapshots);
    };

    dgnn::TemporalRunConfig cfg;
    if (!from_file)  // the file's graph gets one-hot degree features per snapshot instead
      cfg.features = [&](const dgnn::TemporalGraph&, int64_t* dim) {
        *dim = gen.feature_dim;
        return sbm.features;
      };
    cfg.model = "gcrn";  // or evolvegcn-o, evolvegcn-h, tgcn, or cfg.make_model for your own
    cfg.hidden = 16;
    cfg.strategy = strategy;
    cfg.train.epochs = 8;
    cfg.train.bptt = 4;
    cfg.train.neg_eval = 20;
    dgnn::TemporalRun run(read, cfg, comm);

    const dgnn::TemporalResult r = run.train([&](const dgnn::EpochRecord& e) {
      if (root) std::printf("epoch %d loss %.6f val map %.4f\n", e.epoch, e.loss, e.val.get("map"));
    });
    // After train() the model holds the best-validation parameters: every vertex's embedding
    // after the last step (rank 0 gets them all).
    const dgnn::Tensor h = run.trainer().final_embeddings();
    if (root)
      std::printf(
          "temporal run on %d rank(s), strategy %s: %lld vertices, %d snapshots; test auc %.4f "
          "map %.4f mrr %.4f (best epoch %d); embeddings %lld x %lld\n",
          comm.size(), strategy.c_str(), (long long)run.graph().num_vertices,
          run.graph().num_snapshots(), r.test.auc, r.test.map, r.test.mrr, r.best_epoch,
          (long long)h.rows(), (long long)h.cols());
    return 0;
  } catch (const std::exception& e) {
    dgnn::fail_job(e.what());  // one line, and MPI_Abort so that no rank waits for this one
  }
}
