#pragma once
// The `dgnn` command line as a function. A program of your own registers its layers, then hands
// its arguments over, and `--model NAME` trains them with everything `dgnn` has: train (full
// graph and mini-batch, under mpirun, checkpoints, --log-json), scale (which re-runs this
// program) and the other subcommands.
//
//   int main(int argc, char** argv) {
//     dgnn::register_layer("gated-sage",
//                          {.factory = make_gated_sage, .norms = {dgnn::Norm::mean}});
//     return dgnn::cli_main(argc, argv);
//   }
//
// Link dgnn::cli (find_package(dgnn)). Errors are printed as one line and give a non-zero exit
// status, as `dgnn` does; under MPI a failing rank brings the job down. (The dgnn executable
// line-buffers stdout first, so that epoch lines show at once through a pipe or mpirun; a program
// of your own can do the same with std::setvbuf before it prints anything.)
#include "dgnn/gnn/models/layers.hpp"  // register_layer, LayerSpec

// The installed package defines this (dgnn::cli's compile definitions): the folder of
// scale_plot.py under the prefix dgnn was installed to, for `scale`'s plots.
#ifndef DGNN_SHARE_DIR
#define DGNN_SHARE_DIR ""
#endif

namespace dgnn {

// cli_main with the folder `scale` looks in first for its plotting script ("" for none).
int cli_main_with(int argc, char** argv, const char* share_dir);

inline int cli_main(int argc, char** argv) { return cli_main_with(argc, argv, DGNN_SHARE_DIR); }

}  // namespace dgnn
