#pragma once
// Halo exchange: filling the halo (ghost) rows of a rank's [owned | halo] matrix from their
// owners, and the reverse path that returns halo-row gradients to be summed into the owners.
#include <cstdint>
#include <memory>
#include <vector>

#include "dgnn/comm/communicator.hpp"
#include "dgnn/comm/halo_plan.hpp"
#include "dgnn/common/views.hpp"

namespace dgnn {

// The interface aggregate() calls, split in two phases so that the interior aggregation can run
// while messages are in flight.
class HaloExchange {
 public:
  virtual ~HaloExchange() = default;
  // x: (n_owned + n_halo) x F with owned rows filled; begin packs and posts, end fills halo rows.
  virtual void forward_begin(ConstMatView x) = 0;
  virtual void forward_end(MatView x) = 0;
  // g: (n_owned + n_halo) x F gradient; begin sends the halo rows to their owners, end adds
  // what peers sent into this rank's owned rows.
  virtual void backward_begin(ConstMatView g) = 0;
  virtual void backward_end(MatView g) = 0;
};

// HaloExchange for matrices in `dev`'s memory: over the device communicator attached to `comm`
// when it carries `dev`'s memory (comm.device_comm(): NCCL or staged), else over `comm`'s own
// point-to-point exchange with host buffers (CPU), or with no messages at all (device memory on
// one rank). Gather / scatter-add kernels pack and unpack; deterministic: received gradient rows
// are summed in peer order, as one sequential loop over the peers would.
std::unique_ptr<HaloExchange> make_halo_exchange(const HaloPlan& plan, Communicator& comm,
                                                 Device dev = Device::cpu);

// CommError unless the plan fits `ranks` ranks: one send and one receive list per peer, peers in
// ascending order and in range, no negative row.
void check_halo_plan(const HaloPlan& plan, int ranks);

}  // namespace dgnn
