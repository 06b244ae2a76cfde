#pragma once
// MpiCommunicator: Communicator over MPI (host buffers), and the one MPI error-check macro.
// Internal to comm/mpi; everything else reaches it through comm/mpi/mpi.hpp or world().
//
// Stats, per rank (CommStats):
//   comm_ms     wall time inside all-reduce, broadcast, alltoallv and exchange_begin (posting).
//               All-reduce includes whatever time it spends waiting for late ranks: no barrier
//               is added to separate the two, since a barrier costs a round trip per call.
//   wait_ms     wall time blocked in PendingExchange::wait (MPI_Waitall) and in barrier().
//   bytes_sent  payload this rank handed to MPI for other ranks, not the algorithm's traffic:
//               all-reduce n * sizeof(T); broadcast bytes * (size - 1) at the root, 0 elsewhere;
//               alltoallv the counts to other ranks; exchange every send buffer (also to self).
//   messages    one per collective call, one per alltoallv peer other than self, one per
//               exchange send buffer (however many pieces a large one is split into).
#include <mpi.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "dgnn/comm/communicator.hpp"

namespace dgnn::mpi {

// Throws CommError naming the call, MPI's error string, file and line.
[[noreturn]] void throw_mpi_error(int rc, const char* call, const char* file, int line);

}  // namespace dgnn::mpi

#define DGNN_MPI_CHECK(call)                                                 \
  do {                                                                       \
    const int dgnn_mpi_rc_ = (call);                                         \
    if (dgnn_mpi_rc_ != MPI_SUCCESS)                                         \
      ::dgnn::mpi::throw_mpi_error(dgnn_mpi_rc_, #call, __FILE__, __LINE__); \
  } while (0)

namespace dgnn::mpi {

class MpiCommunicator final : public Communicator {
 public:
  // Duplicates `parent`, so the tags used here cannot collide with other users of it.
  explicit MpiCommunicator(MPI_Comm parent);
  ~MpiCommunicator() override;
  MpiCommunicator(const MpiCommunicator&) = delete;
  MpiCommunicator& operator=(const MpiCommunicator&) = delete;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  int local_rank() const override { return local_rank_; }
  int local_size() const override { return local_size_; }
  void allreduce_sum(float* data, int64_t n) override;
  void allreduce_sum(double* data, int64_t n) override;
  void allreduce_sum(int64_t* data, int64_t n) override;
  void allreduce_max(double* data, int64_t n) override;
  void broadcast(void* data, int64_t bytes, int root) override;
  void alltoallv(const void* send, const std::vector<int64_t>& send_counts,
                 const std::vector<int64_t>& send_displs, void* recv,
                 const std::vector<int64_t>& recv_counts,
                 const std::vector<int64_t>& recv_displs) override;
  std::unique_ptr<PendingExchange> exchange_begin(const std::vector<PeerBuffer>& sends,
                                                  const std::vector<PeerBuffer>& recvs) override;
  void barrier() override;
  std::unique_ptr<Communicator> duplicate() override;
  std::unique_ptr<Communicator> split(int color) override;
  bool concurrent_duplicates() const override;
  [[noreturn]] void abort(int code) override;

  // The private duplicate this communicator runs on (mpi.hpp: native_handle).
  MPI_Comm* handle() { return &comm_; }

 private:
  template <class T>
  void allreduce(T* data, int64_t n, MPI_Datatype type, MPI_Op op);
  void alltoallv_pairwise(const char* send, const std::vector<int64_t>& send_counts,
                          const std::vector<int64_t>& send_displs, char* recv,
                          const std::vector<int64_t>& recv_counts,
                          const std::vector<int64_t>& recv_displs);

  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0;
  int size_ = 1;
  int local_rank_ = 0;
  int local_size_ = 1;
};

}  // namespace dgnn::mpi
