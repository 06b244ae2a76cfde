// Every rank's peak memory and input bytes (gnn/train/rank_usage.hpp).
#include "dgnn/gnn/train/rank_usage.hpp"

#include <algorithm>
#include <cstdio>
#include <numeric>

#include "dgnn/common/io_stats.hpp"
#include "dgnn/common/memory.hpp"

namespace dgnn {

RankUsage gather_rank_usage(Communicator& comm) {
  // One sum over a slot per rank and figure: every other rank contributes zeros there.
  const size_t p = size_t(comm.size()), r = size_t(comm.rank());
  std::vector<int64_t> slots(2 * p, 0);
  slots[r] = peak_resident_bytes();
  slots[p + r] = input_bytes_read();
  comm.allreduce_sum(slots.data(), int64_t(slots.size()));
  RankUsage u;
  u.peak_bytes.assign(slots.begin(), slots.begin() + std::ptrdiff_t(p));
  u.read_bytes.assign(slots.begin() + std::ptrdiff_t(p), slots.end());
  return u;
}

namespace {

// "1.21 GB", "120 MB", "512 kB", "12 B": three digits where they mean something.
std::string size_text(double b) {
  char buf[32];
  if (b >= 1e9)
    std::snprintf(buf, sizeof buf, "%.2f GB", b / 1e9);
  else if (b >= 1e6)
    std::snprintf(buf, sizeof buf, "%.0f MB", b / 1e6);
  else if (b >= 1e3)
    std::snprintf(buf, sizeof buf, "%.0f kB", b / 1e3);
  else
    std::snprintf(buf, sizeof buf, "%.0f B", b);
  return buf;
}

std::string figure_text(const char* name, const std::vector<int64_t>& v) {
  if (v.empty()) return name;
  if (v.size() == 1) return std::string(name) + " " + size_text(double(v[0]));
  const auto most = std::max_element(v.begin(), v.end());
  const double sum = double(std::accumulate(v.begin(), v.end(), int64_t(0)));
  return std::string(name) + " " + size_text(double(*most)) + " max over " +
         std::to_string(v.size()) + " ranks (rank " + std::to_string(most - v.begin()) + "), " +
         size_text(sum) + " summed";
}

}  // namespace

std::string rank_usage_text(const RankUsage& u) {
  return figure_text("peak", u.peak_bytes) + "; " + figure_text("read", u.read_bytes);
}

}  // namespace dgnn
