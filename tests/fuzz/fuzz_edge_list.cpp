// The edge-list reader (text and .gz) and the snapshot builder behind it. The first byte picks
// the options (directed, weight and time columns, self loops, duplicates, snapshot mode and
// count, whether the rest is gzipped by the harness first, so the parser behind the inflater
// is reached too); the rest is the file.
#include "fuzz_cases.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  dgnn::fuzz::edge_list(data, size);
  return 0;
}
