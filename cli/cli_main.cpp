// The `dgnn` command line (cli/cli.hpp): subcommands register themselves (cli/commands.hpp);
// this is the one place that catches errors, prints them as one line, and exits non-zero.
#include <cstdio>
#include <filesystem>
#include <string>
#include <exception>
#include <new>

#include "dgnn/cli/cli.hpp"
#include "dgnn/cli/commands.hpp"
#include "dgnn/comm/communicator.hpp"
#include "dgnn/common/error.hpp"
#include "dgnn/dgnn_config.hpp"

int dgnn::cli_main_with(int argc, char** argv, const char* share_dir) {
  dgnn::cli::set_share_dir(share_dir ? share_dir : "");
  // The program's own name in usage and help (a user's program linking dgnn::cli is not "dgnn").
  const std::string name =
      argc > 0 && argv[0] && *argv[0] ? std::filesystem::path(argv[0]).filename().string() : "dgnn";
  CLI::App app{"dgnn " DGNN_VERSION ": graph neural network training on static and dynamic graphs",
               name};
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
      std::fprintf(stderr, "dgnn: error: %s (see %s --help)\n", e.what(), name.c_str());
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
