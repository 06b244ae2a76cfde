#pragma once
// Attention over a graph's edges, written with ops like every other layer: per-edge scores
// (additive, or a per-head dot product: SDDMM), a softmax over each vertex's in-edges, and the
// aggregation weighted by it. Edge matrices have one row per entry of the graph's
// AttentionGraph (every in-edge plus a self loop) and one column per head. They work unchanged
// on a whole graph, on one rank's part (with_halo brings the halo rows the sources need) and on
// a sampled block.
#include <cstdint>

#include "dgnn/gnn/core/autograd.hpp"
#include "dgnn/gnn/core/graph_view.hpp"

namespace dgnn {

// x (n_input_rows() x F) with the halo rows appended: n_owned + n_halo rows, fetched from their
// owners (backward returns their gradients). x itself on a whole graph or a block.
Var with_halo(const GraphView& g, const Var& x);

// z (N x H*D) against per-head vectors a (1 x H*D): out[n, h] = sum_d z[n, hD + d] a[hD + d].
Var head_dot(const Var& z, const Var& a, int64_t heads);

// out[e, h] = src[source(e), h] + dst[destination(e), h]. src: one row per source
// (with_halo's rows), dst: one row per destination (n_owned, or a block's n_dst).
Var edge_add(const GraphView& g, const Var& src, const Var& dst);

// SDDMM: out[e, h] = <q[destination(e)], k[source(e)]> over head h's columns (H = heads).
Var edge_dot(const GraphView& g, const Var& q, const Var& k, int64_t heads);

// Softmax over each destination's entries, per head.
Var edge_softmax(const GraphView& g, const Var& scores);

// y[v, hD + d] = sum over v's entries e of w[e, h] x[source(e), hD + d]: x has one row per source
// (with_halo's rows), y one per destination.
Var aggregate_edges(const GraphView& g, const Var& w, const Var& x);

}  // namespace dgnn
