#pragma once
// The pair-scoring MLP (kernels.hpp: pair_mlp_forward / _backward) composed of the other
// kernels — gathers, element-wise products, GEMMs over all pairs at once — on any device. It is
// the plain oracle that the fused CPU kernel is tested against, and the CUDA backend's
// implementation (whose pieces are each tested against the CPU).
#include "dgnn/kernels/kernels.hpp"

namespace dgnn::kernels {

void pair_mlp_forward_composed(Device dev, const PairMlp& p, MatView logits);
void pair_mlp_backward_composed(Device dev, const PairMlp& p, ConstMatView dlogits, MatView dhu,
                                MatView dhv, MatView dw1, float* db1, MatView dw2, float* db2);

}  // namespace dgnn::kernels
