// The CUDA runtime's view of the devices, kept apart so device.cpp compiles without nvcc.
#include <cuda_runtime.h>

#include <string>

namespace dgnn::kernels::cuda {

int device_count(std::string* error) {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    if (error) *error = std::string(cudaGetErrorName(status)) + ": " + cudaGetErrorString(status);
    cudaGetLastError();  // reset the (non-sticky) error so the next runtime call does not see it
    return -1;
  }
  return count;
}

}  // namespace dgnn::kernels::cuda
