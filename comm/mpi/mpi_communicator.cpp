// MpiCommunicator: collectives and point-to-point exchanges over MPI, safe past INT_MAX counts.
#include "dgnn/comm/mpi/mpi_communicator.hpp"

#include <algorithm>
#include <cstring>
#include <exception>
#include <string>

#include "dgnn/comm/mpi/mpi.hpp"
#include "dgnn/common/error.hpp"
#include "dgnn/common/timer.hpp"

namespace dgnn::mpi {

namespace {

// Exchange and pairwise-alltoallv messages use their own tags on the private communicator.
// Pieces of a split message share the tag: MPI keeps messages between two ranks with one tag
// in order, and both sides split the same way.
constexpr int kExchangeTag = 101;
constexpr int kAlltoallvTag = 102;

// Calls fn(offset, count) for consecutive pieces of at most max_count() covering [0, n); once
// (with count 0) when n == 0, so that zero-byte messages still match.
template <class Fn>
void for_each_piece(int64_t n, Fn&& fn) {
  const int64_t limit = max_count();
  int64_t off = 0;
  do {
    const int64_t c = std::min(limit, n - off);
    fn(off, int(c));
    off += c;
  } while (off < n);
}

void check_peer(int peer, int size, const char* what) {
  DGNN_CHECK(peer >= 0 && peer < size, CommError,
             std::string(what) + ": peer " + std::to_string(peer) + " is not a rank in [0, " +
                 std::to_string(size) + ")");
}

// Requests of one exchange. wait() completes them; the destructor completes them too, except
// while an exception unwinds: then peers may never send, so it cancels the receives and lets
// the requests go rather than hang on the way to fail_job.
class MpiPendingExchange final : public PendingExchange {
 public:
  MpiPendingExchange(CommStats& stats, std::vector<MPI_Request> requests, size_t n_recv)
      : stats_(stats),
        requests_(std::move(requests)),
        n_recv_(n_recv),
        unwinding_at_start_(std::uncaught_exceptions()) {}

  ~MpiPendingExchange() override {
    if (requests_.empty() || !active()) return;
    if (std::uncaught_exceptions() > unwinding_at_start_) {
      drop();
      return;
    }
    MPI_Waitall(int(requests_.size()), requests_.data(), MPI_STATUSES_IGNORE);
  }

  // Gives up on the requests without waiting: receives are cancelled, sends left to MPI.
  void drop() noexcept {
    for (size_t i = 0; i < requests_.size(); ++i) {
      if (requests_[i] == MPI_REQUEST_NULL) continue;
      if (i < n_recv_) MPI_Cancel(&requests_[i]);
      MPI_Request_free(&requests_[i]);
    }
    requests_.clear();
  }

  void wait() override {
    if (requests_.empty()) return;
    ScopedMs t(stats_.wait_ms);
    std::vector<MPI_Request> requests = std::move(requests_);
    requests_.clear();
    DGNN_MPI_CHECK(MPI_Waitall(int(requests.size()), requests.data(), MPI_STATUSES_IGNORE));
  }

 private:
  CommStats& stats_;
  std::vector<MPI_Request> requests_;  // receives first, then sends
  size_t n_recv_;
  int unwinding_at_start_;  // exceptions in flight when posted: more at destruction = unwinding
};

}  // namespace

MpiCommunicator::MpiCommunicator(MPI_Comm parent) {
  DGNN_MPI_CHECK(MPI_Comm_dup(parent, &comm_));
  DGNN_MPI_CHECK(MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN));
  DGNN_MPI_CHECK(MPI_Comm_rank(comm_, &rank_));
  DGNN_MPI_CHECK(MPI_Comm_size(comm_, &size_));
  // The ranks sharing this node (one GPU each, chosen by the node-local rank).
  MPI_Comm node;
  DGNN_MPI_CHECK(MPI_Comm_split_type(comm_, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &node));
  DGNN_MPI_CHECK(MPI_Comm_rank(node, &local_rank_));
  DGNN_MPI_CHECK(MPI_Comm_size(node, &local_size_));
  MPI_Comm_free(&node);
}

std::unique_ptr<Communicator> MpiCommunicator::duplicate() {
  return std::make_unique<MpiCommunicator>(comm_);
}

std::unique_ptr<Communicator> MpiCommunicator::split(int color) {
  MPI_Comm sub = MPI_COMM_NULL;
  DGNN_MPI_CHECK(MPI_Comm_split(comm_, color, rank_, &sub));
  auto out = std::make_unique<MpiCommunicator>(sub);  // its own duplicate
  MPI_Comm_free(&sub);
  return out;
}

bool MpiCommunicator::concurrent_duplicates() const { return thread_multiple(); }

MpiCommunicator::~MpiCommunicator() {
  if (comm_ != MPI_COMM_NULL && active()) MPI_Comm_free(&comm_);
}

template <class T>
void MpiCommunicator::allreduce(T* data, int64_t n, MPI_Datatype type, MPI_Op op) {
  DGNN_CHECK(n >= 0, CommError, "allreduce: negative count " + std::to_string(n));
  ScopedMs t(stats_.comm_ms);
  if (n > 0)
    for_each_piece(n, [&](int64_t off, int count) {
      DGNN_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, data + off, count, type, op, comm_));
    });
  stats_.bytes_sent += n * int64_t(sizeof(T));
  stats_.messages += 1;
}

void MpiCommunicator::allreduce_sum(float* data, int64_t n) {
  allreduce(data, n, MPI_FLOAT, MPI_SUM);
}
void MpiCommunicator::allreduce_sum(double* data, int64_t n) {
  allreduce(data, n, MPI_DOUBLE, MPI_SUM);
}
void MpiCommunicator::allreduce_sum(int64_t* data, int64_t n) {
  allreduce(data, n, MPI_INT64_T, MPI_SUM);
}
void MpiCommunicator::allreduce_max(double* data, int64_t n) {
  allreduce(data, n, MPI_DOUBLE, MPI_MAX);
}

void MpiCommunicator::broadcast(void* data, int64_t bytes, int root) {
  check_peer(root, size_, "broadcast root");
  DGNN_CHECK(bytes >= 0, CommError, "broadcast: negative size " + std::to_string(bytes));
  ScopedMs t(stats_.comm_ms);
  char* p = static_cast<char*>(data);
  if (bytes > 0)
    for_each_piece(bytes, [&](int64_t off, int count) {
      DGNN_MPI_CHECK(MPI_Bcast(p + off, count, MPI_BYTE, root, comm_));
    });
  if (rank_ == root) stats_.bytes_sent += bytes * (size_ - 1);
  stats_.messages += 1;
}

void MpiCommunicator::alltoallv(const void* send, const std::vector<int64_t>& send_counts,
                                const std::vector<int64_t>& send_displs, void* recv,
                                const std::vector<int64_t>& recv_counts,
                                const std::vector<int64_t>& recv_displs) {
  const size_t p = size_t(size_);
  DGNN_CHECK(send_counts.size() == p && send_displs.size() == p && recv_counts.size() == p &&
                 recv_displs.size() == p,
             CommError,
             "alltoallv: counts and displacements need one entry per rank (" +
                 std::to_string(size_) + ")");
  ScopedMs t(stats_.comm_ms);
  // MPI_Alltoallv takes int counts and displacements. Every rank must take the same path, and
  // one rank's sizes say nothing of another's, so the ranks agree on it first (one tiny
  // all-reduce, latency only).
  const int64_t limit = max_count();
  int too_big = 0;
  for (size_t i = 0; i < p; ++i) {
    DGNN_CHECK(
        send_counts[i] >= 0 && recv_counts[i] >= 0 && send_displs[i] >= 0 && recv_displs[i] >= 0,
        CommError, "alltoallv: negative count or displacement for rank " + std::to_string(i));
    too_big |= send_counts[i] > limit || send_displs[i] > limit || recv_counts[i] > limit ||
               recv_displs[i] > limit;
  }
  DGNN_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &too_big, 1, MPI_INT, MPI_LOR, comm_));
  if (too_big) {
    alltoallv_pairwise(static_cast<const char*>(send), send_counts, send_displs,
                       static_cast<char*>(recv), recv_counts, recv_displs);
  } else {
    std::vector<int> sc(p), sd(p), rc(p), rd(p);
    for (size_t i = 0; i < p; ++i) {
      sc[i] = int(send_counts[i]);
      sd[i] = int(send_displs[i]);
      rc[i] = int(recv_counts[i]);
      rd[i] = int(recv_displs[i]);
    }
    DGNN_MPI_CHECK(MPI_Alltoallv(send, sc.data(), sd.data(), MPI_BYTE, recv, rc.data(), rd.data(),
                                 MPI_BYTE, comm_));
  }
  for (size_t i = 0; i < p; ++i) {
    if (int(i) == rank_) continue;
    stats_.bytes_sent += send_counts[i];
    stats_.messages += 1;
  }
}

void MpiCommunicator::alltoallv_pairwise(const char* send, const std::vector<int64_t>& send_counts,
                                         const std::vector<int64_t>& send_displs, char* recv,
                                         const std::vector<int64_t>& recv_counts,
                                         const std::vector<int64_t>& recv_displs) {
  std::vector<MPI_Request> requests;
  for (int q = 0; q < size_; ++q) {
    if (q == rank_ || recv_counts[size_t(q)] == 0) continue;
    for_each_piece(recv_counts[size_t(q)], [&](int64_t off, int count) {
      requests.push_back(MPI_REQUEST_NULL);
      DGNN_MPI_CHECK(MPI_Irecv(recv + recv_displs[size_t(q)] + off, count, MPI_BYTE, q,
                               kAlltoallvTag, comm_, &requests.back()));
    });
  }
  for (int q = 0; q < size_; ++q) {
    if (q == rank_ || send_counts[size_t(q)] == 0) continue;
    for_each_piece(send_counts[size_t(q)], [&](int64_t off, int count) {
      requests.push_back(MPI_REQUEST_NULL);
      DGNN_MPI_CHECK(MPI_Isend(send + send_displs[size_t(q)] + off, count, MPI_BYTE, q,
                               kAlltoallvTag, comm_, &requests.back()));
    });
  }
  const size_t self = size_t(rank_);
  DGNN_CHECK(send_counts[self] == recv_counts[self], CommError,
             "alltoallv: this rank sends itself " + std::to_string(send_counts[self]) +
                 " bytes but expects " + std::to_string(recv_counts[self]));
  if (send_counts[self] > 0)
    std::memcpy(recv + recv_displs[self], send + send_displs[self], size_t(send_counts[self]));
  if (!requests.empty())
    DGNN_MPI_CHECK(MPI_Waitall(int(requests.size()), requests.data(), MPI_STATUSES_IGNORE));
}

std::unique_ptr<PendingExchange> MpiCommunicator::exchange_begin(
    const std::vector<PeerBuffer>& sends, const std::vector<PeerBuffer>& recvs) {
  ScopedMs t(stats_.comm_ms);
  // Validate everything before posting anything: a bad buffer must not leave requests behind.
  auto check = [&](const PeerBuffer& b, const char* what) {
    check_peer(b.peer, size_, what);
    DGNN_CHECK(b.bytes >= 0 && (b.bytes == 0 || b.data != nullptr), CommError,
               std::string(what) + ": buffer for rank " + std::to_string(b.peer) +
                   " has a negative size or no data");
  };
  for (const PeerBuffer& b : recvs) check(b, "exchange receive");
  for (const PeerBuffer& b : sends) check(b, "exchange send");

  std::vector<MPI_Request> requests;
  size_t n_recv = 0;
  try {
    // Receives first, so that eager sends from peers find a posted buffer.
    for (const PeerBuffer& b : recvs)
      for_each_piece(b.bytes, [&](int64_t off, int count) {
        requests.push_back(MPI_REQUEST_NULL);
        DGNN_MPI_CHECK(MPI_Irecv(static_cast<char*>(b.data) + off, count, MPI_BYTE, b.peer,
                                 kExchangeTag, comm_, &requests.back()));
        n_recv = requests.size();
      });
    for (const PeerBuffer& b : sends)
      for_each_piece(b.bytes, [&](int64_t off, int count) {
        requests.push_back(MPI_REQUEST_NULL);
        DGNN_MPI_CHECK(MPI_Isend(static_cast<const char*>(b.data) + off, count, MPI_BYTE, b.peer,
                                 kExchangeTag, comm_, &requests.back()));
      });
  } catch (...) {
    MpiPendingExchange(stats_, std::move(requests), n_recv).drop();
    throw;
  }
  for (const PeerBuffer& b : sends) stats_.bytes_sent += b.bytes;
  stats_.messages += int64_t(sends.size());
  return std::make_unique<MpiPendingExchange>(stats_, std::move(requests), n_recv);
}

void MpiCommunicator::barrier() {
  ScopedMs t(stats_.wait_ms);
  DGNN_MPI_CHECK(MPI_Barrier(comm_));
}

void MpiCommunicator::abort(int code) { abort_world(code); }

}  // namespace dgnn::mpi

namespace dgnn::mpi {

void* native_handle(Communicator& c) {
  auto* m = dynamic_cast<MpiCommunicator*>(&c);
  return m ? m->handle() : nullptr;
}

}  // namespace dgnn::mpi
