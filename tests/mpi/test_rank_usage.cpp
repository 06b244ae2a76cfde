// Every rank's peak memory and input bytes gathered to every rank (gnn/train/rank_usage.hpp):
// slot r holds what rank r counted, whatever the others counted.
#include <catch2/catch.hpp>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <string>
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

TEST_CASE("a rank leaves hwloc's GL, OpenCL and libxml2 plugins unloaded", "[rank_usage]") {
  // Each maps libraries no rank uses (libX11; libxml2 and ICU; an OpenCL loader): about 2 MB
  // resident a rank, counted by every rank's peak. MPI is up here (world()), so hwloc has loaded
  // what it would.
  world();
  const char* list = std::getenv("HWLOC_PLUGINS_BLACKLIST");
  REQUIRE(list != nullptr);
  CHECK(std::string(list) == "hwloc_gl,hwloc_opencl,hwloc_xml_libxml");
  std::ifstream maps("/proc/self/maps");
  REQUIRE(maps.good());
  std::string line;
  while (std::getline(maps, line)) {
    INFO(line);
    CHECK(line.find("hwloc_gl.so") == std::string::npos);
    CHECK(line.find("hwloc_xml_libxml.so") == std::string::npos);
    CHECK(line.find("hwloc_opencl.so") == std::string::npos);
  }
}
