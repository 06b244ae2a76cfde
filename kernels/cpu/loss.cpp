// Softmax cross-entropy and accuracy over a list of labelled rows.
#include <cmath>
#include <vector>

#include "dgnn/kernels/cpu/cpu_kernels.hpp"

namespace dgnn::kernels::cpu {

double softmax_xent(ConstMatView logits, const int32_t* rows, const int32_t* labels, int64_t n,
                    float scale, MatView dlogits) {
  const int64_t cols = logits.cols;
  // Per-row losses are summed afterwards in list order so the total does not depend on how
  // the rows were split between threads.
  std::vector<double> loss(size_t(n), 0.0);
#pragma omp parallel for if (n * cols >= (1 << 14))
  for (int64_t i = 0; i < n; ++i) {
    const float* z = logits.row(rows[i]);
    // log-sum-exp shifted by the row maximum: exp never overflows, and the largest term is 1.
    float m = z[0];
    for (int64_t c = 1; c < cols; ++c) m = z[c] > m ? z[c] : m;
    double s = 0.0;
    for (int64_t c = 0; c < cols; ++c) s += std::exp(double(z[c] - m));
    const double lse = double(m) + std::log(s);
    loss[size_t(i)] = lse - double(z[labels[i]]);
    if (dlogits.data) {
      float* d = dlogits.row(rows[i]);
      for (int64_t c = 0; c < cols; ++c) d[c] = scale * float(std::exp(double(z[c]) - lse));
      d[labels[i]] -= scale;
    }
  }
  double total = 0.0;
  for (double l : loss) total += l;
  return total;
}

int64_t count_correct(ConstMatView logits, const int32_t* rows, const int32_t* labels, int64_t n) {
  int64_t correct = 0;
#pragma omp parallel for reduction(+ : correct) if (n >= (1 << 12))
  for (int64_t i = 0; i < n; ++i) {
    const float* z = logits.row(rows[i]);
    int64_t best = 0;
    for (int64_t c = 1; c < logits.cols; ++c)
      if (z[c] > z[best]) best = c;  // strict: ties keep the lowest index
    correct += best == labels[i];
  }
  return correct;
}

}  // namespace dgnn::kernels::cpu
