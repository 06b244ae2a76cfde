#pragma once
// Rows of a matrix that is sharded by vertex across ranks, fetched by global vertex id: the
// differentiable all-to-all that pair scores need when the two endpoints live on different
// ranks. Backward sends each fetched row's gradient to its owner, which adds it in.
#include <cstdint>
#include <vector>

#include "dgnn/comm/communicator.hpp"
#include "dgnn/gnn/core/autograd.hpp"

namespace dgnn {

// Where each global vertex lives: its owner rank and its row there.
struct RowDirectory {
  std::vector<int32_t> owner;
  // The row of vertex v on its owner: local[v]; or, where `local` is empty, v's place among its
  // owner's vertices in ascending id order, which only the owner finds (in `owned`). Then no
  // rank keeps a row number for every vertex: 4 bytes a vertex of the whole graph less.
  std::vector<int32_t> local;
  std::vector<int32_t> owned;  // with `local` empty: this rank's vertices, ascending
  // The row of vertex v, which this rank owns. Error if it does not (with `local` empty).
  int32_t owned_row(int32_t v) const;
  // Every vertex on rank 0 at its own index.
  static RowDirectory single(int64_t n);
  // owner[v] for every vertex; the rows by ascending id on each owner (`local` left empty).
  static RowDirectory by_ascending_id(std::vector<int32_t> owner, int rank);
};

// Rows `ids` (global vertex ids, any order, repeats allowed) of the matrix whose owned rows on
// this rank are `h`. Collective: every rank must call it (with its own ids) at the same point,
// all with the same `peer_by_peer`. That moves the rows one peer a round (P rounds: rank +
// r's rows got, rank - r's served), for a fetch of most of the matrix (evaluation's every row):
// at once, the rows served and the rows got were staged whole beside the output, two more
// copies of it.
Var fetch_rows(Communicator& comm, const RowDirectory& dir, const Var& h,
               const std::vector<int32_t>& ids, bool peer_by_peer = false);

}  // namespace dgnn
