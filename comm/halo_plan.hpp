#pragma once
// HaloPlan: per peer, which owned rows this rank sends and where the rows it receives land.
// Plain data, made by partition/ and executed by comm/ (make_halo_exchange).
#include <cstdint>
#include <vector>

namespace dgnn {

// Peers are listed in ascending rank order; a peer appears once, with its send and receive lists
// (either may be empty).
struct HaloPlan {
  std::vector<int> peers;
  std::vector<std::vector<int32_t>> send_rows;  // local ids in [0, n_owned), per peer
  std::vector<std::vector<int32_t>> recv_rows;  // local ids in [n_owned, n_owned + n_halo)

  int64_t rows_sent() const {
    int64_t n = 0;
    for (auto& r : send_rows) n += int64_t(r.size());
    return n;
  }
  int64_t rows_received() const {
    int64_t n = 0;
    for (auto& r : recv_rows) n += int64_t(r.size());
    return n;
  }
};

}  // namespace dgnn
