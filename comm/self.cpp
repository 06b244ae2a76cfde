#include <cstdlib>
#include <cstring>

#include "comm/communicator.hpp"
#include "common/error.hpp"

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

void SelfCommunicator::abort(int code) { std::exit(code); }

}  // namespace dgnn
