#pragma once
// What every harness shares: the fuzzer's bytes as a file the readers open by path (a memfd,
// so no disk is touched and each input costs a write, not a create), and the rule that a
// reader may refuse an input only with one of dgnn's typed errors: anything else (a crash, an
// ASan or UBSan report, std::bad_alloc from a size the file cannot hold, another exception)
// is a finding.
#include <sys/mman.h>
#include <unistd.h>
#include <zlib.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <new>
#include <string>
#include <vector>

#include "dgnn/common/error.hpp"

namespace dgnn::fuzz {

class MemFile {
 public:
  MemFile() : fd_(::memfd_create("dgnn-fuzz", MFD_CLOEXEC)) {
    if (fd_ < 0) std::abort();
  }
  // Replaces the contents with `bytes`; the path stays the same.
  const std::string& hold(const void* bytes, size_t size) {
    if (::ftruncate(fd_, 0) != 0 || ::pwrite(fd_, bytes, size, 0) != ssize_t(size)) std::abort();
    if (path_.empty()) path_ = "/proc/self/fd/" + std::to_string(fd_);
    return path_;
  }

 private:
  int fd_;
  std::string path_;
};

// `bytes` as one gzip member (level 1: the harness's cost, not the reader's).
inline std::vector<uint8_t> gzip_bytes(const uint8_t* bytes, size_t size) {
  std::vector<uint8_t> out(compressBound(uLong(size)) + 32);
  z_stream zs{};
  if (deflateInit2(&zs, 1, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) != Z_OK) std::abort();
  zs.next_in = const_cast<Bytef*>(bytes);
  zs.avail_in = uInt(size);
  zs.next_out = out.data();
  zs.avail_out = uInt(out.size());
  if (deflate(&zs, Z_FINISH) != Z_STREAM_END) std::abort();
  out.resize(out.size() - zs.avail_out);
  deflateEnd(&zs);
  return out;
}

// Runs the reader; dgnn's own errors are the expected way to refuse bad bytes.
template <class Fn>
void expect_clean(Fn&& fn) {
  try {
    fn();
  } catch (const dgnn::Error&) {
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "finding: std::bad_alloc (a size the input cannot hold)\n");
    std::abort();
  }
}

}  // namespace dgnn::fuzz
