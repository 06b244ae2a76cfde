#pragma once
// Sharded loading of a node-classification dataset: no rank reads, holds or partitions the whole
// graph. Every rank parses its share of each input file (a byte range of a plain text file cut
// at line boundaries; a .gz or a pipe, which cannot be split, is inflated by rank 0 and dealt out
// in bounded chunks of whole lines), numbers the vertex ids it met without gathering them (a
// sample sort: each rank numbers one range of original ids, in ascending order, so dense ids are
// those of the single-process loader), keeps the in-edges of one block of dense ids, and the
// blocks are partitioned (partition_blocks: PT-Scotch over all ranks, or METIS on rank 0 with the
// structure alone). Every vertex's edges, features, label and split then move to the rank of its
// part, which cuts its LocalPart exactly as extract_part would from the whole dataset.
#include <cstdint>
#include <string>

#include "dgnn/comm/communicator.hpp"
#include "dgnn/graph/dataset.hpp"
#include "dgnn/partition/partition.hpp"

namespace dgnn {

// What a sharded load did on this rank and in all.
struct ShardedLoad {
  std::string description;  // as Dataset::description, with global counts (rank 0's)
  int64_t vertices = 0, stored_edges = 0;
  int64_t text_bytes = 0;      // this rank's bytes of text parsed (its ranges and chunks)
  int64_t max_text_bytes = 0;  // the most any rank parsed
  int64_t partition_gather_bytes = 0;  // what METIS's gather of the structure cost rank 0
};

// The place of each of this rank's ids among all ranks' ids in ascending order (a sample sort:
// no rank gathers them), and in *total how many distinct ids the job has. Collective. The ids
// of all ranks should be distinct (a repeated id takes one place).
std::vector<int64_t> ordered_positions(const std::vector<int64_t>& ids, Communicator& comm,
                                       int64_t* total);

// This rank's part of the dataset `opt` names, partitioned by `popt` into comm.size() parts
// (collective). The same vertices, edges, features, labels and splits as
// extract_part(load_dataset(opt), partition, P, rank) for the partition `popt` gives on the
// blocks; the same errors as load_dataset for bad input (file:LINE, thrown on the rank that
// read the line).
LocalPart load_sharded_part(const DatasetOptions& opt, const PartitionOptions& popt,
                            Communicator& comm, ShardedLoad* info = nullptr);

}  // namespace dgnn
