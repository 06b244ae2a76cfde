// The .npy reader: headers (v1-v3, any dict text), shapes that overflow or exceed the file,
// float32 / float64 data, plain or gzipped (the first byte's low bit gzips the rest first).
#include "fuzz_cases.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  dgnn::fuzz::npy(data, size);
  return 0;
}
