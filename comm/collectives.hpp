#pragma once
// Typed collectives over a Communicator's byte-level calls: every rank's value, sums and extremes
// of int64 values, and routing vectors of plain records between ranks (an all-to-all with the
// counts exchanged first). Used by the sharded loader and the sharded output writers.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "dgnn/comm/communicator.hpp"

namespace dgnn {

// Every rank's v, in rank order.
inline std::vector<int64_t> all_values(Communicator& comm, int64_t v) {
  std::vector<int64_t> all(size_t(comm.size()), 0);
  all[size_t(comm.rank())] = v;
  comm.allreduce_sum(all.data(), int64_t(all.size()));
  return all;
}
inline int64_t global_sum(Communicator& comm, int64_t v) {
  comm.allreduce_sum(&v, 1);
  return v;
}
inline int64_t global_max(Communicator& comm, int64_t v) {
  const std::vector<int64_t> all = all_values(comm, v);
  return *std::max_element(all.begin(), all.end());
}
inline int64_t global_min(Communicator& comm, int64_t v) {
  const std::vector<int64_t> all = all_values(comm, v);
  return *std::min_element(all.begin(), all.end());
}

// Items 0..n-1 in contiguous ranges, one a rank, in rank order: rank q's range starts at
// index_range_begin(q) (index_range_begin(ranks) is n); index_range_owner(i) is the rank whose
// range holds item i.
inline size_t index_range_begin(size_t q, size_t n, size_t ranks) {
  return size_t(uint64_t(q) * n / ranks);
}
inline size_t index_range_owner(size_t i, size_t n, size_t ranks) {
  return size_t((uint64_t(i + 1) * ranks - 1) / n);
}

// `width` running sums carried along the ranks in rank order: rank q takes rank q - 1's (zeros
// on rank 0), adds its own terms to them with add(sums), and passes them on; every rank returns
// with the last rank's. With a list's terms split into index ranges (index_range_begin), this
// sums the whole list in index order: the same bits as one process's loop. Collective (a
// message between each pair of neighbours, then a broadcast).
template <class Add>
void fold_along_ranks(Communicator& comm, double* sums, int width, Add&& add) {
  const int me = comm.rank(), ranks = comm.size();
  const int64_t bytes = int64_t(width) * int64_t(sizeof(double));
  std::fill(sums, sums + width, 0.0);
  if (me > 0) comm.exchange_begin({}, {PeerBuffer{me - 1, sums, bytes}})->wait();
  add(sums);
  if (me + 1 < ranks) comm.exchange_begin({PeerBuffer{me + 1, sums, bytes}}, {})->wait();
  comm.broadcast(sums, bytes, ranks - 1);
}

// send[...] laid out by destination, counts[p] of them for rank p in rank order, goes out; the
// result is what every rank sent here, in rank order (`from`, when given, receives how many came
// from each rank). T must be trivially copyable. Collective.
template <class T>
std::vector<T> route_flat(Communicator& comm, const std::vector<T>& send,
                          const std::vector<int64_t>& counts,
                          std::vector<int64_t>* from = nullptr) {
  const size_t p = size_t(comm.size());
  std::vector<int64_t> recv_n(p), ones(p, 8), displ(p);
  for (size_t r = 0; r < p; ++r) displ[r] = int64_t(r) * 8;
  comm.alltoallv(counts.data(), ones, displ, recv_n.data(), ones, displ);
  std::vector<int64_t> sc(p), sd(p), rc(p), rd(p);
  int64_t sent = 0, recv_total = 0;
  for (size_t r = 0; r < p; ++r) {
    sd[r] = sent * int64_t(sizeof(T));
    sc[r] = counts[r] * int64_t(sizeof(T));
    sent += counts[r];
    rd[r] = recv_total * int64_t(sizeof(T));
    rc[r] = recv_n[r] * int64_t(sizeof(T));
    recv_total += recv_n[r];
  }
  std::vector<T> in(static_cast<size_t>(recv_total));
  comm.alltoallv(send.data(), sc, sd, in.data(), rc, rd);
  if (from) *from = recv_n;
  return in;
}

// out[p] goes to rank p; the result is what every rank sent here, in rank order (`from`, when
// given, receives how many came from each rank). T must be trivially copyable. Collective.
template <class T>
std::vector<T> route(Communicator& comm, const std::vector<std::vector<T>>& out,
                     std::vector<int64_t>* from = nullptr) {
  std::vector<int64_t> counts;
  std::vector<T> send;
  size_t total = 0;
  for (const auto& v : out) total += v.size();
  send.reserve(total);
  for (const auto& v : out) {
    counts.push_back(int64_t(v.size()));
    send.insert(send.end(), v.begin(), v.end());
  }
  return route_flat(comm, send, counts, from);
}

// The records of `lists` (one list a thread, say), each to the rank owner(record) names, laid
// out by destination (each list's records in order) and moved by route_flat: what came to this
// rank, in rank order. `lists` are emptied as they are laid out. Collective.
template <class T, class Owner>
std::vector<T> route_to_owners(Communicator& comm, std::vector<std::vector<T>>& lists,
                               Owner&& owner) {
  const size_t p = size_t(comm.size());
  std::vector<int64_t> counts(p, 0), at(p, 0);
  for (const auto& l : lists)
    for (const T& x : l) ++counts[size_t(owner(x))];
  for (size_t q = 1; q < p; ++q) at[q] = at[q - 1] + counts[q - 1];
  std::vector<T> laid(size_t(at[p - 1] + counts[p - 1]));
  for (auto& l : lists) {
    for (const T& x : l) laid[size_t(at[size_t(owner(x))]++)] = x;
    std::vector<T>().swap(l);
  }
  return route_flat(comm, laid, counts);
}

// Every rank's `mine`, concatenated in rank order, on every rank. T trivially copyable.
// Collective.
template <class T>
std::vector<T> allgather_records(const std::vector<T>& mine, Communicator& comm) {
  const size_t p = size_t(comm.size());
  const std::vector<int64_t> counts = all_values(comm, int64_t(mine.size()));
  std::vector<int64_t> sc(p, int64_t(mine.size() * sizeof(T))), sd(p, 0), rc(p), rd(p);
  int64_t total = 0;
  for (size_t r = 0; r < p; ++r) {
    rd[r] = total * int64_t(sizeof(T));
    rc[r] = counts[r] * int64_t(sizeof(T));
    total += counts[r];
  }
  std::vector<T> all(static_cast<size_t>(total));
  comm.alltoallv(mine.data(), sc, sd, all.data(), rc, rd);
  return all;
}

// Asks each of `keys` (distinct) of the rank owner(key) names, which answers `width` values for
// it with answer(key, out) (out: `width` slots). Returns the answers, `width` per key, in the
// order of `keys`. An all-to-all each way. Collective.
template <class Owner, class Answer>
std::vector<int64_t> ask_owners(const std::vector<int64_t>& keys, size_t width, Owner&& owner,
                                Answer&& answer, Communicator& comm) {
  const size_t p = size_t(comm.size());
  std::vector<std::vector<int64_t>> ask(p);
  for (int64_t k : keys) ask[size_t(owner(k))].push_back(k);
  std::vector<int64_t> from;
  const std::vector<int64_t> asked = route(comm, ask, &from);
  std::vector<std::vector<int64_t>> reply(p);
  size_t at = 0;
  for (size_t r = 0; r < p; ++r)
    for (int64_t i = 0; i < from[r]; ++i, ++at) {
      const size_t first = reply[r].size();
      reply[r].resize(first + width);
      answer(asked[at], reply[r].data() + first);
    }
  // The replies come back grouped by owner, each owner's in the order it was asked.
  const std::vector<int64_t> got = route(comm, reply);
  std::vector<size_t> next(p + 1, 0);
  for (size_t r = 0; r < p; ++r) next[r + 1] = next[r] + ask[r].size();
  std::vector<int64_t> out(keys.size() * width);
  for (size_t i = 0; i < keys.size(); ++i) {
    const size_t from_at = next[size_t(owner(keys[i]))]++;
    std::copy_n(got.begin() + int64_t(from_at * width), width, out.begin() + int64_t(i * width));
  }
  return out;
}

}  // namespace dgnn
