#pragma once
// Internal to comm/ (make_halo_exchange is the way in): the halo exchange on device memory.
#include <memory>

#include "dgnn/comm/device_comm.hpp"
#include "dgnn/comm/halo.hpp"

namespace dgnn {

// Packs and unpacks with the kernels of `dev` and moves the packed buffers with `dc` (which
// carries `dev`'s memory). `dc` may be null only when the plan has no peer. Time and bytes are
// accounted in comm.stats().
std::unique_ptr<HaloExchange> make_device_halo_exchange(const HaloPlan& plan, Communicator& comm,
                                                        DeviceComm* dc, Device dev);

}  // namespace dgnn
