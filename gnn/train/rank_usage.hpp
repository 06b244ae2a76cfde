#pragma once
// What each rank of a run holds and has read: its peak resident memory and the input bytes it
// read (common/memory.hpp, common/io_stats.hpp), gathered so that rank 0 can report every rank's:
// the startup line of `dgnn train` and the --log-json final record (rank_peak_bytes,
// rank_read_bytes). The measure of whether a rank's memory falls with the rank count.
#include <cstdint>
#include <string>
#include <vector>

#include "dgnn/comm/communicator.hpp"

namespace dgnn {

struct RankUsage {
  std::vector<int64_t> peak_bytes;  // slot r: rank r's peak resident memory so far
  std::vector<int64_t> read_bytes;  // slot r: the input bytes rank r has read so far
};

// Collective: every rank's peak_resident_bytes() and input_bytes_read() now, on every rank.
RankUsage gather_rank_usage(Communicator& comm);

// "peak 1.21 GB max over 4 ranks (rank 2), 3.90 GB summed; read 120 MB max over 4 ranks (rank 0),
// 410 MB summed"; on one rank "peak 1.21 GB; read 120 MB".
std::string rank_usage_text(const RankUsage& u);

}  // namespace dgnn
