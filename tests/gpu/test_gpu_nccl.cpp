// The NCCL transport on one rank (SelfCommunicator bootstraps it): what a single-GPU machine can
// run of it — ncclGetUniqueId / ncclCommInitRank, the all-reduce (an identity on one rank), the
// all-to-all's self block, a grouped send / receive to self on the side stream, and teardown.
// Several ranks: tests/gpu_mpi (needs a GPU per rank).
#include <catch2/catch.hpp>
#include <vector>

#include "dgnn/comm/communicator.hpp"
#include "dgnn/dgnn_config.hpp"
#include "gpu_test_util.hpp"
#if DGNN_HAVE_NCCL
#include "dgnn/comm/nccl/nccl.hpp"
#endif

using namespace dgnn;
using dgnn::test::DeviceBuf;

TEST_CASE("NCCL on one rank: all-reduce, all-to-all and self exchange", "[gpu][nccl]") {
#if DGNN_HAVE_NCCL
  SelfCommunicator self;
  auto dc = nccl::make_comm(self);
  REQUIRE(dc->transport() == DeviceTransport::nccl);
  const std::vector<float> x{1.f, -2.f, 3.5f, 0.25f};
  DeviceBuf<float> d(x);
  dc->allreduce_sum(d.data(), 4);
  CHECK(d.download() == x);
  CHECK(self.stats().bytes_sent == 16);

  DeviceBuf<float> out(std::vector<float>(6, 0.f));
  dc->alltoallv(d.data(), {8}, {4}, out.data(), {8}, {8});  // floats 1..2 to slots 2..3
  CHECK(out.download() == std::vector<float>{0.f, 0.f, -2.f, 3.5f, 0.f, 0.f});

  DeviceBuf<float> in(std::vector<float>(4, 0.f));
  auto pending = dc->exchange_begin({{0, d.data(), 16}}, {{0, in.data(), 16}});
  pending->wait();
  CHECK(in.download() == x);
#else
  WARN("SKIP: this dgnn was built without NCCL");
#endif
}
