// The attention kernels (edge_add, SDDMM, edge softmax and its backward, per-head SpMM, row
// sums) on the GPU against the CPU backend, on a random graph with empty rows and a hub row.
#include <catch2/catch.hpp>

#include "dgnn/common/error.hpp"
#include "dgnn/common/hash_rng.hpp"
#include "gpu_test_util.hpp"
#include "dgnn/graph/csr.hpp"
#include "dgnn/kernels/device_csr.hpp"

using namespace dgnn;
using namespace dgnn::test;

namespace {

Csr random_graph(int64_t rows, int64_t cols, uint64_t seed) {
  Rng rng(seed);
  std::vector<int32_t> r, c;
  for (int64_t v = 0; v < rows; ++v) {
    if (v % 7 == 3) continue;  // empty rows
    const int64_t deg = v == 5 ? cols : 1 + int64_t(rng.uniform() * 6);  // row 5: a hub
    for (int64_t k = 0; k < deg; ++k) {
      r.push_back(int32_t(v));
      c.push_back(v == 5 ? int32_t(k) : int32_t(rng.uniform() * double(cols)));
    }
  }
  return csr_from_coo(rows, cols, r, c, {});
}

std::vector<float> download(const DeviceBuf<float>& d) { return d.download(); }

}  // namespace

TEST_CASE("GPU attention kernels match the CPU", "[gpu]") {
  const int64_t rows = 300, cols = 260, heads = 2, dim = 3, hd = heads * dim;
  const Csr a = random_graph(rows, cols, 7);
  const int64_t nnz = a.nnz();
  const kernels::DeviceCsr dev(Device::cuda, a.view());
  Rng rng(3);
  HostMat src(cols, heads, heads), dst(rows, heads, heads), x(rows, hd, hd), y(cols, hd, hd),
      e(nnz, heads, heads), de(nnz, heads, heads);
  src.uniform(rng, -1, 1);
  dst.uniform(rng, -1, 1);
  x.uniform(rng, -1, 1);
  y.uniform(rng, -1, 1);
  e.uniform(rng, -3, 3);
  de.uniform(rng, -1, 1);
  DeviceBuf<float> src_d(src.v), dst_d(dst.v), x_d(x.v), y_d(y.v), e_d(e.v), de_d(de.v);

  SECTION("edge_add") {
    HostMat out(nnz, heads, heads);
    DeviceBuf<float> out_d(out.v);
    kernels::edge_add(Device::cpu, a.view(), src.cview(), dst.cview(), out.view());
    kernels::edge_add(Device::cuda, dev.view(), src.cview(src_d), dst.cview(dst_d), out.view(out_d));
    check_close(download(out_d), out.v, 1e-6, 1e-6, "edge_add");
  }
  SECTION("sddmm") {
    HostMat out(nnz, heads, heads);
    DeviceBuf<float> out_d(out.v);
    kernels::sddmm(Device::cpu, a.view(), x.cview(), y.cview(), out.view());
    kernels::sddmm(Device::cuda, dev.view(), x.cview(x_d), y.cview(y_d), out.view(out_d));
    check_close(download(out_d), out.v, 1e-5, 1e-6, "sddmm");
  }
  SECTION("edge_softmax and its backward") {
    HostMat alpha(nnz, heads, heads), ds(nnz, heads, heads);
    DeviceBuf<float> alpha_d(alpha.v), ds_d(ds.v);
    kernels::edge_softmax(Device::cpu, a.view(), e.cview(), alpha.view());
    kernels::edge_softmax(Device::cuda, dev.view(), e.cview(e_d), alpha.view(alpha_d));
    check_close(download(alpha_d), alpha.v, 1e-5, 1e-7, "edge_softmax");
    kernels::edge_softmax_backward(Device::cpu, a.view(), alpha.cview(), de.cview(), ds.view());
    kernels::edge_softmax_backward(Device::cuda, dev.view(), alpha.cview(alpha_d), de.cview(de_d),
                                   ds.view(ds_d));
    check_close(download(ds_d), ds.v, 1e-4, 1e-6, "edge_softmax_backward");
  }
  SECTION("spmm_heads and edge_row_sum, plain and accumulating") {
    for (bool acc : {false, true}) {
      HostMat out(rows, hd, hd), sums(rows, heads, heads);
      out.uniform(rng, -1, 1);
      sums.uniform(rng, -1, 1);
      DeviceBuf<float> out_d(out.v), sums_d(sums.v);
      kernels::spmm_heads(Device::cpu, a.view(), e.cview(), y.cview(), out.view(), acc);
      kernels::spmm_heads(Device::cuda, dev.view(), e.cview(e_d), y.cview(y_d), out.view(out_d),
                          acc);
      check_close(download(out_d), out.v, 1e-5, 1e-5, "spmm_heads");
      kernels::edge_row_sum(Device::cpu, a.view(), e.cview(), sums.view(), acc);
      kernels::edge_row_sum(Device::cuda, dev.view(), e.cview(e_d), sums.view(sums_d), acc);
      check_close(download(sums_d), sums.v, 1e-5, 1e-5, "edge_row_sum");
    }
  }
  SECTION("a row slice past row 0 is refused, as on the CPU (edge rows are absolute)") {
    HostMat out(nnz, heads, heads);
    DeviceBuf<float> out_d(out.v);
    const CsrView slice = dev.rows(10, rows);
    CHECK_THROWS_AS(kernels::edge_softmax(Device::cuda, slice, e.cview(e_d), out.view(out_d)),
                    ShapeError);
    CsrView host_slice = a.view();
    host_slice.offsets += 10;
    host_slice.rows -= 10;
    CHECK_THROWS_AS(kernels::edge_softmax(Device::cpu, host_slice, e.cview(), out.view()),
                    ShapeError);
  }
}
