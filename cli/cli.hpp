#pragma once
// The `dgnn` command line as a function. A program of your own registers its layers, then hands
// its arguments over, and `--model NAME` trains them with everything `dgnn` has: train (full
// graph and mini-batch, under mpirun, checkpoints, --log-json), scale (which re-runs this
// program) and the other subcommands.
//
//   int main(int argc, char** argv) {
//     dgnn::register_layer("gated-sage", {.factory = make_gated_sage, .norms = {Norm::mean}});
//     return dgnn::cli_main(argc, argv);
//   }
//
// Link dgnn::cli (find_package(dgnn)). Errors are printed as one line and give a non-zero exit
// status, as `dgnn` does; under MPI a failing rank brings the job down.
#include "dgnn/gnn/layers.hpp"  // register_layer, LayerSpec

namespace dgnn {

int cli_main(int argc, char** argv);

}  // namespace dgnn
