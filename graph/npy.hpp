#pragma once
// NumPy .npy files (version 1/2/3 headers): float32 / float64 C-order arrays, 1-D to 3-D.
#include <cstdint>
#include <string>
#include <vector>

namespace dgnn {

struct NpyMatrix {
  int64_t rows = 0;
  int64_t cols = 0;
  std::vector<float> data;  // converted to float32, row-major
  // The array's own shape (rows = shape[0], cols = the product of the others; a 1-D array has
  // one entry).
  std::vector<int64_t> shape;
};

// True for a path named *.npy or *.npy.gz, or a pipe whose bytes start with the .npy magic.
bool is_npy_file(const std::string& path);

// Reads a '<f4' or '<f8' array of 1 (n -> n x 1) to `max_dims` dimensions (at most 3), C order,
// plain or gzipped, from a file or a pipe. InputError for anything else (names the file and what
// the header said).
NpyMatrix read_npy(const std::string& path, int max_dims = 2);
// A plain (not gzipped) .npy's header, checked as read_npy checks it: rows (shape[0]), cols
// (the product of the others), item bytes (4 or 8) and where the data starts.
struct NpyLayout {
  int64_t rows = 0, cols = 0;
  int item = 4;
  int64_t data_offset = 0;
  std::vector<int64_t> shape;
};
NpyLayout read_npy_layout(const std::string& path, int max_dims = 2);
// Rows [begin, end) of that file, as float32: one rank's block of a feature matrix, read
// without reading the rest.
std::vector<float> read_npy_rows(const std::string& path, const NpyLayout& l, int64_t begin,
                                 int64_t end);
// The rows `rows` (ascending, distinct) of that file, in that order, as float32: one read per
// run of consecutive rows, nothing else of the data read. ShapeError for rows out of order or
// outside the file.
std::vector<float> read_npy_row_set(const std::string& path, const NpyLayout& l,
                                    const std::vector<int64_t>& rows);

// Writes a '<f4' 2-D array (atomically: temp file then rename).
void write_npy(const std::string& path, const float* data, int64_t rows, int64_t cols);
// The magic, version and padded header of a '<f4' C-order array of `shape`: what precedes its data.
std::string npy_header(const std::vector<int64_t>& shape);
// Writes a '<f4' array of any shape (atomically).
void write_npy(const std::string& path, const float* data, const std::vector<int64_t>& shape);

}  // namespace dgnn
