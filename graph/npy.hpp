#pragma once
// NumPy .npy files (version 1/2 headers): 2-D float32 / float64 C-order arrays.
#include <cstdint>
#include <string>
#include <vector>

namespace dgnn {

struct NpyMatrix {
  int64_t rows = 0;
  int64_t cols = 0;
  std::vector<float> data;  // converted to float32, row-major
};

// True for a path named *.npy or *.npy.gz, or a pipe whose bytes start with the .npy magic.
bool is_npy_file(const std::string& path);

// Reads a 1-D (n -> n x 1) or 2-D '<f4' or '<f8' array, C order, plain or gzipped, from a file or a
// pipe. InputError for anything else (names the file and what the header said).
NpyMatrix read_npy(const std::string& path);
// Writes a '<f4' 2-D array (atomically: temp file then rename).
void write_npy(const std::string& path, const float* data, int64_t rows, int64_t cols);

}  // namespace dgnn
