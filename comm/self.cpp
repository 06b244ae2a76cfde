#include <cstdlib>
#include <cstring>

#include "dgnn/comm/communicator.hpp"
#include "dgnn/common/error.hpp"

namespace dgnn {

void SelfCommunicator::alltoallv(const void* send, const std::vector<int64_t>& send_counts,
                                 const std::vector<int64_t>& send_displs, void* recv,
                                 const std::vector<int64_t>& recv_counts,
                                 const std::vector<int64_t>& recv_displs) {
  DGNN_CHECK(send_counts.size() == 1 && recv_counts.size() == 1 &&
                 send_counts[0] == recv_counts[0],
             CommError, "alltoallv on one process: counts must agree");
  if (send_counts[0] > 0)
    std::memcpy(static_cast<char*>(recv) + recv_displs[0],
                static_cast<const char*>(send) + send_displs[0], size_t(send_counts[0]));
}

namespace {
struct Done final : PendingExchange {
  void wait() override {}
};
}  // namespace

std::unique_ptr<PendingExchange> SelfCommunicator::exchange_begin(
    const std::vector<PeerBuffer>& sends, const std::vector<PeerBuffer>& recvs) {
  // The only peer is this rank: the i-th send to 0 is the i-th receive from 0.
  DGNN_CHECK(sends.size() == recvs.size(), CommError, "exchange with self: unmatched buffers");
  for (size_t i = 0; i < sends.size(); ++i) {
    DGNN_CHECK(sends[i].peer == 0 && recvs[i].peer == 0 && sends[i].bytes == recvs[i].bytes,
               CommError, "exchange with self: peers must be 0 and sizes equal");
    if (sends[i].bytes > 0) std::memcpy(recvs[i].data, sends[i].data, size_t(sends[i].bytes));
  }
  return std::make_unique<Done>();
}

void SelfCommunicator::abort(int code) { std::exit(code); }

}  // namespace dgnn
