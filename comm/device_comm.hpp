#pragma once
// DeviceComm: the communication training needs on device (GPU) memory — the gradient all-reduce,
// the halo exchange's point-to-point messages and the snapshot strategy's all-to-all — for the
// ranks of a host Communicator, over one of two transports:
//   nccl    NCCL, bootstrapped over the host communicator (one GPU per rank; comm/nccl/);
//   staged  each message copied to the host, sent with the host communicator (MPI), and copied
//           back: works wherever the host communicator does, ranks sharing a GPU included.
// Plain C++ (no CUDA header): the staged transport moves memory with kernels::copy, so on
// Device::cpu it runs (and is tested) in every build.
//
// Stats: accounted in the host communicator's stats() like its own calls (comm_ms moving data,
// wait_ms blocked on peers, bytes this rank sent), so the trainers' time split covers both.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "dgnn/comm/communicator.hpp"
#include "dgnn/common/views.hpp"

namespace dgnn {

enum class DeviceTransport : uint8_t { staged, nccl };
const char* transport_name(DeviceTransport t);  // "mpi" (staged) or "nccl", as --comm names them

class DeviceComm {
 public:
  explicit DeviceComm(Communicator& host) : host_(host) {}
  // Detaches itself from the host communicator if attached there.
  virtual ~DeviceComm();
  DeviceComm(const DeviceComm&) = delete;
  DeviceComm& operator=(const DeviceComm&) = delete;

  virtual DeviceTransport transport() const = 0;
  // Whose memory the buffers are in.
  virtual Device device() const = 0;
  Communicator& host() const { return host_; }
  int rank() const { return host_.rank(); }
  int size() const { return host_.size(); }

  // In-place element-wise sum of n floats across ranks. Ordered after the work queued on the
  // device before it; the result is ready for work queued after it.
  virtual void allreduce_sum(float* data, int64_t n) = 0;
  // Variable all-to-all of bytes, laid out as Communicator::alltoallv's (device memory).
  virtual void alltoallv(const void* send, const std::vector<int64_t>& send_counts,
                         const std::vector<int64_t>& send_displs, void* recv,
                         const std::vector<int64_t>& recv_counts,
                         const std::vector<int64_t>& recv_displs) = 0;
  // Starts sending and receiving device buffers (PeerBuffer::data in device memory), ordered
  // after the work queued on the device so far; the transfer may run while the caller queues
  // more work. wait() returns once the received data is in place for work queued after it.
  // Buffers must stay valid until then; peers must post matching sizes.
  virtual std::unique_ptr<PendingExchange> exchange_begin(const std::vector<PeerBuffer>& sends,
                                                          const std::vector<PeerBuffer>& recvs) = 0;

 private:
  Communicator& host_;
};

// The staged transport over `host` for memory of `dev` (cuda; cpu in tests).
std::unique_ptr<DeviceComm> make_staged_comm(Communicator& host, Device dev);

// Which transport to use. requested: "auto", "mpi" or "nccl" (the --comm option); device_ids:
// every rank's GPU id in rank order (kernels::cuda_device_id); nccl_built: this build has NCCL.
// auto takes NCCL when it is built and no two ranks share a GPU, the staged path otherwise, and
// says why in *why. OptionError for an unknown name, or nccl where it cannot run.
DeviceTransport choose_transport(const std::string& requested,
                                 const std::vector<std::string>& device_ids, bool nccl_built,
                                 std::string* why = nullptr);

// Every rank's `mine`, in rank order, on every rank. Collective.
std::vector<std::string> allgather_strings(Communicator& comm, const std::string& mine);

// For a run on `dev` with several ranks: chooses the transport (every rank's GPU compared through
// `host`), creates the device communicator and attaches it to `host` (host.device_comm()) until
// it is destroyed. Collective. Null on one rank or on the CPU, where nothing is needed.
// *why (optional) says which transport and why.
std::unique_ptr<DeviceComm> attach_device_comm(Communicator& host, Device dev,
                                               const std::string& requested,
                                               std::string* why = nullptr);

// Whether this build contains the NCCL transport.
bool nccl_built();

// Collectives on memory of `dev` for code that runs on either device: the host communicator's
// own for CPU memory, the attached device communicator's for GPU memory (a local copy when the
// job has one rank). CommError when GPU memory must cross ranks and none is attached.
void alltoallv_on(Communicator& comm, Device dev, const void* send,
                  const std::vector<int64_t>& send_counts, const std::vector<int64_t>& send_displs,
                  void* recv, const std::vector<int64_t>& recv_counts,
                  const std::vector<int64_t>& recv_displs);
std::unique_ptr<PendingExchange> exchange_begin_on(Communicator& comm, Device dev,
                                                   const std::vector<PeerBuffer>& sends,
                                                   const std::vector<PeerBuffer>& recvs);

}  // namespace dgnn
