// Partition part files (what `dgnn partition --out` writes per rank and ranks send each
// other): decode_part must refuse every damaged or crafted file with InputError. The part's
// checksum is over everything before it; with the first byte's low bit set the harness makes
// it right, so the decoder's structural checks are reached.
#include "fuzz_cases.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  dgnn::fuzz::part(data, size);
  return 0;
}
