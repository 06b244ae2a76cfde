// The stream helpers of kernels/minibatch_kernels.hpp and the dispatch of the loader thread's
// CUDA-only kernels (bind_thread, use_own_stream: kernels/kernel_list.def); no-ops on the CPU.
#include "dgnn/kernels/minibatch_kernels.hpp"

#include "dgnn/kernels/backend.hpp"

namespace dgnn::kernels {

void bind_thread(Device dev) {
  if (dev == Device::cpu) return;
  DGNN_CUDA_ONLY("bind_thread", cuda::bind_thread());
}

void use_own_stream(Device dev) {
  if (dev == Device::cpu) return;
  DGNN_CUDA_ONLY("use_own_stream", cuda::use_own_stream());
}

StreamMark mark_stream(Device dev) {
  StreamMark m;
  m.dev = dev;
  if (dev == Device::cpu) return m;
  DGNN_CUDA_ONLY("mark_stream", m.event = cuda::record_mark());
  return m;
}

void wait_for(const StreamMark& mark) {
  if (mark.dev == Device::cpu || !mark.event) return;
  DGNN_CUDA_ONLY("wait_for", cuda::wait_mark(mark.event.get()));
}

}  // namespace dgnn::kernels
