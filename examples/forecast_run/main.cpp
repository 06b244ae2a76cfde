// Forecasting vertex signals from a program, on one process or every rank of
// `mpirun -np P forecast_run`: the same numbers on any rank count, under either strategy.
//   forecast_run [vertex|snapshot] [SIGNAL.json[.gz]]
// Without a file it forecasts a generated diffusion on a planted partition (no download); with
// one, a PyTorch Geometric Temporal JSON file (datasets/chickenpox/chickenpox.json.gz).
#include <cstdio>
#include <dgnn/dgnn.hpp>
#include <string>

int main(int argc, char** argv) {
  try {
    dgnn::Communicator& comm = dgnn::world();
    const bool root = comm.rank() == 0;
    const std::string strategy = argc > 1 ? argv[1] : "vertex";
    const std::string file = argc > 2 ? argv[2] : "";

    // What rank 0 reads (the others receive their share): the file, or a generated signal.
    auto read = [&]() -> dgnn::SignalSeries {
      if (!file.empty()) return dgnn::read_signal_json(file);
      dgnn::DiffusionConfig gen;
      gen.vertices = 400;
      gen.steps = 120;
      gen.classes = 4;
      gen.seed = 5;
      return dgnn::generate_diffusion(gen).to_series();
    };

    dgnn::ForecastRunConfig cfg;
    cfg.model = "tgcn";  // or gcrn, evolvegcn-o, evolvegcn-h, a static layer, or cfg.make_model
    cfg.hidden = 16;
    cfg.strategy = strategy;
    cfg.train.lags = 4;     // a vertex sees its last 4 values
    cfg.train.horizon = 1;  // and predicts the next one
    cfg.train.bptt = 20;    // an optimiser step per 20 samples
    cfg.train.epochs = 10;
    dgnn::ForecastRun run(read, cfg, comm);

    const dgnn::ForecastResult r = run.train([&](const dgnn::EpochRecord& e) {
      if (root)
        std::printf("epoch %d loss %.6f val mse %.4f\n", e.epoch, e.loss, e.val.get("val_mse"));
    });
    // After train() the model holds the best-validation parameters: this rank's test forecasts
    // (samples x its rows; under the snapshot strategy every vertex's, on rank 0).
    const std::vector<float> f = run.trainer().test_forecasts();
    if (root)
      std::printf(
          "forecast run on %d rank(s), strategy %s: %lld vertices, %lld steps, %lld test "
          "samples; test mse %.4f mae %.4f (predict 0: mse %.4f; last value: mse %.4f) "
          "(best epoch %d); %zu forecasts here\n",
          comm.size(), strategy.c_str(), (long long)run.graph().num_vertices,
          (long long)run.steps(), (long long)run.split().test, r.test.mse, r.test.mae,
          r.test_zero.mse, r.test_last.mse, r.best_epoch, f.size());
    return 0;
  } catch (const std::exception& e) {
    dgnn::fail_job(e.what());  // one line, and MPI_Abort so that no rank waits for this one
  }
}
