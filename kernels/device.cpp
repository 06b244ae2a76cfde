// Whether a CUDA device can be used. The answer needs the CUDA runtime only in a CUDA build;
// a CPU-only build says so plainly instead of failing to link.
#include <string>

#include "dgnn/common/error.hpp"
#include "dgnn/dgnn_config.hpp"
#include "dgnn/kernels/kernels.hpp"

#if DGNN_HAVE_CUDA
#include "dgnn/kernels/cuda/cuda_kernels.hpp"
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

int bind_cuda_device(int local_rank) {
  std::string why;
  if (!cuda_available(&why)) throw DeviceError(why);
#if DGNN_HAVE_CUDA
  const int count = cuda::device_count(nullptr);
  const int index = (local_rank < 0 ? 0 : local_rank) % count;
  cuda::select_device(index);
  return index;
#else
  return -1;
#endif
}

std::string cuda_device_description() {
#if DGNN_HAVE_CUDA
  return cuda::device_description();
#else
  return "";
#endif
}

std::string cuda_device_id() {
#if DGNN_HAVE_CUDA
  return cuda::device_uuid();
#else
  return "";
#endif
}

}  // namespace dgnn::kernels
