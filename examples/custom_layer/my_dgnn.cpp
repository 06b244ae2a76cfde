// The dgnn command line with one more model: `my_dgnn train --model gated-sage ...` trains the
// GatedSAGE layer of gated_sage.hpp with every option of `dgnn train` (mini-batches, mpirun,
// checkpoints, --log-json), and `my_dgnn scale --model gated-sage ...` measures it.
#include <dgnn/cli/cli.hpp>

#include "gated_sage.hpp"

int main(int argc, char** argv) {
  dgnn::LayerSpec spec;
  spec.factory = [](int64_t in, int64_t out, int /*layer*/) -> std::unique_ptr<dgnn::Module> {
    return std::make_unique<GatedSage>(in, out);
  };
  spec.norms = {dgnn::Norm::mean};  // its aggregate(): mini-batches build this with each batch
  dgnn::register_layer("gated-sage", std::move(spec));
  return dgnn::cli_main(argc, argv);
}
