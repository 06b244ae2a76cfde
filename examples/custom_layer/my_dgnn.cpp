// The dgnn command line with two more models: `my_dgnn train --model gated-sage ...` trains the
// GatedSAGE layer of gated_sage.hpp, `--model sage-pool` the GraphSAGE pooling layer of
// sage_pool.hpp, with every option of `dgnn train` (mini-batches, mpirun, checkpoints,
// --log-json), and `my_dgnn scale --model gated-sage ...` measures them.
#include <dgnn/cli/cli.hpp>

#include <cstdio>

#include "gated_sage.hpp"
#include "sage_pool.hpp"

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 1 << 16);  // epoch lines at once through pipes / mpirun
  dgnn::LayerSpec gated;
  gated.factory = [](int64_t in, int64_t out, int /*layer*/) -> std::unique_ptr<dgnn::Module> {
    return std::make_unique<GatedSage>(in, out);
  };
  gated.norms = {dgnn::Norm::mean};  // its aggregate(): mini-batches build this with each batch
  dgnn::register_layer("gated-sage", std::move(gated));

  dgnn::LayerSpec pool;
  pool.factory = [](int64_t in, int64_t out, int) -> std::unique_ptr<dgnn::Module> {
    return std::make_unique<SagePool>(in, out);
  };
  pool.norms = {dgnn::Norm::mean};  // aggregate_max reads the mean adjacency's structure
  dgnn::register_layer("sage-pool", std::move(pool));
  return dgnn::cli_main(argc, argv);
}
