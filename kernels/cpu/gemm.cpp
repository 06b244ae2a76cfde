// Dense products through CBLAS (OpenBLAS), which brings its own threading and blocking.
#include <cblas.h>

#include <algorithm>

#include "dgnn/kernels/cpu/cpu_kernels.hpp"

namespace dgnn::kernels::cpu {

void gemm(bool trans_a, bool trans_b, float alpha, ConstMatView a, ConstMatView b, float beta,
          MatView c) {
  const int64_t m = c.rows, n = c.cols;
  const int64_t k = trans_a ? a.rows : a.cols;
  if (m == 0 || n == 0) return;
  if (k == 0 || alpha == 0.f) {
    // BLAS rejects zero dimensions; the product is empty, so only the beta scaling remains.
    // beta == 0 overwrites (as BLAS does) so garbage or NaN already in C does not survive.
    for (int64_t r = 0; r < m; ++r) {
      float* row = c.row(r);
      for (int64_t j = 0; j < n; ++j) row[j] = beta == 0.f ? 0.f : beta * row[j];
    }
    return;
  }
  // An ld of 0 is legal in a view with one row but not for BLAS, which wants ld >= max(1, cols).
  auto ld = [](auto v) { return std::max<int64_t>({v.ld, v.cols, 1}); };
  cblas_sgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans,
              trans_b ? CblasTrans : CblasNoTrans, int(m), int(n), int(k), alpha, a.data,
              int(ld(a)), b.data, int(ld(b)), beta, c.data, int(ld(c)));
}

}  // namespace dgnn::kernels::cpu
