// Whether a CUDA device can be used. The answer needs the CUDA runtime only in a CUDA build;
// a CPU-only build says so plainly instead of failing to link.
#include <string>

#include "dgnn/common/error.hpp"
#include "dgnn/kernels/backend.hpp"
#include "dgnn/kernels/kernels.hpp"

namespace dgnn::kernels {

bool cuda_available(std::string* why) {
  DGNN_IF_CUDA({
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
  })
  if (why) *why = "this dgnn was built without CUDA";
  return false;
}

int bind_cuda_device(int local_rank) {
  std::string why;
  if (!cuda_available(&why)) throw DeviceError(why);
  DGNN_IF_CUDA({
    const int index = (local_rank < 0 ? 0 : local_rank) % cuda::device_count(nullptr);
    cuda::select_device(index);
    return index;
  })
  (void)local_rank;
  return -1;
}

std::string cuda_device_description() {
  DGNN_IF_CUDA(return cuda::device_description();)
  return "";
}

std::string cuda_device_id() {
  DGNN_IF_CUDA(return cuda::device_uuid();)
  return "";
}

int cuda_context_device() { DGNN_CUDA_ONLY("cuda_context_device", return cuda::context_device()); }

void* cuda_stream() { DGNN_CUDA_ONLY("cuda_stream", return cuda::current_stream()); }

}  // namespace dgnn::kernels
