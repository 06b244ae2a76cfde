// The startup line's figures (gnn/train/rank_usage.hpp): one rank's own counters, and the
// largest and summed of several ranks', as `dgnn train` prints them.
#include <catch2/catch.hpp>

#include "dgnn/comm/communicator.hpp"
#include "dgnn/common/io_stats.hpp"
#include "dgnn/common/memory.hpp"
#include "dgnn/gnn/train/rank_usage.hpp"

using namespace dgnn;

TEST_CASE("rank usage: one process reports its own counters", "[rank_usage]") {
  SelfCommunicator self;
  count_input_bytes(7);
  const RankUsage u = gather_rank_usage(self);
  REQUIRE(u.read_bytes.size() == 1);
  REQUIRE(u.peak_bytes.size() == 1);
  CHECK(u.read_bytes[0] == input_bytes_read());
  CHECK(u.peak_bytes[0] > 0);
  CHECK(u.peak_bytes[0] <= peak_resident_bytes());
}

TEST_CASE("rank usage: the line names the largest rank and the sum", "[rank_usage]") {
  RankUsage u;
  u.peak_bytes = {900'000'000, 1'000'000'000, 1'210'000'000, 790'000'000};
  u.read_bytes = {120'000'000, 100'000'000, 95'000'000, 95'000'000};
  CHECK(rank_usage_text(u) ==
        "peak 1.21 GB max over 4 ranks (rank 2), 3.90 GB summed; "
        "read 120 MB max over 4 ranks (rank 0), 410 MB summed");
  CHECK(rank_usage_text({{1'500'000}, {2'600}}) == "peak 2 MB; read 3 kB");
  CHECK(rank_usage_text({{12}, {0}}) == "peak 12 B; read 0 B");
}
