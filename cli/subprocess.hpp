#pragma once
// Running another program (a training job under its launcher, the plotting script) with its
// output in a file, as `dgnn scale` does for every configuration of a study.
#include <string>
#include <vector>

namespace dgnn::cli {

struct ProcessResult {
  int exit_code = -1;  // the exit status; 128 + N when killed by signal N
  bool started = false;
  bool timed_out = false;
  std::string error;  // why it did not start
};

// Runs argv[0] (searched on PATH when it has no '/') with `argv`, stdin from /dev/null, stdout
// and stderr into `log_path` (truncated). With timeout_s > 0 a run past it gets SIGTERM, then
// SIGKILL 10 s later (a launcher passes the first on to its ranks).
ProcessResult run_process(const std::vector<std::string>& argv, const std::string& log_path,
                          double timeout_s = 0);

// The path of `name` on PATH (or `name` itself when it holds a '/' and is executable); "" when
// none is found.
std::string find_program(const std::string& name);

}  // namespace dgnn::cli
