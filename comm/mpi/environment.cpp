// MPI's lifetime (init / finalize / abort), error reporting and the count limit.
#include <mpi.h>

#include <atomic>
#include <climits>
#include <cstdlib>
#include <string>

#include "dgnn/comm/mpi/mpi.hpp"
#include "dgnn/comm/mpi/mpi_communicator.hpp"
#include "dgnn/common/error.hpp"

namespace dgnn::mpi {

namespace {
std::atomic<int64_t> g_max_count{INT_MAX};
// Set once MPI_Abort was called: finalising after it would block on dead peers.
std::atomic<bool> g_aborting{false};
}  // namespace

void throw_mpi_error(int rc, const char* call, const char* file, int line) {
  char text[MPI_MAX_ERROR_STRING] = {0};
  int len = 0;
  if (MPI_Error_string(rc, text, &len) != MPI_SUCCESS) len = 0;
  throw CommError(std::string("MPI call ") + call + " failed: " +
                  (len > 0 ? std::string(text, size_t(len)) : "error " + std::to_string(rc)) +
                  " [" + file + ":" + std::to_string(line) + "]");
}

Environment::Environment() {
  int initialized = 0;
  DGNN_MPI_CHECK(MPI_Initialized(&initialized));
  if (!initialized) {
    // Open MPI's hwloc loads every topology plugin it finds as a rank starts: the GL one maps
    // libX11, the libxml2 one libxml2 and ICU, and the OpenCL one its loader, about 2 MB resident
    // a rank that no rank uses (the binding needs the cores, and hwloc reads the XML topology
    // it is handed with its own parser). 8 ranks of the 100k x 30 SBM: summed peak 1027 -> 1010
    // MB. A value the user set, even empty, is kept; PCI discovery (NIC and GPU locality) stays.
    setenv("HWLOC_PLUGINS_BLACKLIST", "hwloc_gl,hwloc_opencl,hwloc_xml_libxml", /*overwrite=*/0);
    int provided = 0;
    // OpenMP threads inside kernels never call MPI; the mini-batch prefetch thread does, on a
    // communicator of its own, while the main thread all-reduces gradients. Where the library
    // grants less, prefetching stays off under MPI (sampling runs on the main thread).
    DGNN_MPI_CHECK(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided));
    owns_ = true;
  }
  DGNN_MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
}

Environment::~Environment() {
  if (!owns_ || g_aborting.load()) return;
  int finalized = 0;
  if (MPI_Finalized(&finalized) == MPI_SUCCESS && !finalized) MPI_Finalize();
}

std::unique_ptr<Communicator> make_world_communicator() {
  return std::make_unique<MpiCommunicator>(MPI_COMM_WORLD);
}

bool thread_multiple() {
  int provided = MPI_THREAD_SINGLE;
  return MPI_Query_thread(&provided) == MPI_SUCCESS && provided == MPI_THREAD_MULTIPLE;
}

bool active() {
  int initialized = 0, finalized = 0;
  if (MPI_Initialized(&initialized) != MPI_SUCCESS || !initialized) return false;
  return MPI_Finalized(&finalized) == MPI_SUCCESS && !finalized;
}

int world_rank() {
  int r = 0;
  DGNN_MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &r));
  return r;
}

int world_size() {
  int s = 1;
  DGNN_MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &s));
  return s;
}

void abort_world(int code) {
  g_aborting.store(true);
  MPI_Abort(MPI_COMM_WORLD, code);
  std::_Exit(code);  // MPI_Abort is not required to return; if it does, do not run destructors
}

int64_t max_count() { return g_max_count.load(std::memory_order_relaxed); }

void set_max_count(int64_t n) {
  DGNN_CHECK(n >= 1 && n <= INT_MAX, CommError,
             "MPI count limit must be in [1, INT_MAX], got " + std::to_string(n));
  g_max_count.store(n, std::memory_order_relaxed);
}

}  // namespace dgnn::mpi
