// The checkpoint reader. Mutated bytes mostly fail the checksum, so when the first byte's low
// bit is set the harness makes the checksum right (a version-2 file's last 4 bytes), and the
// header and layout checks behind it are what the input reaches.
#include "fuzz_cases.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  dgnn::fuzz::checkpoint(data, size);
  return 0;
}
