// .npy reading and writing: the header is a Python dict literal; only the three keys NumPy
// writes are read, and anything unexpected is reported with what the header said.
#include "dgnn/graph/npy.hpp"

#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>

#include "dgnn/common/error.hpp"
#include "dgnn/common/io_stats.hpp"
#include "dgnn/graph/atomic_write.hpp"
#include "dgnn/graph/graph.hpp"
#include "dgnn/graph/input_files.hpp"

namespace dgnn {

namespace {

struct File {
  std::FILE* f = nullptr;
  File() = default;
  File(File&& o) noexcept : f(o.f) { o.f = nullptr; }
  File(const File&) = delete;
  File& operator=(const File&) = delete;
  ~File() {
    if (f) std::fclose(f);
  }
};

// The value text after 'key': in the header dict (up to the next top-level ',' or '}').
std::string dict_value(const std::string& header, const std::string& key) {
  size_t k = header.find("'" + key + "'");
  if (k == std::string::npos) return {};
  size_t c = header.find(':', k);
  if (c == std::string::npos) return {};
  size_t b = c + 1;
  while (b < header.size() && header[b] == ' ') ++b;
  size_t e = b;
  int depth = 0;
  for (; e < header.size(); ++e) {
    char ch = header[e];
    if (ch == '(') ++depth;
    if (ch == ')') --depth;
    if (depth == 0 && (ch == ',' || ch == '}')) break;
    if (depth < 0) break;
  }
  std::string v = header.substr(b, e - b);
  while (!v.empty() && v.back() == ' ') v.pop_back();
  return v;
}

std::vector<int64_t> parse_shape(const std::string& v) {
  std::vector<int64_t> dims;
  if (v.size() < 2 || v.front() != '(' || v.back() != ')') return {-1};
  const char* p = v.data() + 1;
  const char* end = v.data() + v.size() - 1;
  while (p < end) {
    while (p < end && (*p == ' ' || *p == ',')) ++p;
    if (p == end) break;
    int64_t d;
    auto r = std::from_chars(p, end, d);
    if (r.ec != std::errc() || d < 0) return {-1};
    dims.push_back(d);
    p = r.ptr;
    while (p < end && *p == 'L') ++p;  // Python 2 long suffix
  }
  return dims;
}

}  // namespace

bool is_npy_file(const std::string& path) {
  auto ends = [&](const char* tail) {
    const size_t n = std::strlen(tail);
    return path.size() >= n && path.compare(path.size() - n, n, tail) == 0;
  };
  if (ends(".npy") || ends(".npy.gz")) return true;
  // A pipe has no name to go by (`--features <(zcat f.npy.gz)`): its first bytes say.
  if (!is_stream(path)) return false;
  const std::string& b = stream_bytes(path);
  return b.compare(0, 6, "\x93NUMPY") == 0;
}

namespace {

// The header of the .npy open on `file` (at its start; `file_size` bytes in all), checked
// against the data's size: the layout read_npy and read_npy_rows read the data by.
NpyLayout read_layout(std::FILE* file, const std::string& path, int64_t file_size, int max_dims) {
  auto bad = [&](const std::string& what) { return InputError(path, 0, what); };
  unsigned char pre[10];
  if (std::fread(pre, 1, 10, file) != 10 || std::memcmp(pre, "\x93NUMPY", 6) != 0)
    throw bad("not a .npy file (expected the magic \\x93NUMPY at the start)");
  const int major = pre[6];
  if (major < 1 || major > 3)
    throw bad("unsupported .npy version " + std::to_string(major) + " (expected 1, 2 or 3)");
  int64_t header_len = pre[8] | pre[9] << 8;
  int64_t prefix = 10;
  if (major >= 2) {
    unsigned char more[2];
    if (std::fread(more, 1, 2, file) != 2) throw bad("truncated .npy header");
    header_len |= int64_t(more[0]) << 16 | int64_t(more[1]) << 24;
    prefix = 12;
  }
  if (header_len <= 0 || prefix + header_len > file_size) throw bad("truncated .npy header");
  std::string header(size_t(header_len), '\0');
  if (std::fread(header.data(), 1, header.size(), file) != header.size())
    throw bad("truncated .npy header");
  while (!header.empty() && (header.back() == '\n' || header.back() == ' ')) header.pop_back();
  // NumPy writes the dict with single quotes; other writers use double ones, equally valid.
  std::replace(header.begin(), header.end(), '"', '\'');

  const std::string descr = dict_value(header, "descr");
  const std::string order = dict_value(header, "fortran_order");
  const std::vector<int64_t> shape = parse_shape(dict_value(header, "shape"));
  int item = 0;
  if (descr == "'<f4'" || descr == "'=f4'") item = 4;
  if (descr == "'<f8'" || descr == "'=f8'") item = 8;
  if (item == 0)
    throw bad("expected float32 or float64 little-endian data ('<f4' or '<f8'), header says " +
              (descr.empty() ? std::string("no descr") : descr) + " [" + header + "]");
  if (order != "False")
    throw bad("expected C order (fortran_order False), header says " +
              (order.empty() ? std::string("nothing") : order));
  const std::string dims_text[] = {"", "1-D", "1-D or 2-D", "1-D, 2-D or 3-D"};
  if (shape.empty() || int(shape.size()) > max_dims || shape[0] < 0)
    throw bad("expected a " + dims_text[max_dims] + " shape, header says " +
              dict_value(header, "shape"));
  NpyMatrix m;
  m.shape = shape;
  m.rows = shape[0];
  m.cols = 1;
  std::string shape_text = std::to_string(shape[0]);
  for (size_t d = 1; d < shape.size(); ++d) shape_text += " x " + std::to_string(shape[d]);
  if (shape.size() == 1) shape_text += " x 1";
  const int64_t data_bytes = file_size - prefix - header_len;
  // The product computed only once it is known to fit: a header can say anything.
  auto too_large = [&] {
    return bad("shape " + shape_text + " is too large: its data would exceed 2^63 bytes, the " +
               "file has " + std::to_string(data_bytes));
  };
  for (size_t d = 1; d < shape.size(); ++d) {
    if (shape[d] != 0 && m.cols > std::numeric_limits<int64_t>::max() / item / shape[d])
      throw too_large();
    m.cols *= shape[d];
  }
  if (m.cols != 0 && m.rows > std::numeric_limits<int64_t>::max() / item / m.cols)
    throw too_large();
  const int64_t count64 = m.rows * m.cols, need = count64 * item;
  if (need > data_bytes)
    throw bad("truncated data: shape " + shape_text + " needs " + std::to_string(need) +
              " bytes, the file has " + std::to_string(data_bytes));
  // NumPy writes nothing after the data: more bytes are a header whose shape understates the
  // array, or a second array saved into the same file (np.load would read the first alone).
  if (need < data_bytes)
    throw bad("shape " + shape_text + " is " + std::to_string(need) +
              " bytes of data, the file has " + std::to_string(data_bytes) +
              ": the shape in the header is not the array's (or a second array follows)");
  NpyLayout l;
  l.rows = m.rows;
  l.cols = m.cols;
  l.item = item;
  l.shape = m.shape;
  l.data_offset = prefix + header_len;
  return l;
}

}  // namespace

NpyMatrix read_npy(const std::string& path, int max_dims) {
  DGNN_CHECK(max_dims >= 1 && max_dims <= 3, Error, "read_npy: max_dims must be 1..3");
  // A features.npy.gz, or a pipe: inflated (or read to its end) into memory and read from
  // there. A plain file is read in place, so the matrix is the only copy in memory. A pipe is
  // never opened here (a FIFO closed early would lose its writer): read_file reads it.
  const bool stream = is_stream(path);
  File file;
  struct stat st {};
  if (!stream) {
    file.f = std::fopen(path.c_str(), "rb");
    if (!file.f) throw IoError("cannot open '" + path + "': " + std::strerror(errno));
    note_input(::fileno(file.f), path);
    if (::fstat(::fileno(file.f), &st) != 0 || S_ISDIR(st.st_mode))
      throw IoError("cannot read '" + path + "': not a regular file");
  }
  int64_t file_size = st.st_size;
  std::string inflated;
  unsigned char gz[2] = {0, 0};
  if (stream || (std::fread(gz, 1, 2, file.f) == 2 && gz[0] == 0x1f && gz[1] == 0x8b)) {
    if (file.f) std::fclose(file.f);
    file.f = nullptr;
    inflated = read_file(path);
    file_size = int64_t(inflated.size());
    if (!inflated.empty()) file.f = ::fmemopen(inflated.data(), inflated.size(), "rb");
    if (!inflated.empty() && !file.f)
      throw IoError("cannot read '" + path + "': " + std::strerror(errno));
  } else {
    std::rewind(file.f);
  }
  if (!file.f) throw InputError(path, 0, "not a .npy file (it is empty)");
  const NpyLayout l = read_layout(file.f, path, file_size, max_dims);
  NpyMatrix m;
  m.shape = l.shape;
  m.rows = l.rows;
  m.cols = l.cols;
  const int item = l.item;
  auto bad = [&](const std::string& what) { return InputError(path, 0, what); };
  const int64_t count64 = m.rows * m.cols;
  const size_t count = size_t(count64);
  m.data.resize(count);
  if (item == 4) {
    if (std::fread(m.data.data(), 4, count, file.f) != count) throw bad("truncated data");
  } else {
    // Converted in blocks to keep the temporary small.
    std::vector<double> block(1 << 16);
    for (size_t done = 0; done < count;) {
      size_t k = std::min(block.size(), count - done);
      if (std::fread(block.data(), 8, k, file.f) != k) throw bad("truncated data");
      for (size_t i = 0; i < k; ++i) m.data[done + i] = float(block[i]);
      done += k;
    }
  }
  // A plain file, read in place: what was taken from it (the probe of its first two bytes was
  // re-read). read_file counted a .gz's and a pipe's bytes.
  if (inflated.empty()) count_input_bytes(l.data_offset + count64 * item);
  return m;
}

void write_npy(const std::string& path, const float* data, int64_t rows, int64_t cols) {
  write_npy(path, data, std::vector<int64_t>{rows, cols});
}

std::string npy_header(const std::vector<int64_t>& shape) {
  std::string dims;
  for (int64_t d : shape) dims += std::to_string(d) + ", ";
  // (n,) for one dimension, else (a, b).
  // erase, not resize: GCC 12 saw a resize that might grow the string (-Wrestrict).
  if (!dims.empty()) dims.erase(dims.size() - (shape.size() > 1 ? 2 : 1));
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (" + dims + "), }";
  // NumPy pads the header so the data starts on a 64-byte boundary, ending in '\n'.
  const size_t total = (10 + header.size() + 1 + 63) / 64 * 64;
  header.append(total - 10 - header.size() - 1, ' ');
  header.push_back('\n');
  const char pre[10] = {char(0x93), 'N', 'U', 'M', 'P', 'Y', 1, 0, char(header.size() & 0xff),
                        char(header.size() >> 8)};
  return std::string(pre, 10) + header;
}

void write_npy(const std::string& path, const float* data, const std::vector<int64_t>& shape) {
  int64_t count64 = 1;
  for (int64_t d : shape) count64 *= d;
  const std::string header = npy_header(shape);
  const size_t count = size_t(count64);
  // Streamed, not built in memory: a feature matrix can be most of the memory in use.
  AtomicFile out(path);
  std::fwrite(header.data(), 1, header.size(), out.get());
  if (count) std::fwrite(data, 4, count, out.get());
  out.commit();
}

NpyLayout read_npy_layout(const std::string& path, int max_dims) {
  File file;
  file.f = std::fopen(path.c_str(), "rb");
  if (!file.f) throw IoError("cannot open '" + path + "': " + std::strerror(errno));
  note_input(::fileno(file.f), path);
  struct stat st {};
  if (::fstat(::fileno(file.f), &st) != 0 || !S_ISREG(st.st_mode))
    throw IoError("cannot read '" + path + "': not a regular file");
  unsigned char gz[2] = {0, 0};
  if (std::fread(gz, 1, 2, file.f) == 2 && gz[0] == 0x1f && gz[1] == 0x8b)
    throw IoError("read_npy_layout: '" + path + "' is gzipped");
  std::rewind(file.f);
  if (st.st_size == 0) throw InputError(path, 0, "not a .npy file (it is empty)");
  return read_layout(file.f, path, int64_t(st.st_size), max_dims);
}

namespace {

// Rows [begin, end) of an open .npy into out (float32), counted as input bytes.
void read_run(std::FILE* f, const std::string& path, const NpyLayout& l, int64_t begin,
              int64_t end, float* out) {
  const int64_t count = (end - begin) * l.cols;
  if (count <= 0) return;
  if (::fseeko(f, off_t(l.data_offset + begin * l.cols * l.item), SEEK_SET) != 0)
    throw IoError("cannot seek in '" + path + "': " + std::strerror(errno));
  auto truncated = [&] { return InputError(path, 0, "truncated data"); };
  if (l.item == 4) {
    if (std::fread(out, 4, size_t(count), f) != size_t(count)) throw truncated();
    count_input_bytes(count * 4);
    return;
  }
  std::vector<double> block(size_t(std::min<int64_t>(count, 1 << 16)));
  for (int64_t done = 0; done < count;) {
    const size_t k = size_t(std::min<int64_t>(int64_t(block.size()), count - done));
    if (std::fread(block.data(), 8, k, f) != k) throw truncated();
    for (size_t i = 0; i < k; ++i) out[size_t(done) + i] = float(block[i]);
    done += int64_t(k);
  }
  count_input_bytes(count * 8);
}

File open_data(const std::string& path) {
  File file;
  file.f = std::fopen(path.c_str(), "rb");
  if (!file.f) throw IoError("cannot open '" + path + "': " + std::strerror(errno));
  note_input(::fileno(file.f), path);
  return file;
}

}  // namespace

std::vector<float> read_npy_rows(const std::string& path, const NpyLayout& l, int64_t begin,
                                 int64_t end) {
  const int64_t count = (end - begin) * l.cols;
  std::vector<float> out(size_t(count > 0 ? count : 0));
  if (count <= 0) return out;
  File file = open_data(path);
  read_run(file.f, path, l, begin, end, out.data());
  return out;
}

std::vector<float> read_npy_row_set(const std::string& path, const NpyLayout& l,
                                    const std::vector<int64_t>& rows) {
  std::vector<float> out(rows.size() * size_t(l.cols));
  if (out.empty()) return out;
  for (size_t i = 0; i < rows.size(); ++i)
    if (rows[i] < 0 || rows[i] >= l.rows || (i > 0 && rows[i] <= rows[i - 1]))
      throw ShapeError("read_npy_row_set: rows must ascend within the file's " +
                       std::to_string(l.rows));
  File file = open_data(path);
  // One read per run of consecutive rows.
  for (size_t i = 0; i < rows.size();) {
    size_t j = i + 1;
    while (j < rows.size() && rows[j] == rows[j - 1] + 1) ++j;
    read_run(file.f, path, l, rows[i], rows[j - 1] + 1, out.data() + i * size_t(l.cols));
    i = j;
  }
  return out;
}

}  // namespace dgnn
