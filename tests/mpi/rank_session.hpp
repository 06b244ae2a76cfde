#pragma once
// Runs one Catch2 session on every rank of `comm`: rank 0 reports; the other ranks' reports are
// kept aside and shown (on stderr) only when that rank failed. Returns this rank's exit code,
// non-zero when any of its own assertions failed, so mpiexec fails the job; rank 0 also says when
// other ranks failed. Shared by test_mpi and test_gpu_mpi (`name` goes into that line).
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <string>

#include "dgnn/comm/communicator.hpp"

namespace dgnn::test {

inline Communicator*& session_comm() {
  static Communicator* comm = nullptr;
  return comm;
}

// A test that stops on one rank (an unexpected exception, or a failed REQUIRE) leaves the other
// ranks waiting in a collective it will never join: the job would hang until killed. Say where
// on stderr (the rank's report may be in its scratch file) and end the whole job instead. (A
// REQUIRE that fails on every rank ends the job too: the later test cases do not run.)
struct AbortOnStop : Catch::TestEventListenerBase {
  using TestEventListenerBase::TestEventListenerBase;
  bool assertionEnded(const Catch::AssertionStats& stats) override {
    const Catch::AssertionResult& r = stats.assertionResult;
    // (A signal, FatalErrorCondition, ends the process anyway, and mpiexec the job.)
    const bool stops = r.getResultType() == Catch::ResultWas::ThrewException ||
                       (!r.isOk() && r.getResultType() != Catch::ResultWas::FatalErrorCondition &&
                        !Catch::shouldContinueOnFailure(
                                         r.m_info.resultDisposition));
    Communicator* comm = session_comm();
    if (stops && comm != nullptr && comm->size() > 1) {
      // (Listeners run before the reporter, which would print the same: say it all here.)
      std::cout.flush();
      std::fflush(stdout);
      std::fprintf(stderr, "rank %d: %s:%zu: %s( %s ) with %s%s%s\n", comm->rank(),
                   r.getSourceInfo().file, r.getSourceInfo().line, r.getTestMacroName().c_str(),
                   r.getExpression().c_str(), r.getExpandedExpression().c_str(),
                   r.hasMessage() ? ": " : "", r.hasMessage() ? r.getMessage().c_str() : "");
      for (const Catch::MessageInfo& m : stats.infoMessages)
        std::fprintf(stderr, "rank %d:   with %s\n", comm->rank(), m.message.c_str());
      std::fprintf(stderr, "rank %d: that stops the test on this rank, whose peers would wait "
                   "for it forever: aborting the job\n", comm->rank());
      std::fflush(stderr);
      comm->abort(3);
    }
    return true;
  }
};
CATCH_REGISTER_LISTENER(AbortOnStop)

inline int run_rank_session(Communicator& comm, int argc, char** argv, const char* name) {
  const int rank = comm.rank();
  // Catch writes to stdout; on other ranks that goes to a scratch file instead.
  std::FILE* scratch = nullptr;
  int saved_stdout = -1;
  if (rank != 0) {
    scratch = std::tmpfile();
    saved_stdout = dup(1);
    if (scratch != nullptr) dup2(fileno(scratch), 1);
  }

  session_comm() = &comm;
  Catch::Session session;
  const int failed = session.run(argc, argv);
  session_comm() = nullptr;

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
    std::fprintf(stderr, "%s: %lld assertion(s) failed on ranks other than 0\n", name,
                 static_cast<long long>(others));
  return std::min(failed, 255);
}

}  // namespace dgnn::test
