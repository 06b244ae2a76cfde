// The `dgnn` command line (cli/cli.hpp): subcommands register themselves (cli/commands.hpp);
// this is the one place that catches errors, prints them as one line, and exits non-zero.
#include <signal.h>
#include <unistd.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <new>
#include <regex>
#include <string>
#include <vector>

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

// CLI11 takes an empty value as the type's default (`--epochs ''` trains the default epochs),
// reads integers with strtoll in base 0 ("010" is 8, "0x10" 16) and keeps the saturated value of
// one out of range (`--seed 2^64` is 2^64 - 1). Every option that takes a value gets this check
// first: not empty; integers in decimal and in range; numbers finite. The message names the
// option (CLI11 prefixes it).
std::string strict_value(const std::string& type, const std::string& v) {
  if (v.empty()) return "an empty value";
  const std::string kind = type.substr(0, type.find(':'));
  static const std::regex int_re("[+-]?[0-9]+"), uint_re("[+]?[0-9]+"),
      float_re("[+-]?([0-9]+[.]?[0-9]*|[.][0-9]+)([eE][+-]?[0-9]+)?");
  if (kind == "INT" || kind == "UINT") {
    if (kind == "UINT" && !v.empty() && v[0] == '-') return "must be >= 0, got " + v;
    if (!std::regex_match(v, kind == "INT" ? int_re : uint_re))
      return "'" + v + "' is not a whole number (decimal digits)";
    errno = 0;
    if (kind == "INT")
      (void)std::strtoll(v.c_str(), nullptr, 10);
    else
      (void)std::strtoull(v.c_str(), nullptr, 10);
    if (errno == ERANGE)
      return v + " is out of range (at most " +
             (kind == "INT" ? std::to_string(INT64_MAX) : std::to_string(UINT64_MAX)) + ")";
  } else if (kind == "FLOAT") {
    if (!std::regex_match(v, float_re)) return "'" + v + "' is not a finite number";
    errno = 0;
    const double d = std::strtod(v.c_str(), nullptr);
    if (errno == ERANGE || !std::isfinite(d)) return v + " is out of range";
  }
  return "";
}

void add_strict_values(CLI::App* app) {
  for (CLI::Option* opt : app->get_options()) {
    if (opt->get_type_size() == 0) continue;  // a flag
    const std::string type = opt->get_type_name();
    opt->check(CLI::Validator([type](std::string& v) { return strict_value(type, v); }, "",
                              "strict value"));
  }
  for (CLI::App* sub : app->get_subcommands([](CLI::App*) { return true; })) add_strict_values(sub);
}

// Ranks launched with different arguments (`mpirun -np 1 dgnn ... : -np 1 dgnn ...`) would wait
// on each other's collectives forever or abort inside MPI. Before anything else every rank
// compares its arguments with rank 0's and all stop with one line naming the first difference.
void check_same_command(int argc, char** argv) {
  dgnn::Communicator& comm = dgnn::world();
  const int p = comm.size();
  if (p < 2) return;
  std::string mine;
  for (int i = 1; i < argc; ++i) mine.append(argv[i]).push_back('\0');
  auto share = [&](const std::string& s, int root) {
    int64_t n = int64_t(s.size());
    comm.broadcast(&n, sizeof n, root);
    std::string out = comm.rank() == root ? s : std::string(size_t(n), '\0');
    if (n > 0) comm.broadcast(out.data(), n, root);
    return out;
  };
  const std::string first = share(mine, 0);
  std::vector<int64_t> differs(size_t(p), 0);
  differs[size_t(comm.rank())] = mine != first;
  comm.allreduce_sum(differs.data(), p);
  int other = -1;
  for (int r = 1; r < p && other < 0; ++r)
    if (differs[size_t(r)]) other = r;
  if (other < 0) return;
  const std::string theirs = share(mine, other);
  auto words = [](const std::string& s) {
    std::vector<std::string> w;
    for (size_t at = 0; at < s.size();) {
      const size_t end = s.find('\0', at);
      w.push_back(s.substr(at, end - at));
      at = end + 1;
    }
    return w;
  };
  const std::vector<std::string> a = words(first), b = words(theirs);
  size_t i = 0;
  while (i < a.size() && i < b.size() && a[i] == b[i]) ++i;
  auto at = [i](const std::vector<std::string>& w) -> std::string {
    if (i >= w.size()) return "nothing more";
    // An option's value is shown with its option, and an option with its value.
    const auto is_option = [&](size_t k) { return w[k].rfind("-", 0) == 0; };
    if (i > 0 && is_option(i - 1) && !is_option(i)) return "'" + w[i - 1] + " " + w[i] + "'";
    if (is_option(i) && i + 1 < w.size() && !is_option(i + 1))
      return "'" + w[i] + " " + w[i + 1] + "'";
    return "'" + w[i] + "'";
  };
  dgnn::fail_job("the ranks were started with different arguments: rank " + std::to_string(other) +
                     " has " + at(b) + " where rank 0 has " + at(a) +
                     " (every rank must run the same dgnn command)",
                 1, /*same_on_every_rank=*/true);
}

// glibc serves a block of 128 KB or more by its own mmap, and raises that threshold to the size
// of each such block freed, up to 32 MB. Which of a step's buffers then get fresh pages (a page
// fault and kernel zeroing per 4 KiB, every step) depended on the largest block the run had
// happened to free: making the pair head's backward stage 16 MB instead of 168 MB cut a GCRN
// epoch's peak by 17% and made the epoch 30% slower (4.8 -> 6.7 s, evolving SBM 100k), the
// threshold now stopping near 1 MB. The threshold is set where the rise ends, from the start;
// MALLOC_MMAP_THRESHOLD_ in the environment still wins.
void settle_malloc() {
#ifdef __GLIBC__
  if (!std::getenv("MALLOC_MMAP_THRESHOLD_")) mallopt(M_MMAP_THRESHOLD, 32 << 20);
#endif
}

}  // namespace

int dgnn::cli_main_with(int argc, char** argv, const char* share_dir) {
  settle_malloc();
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
  add_strict_values(&app);
  try {
    if (dgnn::launcher_rank() >= 0) check_same_command(argc, argv);
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
    // One line like every other error (CLI11's own print adds "Run with --help ..."), from the
    // first rank only: every rank parses the same arguments and fails the same way.
    if (dgnn::launcher_rank() <= 0) {
      std::fflush(stdout);
      std::fprintf(stderr, "dgnn: error: %s (see %s --help)\n", dgnn::one_line(e.what()).c_str(),
                   name.c_str());
    }
    return 2;
  } catch (const dgnn::OptionError& e) {
    dgnn::fail_job(e.what(), 1, /*same_on_every_rank=*/true);
  } catch (const dgnn::AgreedInputError& e) {
    dgnn::fail_job(e.what(), 1, /*same_on_every_rank=*/true);
  } catch (const dgnn::AgreedError& e) {
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
