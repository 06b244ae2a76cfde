// The `dgnn` command line (cli/cli.hpp): subcommands register themselves (cli/commands.hpp);
// this is the one place that catches errors, prints them as one line, and exits non-zero.
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <exception>
#include <filesystem>
#include <new>
#include <string>

#include "dgnn/cli/cli.hpp"
#include "dgnn/cli/commands.hpp"
#include "dgnn/comm/communicator.hpp"
#include "dgnn/common/error.hpp"
#include "dgnn/dgnn_config.hpp"

namespace {

// SIGINT / SIGTERM / SIGHUP end the run at once with 128 + n and one line saying so. Outputs are
// safe without any cleanup: files appear only when complete (AtomicFile), and logs hold whole
// lines (LineLog). The messages are made before any signal can come: a handler may only write.
char g_signal_message[3][96];
size_t g_signal_length[3];
constexpr int kSignals[3] = {SIGINT, SIGTERM, SIGHUP};

extern "C" void on_stop_signal(int sig) {
  for (int i = 0; i < 3; ++i)
    if (kSignals[i] == sig) {
      ssize_t ignored = ::write(STDERR_FILENO, g_signal_message[i], g_signal_length[i]);
      (void)ignored;
    }
  ::_exit(128 + sig);
}

void install_stop_signals() {
  const int rank = dgnn::launcher_rank();
  const char* names[3] = {"SIGINT", "SIGTERM", "SIGHUP"};
  for (int i = 0; i < 3; ++i) {
    const int n =
        rank > 0 ? std::snprintf(g_signal_message[i], sizeof g_signal_message[i],
                                 "dgnn: stopped by %s [rank %d] (exit %d)\n", names[i], rank,
                                 128 + kSignals[i])
                 : std::snprintf(g_signal_message[i], sizeof g_signal_message[i],
                                 "dgnn: stopped by %s (exit %d)\n", names[i], 128 + kSignals[i]);
    g_signal_length[i] = size_t(n > 0 ? n : 0);
    struct sigaction sa = {};
    sa.sa_handler = on_stop_signal;
    sigemptyset(&sa.sa_mask);
    // An ignored signal (nohup, a shell's background job for SIGINT) stays ignored.
    struct sigaction old = {};
    if (::sigaction(kSignals[i], nullptr, &old) == 0 && old.sa_handler == SIG_IGN) continue;
    ::sigaction(kSignals[i], &sa, nullptr);
  }
}

}  // namespace

int dgnn::cli_main_with(int argc, char** argv, const char* share_dir) {
  install_stop_signals();
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
  dgnn::cli::register_datasets(app);
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
  } catch (const std::filesystem::filesystem_error& e) {
    // A path the file system refuses (a loop of links, a permission): the path and the reason.
    dgnn::fail_job(e.path1().string() + ": " + e.code().message(), 1);
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
