#pragma once
// Recurrent cells as fused ops with backward (one node each), used per vertex by GCRN / T-GCN and
// over weight matrices by EvolveGCN.
#include "dgnn/gnn/core/autograd.hpp"

namespace dgnn {

// h and c are column views of one tape node holding [h | c]: using either, both or neither is
// correct, and the cell's backward runs once with both gradients.
struct LstmOut {
  Var h, c;
};

// LSTM cell from pre-activations: gates = x W_x + h_prev W_h + b, N x 4H laid out [i | f | g | o]
// (input, forget, cell, output). c = sigmoid(f) * c_prev + sigmoid(i) * tanh(g);
// h = sigmoid(o) * tanh(c). c_prev is N x H.
LstmOut lstm_cell(const Var& gates, const Var& c_prev);

// GRU cell (PyTorch's formulation) from pre-activations xg = x W_x + b_x and hg = h_prev W_h + b_h,
// each N x 3H laid out [r | z | n]: r = sigmoid(xr + hr), z = sigmoid(xz + hz),
// n = tanh(xn + r * hn), h = (1 - z) * n + z * h_prev.
Var gru_cell(const Var& xg, const Var& hg, const Var& h_prev);

}  // namespace dgnn
