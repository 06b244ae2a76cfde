#pragma once
// Mini-batch sampling over a graph sharded by vertex across ranks (DistDGL's scheme, with MPI
// collectives for its RPCs): each rank holds the in-edges and features of the vertices it owns;
// a layer's frontier is split by owner, every owner draws the neighbours of the vertices asked
// of it (the same draw as in one process: rows are kept in global-id order and keyed by
// (seed, epoch, layer, vertex)) and sends them back, one batched all-to-all per layer; the input
// features are fetched from their owners the same way.
#include <memory>

#include "dgnn/gnn/train/minibatch.hpp"

namespace dgnn {

// The rank's part (`part`: its owned in-edges, columns [owned | halo] named by global_ids()) and
// `features` (n_owned rows) serve the other ranks' requests; `comm` (a duplicate of the training
// communicator: the store talks on the prefetch thread) carries them. Collective: it agrees on
// every vertex's owner and degree (O(global vertices) memory per rank, DistDGL's partition
// book). `part` and `comm` must outlive the store.
std::unique_ptr<GraphStore> make_dist_store(const GraphView& part, int64_t global_vertices,
                                            const Var& features, Communicator& comm);

}  // namespace dgnn
