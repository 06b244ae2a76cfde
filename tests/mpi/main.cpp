// Main of the multi-rank tests: every rank runs the same Catch2 session. Rank 0 reports; the
// other ranks' reports are kept aside and shown (on stderr) only when that rank failed. Each
// rank exits non-zero when any of its own assertions failed, so mpiexec fails the job.
#define CATCH_CONFIG_RUNNER
#include "rank_session.hpp"

int main(int argc, char** argv) {
  return dgnn::test::run_rank_session(dgnn::world(), argc, argv, "test_mpi");
}
