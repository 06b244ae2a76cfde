// Main of the multi-rank GPU tests, run under mpiexec: every rank binds its GPU (node-local
// rank modulo the GPUs of its node) and runs the same Catch2 session; rank 0 reports, the
// others' reports are shown only when they failed. Exits 77 (ctest: skipped) with the reason on
// one line when the machine cannot run them:
//   no usable GPU, or fewer than two ranks;
//   --transport nccl (the first argument, consumed here) and two ranks on one GPU, or a build
//   without NCCL: NCCL needs one GPU per rank.
// The transport under test (--transport mpi|nccl, default mpi: staged through host memory) is
// what attach_device_comm is asked for (gpu_mpi_util.hpp: requested_transport()).
#define CATCH_CONFIG_RUNNER
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "dgnn/comm/communicator.hpp"
#include "dgnn/comm/device_comm.hpp"
#include "dgnn/common/error.hpp"
#include "../mpi/rank_session.hpp"
#include "gpu_mpi_util.hpp"
#include "dgnn/kernels/kernels.hpp"

namespace dgnn::gpu_mpi_test {
std::string g_transport = "mpi";
const std::string& requested_transport() { return g_transport; }
}  // namespace dgnn::gpu_mpi_test

namespace {

// The reason this job cannot run the tests, or "" when it can. Collective.
std::string skip_reason(dgnn::Communicator& comm, const std::string& transport) {
  std::string why;
  if (!dgnn::kernels::cuda_available(&why)) return "no usable GPU (" + why + ")";
  if (comm.size() < 2)
    return "needs several ranks (mpiexec -n 2), got " + std::to_string(comm.size());
  dgnn::kernels::bind_cuda_device(comm.local_rank());
  const std::vector<std::string> ids =
      dgnn::allgather_strings(comm, dgnn::kernels::cuda_device_id());
  if (transport == "nccl") {
    if (!dgnn::nccl_built()) return "this dgnn was built without NCCL";
    try {
      dgnn::choose_transport("nccl", ids, true);
    } catch (const dgnn::OptionError& e) {
      return std::string("fewer GPUs than ranks for NCCL: ") + e.what();
    }
  }
  return "";
}

}  // namespace

int main(int argc, char** argv) {
  bool listing = false;
  std::vector<char*> args(argv, argv + argc);
  if (args.size() >= 3 && std::strcmp(args[1], "--transport") == 0) {
    dgnn::gpu_mpi_test::g_transport = args[2];
    args.erase(args.begin() + 1, args.begin() + 3);
  }
  for (size_t i = 1; i < args.size(); ++i)
    listing |= std::strncmp(args[i], "--list", 6) == 0 || std::strcmp(args[i], "-l") == 0;
  if (listing) return Catch::Session().run(int(args.size()), args.data());

  dgnn::Communicator& comm = dgnn::world();
  const int rank = comm.rank();
  const std::string reason = skip_reason(comm, dgnn::gpu_mpi_test::g_transport);
  if (!reason.empty()) {
    if (rank == 0) std::printf("SKIPPED: %s\n", reason.c_str());
    return 77;
  }
  if (rank == 0)
    std::printf("GPU: %s; %d ranks, transport %s\n",
                dgnn::kernels::cuda_device_description().c_str(), comm.size(),
                dgnn::gpu_mpi_test::g_transport.c_str());

  return dgnn::test::run_rank_session(comm, int(args.size()), args.data(), "test_gpu_mpi");
}
