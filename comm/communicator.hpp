#pragma once
// Communicator: the collective operations the engine needs, over one process (SelfCommunicator)
// or many (MPI, NCCL). Buffers are host pointers for the CPU backend.
#include <cstdint>
#include <memory>
#include <vector>

namespace dgnn {

class Communicator {
 public:
  virtual ~Communicator() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
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
  virtual void barrier() = 0;
  // Brings the whole job down with a message (never returns).
  [[noreturn]] virtual void abort(int code) = 0;
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
  void barrier() override {}
  [[noreturn]] void abort(int code) override;
};

}  // namespace dgnn
