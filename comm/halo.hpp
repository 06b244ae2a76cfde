#pragma once
// Halo exchange: filling the halo (ghost) rows of a rank's [owned | halo] matrix from their
// owners, and the reverse path that returns halo-row gradients to be summed into the owners.
#include <cstdint>
#include <functional>
#include <memory>
#include <utility>
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

  // Bounded memory: the halo moves in pieces of at most `rows` rows, two pieces in flight each
  // way, instead of whole (which holds every halo row of the rank at once, plus every row it
  // sends). Pieces go by stages (stage s: send to rank + s, receive from rank - s), so a rank
  // holds at most 4 * rows rows of buffers whatever its halo. 0 goes back to whole exchanges.
  // Returns false, and stays whole, where this exchange cannot stream: device memory, or a plan
  // whose rows from a peer are not one run of consecutive local ids (partition/ numbers them so).
  virtual bool set_piece_rows(int64_t rows) { return rows == 0; }
  int64_t piece_rows() const { return piece_rows_; }
  // Streaming: the local halo ids [first, end) of each piece, in the order the pieces arrive.
  // Empty while the exchange is whole.
  const std::vector<std::pair<int64_t, int64_t>>& pieces() const { return pieces_; }
  // Streams the owned rows `x` (n_owned x F) to the peers that need them and calls use(p, rows)
  // with the rows of pieces()[p] as they arrive; `local` runs while the first pieces travel.
  virtual void stream_forward(ConstMatView x, const std::function<void()>& local,
                              const std::function<void(size_t, ConstMatView)>& use);
  // The reverse: fill(p, rows) writes the gradient of halo piece p, which goes to its owner;
  // what peers send back is added into `g` (n_owned x F), in arrival order; `local` runs while
  // the first pieces travel.
  virtual void stream_backward(const std::function<void(size_t, MatView)>& fill,
                               const std::function<void()>& local, MatView g);
  // Bytes of host buffers the exchange holds between calls (shared ones included): what the
  // streaming bounds. 0 where it keeps none on the host.
  virtual int64_t buffer_bytes() const { return 0; }

 protected:
  int64_t piece_rows_ = 0;
  std::vector<std::pair<int64_t, int64_t>> pieces_;
};

// The piece size a rank's exchange streams with (HaloExchange::set_piece_rows), for matrices
// at most `widest` columns wide: `budget_bytes` > 0 bounds the four piece buffers; 0 means whole;
// < 0 (auto) streams only when the whole exchange would hold more rows than the rank owns, with
// pieces that together hold the rank's owned rows.
int64_t halo_piece_rows(const HaloPlan& plan, int64_t n_owned, int64_t widest,
                        int64_t budget_bytes);

// Collective: sets one piece size on every rank's exchange, since both ends of a message must
// cut it alike: the smallest positive `wanted` over the ranks, or whole (0) where none wants
// pieces or some rank's exchange cannot stream. Returns the size set.
int64_t agree_piece_rows(HaloExchange& halo, Communicator& comm, int64_t wanted);

// HaloExchange for matrices in `dev`'s memory: over the device communicator attached to `comm`
// when it carries `dev`'s memory (comm.device_comm(): NCCL or staged), else over `comm`'s own
// point-to-point exchange with host buffers (CPU), or with no messages at all (device memory on
// one rank). Gather / scatter-add kernels pack and unpack; deterministic: received gradient rows
// are summed in peer order, as one sequential loop over the peers would.
// `shared` (host exchanges): buffers to share with other exchanges of this rank, one exchange
// in flight at a time (a temporal run's per-snapshot exchanges), so the rank holds the largest
// exchange's buffers instead of every snapshot's; an exchange begun while another holds them
// is a CommError. Null: buffers of its own.
struct HaloBuffers;
std::shared_ptr<HaloBuffers> make_halo_buffers();
std::unique_ptr<HaloExchange> make_halo_exchange(const HaloPlan& plan, Communicator& comm,
                                                 Device dev = Device::cpu,
                                                 std::shared_ptr<HaloBuffers> shared = nullptr);

// CommError unless the plan fits `ranks` ranks: one send and one receive list per peer, peers in
// ascending order and in range, no negative row.
void check_halo_plan(const HaloPlan& plan, int ranks);

}  // namespace dgnn
