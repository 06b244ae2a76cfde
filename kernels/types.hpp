#pragma once
// The plain types the kernels' signatures name (kernels/kernel_list.def), shared by the public
// interface (kernels.hpp) and both backends (cpu/cpu_kernels.hpp, cuda/cuda_kernels.hpp). It
// includes nothing of kernels/ itself, so a backend header never reaches back into the public
// ones. Plain C++: nvcc compiles it too.
#include <cstdint>

#include "dgnn/common/hash_rng.hpp"
#include "dgnn/common/views.hpp"

namespace dgnn::kernels {

// ---- element-wise ------------------------------------------------------------------------
enum class Unary : uint8_t { relu, leaky_relu, sigmoid, tanh, exp, neg };

// ---- pair scoring (the link-prediction head) ---------------------------------------------
// An MLP on vertex pairs that never materialises the pair features: pair i's endpoints are
// row u[i] of hu and row v[i] of hv (a null index: row i itself), its input
// x = [hu | hv | hu * hv] (3D), a = relu(x W1 + b1) (H wide), logit = a W2 + b2 (C wide).
// W1 (3D x H) is three D-row blocks, so x W1 = (hu W1a)[u] + (hv W1b)[v] + (hu * hv) W1c: the
// first two are products over the tables' rows (fewer than the pairs), only the third is per pair.
struct PairMlp {
  ConstMatView hu;             // Nu x D
  const int32_t* u = nullptr;  // pairs entries in [0, Nu), or null (then Nu = pairs, unless 0)
  ConstMatView hv;             // Nv x D
  const int32_t* v = nullptr;
  int64_t pairs = 0;
  ConstMatView w1;            // 3D x H
  const float* b1 = nullptr;  // H
  ConstMatView w2;            // H x C
  const float* b2 = nullptr;  // C
};

// The most links of one source hashed_draws takes (more: the caller draws those itself).
constexpr int64_t kDrawLinksMax = 32;

// ---- dropout -----------------------------------------------------------------------------
// The mask, shared by every backend so that their masks agree bit for bit. One 64-bit hash
// per (row, 4 columns) gives four 16-bit uniforms: 4x cheaper than a hash per element, and
// p is resolved to 1/65536. A pure function of (key, row id, column).
constexpr uint64_t dropout_row_key(uint64_t key, int64_t row_id) {
  return hash_combine(key, uint64_t(row_id));
}
constexpr uint32_t dropout_threshold(float p) { return uint32_t(double(p) * 65536.0 + 0.5); }
constexpr bool dropout_keep(uint64_t row_key, int64_t col, uint32_t threshold) {
  return ((mix64(row_key + uint64_t(col >> 2)) >> ((col & 3) * 16)) & 0xFFFF) >= threshold;
}

// ---- mini-batch blocks -------------------------------------------------------------------
// gnn's Norm, in its order: sum (edge weights, sampled entries scaled by degree / sampled),
// mean (1 / entries), gcn (A + I, 1/sqrt(deg_u + 1) 1/sqrt(deg_v + 1), sampled entries scaled).
enum class BlockNorm : uint8_t { sum, mean, gcn };

// Defined with the buffers they own (which call the kernels): kernels/device_csr.hpp,
// kernels/sample_block.hpp, kernels/minibatch_kernels.hpp. A declaration needs only the name.
class DeviceCsr;
struct SampleGraph;
struct DeviceBlock;
struct BlockAdjacency;

}  // namespace dgnn::kernels
