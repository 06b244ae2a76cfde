// NcclComm: DeviceComm over NCCL. The all-reduce and the all-to-all run on the compute stream
// (the context's) and are waited for; the point-to-point exchange (the halo) runs on a stream of
// its own, ordered after the compute stream by an event, so that the work queued between
// exchange_begin and wait() (the interior aggregation) overlaps the transfer.
//
// Stats (the host communicator's): comm_ms is the time from posting to the end of the transfer
// for the blocking calls (the stream is synchronised inside the timed region, after an untimed
// synchronisation that finishes the computation queued before) and the posting time for the
// exchange, whose completion is wait_ms. bytes_sent: n * 4 for the all-reduce, the bytes to
// other ranks for the all-to-all and the exchange.
#include <cuda_runtime.h>
#include <nccl.h>

#include <exception>
#include <string>

#include "dgnn/comm/nccl/nccl.hpp"
#include "dgnn/common/error.hpp"
#include "dgnn/common/timer.hpp"
#include "dgnn/kernels/kernels.hpp"

namespace dgnn::nccl {

namespace {

[[noreturn]] void fail_nccl(ncclResult_t rc, const char* call, const char* file, int line) {
  // ncclGetLastError takes a communicator it does not use yet; null is allowed.
  const char* last = ncclGetLastError(nullptr);
  throw CommError(std::string("NCCL call ") + call + " failed: " + ncclGetErrorString(rc) +
                  (last && *last ? std::string(" (") + last + ")" : std::string()) + " [" + file +
                  ":" + std::to_string(line) + "]");
}

// The CUDA runtime's own calls made here (streams, events, copies): a DeviceError worded as the
// kernels' CUDA errors are ("<call> failed (<file>:<line>): <name>: <text>").
[[noreturn]] void fail_cuda(cudaError_t status, const char* call, const char* file, int line) {
  cudaGetLastError();  // clear a non-sticky error so later calls can report their own
  throw DeviceError(std::string(call) + " failed (" + file + ":" + std::to_string(line) +
                    "): " + cudaGetErrorName(status) + ": " + cudaGetErrorString(status));
}

// The stream the kernels run on (the calling thread's): NCCL's collectives are queued on it.
cudaStream_t compute_stream() { return static_cast<cudaStream_t>(kernels::cuda_stream()); }

}  // namespace

// A call whose result is not `ok` throws through `fail` (fail_nccl: a CommError naming the call,
// NCCL's error text, file and line; fail_cuda: a DeviceError, for the CUDA runtime's calls).
// `text` is the call as written (stringised before its macros expand).
#define DGNN_COMM_CHECK(call, text, ok, fail)                                               \
  do {                                                                                      \
    const auto dgnn_comm_rc_ = (call);                                                      \
    if (dgnn_comm_rc_ != (ok)) ::dgnn::nccl::fail(dgnn_comm_rc_, text, __FILE__, __LINE__); \
  } while (0)
#define DGNN_NCCL_CHECK(call) DGNN_COMM_CHECK(call, #call, ncclSuccess, fail_nccl)
#define DGNN_COMM_CUDA_CHECK(call) DGNN_COMM_CHECK(call, #call, cudaSuccess, fail_cuda)

namespace {

// Ends an open ncclGroupStart on every path: a throwing call inside the group must not leave
// the group open for the next one.
class Group {
 public:
  Group() { DGNN_NCCL_CHECK(ncclGroupStart()); }
  ~Group() {
    if (open_) ncclGroupEnd();
  }
  void end() {
    open_ = false;
    DGNN_NCCL_CHECK(ncclGroupEnd());
  }
  Group(const Group&) = delete;
  Group& operator=(const Group&) = delete;

 private:
  bool open_ = true;
};

class NcclPending final : public PendingExchange {
 public:
  NcclPending(CommStats& stats, cudaStream_t side)
      : stats_(stats), side_(side), unwinding_at_start_(std::uncaught_exceptions()) {}
  ~NcclPending() override {
    // While an exception unwinds a peer may never post its side: do not block on it.
    if (side_ && std::uncaught_exceptions() == unwinding_at_start_) cudaStreamSynchronize(side_);
  }
  void wait() override {
    if (!side_) return;
    cudaStream_t s = side_;
    side_ = nullptr;
    ScopedMs t(stats_.wait_ms);
    DGNN_COMM_CUDA_CHECK(cudaStreamSynchronize(s));
  }

 private:
  CommStats& stats_;
  cudaStream_t side_;
  int unwinding_at_start_;
};

class NcclComm final : public DeviceComm {
 public:
  explicit NcclComm(Communicator& host)
      : DeviceComm(host), unwinding_at_start_(std::uncaught_exceptions()) {
    DGNN_COMM_CUDA_CHECK(cudaSetDevice(kernels::cuda_context_device()));
    ncclUniqueId id{};
    if (host.rank() == 0) DGNN_NCCL_CHECK(ncclGetUniqueId(&id));
    host.broadcast(&id, int64_t(sizeof id), 0);
    DGNN_NCCL_CHECK(ncclCommInitRank(&comm_, host.size(), id, host.rank()));
    try {
      DGNN_COMM_CUDA_CHECK(cudaStreamCreateWithFlags(&side_, cudaStreamNonBlocking));
      DGNN_COMM_CUDA_CHECK(cudaEventCreateWithFlags(&ready_, cudaEventDisableTiming));
    } catch (...) {
      release(true);
      throw;
    }
  }

  // Destroyed while an exception unwinds, peers may be stuck mid-operation: abort, never block.
  ~NcclComm() override { release(std::uncaught_exceptions() > unwinding_at_start_); }

  DeviceTransport transport() const override { return DeviceTransport::nccl; }
  Device device() const override { return Device::cuda; }

  void allreduce_sum(float* data, int64_t n) override {
    DGNN_CHECK(n >= 0, CommError, "allreduce: negative count " + std::to_string(n));
    CommStats& st = host().stats();
    cudaStream_t s = compute_stream();
    DGNN_COMM_CUDA_CHECK(cudaStreamSynchronize(s));  // computation queued before: not comm time
    {
      ScopedMs t(st.comm_ms);
      if (n > 0) {
        DGNN_NCCL_CHECK(ncclAllReduce(data, data, size_t(n), ncclFloat32, ncclSum, comm_, s));
        DGNN_COMM_CUDA_CHECK(cudaStreamSynchronize(s));
      }
    }
    st.bytes_sent += n * int64_t(sizeof(float));
    st.messages += 1;
  }

  void alltoallv(const void* send, const std::vector<int64_t>& send_counts,
                 const std::vector<int64_t>& send_displs, void* recv,
                 const std::vector<int64_t>& recv_counts,
                 const std::vector<int64_t>& recv_displs) override {
    const int p = size(), me = rank();
    DGNN_CHECK(send_counts.size() == size_t(p) && send_displs.size() == size_t(p) &&
                   recv_counts.size() == size_t(p) && recv_displs.size() == size_t(p),
               CommError, "alltoallv: counts and displacements need one entry per rank");
    for (int q = 0; q < p; ++q)
      DGNN_CHECK(send_counts[size_t(q)] >= 0 && recv_counts[size_t(q)] >= 0 &&
                     send_displs[size_t(q)] >= 0 && recv_displs[size_t(q)] >= 0,
                 CommError, "alltoallv: negative count or displacement for rank " +
                                std::to_string(q));
    const size_t self = size_t(me);
    DGNN_CHECK(send_counts[self] == recv_counts[self], CommError,
               "alltoallv: this rank sends itself " + std::to_string(send_counts[self]) +
                   " bytes but expects " + std::to_string(recv_counts[self]));
    CommStats& st = host().stats();
    cudaStream_t s = compute_stream();
    DGNN_COMM_CUDA_CHECK(cudaStreamSynchronize(s));
    const char* out = static_cast<const char*>(send);
    char* in = static_cast<char*>(recv);
    {
      ScopedMs t(st.comm_ms);
      if (send_counts[self] > 0)
        DGNN_COMM_CUDA_CHECK(cudaMemcpyAsync(in + recv_displs[self], out + send_displs[self],
                                             size_t(send_counts[self]), cudaMemcpyDeviceToDevice,
                                             s));
      // Zero-byte blocks are skipped on both sides alike: my count to q is q's count from me.
      Group g;
      for (int q = 0; q < p; ++q) {
        if (q == me) continue;
        if (recv_counts[size_t(q)] > 0)
          DGNN_NCCL_CHECK(ncclRecv(in + recv_displs[size_t(q)], size_t(recv_counts[size_t(q)]),
                                   ncclUint8, q, comm_, s));
        if (send_counts[size_t(q)] > 0)
          DGNN_NCCL_CHECK(ncclSend(out + send_displs[size_t(q)], size_t(send_counts[size_t(q)]),
                                   ncclUint8, q, comm_, s));
      }
      g.end();
      DGNN_COMM_CUDA_CHECK(cudaStreamSynchronize(s));
    }
    for (int q = 0; q < p; ++q) {
      if (q == me) continue;
      st.bytes_sent += send_counts[size_t(q)];
      st.messages += 1;
    }
  }

  std::unique_ptr<PendingExchange> exchange_begin(const std::vector<PeerBuffer>& sends,
                                                  const std::vector<PeerBuffer>& recvs) override {
    const int p = size();
    for (const auto* list : {&sends, &recvs})
      for (const PeerBuffer& b : *list)
        DGNN_CHECK(b.peer >= 0 && b.peer < p && b.bytes >= 0 && (b.bytes == 0 || b.data),
                   CommError,
                   "exchange: buffer for rank " + std::to_string(b.peer) +
                       " names no rank in [0, " + std::to_string(p) +
                       "), or has a negative size or no data");
    CommStats& st = host().stats();
    {
      ScopedMs t(st.comm_ms);
      // The side stream starts once the compute stream has reached this point (the packing).
      DGNN_COMM_CUDA_CHECK(cudaEventRecord(ready_, compute_stream()));
      DGNN_COMM_CUDA_CHECK(cudaStreamWaitEvent(side_, ready_, 0));
      Group g;
      for (const PeerBuffer& b : recvs)
        if (b.bytes > 0)
          DGNN_NCCL_CHECK(ncclRecv(b.data, size_t(b.bytes), ncclUint8, b.peer, comm_, side_));
      for (const PeerBuffer& b : sends)
        if (b.bytes > 0)
          DGNN_NCCL_CHECK(ncclSend(b.data, size_t(b.bytes), ncclUint8, b.peer, comm_, side_));
      g.end();
    }
    for (const PeerBuffer& b : sends) st.bytes_sent += b.bytes;
    st.messages += int64_t(sends.size());
    return std::make_unique<NcclPending>(st, side_);
  }

 private:
  // Never throws: a destructor's path.
  void release(bool abort) noexcept {
    if (comm_) {
      if (abort) {
        ncclCommAbort(comm_);
      } else {
        cudaStreamSynchronize(compute_stream());
        if (side_) cudaStreamSynchronize(side_);
        ncclCommDestroy(comm_);
      }
      comm_ = nullptr;
    }
    if (ready_) cudaEventDestroy(ready_);
    if (side_) cudaStreamDestroy(side_);
    ready_ = nullptr;
    side_ = nullptr;
  }

  ncclComm_t comm_ = nullptr;
  cudaStream_t side_ = nullptr;  // the exchange's stream
  cudaEvent_t ready_ = nullptr;  // recorded on the compute stream when an exchange is posted
  int unwinding_at_start_;
};

}  // namespace

std::unique_ptr<DeviceComm> make_comm(Communicator& host) {
  return std::make_unique<NcclComm>(host);
}

}  // namespace dgnn::nccl
