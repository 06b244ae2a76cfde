#pragma once
// Communicator: the collective and point-to-point operations the engine needs, over one process
// (SelfCommunicator) or many (MPI). Buffers are host pointers; device (GPU) memory goes through
// the DeviceComm attached to it (comm/device_comm.hpp: NCCL, or staged through this one).
// Every call accounts its time and the bytes this rank sent in stats().
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace dgnn {

class DeviceComm;

// Where communication time went, on this rank, since the last reset().
struct CommStats {
  double comm_ms = 0;    // inside communication calls, moving data (collectives, posting, packing)
  double wait_ms = 0;    // blocked waiting for peers (PendingExchange::wait, barrier)
  int64_t bytes_sent = 0;
  int64_t messages = 0;
  void reset() { *this = CommStats{}; }
};

// A point-to-point exchange in flight; wait() completes it (and is called by the destructor).
class PendingExchange {
 public:
  virtual ~PendingExchange() = default;
  virtual void wait() = 0;
};

// One message to or from a peer.
struct PeerBuffer {
  int peer = 0;
  void* data = nullptr;
  int64_t bytes = 0;
};

class Communicator {
 public:
  virtual ~Communicator() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // This rank among the ranks on its node (MPI_Comm_split_type shared): picks its GPU.
  virtual int local_rank() const { return 0; }
  virtual int local_size() const { return 1; }
  // In-place element-wise sum across ranks.
  virtual void allreduce_sum(float* data, int64_t n) = 0;
  virtual void allreduce_sum(double* data, int64_t n) = 0;
  virtual void allreduce_sum(int64_t* data, int64_t n) = 0;
  virtual void allreduce_max(double* data, int64_t n) = 0;
  // Copies `bytes` from root to every rank.
  virtual void broadcast(void* data, int64_t bytes, int root) = 0;
  // Variable all-to-all of bytes: send_counts[p] bytes go to rank p from send + send_displs[p].
  virtual void alltoallv(const void* send, const std::vector<int64_t>& send_counts,
                         const std::vector<int64_t>& send_displs, void* recv,
                         const std::vector<int64_t>& recv_counts,
                         const std::vector<int64_t>& recv_displs) = 0;
  // Starts sending each `sends` buffer to its peer and receiving each `recvs` buffer from its
  // peer (non-blocking); buffers must stay valid until wait(). Peers must post matching sizes.
  virtual std::unique_ptr<PendingExchange> exchange_begin(const std::vector<PeerBuffer>& sends,
                                                          const std::vector<PeerBuffer>& recvs) = 0;
  virtual void barrier() = 0;
  // The same ranks with a message space of their own (nothing sent on one matches the other):
  // for traffic on another thread, e.g. the mini-batch sampler's prefetch. Collective.
  virtual std::unique_ptr<Communicator> duplicate() = 0;
  // The ranks with the same `color`, numbered in this communicator's order, as a communicator
  // of their own (MPI_Comm_split). Collective over every rank of this one.
  virtual std::unique_ptr<Communicator> split(int color) = 0;
  // Whether a duplicate may be used on another thread while this one is in use (under MPI: the
  // library granted MPI_THREAD_MULTIPLE).
  virtual bool concurrent_duplicates() const = 0;
  // Brings the whole job down (never returns): MPI_Abort under MPI.
  [[noreturn]] virtual void abort(int code) = 0;

  CommStats& stats() { return stats_; }

  // The same ranks' communication on device memory, while attach_device_comm
  // (comm/device_comm.hpp) has one attached; null otherwise (CPU runs, one rank). Not owned.
  DeviceComm* device_comm() const { return device_comm_; }
  void set_device_comm(DeviceComm* d) { device_comm_ = d; }

 protected:
  CommStats stats_;

 private:
  DeviceComm* device_comm_ = nullptr;
};

// One process: collectives are identities.
class SelfCommunicator final : public Communicator {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  void allreduce_sum(float*, int64_t) override {}
  void allreduce_sum(double*, int64_t) override {}
  void allreduce_sum(int64_t*, int64_t) override {}
  void allreduce_max(double*, int64_t) override {}
  void broadcast(void*, int64_t, int) override {}
  void alltoallv(const void* send, const std::vector<int64_t>& send_counts,
                 const std::vector<int64_t>& send_displs, void* recv,
                 const std::vector<int64_t>& recv_counts,
                 const std::vector<int64_t>& recv_displs) override;
  std::unique_ptr<PendingExchange> exchange_begin(const std::vector<PeerBuffer>& sends,
                                                  const std::vector<PeerBuffer>& recvs) override;
  void barrier() override {}
  std::unique_ptr<Communicator> duplicate() override { return std::make_unique<SelfCommunicator>(); }
  std::unique_ptr<Communicator> split(int) override { return std::make_unique<SelfCommunicator>(); }
  bool concurrent_duplicates() const override { return true; }
  [[noreturn]] void abort(int code) override;
};

// The communicator for this process: MPI when built with it and launched with more than one
// rank (or DGNN_FORCE_MPI=1), else SelfCommunicator. Initialises MPI on first use; MPI is
// finalised at exit by an RAII object.
Communicator& world();

// This process's rank as the launcher announced it (Open MPI, MPICH/Hydra, Slurm's PMI), without
// initialising MPI; -1 when not launched as a job.
long launcher_rank();

// Reports a fatal error and ends the job: prints "dgnn: error: [rank R] message" (the rank only
// when the job has more than one) to stderr, then MPI_Abort(code) when running under MPI with
// more than one rank, so that no peer is left waiting; otherwise exit(code). Call it from main's
// catch blocks. A code of 0 is reported as 1. `same_on_every_rank` (a bad option, which every
// rank meets): only rank 0 reports it, unless it has not ended the job within a few seconds.
[[noreturn]] void fail_job(const std::string& message, int code = 1,
                           bool same_on_every_rank = false);

}  // namespace dgnn
