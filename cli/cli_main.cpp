// The `dgnn` command line (cli/cli.hpp): subcommands register themselves (cli/commands.hpp);
// this is the one place that catches errors, prints them as one line, and exits non-zero.
#include <cstdio>
#include <exception>
#include <new>

#include "dgnn/cli/cli.hpp"
#include "dgnn/cli/commands.hpp"
#include "dgnn/comm/communicator.hpp"
#include "dgnn/common/error.hpp"
#include "dgnn/dgnn_config.hpp"

int dgnn::cli_main(int argc, char** argv) {
  // Line-buffered even into a pipe (`dgnn train | tee log`, mpirun's forwarding): each epoch's
  // line shows when it is printed, not when the run ends.
  std::setvbuf(stdout, nullptr, _IOLBF, 1 << 16);
  CLI::App app{"dgnn " DGNN_VERSION ": graph neural network training on static and dynamic graphs",
               "dgnn"};
  app.set_version_flag("--version", DGNN_VERSION);
  app.require_subcommand(1);
  dgnn::cli::register_train(app);
  dgnn::cli::register_info(app);
  dgnn::cli::register_generate(app);
  dgnn::cli::register_partition(app);
  dgnn::cli::register_scale(app);
  dgnn::cli::register_plan(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
    // One line like every other error (CLI11's own print adds "Run with --help ..."), from the
    // first rank only: every rank parses the same arguments and fails the same way.
    if (dgnn::launcher_rank() <= 0) {
      std::fflush(stdout);
      std::fprintf(stderr, "dgnn: error: %s (see dgnn --help)\n", e.what());
    }
    return 2;
  } catch (const dgnn::OptionError& e) {
    dgnn::fail_job(e.what(), 1, /*same_on_every_rank=*/true);
  } catch (const dgnn::Error& e) {
    // One line, and under MPI the whole job comes down (MPI_Abort), never a hang.
    dgnn::fail_job(e.what(), 1);
  } catch (const std::bad_alloc&) {
    dgnn::fail_job(
        "out of memory: the graph or a size option (--hidden, --feature-dim, "
        "--batch-size / --fanouts, --neg-train, --num-classes) asks for more than "
        "this machine has",
        1);
  } catch (const std::exception& e) {
    dgnn::fail_job(std::string("internal error: ") + e.what(), 2);
  }
  return 0;
}
