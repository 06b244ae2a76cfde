// Run only by the "mpi: a failing rank aborts the job" test (tests/mpi/expect_abort.sh): rank 1
// fails while the others wait in a barrier that it will never reach. Without MPI_Abort the job
// would hang until the test's timeout.
#include <catch2/catch.hpp>
#include <thread>

#include "dgnn/comm/communicator.hpp"
#include "dgnn/common/error.hpp"

TEST_CASE("a failing rank brings the whole job down", "[.abort]") {
  dgnn::Communicator& comm = dgnn::world();
  REQUIRE(comm.size() > 1);
  if (comm.rank() == 1)
    dgnn::fail_job("parts/part.1.bin: cannot open (injected by the abort test)", 3);
  comm.barrier();
  FAIL("rank " << comm.rank() << " got past a barrier that rank 1 never entered");
}

// Run only by "mpi: a failed assertion on rank 1 fails the job": the harness (main.cpp) must
// turn one rank's failed CHECK into a non-zero exit and show that rank's report.
TEST_CASE("an assertion that fails on rank 1 only", "[.fail_on_rank_1]") {
  dgnn::Communicator& comm = dgnn::world();
  REQUIRE(comm.size() > 1);
  CHECK(comm.rank() != 1);
}

// Run only by "mpi: an uncaught exception aborts the job": an exception that escapes on one
// rank (here from a thread, which reaches std::terminate) must still bring the job down.
TEST_CASE("an exception escapes on rank 1", "[.uncaught]") {
  dgnn::Communicator& comm = dgnn::world();
  REQUIRE(comm.size() > 1);
  if (comm.rank() == 1)
    std::thread([] { throw dgnn::IoError("part file vanished (injected by the test)"); }).join();
  comm.barrier();
  FAIL("rank " << comm.rank() << " got past a barrier that rank 1 never entered");
}

// Run only by "mpi: a test stopped on one rank aborts the job": a REQUIRE that fails, or an
// exception thrown, on rank 1 alone ends that test case there while rank 0 waits in the
// barrier; the session's listener (rank_session.hpp) must end the job, not let it hang.
TEST_CASE("a REQUIRE fails on rank 1 only", "[.stop_on_rank_1]") {
  dgnn::Communicator& comm = dgnn::world();
  REQUIRE(comm.size() > 1);
  INFO("rank " << comm.rank());
  REQUIRE(comm.rank() != 1);
  comm.barrier();
}

TEST_CASE("a test throws on rank 1 only", "[.throw_on_rank_1]") {
  dgnn::Communicator& comm = dgnn::world();
  REQUIRE(comm.size() > 1);
  if (comm.rank() == 1) throw dgnn::IoError("injected by the test");
  comm.barrier();
}
