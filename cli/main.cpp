// The `dgnn` executable: the command line of cli/cli.hpp with the built-in models.
#include "dgnn/cli/cli.hpp"

int main(int argc, char** argv) { return dgnn::cli_main(argc, argv); }
