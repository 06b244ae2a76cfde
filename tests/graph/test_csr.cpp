#include <catch2/catch.hpp>

#include "dgnn/common/error.hpp"
#include "dgnn/graph/csr.hpp"

using namespace dgnn;

namespace {

// 3 x 4 with a duplicate (0,1) whose weights must keep their input order.
Csr sample() {
  return csr_from_coo(3, 4, {2, 0, 0, 2, 1, 0}, {1, 3, 1, 0, 2, 1}, {1, 2, 3, 4, 5, 6});
}

}  // namespace

TEST_CASE("csr_from_coo sorts rows by column, keeps duplicates in input order", "[csr]") {
  const Csr c = sample();
  CHECK(c.rows == 3);
  CHECK(c.cols == 4);
  CHECK(c.offsets == std::vector<int64_t>{0, 3, 4, 6});
  CHECK(c.indices == std::vector<int32_t>{1, 1, 3, 2, 0, 1});
  CHECK(c.values == std::vector<float>{3, 6, 2, 5, 4, 1});
  CHECK(c.nnz() == 6);
  CHECK(c.weighted());
  CHECK(c.degree(0) == 3);
  CHECK(c.degree(1) == 1);
  CHECK(c.memory_bytes() == 4 * 8 + 6 * 4 + 6 * 4);
  const CsrView v = c.view();
  CHECK(v.nnz() == 6);
  CHECK(v.values == c.values.data());
}

TEST_CASE("csr_from_coo without weights and with empty rows", "[csr]") {
  const Csr c = csr_from_coo(4, 4, {3, 3, 0}, {2, 0, 3}, {});
  CHECK(c.offsets == std::vector<int64_t>{0, 1, 1, 1, 3});
  CHECK(c.indices == std::vector<int32_t>{3, 0, 2});
  CHECK_FALSE(c.weighted());
  CHECK(c.view().values == nullptr);
  CHECK(c.memory_bytes() == 5 * 8 + 3 * 4);

  const Csr empty = csr_from_coo(0, 0, {}, {}, {});
  CHECK(empty.offsets == std::vector<int64_t>{0});
  CHECK(empty.nnz() == 0);
}

TEST_CASE("csr_from_coo rejects entries outside the shape", "[csr]") {
  CHECK_THROWS_AS(csr_from_coo(2, 2, {0, 2}, {1, 1}, {}), ShapeError);
  CHECK_THROWS_AS(csr_from_coo(2, 2, {0}, {-1}, {}), ShapeError);
  CHECK_THROWS_AS(csr_from_coo(2, 2, {0, 1}, {1}, {}), ShapeError);
  CHECK_THROWS_AS(csr_from_coo(2, 2, {0}, {1}, {1, 2}), ShapeError);
}

TEST_CASE("Csr::transpose swaps shape, carries values, rows sorted", "[csr]") {
  const Csr c = sample();
  const Csr t = c.transpose();
  CHECK(t.rows == 4);
  CHECK(t.cols == 3);
  CHECK(t.offsets == std::vector<int64_t>{0, 1, 4, 5, 6});
  CHECK(t.indices == std::vector<int32_t>{2, 0, 0, 2, 1, 0});
  CHECK(t.values == std::vector<float>{4, 3, 6, 1, 5, 2});
  CHECK(t.memory_bytes() == 5 * 8 + 6 * 4 + 6 * 4);

  const Csr back = t.transpose();
  CHECK(back.rows == c.rows);
  CHECK(back.cols == c.cols);
  CHECK(back.offsets == c.offsets);
  CHECK(back.indices == c.indices);
  CHECK(back.values == c.values);

  const Csr plain = csr_from_coo(2, 3, {0, 0, 1}, {0, 2, 2}, {}).transpose();
  CHECK(plain.offsets == std::vector<int64_t>{0, 1, 1, 3});
  CHECK(plain.indices == std::vector<int32_t>{0, 0, 1});
  CHECK(plain.values.empty());
}
