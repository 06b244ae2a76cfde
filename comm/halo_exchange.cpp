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

}  // namespace

struct HaloBuffers {
  std::vector<float> send, recv;                      // whole exchanges
  std::vector<float> piece_send[2], piece_recv[2];    // streamed ones
  std::vector<int32_t> rows;                          // a send list kept as bits, expanded
  const void* user = nullptr;                         // the exchange in flight on them
};

std::shared_ptr<HaloBuffers> make_halo_buffers() { return std::make_shared<HaloBuffers>(); }

namespace {

class HostHaloExchange final : public HaloExchange {
 public:
  HostHaloExchange(const HaloPlan& plan, Communicator& comm, std::shared_ptr<HaloBuffers> shared)
      : plan_(plan), comm_(comm), buf_(shared ? std::move(shared) : make_halo_buffers()),
        send_buf_(buf_->send), recv_buf_(buf_->recv), piece_send_(buf_->piece_send),
        piece_recv_(buf_->piece_recv) {
    check_halo_plan(plan_, comm_.size());
    send_off_ = prefix_rows(plan_.send_rows);
    recv_off_ = prefix_rows(plan_.recv_rows);
    max_send_row_ = max_row(plan_.send_rows);
    max_recv_row_ = max_row(plan_.recv_rows);
    // Halo columns ordered by owner (every plan dgnn builds) make each peer's receive list one
    // run of local ids: then the run's first id says it, and the list is not kept (4 bytes a
    // halo row; at 8 ranks of a 100k x 30 SBM, 2.4 MB a rank over its snapshots).
    bool runs = true;
    for (const auto& r : plan_.recv_rows)
      for (size_t k = 1; k < r.size() && runs; ++k) runs = r[k] == r[0] + int32_t(k);
    if (runs) {
      for (auto& r : plan_.recv_rows) {
        recv_first_.push_back(r.empty() ? 0 : r[0]);
        std::vector<int32_t>().swap(r);
      }
    }
    // A send list in ascending order that names more than one owned row in 32 is kept as a bit
    // per row below the largest it sends, which is fewer bytes (a rank's snapshots each send
    // most peers a few thousand rows: at 8 ranks of a 100k x 30 SBM, 2.4 -> 0.3 MB a rank).
    const size_t words = size_t(max_send_row_ + 64) / 64;
    send_bits_.resize(plan_.peers.size());
    for (size_t i = 0; i < plan_.peers.size(); ++i) {
      std::vector<int32_t>& r = plan_.send_rows[i];
      if (words * 8 >= r.size() * 4 || !std::is_sorted(r.begin(), r.end()) ||
          std::adjacent_find(r.begin(), r.end()) != r.end())
        continue;
      std::vector<uint64_t>& b = send_bits_[i];
      b.assign(words, 0);
      for (int32_t row : r) b[size_t(row) / 64] |= uint64_t(1) << (row % 64);
      std::vector<int32_t>().swap(r);
    }
  }

  ~HostHaloExchange() override = default;  // pending_ completes before the buffers go

  bool set_piece_rows(int64_t rows) override {
    DGNN_CHECK(phase_ == Phase::idle, CommError, "halo exchange: set_piece_rows while in flight");
    DGNN_CHECK(rows >= 0, CommError, "halo exchange: negative piece size");
    piece_rows_ = 0;
    pieces_.clear();
    rounds_.clear();
    if (rows == 0) return true;
    // Each peer's rows must be one run of local ids: a piece is then a column range.
    if (!recv_runs()) return false;
    const int p = comm_.size(), me = comm_.rank();
    std::vector<int> index(size_t(p), -1);
    for (size_t i = 0; i < plan_.peers.size(); ++i) index[size_t(plan_.peers[i])] = int(i);
    auto count = [](int64_t n, int64_t per) { return (n + per - 1) / per; };
    // Stage s pairs each rank with rank + s (it sends) and rank - s (it receives): both ends of
    // a pair meet in the same stage, and within it in the same round, so by induction over
    // (stage, round) every message is posted before anyone waits for it.
    for (int s = 1; s < p; ++s) {
      const int to = index[size_t((me + s) % p)], from = index[size_t((me - s + p) % p)];
      const int64_t ns = to < 0 ? 0 : send_off_[size_t(to) + 1] - send_off_[size_t(to)];
      const int64_t nr = from < 0 ? 0 : recv_off_[size_t(from) + 1] - recv_off_[size_t(from)];
      const int64_t cs = count(ns, rows), cr = count(nr, rows);
      for (int64_t j = 0; j < std::max(cs, cr); ++j) {
        Round rd;
        if (j < cs) rd.send = {to, j * rows, std::min(ns, (j + 1) * rows)};
        if (j < cr) {
          rd.recv = {from, j * rows, std::min(nr, (j + 1) * rows)};
          rd.piece = int64_t(pieces_.size());
          const int64_t first = recv_first_[size_t(from)];
          pieces_.emplace_back(first + rd.recv.lo, first + rd.recv.hi);
        }
        rounds_.push_back(rd);
      }
    }
    piece_rows_ = rows;
    return true;
  }

  void stream_forward(ConstMatView x, const std::function<void()>& local,
                      const std::function<void(size_t, ConstMatView)>& use) override {
    DGNN_CHECK(piece_rows_ > 0, CommError, "halo exchange: stream_forward on a whole exchange");
    check_owned_rows(x.rows, "stream_forward");
    claim("stream_forward");
    Release release{*buf_};
    start_stream(x.cols, "stream_forward");
    // Round k packs its send piece into slot k % 2 and receives into the same slot.
    auto post = [&](size_t k) {
      const Round& rd = rounds_[k];
      std::vector<PeerBuffer> sends, recvs;
      if (rd.send.peer >= 0) {
        const int64_t n = rd.send.hi - rd.send.lo;
        {
          ScopedMs t(comm_.stats().comm_ms);
          kernels::gather_rows(Device::cpu, x, send_list(size_t(rd.send.peer)) + rd.send.lo,
                               n, piece_view(piece_send_[k % 2], n));
        }
        sends.push_back({plan_.peers[size_t(rd.send.peer)], piece_send_[k % 2].data(), n * f_ * 4});
      }
      if (rd.recv.peer >= 0)
        recvs.push_back({plan_.peers[size_t(rd.recv.peer)], piece_recv_[k % 2].data(),
                         (rd.recv.hi - rd.recv.lo) * f_ * 4});
      return comm_.exchange_begin(sends, recvs);
    };
    run_rounds(post, local, [&](size_t k) {
      const Round& rd = rounds_[k];
      if (rd.recv.peer >= 0)
        use(size_t(rd.piece), ConstMatView(piece_view(piece_recv_[k % 2], rd.recv.hi - rd.recv.lo)));
    });
  }

  void stream_backward(const std::function<void(size_t, MatView)>& fill,
                       const std::function<void()>& local, MatView g) override {
    DGNN_CHECK(piece_rows_ > 0, CommError, "halo exchange: stream_backward on a whole exchange");
    check_owned_rows(g.rows, "stream_backward");
    claim("stream_backward");
    Release release{*buf_};
    start_stream(g.cols, "stream_backward");
    // The forward rounds run the other way: a halo piece's gradient goes to the peer it came
    // from, and the rows this rank sent come back as gradients to add.
    auto post = [&](size_t k) {
      const Round& rd = rounds_[k];
      std::vector<PeerBuffer> sends, recvs;
      if (rd.recv.peer >= 0) {
        const int64_t n = rd.recv.hi - rd.recv.lo;
        fill(size_t(rd.piece), piece_view(piece_send_[k % 2], n));
        sends.push_back({plan_.peers[size_t(rd.recv.peer)], piece_send_[k % 2].data(), n * f_ * 4});
      }
      if (rd.send.peer >= 0)
        recvs.push_back({plan_.peers[size_t(rd.send.peer)], piece_recv_[k % 2].data(),
                         (rd.send.hi - rd.send.lo) * f_ * 4});
      return comm_.exchange_begin(sends, recvs);
    };
    run_rounds(post, local, [&](size_t k) {
      const Round& rd = rounds_[k];
      if (rd.send.peer < 0) return;
      const int64_t n = rd.send.hi - rd.send.lo;
      ScopedMs t(comm_.stats().comm_ms);
      kernels::scatter_add_rows(Device::cpu, ConstMatView(piece_view(piece_recv_[k % 2], n)),
                                send_list(size_t(rd.send.peer)) + rd.send.lo, n, g);
    });
  }

  int64_t buffer_bytes() const override {
    int64_t floats = int64_t(send_buf_.capacity() + recv_buf_.capacity());
    for (int i = 0; i < 2; ++i)
      floats += int64_t(piece_send_[i].capacity() + piece_recv_[i].capacity());
    return floats * int64_t(sizeof(float));
  }

  void forward_begin(ConstMatView x) override {
    start(Phase::forward, x.rows, x.cols, "forward_begin");
    try {
      // Owned rows each peer needs, packed peer after peer.
      pack_sent(x);
      post(Phase::forward, send_buf_, send_off_, recv_buf_, recv_off_);
    } catch (...) {
      buf_->user = nullptr;
      throw;
    }
  }

  void forward_end(MatView x) override {
    finish(Phase::forward, x.rows, x.cols, "forward_end");
    ScopedMs t(comm_.stats().comm_ms);
    // Halo rows are overwritten, never summed: each has exactly one owner.
    const size_t row_bytes = size_t(f_) * sizeof(float);
    for (size_t i = 0; i < plan_.peers.size(); ++i) {
      const float* src = recv_buf_.data() + recv_off_[i] * f_;
      const int64_t n = recv_off_[i + 1] - recv_off_[i];
      for (int64_t k = 0; k < n; ++k) {
        std::memcpy(x.row(recv_row(i, k)), src, row_bytes);
        src += f_;
      }
    }
  }

  void backward_begin(ConstMatView g) override {
    start(Phase::backward, g.rows, g.cols, "backward_begin");
    // The gradient of a halo row belongs to the peer that sent the row: pack it in the forward
    // receive layout, and receive the peers' contributions in the forward send layout.
    try {
      pack_received(g);
      post(Phase::backward, recv_buf_, recv_off_, send_buf_, send_off_);
    } catch (...) {
      buf_->user = nullptr;
      throw;
    }
  }

  void backward_end(MatView g) override {
    finish(Phase::backward, g.rows, g.cols, "backward_end");
    ScopedMs t(comm_.stats().comm_ms);
    // Peers in ascending rank order (the plan's order), so the sums are the same every run.
    for (size_t i = 0; i < plan_.peers.size(); ++i) {
      const int64_t n = send_off_[i + 1] - send_off_[i];
      kernels::scatter_add_rows(Device::cpu, block(send_buf_, send_off_[i], n),
                                send_list(i), n, g);
    }
  }

 private:
  enum class Phase { idle, forward, backward };

  // One round of a streamed exchange: at most one piece out and one in. A piece is rows
  // [lo, hi) of the send (or receive) list of plan peer `peer`; peer -1: none.
  struct Piece {
    int peer = -1;
    int64_t lo = 0, hi = 0;
  };
  struct Round {
    Piece send, recv;
    int64_t piece = -1;  // the index of `recv` in pieces_
  };

  // Takes the (maybe shared) buffers for one exchange; a streamed one gives them back when it
  // returns (Release), a whole one in finish().
  void claim(const char* what) {
    DGNN_CHECK(buf_->user == nullptr, CommError,
               std::string("halo exchange: ") + what +
                   " while an exchange sharing its buffers is in flight");
    buf_->user = this;
  }
  struct Release {
    HaloBuffers& b;
    ~Release() { b.user = nullptr; }
  };

  void start_stream(int64_t cols, const char* what) {
    DGNN_CHECK(phase_ == Phase::idle, CommError,
               std::string("halo exchange: ") + what + " while another exchange is in flight");
    DGNN_CHECK(cols >= 0, ShapeError, std::string("halo exchange: ") + what + ": negative width");
    f_ = cols;
    for (auto* b : {&piece_send_[0], &piece_send_[1], &piece_recv_[0], &piece_recv_[1]})
      if (b->size() < size_t(piece_rows_ * f_)) b->resize(size_t(piece_rows_ * f_));
  }

  MatView piece_view(std::vector<float>& buf, int64_t n) const {
    return MatView{buf.data(), n, f_, f_};
  }

  // Posts round 0 (and 1), runs `local`, then for each round k: posts round k + 1 (its slot's
  // previous round, k - 1, is complete), waits for round k and hands it to `done`. Every
  // message is completed before this returns, also when `done` throws.
  template <class Post, class Done>
  void run_rounds(Post&& post, const std::function<void()>& local, Done&& done) {
    std::unique_ptr<PendingExchange> pending[2];
    const size_t n = rounds_.size();
    if (n > 0) pending[0] = post(0);
    local();
    for (size_t k = 0; k < n; ++k) {
      if (k + 1 < n) pending[(k + 1) % 2] = post(k + 1);
      std::unique_ptr<PendingExchange> now = std::move(pending[k % 2]);
      now->wait();
      done(k);
    }
  }

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

  // The rows sent to peer i, as a list: the plan's, or made from its bits (into the shared
  // buffers' scratch, valid until the next call).
  const int32_t* send_list(size_t i) {
    if (send_bits_[i].empty()) return plan_.send_rows[i].data();
    std::vector<int32_t>& out = buf_->rows;
    out.clear();
    const std::vector<uint64_t>& b = send_bits_[i];
    for (size_t w = 0; w < b.size(); ++w)
      for (uint64_t x = b[w]; x; x &= x - 1) out.push_back(int32_t(w * 64) + __builtin_ctzll(x));
    return out.data();
  }

  // The owned rows each peer needs, peer after peer, into the send buffer.
  void pack_sent(ConstMatView m) {
    ScopedMs t(comm_.stats().comm_ms);
    for (size_t i = 0; i < plan_.peers.size(); ++i) {
      const int64_t n = send_off_[i + 1] - send_off_[i];
      kernels::gather_rows(Device::cpu, m, send_list(i), n, block(send_buf_, send_off_[i], n));
    }
  }

  // Row k of what peer i sends here.
  int32_t recv_row(size_t i, int64_t k) const {
    return recv_runs() ? recv_first_[i] + int32_t(k) : plan_.recv_rows[i][size_t(k)];
  }
  bool recv_runs() const { return !recv_first_.empty() || plan_.peers.empty(); }

  // The halo rows of m, peer after peer, into the receive buffer (the backward's send).
  void pack_received(ConstMatView m) {
    if (!recv_runs()) return pack(m, plan_.recv_rows, recv_off_, recv_buf_);
    ScopedMs t(comm_.stats().comm_ms);
    for (size_t i = 0; i < plan_.peers.size(); ++i) {
      const int64_t n = recv_off_[i + 1] - recv_off_[i];
      if (n > 0)
        kernels::copy_view(Device::cpu, ConstMatView{m.row(recv_first_[i]), n, m.cols, m.ld},
                           block(recv_buf_, recv_off_[i], n), false);
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
    claim(what);
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
    buf_->user = nullptr;
    check_rows(rows, what);
    DGNN_CHECK(cols == f_, ShapeError,
               std::string("halo exchange: ") + what + " got " + std::to_string(cols) +
                   " columns, its begin had " + std::to_string(f_));
  }

  // A streamed exchange reads and writes the owned rows only.
  void check_owned_rows(int64_t rows, const char* what) const {
    DGNN_CHECK(max_send_row_ < rows, ShapeError,
               std::string("halo exchange: ") + what + ": the matrix has " + std::to_string(rows) +
                   " rows, the plan sends row " + std::to_string(max_send_row_));
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
  // Each peer's first receive row when every receive list is a run (plan_.recv_rows then
  // emptied); empty otherwise.
  std::vector<int32_t> recv_first_;
  // Per peer, its send list as a bit per owned row when that is smaller (plan_.send_rows[i]
  // then emptied); empty otherwise.
  std::vector<std::vector<uint64_t>> send_bits_;
  int32_t max_send_row_ = -1, max_recv_row_ = -1;
  int64_t f_ = -1;
  std::shared_ptr<HaloBuffers> buf_;
  std::vector<float>& send_buf_;
  std::vector<float>& recv_buf_;
  std::vector<float> (&piece_send_)[2];
  std::vector<float> (&piece_recv_)[2];
  std::vector<Round> rounds_;
  Phase phase_ = Phase::idle;
  std::unique_ptr<PendingExchange> pending_;  // declared last: destroyed (waited) first
};

}  // namespace

void HaloExchange::stream_forward(ConstMatView, const std::function<void()>&,
                                  const std::function<void(size_t, ConstMatView)>&) {
  throw CommError("halo exchange: this exchange does not stream (set_piece_rows refused)");
}

void HaloExchange::stream_backward(const std::function<void(size_t, MatView)>&,
                                   const std::function<void()>&, MatView) {
  throw CommError("halo exchange: this exchange does not stream (set_piece_rows refused)");
}

int64_t halo_piece_rows(const HaloPlan& plan, int64_t n_owned, int64_t widest,
                        int64_t budget_bytes) {
  if (budget_bytes == 0 || plan.peers.empty()) return 0;
  const int64_t row_bytes = std::max<int64_t>(1, widest) * int64_t(sizeof(float));
  int64_t rows;
  if (budget_bytes > 0) {
    rows = budget_bytes / (4 * row_bytes);
  } else {
    // Whole, a rank holds its halo twice (received, and beside its owned rows) and what it sends.
    if (2 * plan.rows_received() + plan.rows_sent() <= n_owned) return 0;
    rows = n_owned / 4;
  }
  return std::max<int64_t>(rows, 256);
}

int64_t agree_piece_rows(HaloExchange& halo, Communicator& comm, int64_t wanted) {
  // One allreduce of (the smallest positive wish, -1 if any rank cannot stream), as maxima.
  double v[2] = {wanted > 0 ? -double(wanted) : -1e300, 0};
  comm.allreduce_max(v, 1);
  const int64_t rows = v[0] < -1e299 ? 0 : int64_t(-v[0]);
  v[1] = halo.set_piece_rows(rows) ? 0 : 1;
  comm.allreduce_max(v + 1, 1);
  if (v[1] == 0) return rows;
  halo.set_piece_rows(0);
  return 0;
}

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
                                                 Device dev, std::shared_ptr<HaloBuffers> shared) {
  DeviceComm* dc = comm.device_comm();
  if (dc && dc->device() == dev) return make_device_halo_exchange(plan, comm, dc, dev);
  if (dev == Device::cpu) return std::make_unique<HostHaloExchange>(plan, comm, std::move(shared));
  DGNN_CHECK(plan.peers.empty(), CommError,
             std::string("halo exchange on ") + device_name(dev) + " memory with " +
                 std::to_string(plan.peers.size()) +
                 " peer(s) needs a device communicator (attach_device_comm)");
  return make_device_halo_exchange(plan, comm, nullptr, dev);
}

}  // namespace dgnn
