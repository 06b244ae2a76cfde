#pragma once
// Test helpers: a fresh temp folder per test case, files written into it, and the message of
// an expected typed error.
#include <unistd.h>
#include <zlib.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>

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
    std::filesystem::create_directories(std::filesystem::path(p).parent_path());
    gzFile gz = gzopen(p.c_str(), "wb");
    if (!gz || gzwrite(gz, text.data(), unsigned(text.size())) != int(text.size()))
      throw std::runtime_error("gzwrite failed");
    gzclose(gz);
    return p;
  }

 private:
  std::filesystem::path path_;
};

// A pipe whose write end a thread fills with `bytes` and closes: path() ("/dev/fd/N") reads as
// `<(cat file)` does in a shell, a source with no size that can be read only once.
class PipeSource {
 public:
  explicit PipeSource(std::string bytes) : bytes_(std::move(bytes)) {
    if (::pipe(fds_) != 0) throw std::runtime_error("pipe failed");
    writer_ = std::thread([this] {
      size_t done = 0;
      while (done < bytes_.size()) {
        const ssize_t n = ::write(fds_[1], bytes_.data() + done, bytes_.size() - done);
        if (n <= 0) break;
        done += size_t(n);
      }
      ::close(fds_[1]);
    });
  }
  ~PipeSource() {
    writer_.join();
    ::close(fds_[0]);
  }
  PipeSource(const PipeSource&) = delete;
  PipeSource& operator=(const PipeSource&) = delete;
  std::string path() const { return "/dev/fd/" + std::to_string(fds_[0]); }

 private:
  std::string bytes_;
  int fds_[2] = {-1, -1};
  std::thread writer_;
};

// The bytes of a file as written.
inline std::string bytes_of(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

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
