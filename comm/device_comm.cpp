// DeviceComm's host-side parts: the staged transport (device -> host, the host communicator,
// host -> device), the choice of transport, and the helpers that route device memory to it.
#include "dgnn/comm/device_comm.hpp"

#include <algorithm>
#include <cstring>
#include <string>

#include "dgnn/common/error.hpp"
#include "dgnn/common/timer.hpp"
#include "dgnn/dgnn_config.hpp"
#include "dgnn/kernels/kernels.hpp"
#if DGNN_HAVE_NCCL
#include "dgnn/comm/nccl/nccl.hpp"
#endif

namespace dgnn {

const char* transport_name(DeviceTransport t) {
  return t == DeviceTransport::nccl ? "nccl" : "mpi";
}

DeviceComm::~DeviceComm() {
  if (host_.device_comm() == this) host_.set_device_comm(nullptr);
}

bool nccl_built() { return DGNN_HAVE_NCCL != 0; }

namespace {

struct Done final : PendingExchange {
  void wait() override {}
};

// A staged exchange in flight: the host buffers, the host communicator's messages, and where
// the received bytes go on the device once they are in.
class StagedPending final : public PendingExchange {
 public:
  StagedPending(CommStats& stats, Device dev, std::vector<std::vector<char>> out,
                std::vector<std::vector<char>> in, std::vector<PeerBuffer> targets)
      : stats_(stats), dev_(dev), out_(std::move(out)), in_(std::move(in)),
        targets_(std::move(targets)) {}
  // Declared after the buffers, `pending_` completes (or drops) its messages before they go.
  void start(std::unique_ptr<PendingExchange> p) { pending_ = std::move(p); }

  void wait() override {
    if (!pending_) return;
    std::unique_ptr<PendingExchange> p = std::move(pending_);
    p->wait();  // the host communicator accounts its own waiting
    ScopedMs t(stats_.comm_ms);
    for (size_t i = 0; i < targets_.size(); ++i)
      if (targets_[i].bytes > 0)
        kernels::copy(dev_, targets_[i].data, Device::cpu, in_[i].data(), size_t(targets_[i].bytes));
  }

 private:
  CommStats& stats_;
  Device dev_;
  std::vector<std::vector<char>> out_, in_;
  std::vector<PeerBuffer> targets_;
  std::unique_ptr<PendingExchange> pending_;
};

class StagedComm final : public DeviceComm {
 public:
  StagedComm(Communicator& host, Device dev) : DeviceComm(host), dev_(dev) {}
  DeviceTransport transport() const override { return DeviceTransport::staged; }
  Device device() const override { return dev_; }

  void allreduce_sum(float* data, int64_t n) override {
    DGNN_CHECK(n >= 0, CommError, "allreduce: negative count " + std::to_string(n));
    // Work queued before the call is computation, not communication: finish it untimed.
    kernels::synchronize(dev_);
    stage_.resize(size_t(n) * sizeof(float));
    float* h = reinterpret_cast<float*>(stage_.data());
    {
      ScopedMs t(host().stats().comm_ms);
      if (n > 0) kernels::copy(Device::cpu, h, dev_, data, size_t(n) * sizeof(float));
    }
    host().allreduce_sum(h, n);
    ScopedMs t(host().stats().comm_ms);
    if (n > 0) kernels::copy(dev_, data, Device::cpu, h, size_t(n) * sizeof(float));
  }

  void alltoallv(const void* send, const std::vector<int64_t>& send_counts,
                 const std::vector<int64_t>& send_displs, void* recv,
                 const std::vector<int64_t>& recv_counts,
                 const std::vector<int64_t>& recv_displs) override {
    const size_t p = size_t(size());
    DGNN_CHECK(send_counts.size() == p && send_displs.size() == p && recv_counts.size() == p &&
                   recv_displs.size() == p,
               CommError, "alltoallv: counts and displacements need one entry per rank");
    kernels::synchronize(dev_);
    // The host buffers mirror the device layout: the span that the sends read (blocks may
    // overlap, e.g. one block sent to everyone), and the span that the receives write.
    int64_t send_end = 0, recv_end = 0;
    for (size_t q = 0; q < p; ++q) {
      DGNN_CHECK(send_counts[q] >= 0 && recv_counts[q] >= 0 && send_displs[q] >= 0 &&
                     recv_displs[q] >= 0,
                 CommError, "alltoallv: negative count or displacement for rank " +
                                std::to_string(q));
      if (send_counts[q] > 0) send_end = std::max(send_end, send_displs[q] + send_counts[q]);
      if (recv_counts[q] > 0) recv_end = std::max(recv_end, recv_displs[q] + recv_counts[q]);
    }
    std::vector<char> out(static_cast<size_t>(send_end)), in(static_cast<size_t>(recv_end));
    {
      ScopedMs t(host().stats().comm_ms);
      if (send_end > 0) kernels::copy(Device::cpu, out.data(), dev_, send, size_t(send_end));
    }
    host().alltoallv(out.data(), send_counts, send_displs, in.data(), recv_counts, recv_displs);
    ScopedMs t(host().stats().comm_ms);
    // Block by block: bytes between the blocks are not this call's to overwrite.
    for (size_t q = 0; q < p; ++q)
      if (recv_counts[q] > 0)
        kernels::copy(dev_, static_cast<char*>(recv) + recv_displs[q], Device::cpu,
                      in.data() + recv_displs[q], size_t(recv_counts[q]));
  }

  std::unique_ptr<PendingExchange> exchange_begin(const std::vector<PeerBuffer>& sends,
                                                  const std::vector<PeerBuffer>& recvs) override {
    for (const auto* list : {&sends, &recvs})
      for (const PeerBuffer& b : *list)
        DGNN_CHECK(b.bytes >= 0 && (b.bytes == 0 || b.data != nullptr), CommError,
                   "exchange: buffer for rank " + std::to_string(b.peer) +
                       " has a negative size or no data");
    kernels::synchronize(dev_);
    std::vector<std::vector<char>> out(sends.size()), in(recvs.size());
    std::vector<PeerBuffer> host_sends = sends, host_recvs = recvs;
    {
      ScopedMs t(host().stats().comm_ms);
      for (size_t i = 0; i < sends.size(); ++i) {
        out[i].resize(size_t(sends[i].bytes));
        if (sends[i].bytes > 0)
          kernels::copy(Device::cpu, out[i].data(), dev_, sends[i].data, size_t(sends[i].bytes));
        host_sends[i].data = out[i].data();
      }
      for (size_t i = 0; i < recvs.size(); ++i) {
        in[i].resize(size_t(recvs[i].bytes));
        host_recvs[i].data = in[i].data();
      }
    }
    auto pending =
        std::make_unique<StagedPending>(host().stats(), dev_, std::move(out), std::move(in), recvs);
    // The vectors moved into `pending` keep their heap blocks, so the pointers above stay valid.
    pending->start(host().exchange_begin(host_sends, host_recvs));
    return pending;
  }

 private:
  Device dev_;
  std::vector<char> stage_;
};

}  // namespace

std::unique_ptr<DeviceComm> make_staged_comm(Communicator& host, Device dev) {
  return std::make_unique<StagedComm>(host, dev);
}

DeviceTransport choose_transport(const std::string& requested,
                                 const std::vector<std::string>& device_ids, bool nccl_built,
                                 std::string* why) {
  if (requested != "auto" && requested != "mpi" && requested != "nccl")
    throw OptionError("--comm: expected auto, mpi or nccl, got '" + requested + "'");
  auto say = [&](const std::string& s) {
    if (why) *why = s;
  };
  if (requested == "mpi") {
    say("mpi: GPU buffers staged through host memory (--comm mpi)");
    return DeviceTransport::staged;
  }
  // NCCL runs one rank per GPU: two ranks on one device cannot join one communicator.
  std::string shared;
  for (size_t i = 0; i < device_ids.size() && shared.empty(); ++i)
    for (size_t j = i + 1; j < device_ids.size(); ++j)
      if (device_ids[i] == device_ids[j]) {
        shared = "ranks " + std::to_string(i) + " and " + std::to_string(j) + " share GPU " +
                 device_ids[i];
        break;
      }
  if (requested == "nccl") {
    if (!nccl_built)
      throw OptionError("--comm nccl: this dgnn was built without NCCL (use --comm mpi)");
    if (!shared.empty())
      throw OptionError("--comm nccl: " + shared +
                        "; NCCL needs one GPU per rank (use --comm mpi, or fewer ranks per node)");
    say("nccl (--comm nccl)");
    return DeviceTransport::nccl;
  }
  if (!nccl_built) {
    say("mpi: GPU buffers staged through host memory (this dgnn was built without NCCL)");
    return DeviceTransport::staged;
  }
  if (!shared.empty()) {
    say("mpi: GPU buffers staged through host memory (" + shared + ", which NCCL cannot do)");
    return DeviceTransport::staged;
  }
  say("nccl (one GPU per rank)");
  return DeviceTransport::nccl;
}

std::vector<std::string> allgather_strings(Communicator& comm, const std::string& mine) {
  const int p = comm.size();
  std::vector<int64_t> lengths(size_t(p), 0);
  lengths[size_t(comm.rank())] = int64_t(mine.size());
  comm.allreduce_sum(lengths.data(), p);
  std::vector<int64_t> send_counts(size_t(p), int64_t(mine.size())), send_displs(size_t(p), 0);
  std::vector<int64_t> recv_displs(size_t(p), 0);
  int64_t total = 0;
  for (int q = 0; q < p; ++q) {
    recv_displs[size_t(q)] = total;
    total += lengths[size_t(q)];
  }
  std::string all(size_t(total), '\0');
  comm.alltoallv(mine.data(), send_counts, send_displs, all.data(), lengths, recv_displs);
  std::vector<std::string> out;
  for (int q = 0; q < p; ++q)
    out.push_back(all.substr(size_t(recv_displs[size_t(q)]), size_t(lengths[size_t(q)])));
  return out;
}

namespace {

std::unique_ptr<DeviceComm> make_nccl_comm(Communicator& host) {
#if DGNN_HAVE_NCCL
  return nccl::make_comm(host);
#else
  // choose_transport never picks NCCL in a build without it.
  (void)host;
  throw OptionError("--comm nccl: this dgnn was built without NCCL (use --comm mpi)");
#endif
}

}  // namespace

std::unique_ptr<DeviceComm> attach_device_comm(Communicator& host, Device dev,
                                               const std::string& requested, std::string* why) {
  if (dev == Device::cpu) {
    if (requested == "nccl")
      throw OptionError("--comm nccl carries GPU memory: it needs --device cuda (CPU ranks talk "
                        "over MPI)");
    choose_transport(requested, {}, nccl_built());  // an unknown name is still an error
    return nullptr;
  }
  DGNN_CHECK(host.device_comm() == nullptr, CommError,
             "a device communicator is already attached to this communicator");
  if (host.size() == 1) {
    // Nothing crosses ranks; still refuse what could never run.
    choose_transport(requested, {}, nccl_built());
    if (why) *why = "one rank: no device communication";
    return nullptr;
  }
  const std::vector<std::string> ids = allgather_strings(host, kernels::cuda_device_id());
  const DeviceTransport t = choose_transport(requested, ids, nccl_built(), why);
  std::unique_ptr<DeviceComm> dc =
      t == DeviceTransport::nccl ? make_nccl_comm(host) : make_staged_comm(host, dev);
  host.set_device_comm(dc.get());
  return dc;
}

namespace {

// The attached device communicator for memory of `dev`, or null where the host communicator
// (CPU memory) or a local copy (one rank) does.
DeviceComm* device_comm_for(Communicator& comm, Device dev, const char* what) {
  DeviceComm* dc = comm.device_comm();
  if (dc && dc->device() == dev) return dc;
  if (dev == Device::cpu || comm.size() == 1) return nullptr;
  throw CommError(std::string(what) + " of " + device_name(dev) + " memory across " +
                  std::to_string(comm.size()) +
                  " ranks needs a device communicator (attach_device_comm)");
}

}  // namespace

void alltoallv_on(Communicator& comm, Device dev, const void* send,
                  const std::vector<int64_t>& send_counts, const std::vector<int64_t>& send_displs,
                  void* recv, const std::vector<int64_t>& recv_counts,
                  const std::vector<int64_t>& recv_displs) {
  if (DeviceComm* dc = device_comm_for(comm, dev, "alltoallv"))
    return dc->alltoallv(send, send_counts, send_displs, recv, recv_counts, recv_displs);
  if (dev == Device::cpu)
    return comm.alltoallv(send, send_counts, send_displs, recv, recv_counts, recv_displs);
  DGNN_CHECK(send_counts.size() == 1 && recv_counts.size() == 1 &&
                 send_counts[0] == recv_counts[0] && send_displs.size() == 1 &&
                 recv_displs.size() == 1,
             CommError, "alltoallv on one process: counts must agree");
  if (send_counts[0] > 0)
    kernels::copy(dev, static_cast<char*>(recv) + recv_displs[0], dev,
                  static_cast<const char*>(send) + send_displs[0], size_t(send_counts[0]));
}

std::unique_ptr<PendingExchange> exchange_begin_on(Communicator& comm, Device dev,
                                                   const std::vector<PeerBuffer>& sends,
                                                   const std::vector<PeerBuffer>& recvs) {
  if (DeviceComm* dc = device_comm_for(comm, dev, "exchange"))
    return dc->exchange_begin(sends, recvs);
  if (dev == Device::cpu) return comm.exchange_begin(sends, recvs);
  // One rank: the i-th send to 0 is the i-th receive from 0, as SelfCommunicator has it.
  DGNN_CHECK(sends.size() == recvs.size(), CommError, "exchange with self: unmatched buffers");
  for (size_t i = 0; i < sends.size(); ++i) {
    DGNN_CHECK(sends[i].peer == 0 && recvs[i].peer == 0 && sends[i].bytes == recvs[i].bytes,
               CommError, "exchange with self: peers must be 0 and sizes equal");
    if (sends[i].bytes > 0)
      kernels::copy(dev, recvs[i].data, dev, sends[i].data, size_t(sends[i].bytes));
  }
  return std::make_unique<Done>();
}

}  // namespace dgnn
