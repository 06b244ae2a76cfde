// Every rank's peak memory and input bytes gathered to every rank (gnn/train/rank_usage.hpp):
// slot r holds what rank r counted, whatever the others counted.
#include <catch2/catch.hpp>
#include <cstdint>
#include <vector>

#include "dgnn/comm/communicator.hpp"
#include "dgnn/common/io_stats.hpp"
#include "dgnn/gnn/train/rank_usage.hpp"

using namespace dgnn;

TEST_CASE("rank usage: slot r is rank r's bytes read and peak memory", "[rank_usage]") {
  Communicator& comm = world();
  const int p = comm.size(), r = comm.rank();
  const RankUsage before = gather_rank_usage(comm);
  count_input_bytes(1000 * int64_t(r + 1));  // rank r reads 1000 (r + 1) bytes more
  const RankUsage after = gather_rank_usage(comm);
  CHECK(int(after.read_bytes.size()) == p);
  CHECK(int(after.peak_bytes.size()) == p);
  for (int q = 0; q < p && q < int(after.read_bytes.size()); ++q) {
    CHECK(after.read_bytes[size_t(q)] - before.read_bytes[size_t(q)] == 1000 * (q + 1));
    CHECK(after.peak_bytes[size_t(q)] >= before.peak_bytes[size_t(q)]);
    CHECK(after.peak_bytes[size_t(q)] > 0);
  }
  CHECK(after.read_bytes[size_t(r)] == input_bytes_read());
}
