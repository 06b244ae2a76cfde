#pragma once
// Vertex signals over time, for forecasting (traffic speeds, weekly case counts): one graph, or a
// snapshot sequence, with F values on every vertex at each of T steps.
//
// Two inputs:
//  - PyTorch Geometric Temporal's JSON layout (its chickenpox.json and alike): `edges` (pairs
//    of vertex ids), optional `weights` (one per edge), `FX` (T rows of N values: step t, vertex
//    v); the graph is static and directed as listed; plain or gzipped;
//  - a graph already loaded (static or temporal) and a signals.npy shaped [T, N] or [T, N, F],
//    row t = step t, column = vertex id: the graph's ids must be 0..N-1.
// Errors name the file and the part that does not fit (T, N or F, an edge's ids).
#include <cstdint>
#include <string>
#include <vector>

#include "dgnn/graph/graph.hpp"
#include "dgnn/graph/npy.hpp"
#include "dgnn/graph/temporal.hpp"

namespace dgnn {

struct SignalSeries {
  // One snapshot (the same graph at every step) or one per step; vertex v's dense id is its id
  // in the files (0..N-1).
  TemporalGraph graph;
  int64_t steps = 0;          // T
  int64_t channels = 0;       // F
  std::vector<float> values;  // T x N x F, row-major
  std::string source;         // the file the values came from (for messages)
  int64_t vertices() const { return graph.num_vertices; }
  float at(int64_t t, int64_t v, int64_t f) const {
    return values[size_t((t * graph.num_vertices + v) * channels + f)];
  }
};

// True for a path whose name ends in .json or .json.gz.
bool is_signal_json(const std::string& path);

// PyG-Temporal's JSON layout (see above). InputError naming the file for a missing key, rows of
// different lengths, an edge naming a vertex outside 0..N-1, weights of another count than the
// edges, a non-finite value.
SignalSeries read_signal_json(const std::string& path);

// A static edge list as a graph of one snapshot, ids 0..min_vertices-1 being vertices even
// without an edge (self loops, duplicates and direction as `opt` says).
TemporalGraph static_as_temporal(EdgeList edges, const EdgeListOptions& opt,
                                 const std::string& path, int64_t min_vertices);

// signals.npy: a [T, N] or [T, N, F] array (float32 or float64, plain or gzipped), read whole;
// InputError naming the file for another shape or a value that is not finite.
NpyMatrix read_signal_npy(const std::string& path);
// The signal `m` (read_signal_npy of `path`) on `graph`, whose vertex ids must be 0..N-1 (load it
// with N as its least vertex count): InputError naming the file when an id reaches N or when a
// temporal graph's snapshot count is not T.
SignalSeries attach_signals(TemporalGraph graph, NpyMatrix m, const std::string& path);

}  // namespace dgnn
