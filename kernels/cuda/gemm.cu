// Dense products through cuBLAS. cuBLAS is column-major: a row-major matrix is its transpose
// seen column-major, so C = op(A) op(B) (row-major) is C^T = op(B)^T op(A)^T (column-major),
// i.e. the same call with the operands swapped and the flags kept.
#include "dgnn/kernels/cuda/context.hpp"

namespace dgnn::kernels::cuda {

void gemm(bool trans_a, bool trans_b, float alpha, ConstMatView a, ConstMatView b, float beta,
          MatView c) {
  const int m = int(c.rows), n = int(c.cols);
  const int k = int(trans_a ? a.rows : a.cols);
  if (m == 0 || n == 0) return;
  require_context_stream("gemm (cuBLAS)");
  cublasHandle_t h = context().cublas;
  // A leading dimension must be at least 1 even for an empty or single-row operand.
  auto ld = [](int64_t l, int64_t cols) { return int(l > 0 ? l : (cols > 0 ? cols : 1)); };
  if (k == 0) {
    if (beta == 0.f) {  // C = 0 exactly, whatever C held (NaN bit patterns included)
      DGNN_CUDA_CHECK(cudaMemset2DAsync(c.data, size_t(ld(c.ld, n)) * sizeof(float), 0,
                                        size_t(n) * sizeof(float), size_t(m), stream()));
      return;
    }
    // C = beta C (cuBLAS geam in place: C = beta C + 0 C).
    const float zero = 0.f;
    DGNN_CUBLAS_CHECK(cublasSgeam(h, CUBLAS_OP_N, CUBLAS_OP_N, n, m, &beta, c.data, ld(c.ld, n),
                                  &zero, c.data, ld(c.ld, n), c.data, ld(c.ld, n)));
    return;
  }
  DGNN_CUBLAS_CHECK(cublasSgemm(h, trans_b ? CUBLAS_OP_T : CUBLAS_OP_N,
                                trans_a ? CUBLAS_OP_T : CUBLAS_OP_N, n, m, k, &alpha, b.data,
                                ld(b.ld, b.cols), a.data, ld(a.ld, a.cols), &beta, c.data,
                                ld(c.ld, n)));
}

}  // namespace dgnn::kernels::cuda
