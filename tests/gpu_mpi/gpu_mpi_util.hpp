#pragma once
// Shared by the multi-rank GPU tests: the transport main() was asked to test.
#include <string>

namespace dgnn::gpu_mpi_test {

// "mpi" (staged through host memory) or "nccl", for attach_device_comm.
const std::string& requested_transport();

}  // namespace dgnn::gpu_mpi_test
