// Whether a CUDA device can be used. The answer needs the CUDA runtime only in a CUDA build;
// a CPU-only build says so plainly instead of failing to link.
#include <string>

#include "dgnn_config.hpp"
#include "kernels/kernels.hpp"

#if DGNN_HAVE_CUDA
namespace dgnn::kernels::cuda {
// In kernels/cuda/device.cu: the device count, or -1 with the runtime's error in *error.
int device_count(std::string* error);
}  // namespace dgnn::kernels::cuda
#endif

namespace dgnn::kernels {

bool cuda_available(std::string* why) {
#if DGNN_HAVE_CUDA
  std::string error;
  const int count = cuda::device_count(&error);
  if (count > 0) {
    if (why) *why = std::to_string(count) + " CUDA device(s) found";
    return true;
  }
  if (why)
    *why = count == 0 ? "cudaGetDeviceCount found no CUDA device"
                      : "cudaGetDeviceCount failed: " + error;
  return false;
#else
  if (why) *why = "this dgnn was built without CUDA";
  return false;
#endif
}

}  // namespace dgnn::kernels
