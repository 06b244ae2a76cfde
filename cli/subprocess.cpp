#include "dgnn/cli/subprocess.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <thread>

extern char** environ;

namespace dgnn::cli {

namespace {

// posix_spawn's file actions, released however the spawn ends.
class FileActions {
 public:
  FileActions() { posix_spawn_file_actions_init(&fa_); }
  ~FileActions() { posix_spawn_file_actions_destroy(&fa_); }
  FileActions(const FileActions&) = delete;
  FileActions& operator=(const FileActions&) = delete;
  posix_spawn_file_actions_t* get() { return &fa_; }

 private:
  posix_spawn_file_actions_t fa_;
};

int status_code(int status) {
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

}  // namespace

std::string find_program(const std::string& name) {
  if (name.empty()) return "";
  if (name.find('/') != std::string::npos) return ::access(name.c_str(), X_OK) == 0 ? name : "";
  const char* path = std::getenv("PATH");
  std::istringstream dirs(path ? path : "/usr/local/bin:/usr/bin:/bin");
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    const std::string p = (dir.empty() ? "." : dir) + "/" + name;
    if (::access(p.c_str(), X_OK) == 0) return p;
  }
  return "";
}

ProcessResult run_process(const std::vector<std::string>& argv, const std::string& log_path,
                          double timeout_s) {
  ProcessResult res;
  if (argv.empty()) {
    res.error = "no program to run";
    return res;
  }
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  FileActions fa;
  posix_spawn_file_actions_addopen(fa.get(), 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(fa.get(), 1, log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                   0644);
  posix_spawn_file_actions_adddup2(fa.get(), 1, 2);
  pid_t pid = 0;
  const int rc = posix_spawnp(&pid, args[0], fa.get(), nullptr, args.data(), environ);
  if (rc != 0) {
    res.error = "cannot start " + argv[0] + ": " + std::strerror(rc);
    return res;
  }
  res.started = true;
  using clock = std::chrono::steady_clock;
  const auto start = clock::now();
  bool termed = false;
  for (int status = 0;;) {
    const pid_t w = ::waitpid(pid, &status, timeout_s > 0 ? WNOHANG : 0);
    if (w == pid) {
      res.exit_code = status_code(status);
      return res;
    }
    if (w < 0 && errno != EINTR) {
      res.error = std::string("waitpid: ") + std::strerror(errno);
      return res;
    }
    if (timeout_s <= 0) continue;
    const double s = std::chrono::duration<double>(clock::now() - start).count();
    if (!termed && s > timeout_s) {
      ::kill(pid, SIGTERM);
      termed = res.timed_out = true;
    } else if (termed && s > timeout_s + 10) {
      ::kill(pid, SIGKILL);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

}  // namespace dgnn::cli
