// The halo exchange on device memory. One packed send and one packed receive buffer, peer after
// peer, in `dev`'s memory, as the host exchange lays them out; the row lists live there too.
// Packing is one gather, the forward unpack one scatter (halo rows are distinct: each has one
// owner), the backward unpack one scatter-add over the peers' blocks in peer order — the same
// additions, in the same order, as HostHaloExchange's loop over the peers, with no atomics.
#include <algorithm>
#include <string>

#include "dgnn/comm/halo_device.hpp"
#include "dgnn/common/error.hpp"
#include "dgnn/common/timer.hpp"
#include "dgnn/kernels/buffer.hpp"
#include "dgnn/kernels/kernels.hpp"

namespace dgnn {

namespace {

std::vector<int64_t> prefix_rows(const std::vector<std::vector<int32_t>>& lists) {
  std::vector<int64_t> off(lists.size() + 1, 0);
  for (size_t i = 0; i < lists.size(); ++i) off[i + 1] = off[i] + int64_t(lists[i].size());
  return off;
}

std::vector<int32_t> concat(const std::vector<std::vector<int32_t>>& lists) {
  std::vector<int32_t> all;
  for (const auto& l : lists) all.insert(all.end(), l.begin(), l.end());
  return all;
}

class DeviceHaloExchange final : public HaloExchange {
 public:
  DeviceHaloExchange(const HaloPlan& plan, Communicator& comm, DeviceComm* dc, Device dev)
      : peers_(plan.peers), comm_(comm), dc_(dc), dev_(dev) {
    check_halo_plan(plan, comm.size());
    DGNN_CHECK(dc_ != nullptr || plan.peers.empty(), CommError,
               "device halo exchange with peers needs a device communicator");
    DGNN_CHECK(dc_ == nullptr || dc_->device() == dev_, CommError,
               std::string("device halo exchange on ") + device_name(dev_) +
                   " memory over a communicator of " + device_name(dc_->device()) + " memory");
    send_off_ = prefix_rows(plan.send_rows);
    recv_off_ = prefix_rows(plan.recv_rows);
    const std::vector<int32_t> send = concat(plan.send_rows), recv = concat(plan.recv_rows);
    std::vector<int32_t> sorted = recv;
    std::sort(sorted.begin(), sorted.end());
    DGNN_CHECK(std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end(), CommError,
               "halo plan: a row is received twice (each halo row has one owner)");
    for (int32_t r : send) max_row_ = std::max(max_row_, r);
    if (!sorted.empty()) max_row_ = std::max(max_row_, sorted.back());
    send_idx_ = kernels::Buffer::upload(dev_, send);
    recv_idx_ = kernels::Buffer::upload(dev_, recv);
  }

  ~DeviceHaloExchange() override = default;  // pending_ completes before the buffers go

  void forward_begin(ConstMatView x) override {
    start(Phase::forward, x.rows, x.cols, "forward_begin");
    pack(x, send_idx_, send_off_.back(), send_buf_);
    post(Phase::forward, send_buf_, send_off_, recv_buf_, recv_off_);
  }

  void forward_end(MatView x) override {
    finish(Phase::forward, x.rows, x.cols, "forward_end");
    ScopedMs t(comm_.stats().comm_ms);
    // Halo rows are overwritten, never summed.
    kernels::scatter_rows(dev_, view(recv_buf_, 0, recv_off_.back()), recv_idx_.as<int32_t>(),
                          recv_off_.back(), x);
  }

  void backward_begin(ConstMatView g) override {
    start(Phase::backward, g.rows, g.cols, "backward_begin");
    // A halo row's gradient goes to the row's owner: packed in the forward receive layout, and
    // the peers' contributions arrive in the forward send layout.
    pack(g, recv_idx_, recv_off_.back(), recv_buf_);
    post(Phase::backward, recv_buf_, recv_off_, send_buf_, send_off_);
  }

  void backward_end(MatView g) override {
    finish(Phase::backward, g.rows, g.cols, "backward_end");
    ScopedMs t(comm_.stats().comm_ms);
    // Sequential in the source position on equal targets, positions being peer after peer.
    kernels::scatter_add_rows(dev_, view(send_buf_, 0, send_off_.back()), send_idx_.as<int32_t>(),
                              send_off_.back(), g);
  }

 private:
  enum class Phase { idle, forward, backward };

  MatView view(const kernels::Buffer& buf, int64_t row0, int64_t n) const {
    return MatView{buf.as<float>() + row0 * f_, n, f_, f_};
  }

  void pack(ConstMatView m, const kernels::Buffer& idx, int64_t n, const kernels::Buffer& buf) {
    ScopedMs t(comm_.stats().comm_ms);
    kernels::gather_rows(dev_, m, idx.as<int32_t>(), n, view(buf, 0, n));
  }

  void start(Phase phase, int64_t rows, int64_t cols, const char* what) {
    DGNN_CHECK(phase_ == Phase::idle, CommError,
               std::string("halo exchange: ") + what + " while another exchange is in flight");
    check_rows(rows, what);
    DGNN_CHECK(cols >= 0, ShapeError, std::string("halo exchange: ") + what + ": negative width");
    // What the device has queued so far is the layer's computation: finish it outside the
    // communication timers, so that they time communication only.
    kernels::synchronize(dev_);
    f_ = cols;
    grow(send_buf_, send_off_.back());
    grow(recv_buf_, recv_off_.back());
  }

  // Widest seen so far; never shrunk or zeroed (every element read is written first).
  void grow(kernels::Buffer& buf, int64_t rows) {
    const size_t need = size_t(rows * f_) * sizeof(float);
    if (buf.bytes() < need) buf = kernels::Buffer(dev_, need);
  }

  void finish(Phase phase, int64_t rows, int64_t cols, const char* what) {
    DGNN_CHECK(phase_ == phase, CommError,
               std::string("halo exchange: ") + what + " without its begin");
    phase_ = Phase::idle;
    // Complete the messages before any check can throw: buffers must outlive them.
    std::unique_ptr<PendingExchange> pending = std::move(pending_);
    if (pending) pending->wait();
    check_rows(rows, what);
    DGNN_CHECK(cols == f_, ShapeError,
               std::string("halo exchange: ") + what + " got " + std::to_string(cols) +
                   " columns, its begin had " + std::to_string(f_));
  }

  void check_rows(int64_t rows, const char* what) const {
    DGNN_CHECK(max_row_ < rows, ShapeError,
               std::string("halo exchange: ") + what + ": the matrix has " + std::to_string(rows) +
                   " rows, the plan names row " + std::to_string(max_row_));
  }

  // One message per peer and direction that has rows (both sides skip the same empty ones).
  void post(Phase phase, const kernels::Buffer& out, const std::vector<int64_t>& out_off,
            const kernels::Buffer& in, const std::vector<int64_t>& in_off) {
    if (dc_) {
      std::vector<PeerBuffer> sends, recvs;
      const int64_t row_bytes = f_ * int64_t(sizeof(float));
      for (size_t i = 0; i < peers_.size(); ++i) {
        if (int64_t n = out_off[i + 1] - out_off[i]; n > 0 && row_bytes > 0)
          sends.push_back({peers_[i], out.as<float>() + out_off[i] * f_, n * row_bytes});
        if (int64_t n = in_off[i + 1] - in_off[i]; n > 0 && row_bytes > 0)
          recvs.push_back({peers_[i], in.as<float>() + in_off[i] * f_, n * row_bytes});
      }
      pending_ = dc_->exchange_begin(sends, recvs);
    }
    phase_ = phase;
  }

  std::vector<int> peers_;
  Communicator& comm_;
  DeviceComm* dc_;
  Device dev_;
  std::vector<int64_t> send_off_, recv_off_;
  kernels::Buffer send_idx_, recv_idx_;  // the plan's rows, peer after peer, in dev's memory
  int32_t max_row_ = -1;
  int64_t f_ = -1;
  kernels::Buffer send_buf_, recv_buf_;
  Phase phase_ = Phase::idle;
  std::unique_ptr<PendingExchange> pending_;  // declared last: destroyed (waited) first
};

}  // namespace

std::unique_ptr<HaloExchange> make_device_halo_exchange(const HaloPlan& plan, Communicator& comm,
                                                        DeviceComm* dc, Device dev) {
  return std::make_unique<DeviceHaloExchange>(plan, comm, dc, dev);
}

}  // namespace dgnn
