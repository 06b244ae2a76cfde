#include <catch2/catch.hpp>
#include <cstring>

#include "dgnn/common/error.hpp"
#include "dgnn/graph/graph.hpp"
#include "dgnn/graph/npy.hpp"
#include "temp_files.hpp"

using namespace dgnn;
using Catch::Matchers::Contains;
using dgnn::test::bytes_of;
using dgnn::test::error_of;
using dgnn::test::PipeSource;
using dgnn::test::TempDir;

namespace {

// A .npy written byte by byte, as NumPy would (v1 header padded to 64 bytes).
std::string npy_bytes(const std::string& dict, const void* data, size_t bytes, int major = 1) {
  std::string header = dict;
  const size_t pre = major == 1 ? 10 : 12;
  while ((pre + header.size() + 1) % 64) header.push_back(' ');
  header.push_back('\n');
  std::string out = "\x93NUMPY";
  out.push_back(char(major));
  out.push_back(0);
  out.push_back(char(header.size() & 0xff));
  out.push_back(char(header.size() >> 8));
  if (major != 1) out.append(2, '\0');
  out += header;
  out.append(static_cast<const char*>(data), bytes);
  return out;
}

}  // namespace

TEST_CASE("npy: float32 round trip through write_npy", "[npy]") {
  TempDir tmp;
  const std::vector<float> m = {1, 2, 3, 4, 5, 6.5f};
  const std::string f = tmp.path("m.npy");
  write_npy(f, m.data(), 2, 3);
  const std::string raw = read_file(f);
  CHECK(raw.size() % 64 == 24);  // 64-byte aligned header, then 6 floats
  const NpyMatrix r = read_npy(f);
  CHECK(r.rows == 2);
  CHECK(r.cols == 3);
  CHECK(r.data == m);
}

TEST_CASE("npy: 1-D and 3-D arrays (signals [T, N, F]) round trip with their shape", "[npy]") {
  TempDir tmp;
  std::vector<float> v(24);
  for (size_t i = 0; i < v.size(); ++i) v[i] = float(i) * 0.5f;
  const std::string f3 = tmp.path("s.npy"), f1 = tmp.path("v.npy");
  write_npy(f3, v.data(), std::vector<int64_t>{2, 3, 4});
  write_npy(f1, v.data(), std::vector<int64_t>{24});
  CHECK_THAT(bytes_of(f3), Contains("'shape': (2, 3, 4), }"));
  CHECK_THAT(bytes_of(f1), Contains("'shape': (24,), }"));
  const NpyMatrix m = read_npy(f3, 3);
  CHECK(m.shape == std::vector<int64_t>{2, 3, 4});
  CHECK(m.rows == 2);
  CHECK(m.cols == 12);
  CHECK(m.data == v);
  const NpyMatrix one = read_npy(f1);
  CHECK(one.shape == std::vector<int64_t>{24});
  CHECK(one.cols == 1);
  // A feature matrix stays 2-D: the default refuses three dimensions, naming them.
  CHECK_THAT(error_of<InputError>([&] { read_npy(f3); }),
             Contains("s.npy: expected a 1-D or 2-D shape, header says (2, 3, 4)"));
}

TEST_CASE("npy: gzipped and piped files read as the plain file", "[npy]") {
  TempDir tmp;
  const std::vector<float> v = {1.5f, -2.0f, 3.25f, 0.0f, 7.0f, 8.5f};
  const std::string plain = tmp.path("f.npy");
  write_npy(plain, v.data(), 3, 2);
  const std::string bytes = bytes_of(plain);
  const std::string gz = tmp.write_gz("f.npy.gz", bytes);
  CHECK(is_npy_file(gz));
  for (const NpyMatrix& m : {read_npy(gz), [&] {
                               PipeSource pipe(bytes);
                               CHECK(is_npy_file(pipe.path()));
                               return read_npy(pipe.path());
                             }()}) {
    CHECK(m.rows == 3);
    CHECK(m.cols == 2);
    CHECK(m.data == v);
  }
  // Cut inside the data, once inflated: the same message as a cut plain file.
  const std::string cut = tmp.write_gz("cut.npy.gz", bytes.substr(0, bytes.size() - 4));
  CHECK_THAT(error_of<InputError>([&] { read_npy(cut); }), Contains("truncated data"));
  const std::string empty = tmp.write_gz("empty.npy.gz", "");
  CHECK_THAT(error_of<InputError>([&] { read_npy(empty); }), Contains("empty"));
}

TEST_CASE("npy: float64, 1-D and version 2 headers", "[npy]") {
  TempDir tmp;
  const double d[4] = {0.5, -1.25, 3, 1e-3};
  const std::string f = tmp.write(
      "d.npy", npy_bytes("{'descr': '<f8', 'fortran_order': False, 'shape': (2, 2), }", d, 32));
  NpyMatrix r = read_npy(f);
  CHECK(r.rows == 2);
  CHECK(r.cols == 2);
  CHECK(r.data == std::vector<float>{0.5f, -1.25f, 3.0f, 1e-3f});

  const float v[3] = {7, 8, 9};
  const std::string g = tmp.write(
      "v.npy", npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }", v, 12, 2));
  r = read_npy(g);
  CHECK(r.rows == 3);
  CHECK(r.cols == 1);
  CHECK(r.data == std::vector<float>{7, 8, 9});

  // Double-quoted keys and values (writers other than NumPy): the same matrix.
  const std::string h = tmp.write(
      "q.npy", npy_bytes(R"({"descr": "<f4", "fortran_order": False, "shape": (3,), })", v, 12));
  CHECK(read_npy(h).data == std::vector<float>{7, 8, 9});
}

TEST_CASE("npy: bad headers are input errors naming the file", "[npy][errors]") {
  TempDir tmp;
  const float x[4] = {1, 2, 3, 4};
  auto msg_of = [&](const std::string& name, const std::string& bytes) {
    const std::string f = tmp.write(name, bytes);
    return std::pair{f, error_of<InputError>([&] { read_npy(f); })};
  };
  {
    auto [f, m] = msg_of("text.npy", "0 1 2\n3 4 5\n");
    CHECK_THAT(m, Contains(f + ": not a .npy file"));
  }
  {
    auto [f, m] = msg_of(
        "int.npy", npy_bytes("{'descr': '<i4', 'fortran_order': False, 'shape': (2, 2), }", x, 16));
    CHECK_THAT(m, Contains(f + ": expected float32 or float64") && Contains("'<i4'"));
  }
  {
    auto [f, m] = msg_of(
        "big.npy", npy_bytes("{'descr': '>f4', 'fortran_order': False, 'shape': (2, 2), }", x, 16));
    CHECK_THAT(m, Contains(f + ": expected float32 or float64") && Contains("'>f4'"));
  }
  {
    auto [f, m] =
        msg_of("fortran.npy",
               npy_bytes("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }", x, 16));
    CHECK_THAT(m, Contains(f + ": expected C order") && Contains("True"));
  }
  {
    auto [f, m] =
        msg_of("3d.npy",
               npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (1, 2, 2), }", x, 16));
    CHECK_THAT(m, Contains(f + ": expected a 1-D or 2-D shape") && Contains("(1, 2, 2)"));
  }
  {
    auto [f, m] =
        msg_of("short.npy",
               npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (3, 2), }", x, 16));
    CHECK_THAT(m, Contains(f + ": truncated data: shape 3 x 2 needs 24 bytes, the file has 16"));
  }
  {
    std::string b = npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), }", x, 16);
    b[8] = char(0xff);  // header length beyond the file
    b[9] = char(0x7f);
    auto [f, m] = msg_of("hlen.npy", b);
    CHECK_THAT(m, Contains(f + ": truncated .npy header"));
  }
  const std::string missing = tmp.path("none.npy");
  CHECK_THAT(error_of<IoError>([&] { read_npy(missing); }), Contains(missing));
}

TEST_CASE("npy: data past the header's shape is refused, not dropped", "[npy][errors]") {
  TempDir tmp;
  const float x[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  // A 4 x 2 matrix whose header says 2 x 2 (or two arrays saved into one file): NumPy's np.load
  // and dgnn read the first 4 values alone, before.
  const std::string f = tmp.write(
      "long.npy", npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), }", x, 32));
  CHECK_THAT(error_of<InputError>([&] { read_npy(f); }),
             Contains(f + ": shape 2 x 2 is 16 bytes of data, the file has 32"));
  const std::string g = tmp.write(
      "exact.npy", npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (4, 2), }", x, 32));
  CHECK(read_npy(g).rows == 4);
}

TEST_CASE("npy: a shape whose byte size overflows is refused, not miscounted", "[npy][errors]") {
  TempDir tmp;
  const float x[4] = {1, 2, 3, 4};
  auto msg_of = [&](const std::string& name, const std::string& shape) {
    const std::string f = tmp.write(
        name,
        npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': " + shape + ", }", x, 16));
    return std::pair{f, error_of<InputError>([&] { read_npy(f); })};
  };
  {
    // 3 x 3074457345618258603 elements is just over 2^63; times 4 bytes wraps around.
    auto [f, m] = msg_of("wrap.npy", "(3, 3074457345618258603)");
    CHECK_THAT(m, Contains(f + ": shape 3 x 3074457345618258603 is too large") &&
                      Contains("the file has 16"));
  }
  {
    // 2^40 x 2^22 floats: exactly 2^64 bytes, which the old message printed as 0.
    auto [f, m] = msg_of("zero.npy", "(1099511627776, 4194304)");
    CHECK_THAT(m, Contains(f + ": shape 1099511627776 x 4194304 is too large"));
  }
  {
    // Large but representable: the exact count.
    auto [f, m] = msg_of("big.npy", "(1000000000000, 1000)");
    CHECK_THAT(m, Contains(f + ": truncated data: shape 1000000000000 x 1000 needs "
                               "4000000000000000 bytes, the file has 16"));
  }
}
