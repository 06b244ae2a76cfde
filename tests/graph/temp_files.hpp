#pragma once
// Test helpers: a fresh temp folder per test case, files written into it, and the message of
// an expected typed error.
#include <unistd.h>
#include <zlib.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

namespace dgnn::test {

// Removes itself (and what was written in it) at the end of the test.
class TempDir {
 public:
  TempDir() {
    static int counter = 0;
    path_ = std::filesystem::temp_directory_path() /
            ("dgnn_test_graph_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  std::string path(const std::string& name) const { return (path_ / name).string(); }
  std::string dir() const { return path_.string(); }

  std::string write(const std::string& name, const std::string& text) const {
    const std::string p = path(name);
    std::filesystem::create_directories(std::filesystem::path(p).parent_path());
    std::ofstream(p, std::ios::binary) << text;
    return p;
  }

  // Gzip-compressed with zlib, as a producer of .gz files would write them.
  std::string write_gz(const std::string& name, const std::string& text) const {
    const std::string p = path(name);
    gzFile gz = gzopen(p.c_str(), "wb");
    if (!gz || gzwrite(gz, text.data(), unsigned(text.size())) != int(text.size()))
      throw std::runtime_error("gzwrite failed");
    gzclose(gz);
    return p;
  }

 private:
  std::filesystem::path path_;
};

// what() of the exception of type E that fn throws; fails the test when it throws nothing.
template <class E, class Fn>
std::string error_of(Fn&& fn) {
  try {
    fn();
  } catch (const E& e) {
    return e.what();
  }
  FAIL("expected an exception, none was thrown");
  return {};
}

}  // namespace dgnn::test
