// The `dgnn` executable: the command line of cli/cli.hpp with the built-in models.
#include <cstdio>

#include "dgnn/cli/cli.hpp"

int main(int argc, char** argv) {
  // Line-buffered even into a pipe (`dgnn train | tee log`, mpirun's forwarding): each epoch's
  // line shows when it is printed, not when the run ends.
  std::setvbuf(stdout, nullptr, _IOLBF, 1 << 16);
  return dgnn::cli_main_with(argc, argv, "");
}
