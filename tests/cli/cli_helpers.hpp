#pragma once
// What the CLI test files share: running the `dgnn` binary and scratch folders for its files.
#include <sys/wait.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>

namespace cli_test {

namespace fs = std::filesystem;

struct Result {
  int code;
  std::string out;  // stdout and stderr together
};

// Runs `dgnn <args>`; a signal shows as 128 + its number, as in a shell.
inline Result run(const std::string& args) {
  const std::string cmd = std::string(DGNN_BINARY) + " " + args + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  REQUIRE(p != nullptr);
  std::string out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  int status = pclose(p);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status), out};
}

// A fresh, empty folder. Every test file of test_cli shares the root, and ctest runs their cases
// in parallel: each name must be used by one test case only. The root is per build (keyed by the
// binary's path): two suites running at once on one machine must not wipe each other's folders.
inline fs::path scratch(const std::string& name) {
  const std::string key = std::to_string(std::hash<std::string>{}(DGNN_BINARY) % 1000000007);
  fs::path d = fs::temp_directory_path() / ("dgnn_test_cli-" + key) / name;
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

inline void write(const fs::path& p, const std::string& text) {
  if (p.has_parent_path()) fs::create_directories(p.parent_path());
  std::ofstream(p) << text;
}

inline int count_lines(const std::string& s) {
  int n = 0;
  for (char c : s) n += c == '\n';
  return n;
}

}  // namespace cli_test
