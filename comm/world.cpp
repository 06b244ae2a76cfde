// world(): the process's communicator, chosen once from how the process was launched, and
// fail_job(): the one way a fatal error leaves the process.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <string>
#include <thread>

#include "dgnn/comm/communicator.hpp"
#include "dgnn/common/error.hpp"
#include "dgnn/dgnn_config.hpp"
#if DGNN_HAVE_MPI
#include "dgnn/comm/mpi/mpi.hpp"
#endif

namespace dgnn {

namespace {

// An integer environment variable, or -1 when it is unset or not a number.
long env_int(const char* name) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return -1;
  char* end = nullptr;
  const long x = std::strtol(v, &end, 10);
  return *end == '\0' ? x : -1;
}

// The job size the launcher announced (Open MPI, MPICH/Hydra, Slurm's PMI), or -1 when none.
long launcher_size() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE"})
    if (long n = env_int(name); n >= 0) return n;
  return -1;
}

bool want_mpi() {
  if (const char* f = std::getenv("DGNN_FORCE_MPI"); f != nullptr && std::strcmp(f, "1") == 0)
    return true;
  // A launcher that gives a size decides; one that only names a rank (PMIx) does not say how
  // many ranks there are, and initialising MPI is then the only way to find out.
  if (long n = launcher_size(); n >= 0) return n > 1;
  return std::getenv("PMIX_RANK") != nullptr;
}

#if DGNN_HAVE_MPI
// An exception that escapes on one rank must not leave the others blocked in a collective.
[[noreturn]] void terminate_job() {
  std::string what = "terminate called without an active exception";
  if (std::exception_ptr e = std::current_exception()) {
    try {
      std::rethrow_exception(e);
    } catch (const std::exception& x) {
      what = std::string("uncaught exception: ") + x.what();
    } catch (...) {
      what = "uncaught exception of unknown type";
    }
  }
  fail_job(what, 2);
}
#endif

// Members are destroyed in reverse order: the communicator before MPI is finalised.
struct WorldState {
#if DGNN_HAVE_MPI
  std::unique_ptr<mpi::Environment> env;
#endif
  std::unique_ptr<Communicator> comm;
};

WorldState make_world() {
  WorldState s;
  if (want_mpi()) {
#if DGNN_HAVE_MPI
    s.env = std::make_unique<mpi::Environment>();
    s.comm = mpi::make_world_communicator();
    if (s.comm->size() > 1) std::set_terminate(terminate_job);
    return s;
#else
    if (launcher_size() > 1)
      std::fprintf(stderr,
                   "dgnn: warning: launched as one of %ld ranks, but this dgnn was built without "
                   "MPI: every rank runs alone\n",
                   launcher_size());
#endif
  }
  s.comm = std::make_unique<SelfCommunicator>();
  return s;
}

}  // namespace

long launcher_rank() {
  for (const char* name : {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK"})
    if (long r = env_int(name); r >= 0) return r;
  return -1;
}

Communicator& world() {
  static WorldState state = make_world();
  return *state.comm;
}

void fail_job(const std::string& message, int code, bool same_on_every_rank) {
  if (code == 0) code = 1;
  long rank = launcher_rank(), size = launcher_size();
  bool under_mpi = false;
#if DGNN_HAVE_MPI
  if (mpi::active()) {
    // The MPI queries cannot fail once MPI is up, but nothing may throw from here.
    try {
      rank = mpi::world_rank();
      size = mpi::world_size();
      under_mpi = size > 1;
    } catch (...) {
    }
  }
#endif
  // Every rank meets the same error (a bad option): rank 0 reports it and brings the job down;
  // the others stay quiet unless rank 0 has not done so within a few seconds (it may not have
  // met the error after all).
  if (size > 1 && same_on_every_rank && rank != 0)
    std::this_thread::sleep_for(std::chrono::seconds(3));
  std::fflush(stdout);
  // One write, so that lines from several failing ranks do not interleave.
  const std::string line =
      "dgnn: error: " + (size > 1 ? "[rank " + std::to_string(rank) + "] " : std::string()) +
      one_line(message) + "\n";  // one line, whatever the message holds
  std::fputs(line.c_str(), stderr);
  std::fflush(stderr);
#if DGNN_HAVE_MPI
  if (under_mpi) mpi::abort_world(code);
#endif
  (void)under_mpi;
  std::exit(code);
}

}  // namespace dgnn
