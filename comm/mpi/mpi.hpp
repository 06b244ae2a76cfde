#pragma once
// The MPI backend's entry points for the rest of comm/ (world.cpp) and the multi-rank tests.
// This header does not include <mpi.h>: only comm/mpi/*.cpp and mpi_communicator.hpp do.
#include <cstdint>
#include <memory>

#include "dgnn/comm/communicator.hpp"

namespace dgnn::mpi {

// RAII over MPI_Init_thread(MPI_THREAD_MULTIPLE requested) / MPI_Finalize. Sets MPI_ERRORS_RETURN on
// MPI_COMM_WORLD so that failures surface as CommError instead of silent aborts. If MPI was
// already initialised by someone else, it neither initialises nor finalises.
class Environment {
 public:
  Environment();
  ~Environment();
  Environment(const Environment&) = delete;
  Environment& operator=(const Environment&) = delete;

 private:
  bool owns_ = false;
};

// An MpiCommunicator over a duplicate of MPI_COMM_WORLD (its messages never match anyone
// else's). Needs a live Environment.
std::unique_ptr<Communicator> make_world_communicator();

// The MPI_Comm under `c`, as a pointer to it (MPI_Comm*), for a library that takes one (PT-Scotch,
// partition/scotch): null when `c` is not an MpiCommunicator (SelfCommunicator). Valid while
// `c` lives; callers must not free it.
void* native_handle(Communicator& c);

// Whether the library runs MPI calls from several threads at once (MPI_THREAD_MULTIPLE).
bool thread_multiple();

// True between MPI_Init and MPI_Finalize (safe to call at any time).
bool active();
// Rank and size in MPI_COMM_WORLD; only while active().
int world_rank();
int world_size();
// MPI_Abort(MPI_COMM_WORLD, code); exits if MPI_Abort returns.
[[noreturn]] void abort_world(int code);

// The largest count handed to one MPI call (elements for all-reduce, bytes otherwise); larger
// transfers are split. INT_MAX by default, the most an MPI `int` count holds. Lowering it lets
// tests exercise the large-count paths with small buffers; every rank must set the same value.
int64_t max_count();
void set_max_count(int64_t n);

}  // namespace dgnn::mpi
