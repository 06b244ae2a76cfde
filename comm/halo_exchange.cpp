// make_halo_exchange: the halo exchange over a Communicator's point-to-point exchange, with
// host buffers. One contiguous send and one contiguous receive buffer hold every peer's rows,
// laid out peer after peer; the backward pass reuses them the other way round.
#include <algorithm>
#include <cstring>
#include <numeric>
#include <string>

#include "dgnn/comm/device_comm.hpp"
#include "dgnn/comm/halo.hpp"
#include "dgnn/comm/halo_device.hpp"
#include "dgnn/common/error.hpp"
#include "dgnn/common/timer.hpp"
#include "dgnn/kernels/kernels.hpp"

namespace dgnn {

namespace {

// Row offsets of each peer's block in a buffer laid out peer after peer.
std::vector<int64_t> prefix_rows(const std::vector<std::vector<int32_t>>& lists) {
  std::vector<int64_t> off(lists.size() + 1, 0);
  for (size_t i = 0; i < lists.size(); ++i) off[i + 1] = off[i] + int64_t(lists[i].size());
  return off;
}

int32_t max_row(const std::vector<std::vector<int32_t>>& lists) {
  int32_t m = -1;
  for (auto& l : lists)
    for (int32_t r : l) m = std::max(m, r);
  return m;
}

class HostHaloExchange final : public HaloExchange {
 public:
  HostHaloExchange(const HaloPlan& plan, Communicator& comm) : plan_(plan), comm_(comm) {
    check_halo_plan(plan_, comm_.size());
    send_off_ = prefix_rows(plan_.send_rows);
    recv_off_ = prefix_rows(plan_.recv_rows);
    max_send_row_ = max_row(plan_.send_rows);
    max_recv_row_ = max_row(plan_.recv_rows);
  }

  ~HostHaloExchange() override = default;  // pending_ completes before the buffers go

  void forward_begin(ConstMatView x) override {
    start(Phase::forward, x.rows, x.cols, "forward_begin");
    // Owned rows each peer needs, packed peer after peer.
    pack(x, plan_.send_rows, send_off_, send_buf_);
    post(Phase::forward, send_buf_, send_off_, recv_buf_, recv_off_);
  }

  void forward_end(MatView x) override {
    finish(Phase::forward, x.rows, x.cols, "forward_end");
    ScopedMs t(comm_.stats().comm_ms);
    // Halo rows are overwritten, never summed: each has exactly one owner.
    const size_t row_bytes = size_t(f_) * sizeof(float);
    for (size_t i = 0; i < plan_.peers.size(); ++i) {
      const float* src = recv_buf_.data() + recv_off_[i] * f_;
      for (int32_t r : plan_.recv_rows[i]) {
        std::memcpy(x.row(r), src, row_bytes);
        src += f_;
      }
    }
  }

  void backward_begin(ConstMatView g) override {
    start(Phase::backward, g.rows, g.cols, "backward_begin");
    // The gradient of a halo row belongs to the peer that sent the row: pack it in the forward
    // receive layout, and receive the peers' contributions in the forward send layout.
    pack(g, plan_.recv_rows, recv_off_, recv_buf_);
    post(Phase::backward, recv_buf_, recv_off_, send_buf_, send_off_);
  }

  void backward_end(MatView g) override {
    finish(Phase::backward, g.rows, g.cols, "backward_end");
    ScopedMs t(comm_.stats().comm_ms);
    // Peers in ascending rank order (the plan's order), so the sums are the same every run.
    for (size_t i = 0; i < plan_.peers.size(); ++i) {
      const int64_t n = send_off_[i + 1] - send_off_[i];
      kernels::scatter_add_rows(Device::cpu, block(send_buf_, send_off_[i], n),
                                plan_.send_rows[i].data(), n, g);
    }
  }

 private:
  enum class Phase { idle, forward, backward };

  // Gathers rows[i] of m into buf at off[i], peer after peer. Only the packing is timed here:
  // the communicator accounts for posting the messages.
  void pack(ConstMatView m, const std::vector<std::vector<int32_t>>& rows,
            const std::vector<int64_t>& off, std::vector<float>& buf) {
    ScopedMs t(comm_.stats().comm_ms);
    for (size_t i = 0; i < rows.size(); ++i) {
      const int64_t n = off[i + 1] - off[i];
      kernels::gather_rows(Device::cpu, m, rows[i].data(), n, block(buf, off[i], n));
    }
  }

  MatView block(std::vector<float>& buf, int64_t row0, int64_t n) const {
    return MatView{buf.data() + row0 * f_, n, f_, f_};
  }

  // Checks the call order and the matrix, and sizes the buffers for its width. The phase is
  // entered only once the messages are posted, so a failed begin leaves the exchange idle.
  void start(Phase phase, int64_t rows, int64_t cols, const char* what) {
    DGNN_CHECK(phase_ == Phase::idle, CommError,
               std::string("halo exchange: ") + what + " while another exchange is in flight");
    check_rows(rows, what);
    DGNN_CHECK(cols >= 0, ShapeError, std::string("halo exchange: ") + what + ": negative width");
    // Layers alternate widths: grow the buffers to the widest seen, never shrink or zero them
    // (every element read is written by the packing or by a peer first).
    f_ = cols;
    if (send_buf_.size() < size_t(send_off_.back() * f_)) send_buf_.resize(size_t(send_off_.back() * f_));
    if (recv_buf_.size() < size_t(recv_off_.back() * f_)) recv_buf_.resize(size_t(recv_off_.back() * f_));
  }

  void finish(Phase phase, int64_t rows, int64_t cols, const char* what) {
    DGNN_CHECK(phase_ == phase, CommError,
               std::string("halo exchange: ") + what + " without its begin");
    phase_ = Phase::idle;
    // Complete the messages before any check can throw: buffers must outlive them.
    std::unique_ptr<PendingExchange> pending = std::move(pending_);
    pending->wait();
    check_rows(rows, what);
    DGNN_CHECK(cols == f_, ShapeError,
               std::string("halo exchange: ") + what + " got " + std::to_string(cols) +
                   " columns, its begin had " + std::to_string(f_));
  }

  void check_rows(int64_t rows, const char* what) const {
    DGNN_CHECK(max_send_row_ < rows && max_recv_row_ < rows, ShapeError,
               std::string("halo exchange: ") + what + ": the matrix has " + std::to_string(rows) +
                   " rows, the plan names row " +
                   std::to_string(std::max(max_send_row_, max_recv_row_)));
  }

  // Posts one message per peer and direction that has rows. Skipping empty ones keeps both
  // sides consistent: my send list to a peer is as long as its receive list from me.
  void post(Phase phase, std::vector<float>& out, const std::vector<int64_t>& out_off,
            std::vector<float>& in, const std::vector<int64_t>& in_off) {
    std::vector<PeerBuffer> sends, recvs;
    const int64_t row_bytes = f_ * int64_t(sizeof(float));
    for (size_t i = 0; i < plan_.peers.size(); ++i) {
      if (int64_t n = out_off[i + 1] - out_off[i]; n > 0)
        sends.push_back({plan_.peers[i], out.data() + out_off[i] * f_, n * row_bytes});
      if (int64_t n = in_off[i + 1] - in_off[i]; n > 0)
        recvs.push_back({plan_.peers[i], in.data() + in_off[i] * f_, n * row_bytes});
    }
    pending_ = comm_.exchange_begin(sends, recvs);
    phase_ = phase;
  }

  HaloPlan plan_;
  Communicator& comm_;
  std::vector<int64_t> send_off_, recv_off_;
  int32_t max_send_row_ = -1, max_recv_row_ = -1;
  int64_t f_ = -1;
  std::vector<float> send_buf_, recv_buf_;
  Phase phase_ = Phase::idle;
  std::unique_ptr<PendingExchange> pending_;  // declared last: destroyed (waited) first
};

}  // namespace

void check_halo_plan(const HaloPlan& plan, int ranks) {
  const size_t np = plan.peers.size();
  DGNN_CHECK(plan.send_rows.size() == np && plan.recv_rows.size() == np, CommError,
             "halo plan: " + std::to_string(np) + " peers but " +
                 std::to_string(plan.send_rows.size()) + " send and " +
                 std::to_string(plan.recv_rows.size()) + " receive lists");
  for (size_t i = 0; i < np; ++i) {
    DGNN_CHECK(plan.peers[i] >= 0 && plan.peers[i] < ranks, CommError,
               "halo plan: peer " + std::to_string(plan.peers[i]) + " is not a rank in [0, " +
                   std::to_string(ranks) + ")");
    DGNN_CHECK(i == 0 || plan.peers[i - 1] < plan.peers[i], CommError,
               "halo plan: peers must be listed once each, in ascending order");
    for (auto* list : {&plan.send_rows[i], &plan.recv_rows[i]})
      DGNN_CHECK(std::all_of(list->begin(), list->end(), [](int32_t r) { return r >= 0; }),
                 CommError, "halo plan: negative row id for peer " + std::to_string(plan.peers[i]));
  }
}

std::unique_ptr<HaloExchange> make_halo_exchange(const HaloPlan& plan, Communicator& comm,
                                                 Device dev) {
  DeviceComm* dc = comm.device_comm();
  if (dc && dc->device() == dev) return make_device_halo_exchange(plan, comm, dc, dev);
  if (dev == Device::cpu) return std::make_unique<HostHaloExchange>(plan, comm);
  DGNN_CHECK(plan.peers.empty(), CommError,
             std::string("halo exchange on ") + device_name(dev) + " memory with " +
                 std::to_string(plan.peers.size()) +
                 " peer(s) needs a device communicator (attach_device_comm)");
  return make_device_halo_exchange(plan, comm, nullptr, dev);
}

}  // namespace dgnn
