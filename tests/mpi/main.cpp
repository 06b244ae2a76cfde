// Main of the multi-rank tests: every rank runs the same Catch2 session. Rank 0 reports; the
// other ranks' reports are kept aside and shown (on stderr) only when that rank failed. Each
// rank exits non-zero when any of its own assertions failed, so mpiexec fails the job.
#define CATCH_CONFIG_RUNNER
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdio>
#include <iostream>
#include <string>

#include "comm/communicator.hpp"

int main(int argc, char** argv) {
  dgnn::Communicator& comm = dgnn::world();
  const int rank = comm.rank();

  // Catch writes to stdout; on other ranks that goes to a scratch file instead.
  std::FILE* scratch = nullptr;
  int saved_stdout = -1;
  if (rank != 0) {
    scratch = std::tmpfile();
    saved_stdout = dup(1);
    if (scratch != nullptr) dup2(fileno(scratch), 1);
  }

  Catch::Session session;
  int failed = session.run(argc, argv);

  std::cout.flush();
  std::fflush(stdout);
  if (scratch != nullptr) {
    dup2(saved_stdout, 1);
    if (failed != 0) {
      std::rewind(scratch);
      std::string report;
      char buf[4096];
      for (size_t n; (n = std::fread(buf, 1, sizeof buf, scratch)) > 0;) report.append(buf, n);
      std::fprintf(stderr, "---- rank %d: %d failed assertion(s) ----\n%s", rank, failed,
                   report.c_str());
    }
    std::fclose(scratch);
  }

  // Tell rank 0 whether others failed, so its report does not read as a pass.
  int64_t others = rank != 0 ? failed : 0;
  comm.allreduce_sum(&others, 1);
  if (rank == 0 && others > 0)
    std::fprintf(stderr, "test_mpi: %lld assertion(s) failed on ranks other than 0\n",
                 static_cast<long long>(others));
  return std::min(failed, 255);
}
