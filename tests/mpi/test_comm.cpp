// The MPI communicator, the staged device communicator over it (on CPU memory: the same code
// that stages GPU buffers) and the halo exchange on 2-4 ranks, with exact expected values and byte
// counts. Assertions are CHECKs (never REQUIRE after the first collective) so that a failing
// rank still takes part in every later collective instead of leaving its peers hanging.
#include <catch2/catch.hpp>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "dgnn/comm/communicator.hpp"
#include "dgnn/comm/device_comm.hpp"
#include "dgnn/comm/halo.hpp"
#include "dgnn/comm/mpi/mpi.hpp"
#include "dgnn/common/error.hpp"

using namespace dgnn;

namespace {

// Lowers the per-call MPI count limit for a scope, so that the split-message and pairwise
// alltoallv paths run with small buffers.
class CountLimit {
 public:
  explicit CountLimit(int64_t n) : saved_(mpi::max_count()) { mpi::set_max_count(n); }
  ~CountLimit() { mpi::set_max_count(saved_); }

 private:
  int64_t saved_;
};

Communicator& multi_rank_world() {
  Communicator& comm = world();
  REQUIRE(comm.size() > 1);  // run under mpiexec -n 2 or more
  return comm;
}

// The count limits each case runs with: none, and one small enough to split everything.
const std::vector<int64_t> kLimits = {0, 3};

}  // namespace

TEST_CASE("allreduce sums and maxes element-wise across ranks", "[comm]") {
  Communicator& comm = multi_rank_world();
  const int p = comm.size(), r = comm.rank();
  for (int64_t limit : kLimits) {
    CountLimit scope(limit > 0 ? limit : mpi::max_count());
    const int64_t n = 10;
    std::vector<float> f(n);
    std::vector<double> d(n), m(n);
    std::vector<int64_t> k(n);
    for (int64_t i = 0; i < n; ++i) {
      f[i] = float(r) + 0.5f * float(i);
      d[i] = 0.25 * r - double(i);
      k[i] = (int64_t(1) << 40) * r + i;  // past 32 bits
      m[i] = (r == i % p) ? 100.0 + double(i) : -double(r);
    }
    comm.stats().reset();
    comm.allreduce_sum(f.data(), n);
    comm.allreduce_sum(d.data(), n);
    comm.allreduce_sum(k.data(), n);
    comm.allreduce_max(m.data(), n);
    comm.allreduce_sum(f.data(), 0);  // an empty reduction is fine
    const int64_t ranks_sum = int64_t(p) * (p - 1) / 2;
    for (int64_t i = 0; i < n; ++i) {
      CHECK(f[i] == float(ranks_sum) + 0.5f * float(p * i));
      CHECK(d[i] == 0.25 * double(ranks_sum) - double(p * i));
      CHECK(k[i] == (int64_t(1) << 40) * ranks_sum + p * i);
      CHECK(m[i] == 100.0 + double(i));  // other ranks hold -rank <= 0
    }
    CHECK(comm.stats().bytes_sent == n * (4 + 8 + 8 + 8));
    CHECK(comm.stats().messages == 5);
  }
}

TEST_CASE("broadcast copies the root's bytes to every rank", "[comm]") {
  Communicator& comm = multi_rank_world();
  const int p = comm.size(), r = comm.rank(), root = p - 1;
  for (int64_t limit : kLimits) {
    CountLimit scope(limit > 0 ? limit : mpi::max_count());
    std::string msg = r == root ? "hello ranks" : "...........";
    comm.stats().reset();
    comm.broadcast(msg.data(), int64_t(msg.size()), root);
    CHECK(msg == "hello ranks");
    CHECK(comm.stats().bytes_sent == (r == root ? 11 * (p - 1) : 0));
  }
}

TEST_CASE("alltoallv moves uneven byte counts, zeros included", "[comm]") {
  Communicator& comm = multi_rank_world();
  const int p = comm.size(), r = comm.rank();
  auto count = [](int s, int d) { return int64_t((s + 2 * d) % 4) * 3; };  // many zeros
  auto byte = [](int s, int d, int64_t k) { return char('A' + (s * 7 + d * 3 + k) % 26); };
  for (int64_t limit : kLimits) {
    CountLimit scope(limit > 0 ? limit : mpi::max_count());
    // Blocks one byte apart, so that displacements matter; gaps must stay untouched.
    std::vector<int64_t> sc(p), sd(p), rc(p), rd(p);
    int64_t s_end = 1, r_end = 2, expected_sent = 0;
    for (int q = 0; q < p; ++q) {
      sc[q] = count(r, q);
      sd[q] = s_end;
      s_end += sc[q] + 1;
      rc[q] = count(q, r);
      rd[q] = r_end;
      r_end += rc[q] + 1;
      if (q != r) expected_sent += sc[q];
    }
    std::vector<char> send(size_t(s_end), '#'), recv(size_t(r_end), '.');
    for (int q = 0; q < p; ++q)
      for (int64_t k = 0; k < sc[q]; ++k) send[size_t(sd[q] + k)] = byte(r, q, k);
    comm.stats().reset();
    comm.alltoallv(send.data(), sc, sd, recv.data(), rc, rd);
    std::string want(size_t(r_end), '.');
    for (int q = 0; q < p; ++q)
      for (int64_t k = 0; k < rc[q]; ++k) want[size_t(rd[q] + k)] = byte(q, r, k);
    CHECK(std::string(recv.begin(), recv.end()) == want);
    CHECK(comm.stats().bytes_sent == expected_sent);
  }
}

TEST_CASE("the staged device communicator moves what the host one does", "[comm]") {
  Communicator& comm = multi_rank_world();
  const int p = comm.size(), r = comm.rank();
  auto dc = make_staged_comm(comm, Device::cpu);
  CHECK(dc->size() == p);
  for (int64_t limit : kLimits) {
    CountLimit scope(limit > 0 ? limit : mpi::max_count());
    // All-reduce, accounted in the host communicator's stats like its own.
    std::vector<float> f(7);
    for (size_t i = 0; i < f.size(); ++i) f[i] = float(r) + 0.5f * float(i);
    comm.stats().reset();
    dc->allreduce_sum(f.data(), int64_t(f.size()));
    const int64_t ranks_sum = int64_t(p) * (p - 1) / 2;
    for (size_t i = 0; i < f.size(); ++i) CHECK(f[i] == float(ranks_sum) + 0.5f * float(p * i));
    CHECK(comm.stats().bytes_sent == 7 * 4);
    CHECK(comm.stats().messages == 1);

    // Uneven all-to-all with gaps between the blocks, which must stay untouched.
    auto count = [](int s, int d) { return int64_t((s + 2 * d) % 4) * 3; };
    auto byte = [](int s, int d, int64_t k) { return char('A' + (s * 7 + d * 3 + k) % 26); };
    std::vector<int64_t> sc(p), sd(p), rc(p), rd(p);
    int64_t s_end = 1, r_end = 2, expected_sent = 0;
    for (int q = 0; q < p; ++q) {
      sc[q] = count(r, q);
      sd[q] = s_end;
      s_end += sc[q] + 1;
      rc[q] = count(q, r);
      rd[q] = r_end;
      r_end += rc[q] + 1;
      if (q != r) expected_sent += sc[q];
    }
    std::vector<char> send(size_t(s_end), '#'), recv(size_t(r_end), '.');
    for (int q = 0; q < p; ++q)
      for (int64_t k = 0; k < sc[q]; ++k) send[size_t(sd[q] + k)] = byte(r, q, k);
    comm.stats().reset();
    dc->alltoallv(send.data(), sc, sd, recv.data(), rc, rd);
    std::string want(size_t(r_end), '.');
    for (int q = 0; q < p; ++q)
      for (int64_t k = 0; k < rc[q]; ++k) want[size_t(rd[q] + k)] = byte(q, r, k);
    CHECK(std::string(recv.begin(), recv.end()) == want);
    CHECK(comm.stats().bytes_sent == expected_sent);

    // A ring of point-to-point messages, rank 0's empty.
    const int next = (r + 1) % p, prev = (r + p - 1) % p;
    std::vector<char> out(size_t(5 * r)), in(size_t(5 * prev), '?');
    for (size_t k = 0; k < out.size(); ++k) out[k] = char('a' + (r + k) % 26);
    comm.stats().reset();
    auto pending = dc->exchange_begin({{next, out.data(), int64_t(out.size())}},
                                      {{prev, in.data(), int64_t(in.size())}});
    pending->wait();
    for (size_t k = 0; k < in.size(); ++k) CHECK(in[k] == char('a' + (prev + k) % 26));
    CHECK(comm.stats().bytes_sent == 5 * r);
  }
  // Attached, it is what the helpers for device memory use; it detaches itself when it goes.
  comm.set_device_comm(dc.get());
  std::vector<float> one{float(r)};
  std::vector<int64_t> ones(static_cast<size_t>(p), 4), at(static_cast<size_t>(p), 0),
      where(static_cast<size_t>(p));
  for (int q = 0; q < p; ++q) where[size_t(q)] = 4 * q;
  std::vector<float> all(size_t(p), -1.f);
  alltoallv_on(comm, Device::cpu, one.data(), ones, at, all.data(), ones, where);
  for (int q = 0; q < p; ++q) CHECK(all[size_t(q)] == float(q));
  dc.reset();
  CHECK(comm.device_comm() == nullptr);
  CHECK(allgather_strings(comm, std::string(size_t(r), 'x')).back() == std::string(size_t(p - 1), 'x'));
}

TEST_CASE("attach_device_comm compares every rank's GPU through the host communicator",
          "[comm]") {
  Communicator& comm = multi_rank_world();
  const int p = comm.size(), r = comm.rank();
  const std::vector<std::string> ids = allgather_strings(comm, "gpu-" + std::to_string(r % 2));
  REQUIRE(int(ids.size()) == p);
  for (int q = 0; q < p; ++q) CHECK(ids[size_t(q)] == "gpu-" + std::to_string(q % 2));
  // Two ranks per GPU from 3 ranks on: staged; 2 ranks on 2 GPUs: NCCL when built.
  std::string why;
  const DeviceTransport t = choose_transport("auto", ids, true, &why);
  CHECK(t == (p > 2 ? DeviceTransport::staged : DeviceTransport::nccl));
  CHECK_THROWS_AS(attach_device_comm(comm, Device::cpu, "nccl"), OptionError);
}

TEST_CASE("exchange_begin around a ring, one message empty", "[comm]") {
  Communicator& comm = multi_rank_world();
  const int p = comm.size(), r = comm.rank();
  const int next = (r + 1) % p, prev = (r + p - 1) % p;
  auto size_from = [](int s) { return int64_t(5 * s); };  // rank 0 sends nothing
  for (int64_t limit : kLimits) {
    CountLimit scope(limit > 0 ? limit : mpi::max_count());
    std::vector<char> out(size_t(size_from(r)));
    for (size_t k = 0; k < out.size(); ++k) out[k] = char('a' + (r + k) % 26);
    std::vector<char> in(size_t(size_from(prev)), '?');
    comm.stats().reset();
    auto pending = comm.exchange_begin({{next, out.data(), int64_t(out.size())}},
                                       {{prev, in.data(), int64_t(in.size())}});
    pending->wait();
    pending->wait();  // a second wait is harmless
    for (size_t k = 0; k < in.size(); ++k) CHECK(in[k] == char('a' + (prev + k) % 26));
    CHECK(comm.stats().bytes_sent == size_from(r));
    CHECK(comm.stats().messages == 1);
  }
}

TEST_CASE("exchange_begin between all pairs, self and zero sizes included", "[comm]") {
  Communicator& comm = multi_rank_world();
  const int p = comm.size(), r = comm.rank();
  auto size_of = [](int s, int d) { return int64_t((s * 3 + d) % 4) * 2; };
  auto byte = [](int s, int d, int64_t k) { return char(s * 50 + d * 10 + k); };
  for (int64_t limit : kLimits) {
    CountLimit scope(limit > 0 ? limit : mpi::max_count());
    std::vector<std::vector<char>> out(p), in(p);
    std::vector<PeerBuffer> sends, recvs;
    int64_t expected_sent = 0;
    for (int q = 0; q < p; ++q) {
      out[q].resize(size_t(size_of(r, q)));
      for (size_t k = 0; k < out[q].size(); ++k) out[q][k] = byte(r, q, int64_t(k));
      in[q].assign(size_t(size_of(q, r)), 0);
      sends.push_back({q, out[q].data(), int64_t(out[q].size())});
      recvs.push_back({q, in[q].data(), int64_t(in[q].size())});
      expected_sent += int64_t(out[q].size());
    }
    comm.stats().reset();
    { auto pending = comm.exchange_begin(sends, recvs); }  // the destructor waits
    for (int q = 0; q < p; ++q)
      for (size_t k = 0; k < in[q].size(); ++k) CHECK(in[q][k] == byte(q, r, int64_t(k)));
    CHECK(comm.stats().bytes_sent == expected_sent);
    CHECK(comm.stats().messages == p);
  }
}

namespace {

// A global array cut into uneven blocks, one per rank; each rank's halo is some rows of the
// other ranks, chosen by a rule every rank can evaluate for every pair.
struct SyntheticHalo {
  int p;
  std::vector<int64_t> start;  // global row of each rank's first owned row; start[p] = total

  explicit SyntheticHalo(int ranks) : p(ranks), start(size_t(ranks) + 1, 0) {
    for (int q = 0; q < p; ++q) start[q + 1] = start[q] + 4 + q;
  }
  int64_t owned(int q) const { return start[q + 1] - start[q]; }

  // Local rows of `owner` that `requester` needs. With 3+ ranks one direction of some pairs
  // is empty (rank q needs nothing from q + 2), so plans list peers with an empty list.
  std::vector<int32_t> wants(int requester, int owner) const {
    std::vector<int32_t> rows;
    if (requester == owner || (p >= 3 && owner == (requester + 2) % p)) return rows;
    for (int32_t i = 0; i < owned(owner); ++i)
      if ((i + 2 * requester + owner) % 3 != 0) rows.push_back(i);
    return rows;
  }

  // Rank q's plan; halo slots are handed out from the highest peer down, so that the halo
  // order differs from the peer order.
  HaloPlan plan(int q) const {
    HaloPlan plan;
    for (int r = 0; r < p; ++r)
      if (r != q) plan.peers.push_back(r);
    plan.send_rows.resize(plan.peers.size());
    plan.recv_rows.resize(plan.peers.size());
    int32_t next = int32_t(owned(q));
    for (size_t j = plan.peers.size(); j-- > 0;) {
      plan.send_rows[j] = wants(plan.peers[j], q);
      for (size_t k = 0; k < wants(q, plan.peers[j]).size(); ++k)
        plan.recv_rows[j].push_back(next++);
    }
    return plan;
  }
};

float value(int64_t global_row, int64_t c) { return float(global_row * 10 + c + 1); }
// What requester q puts in the gradient of its halo copy of a global row.
float halo_grad(int q, int64_t global_row, int64_t c) {
  return float((q + 1) * 1000) + float(global_row) + 0.25f * float(c);
}

}  // namespace

TEST_CASE("halo exchange fills halo rows and returns gradients to their owners", "[comm]") {
  Communicator& comm = multi_rank_world();
  const int p = comm.size(), r = comm.rank();
  const SyntheticHalo sh(p);
  const HaloPlan plan = sh.plan(r);
  const int64_t n_owned = sh.owned(r), n_all = n_owned + plan.rows_received(), f = 3, ld = f + 1;
  // The host exchange, and the device one over the staged communicator (on CPU memory).
  const bool staged = GENERATE(false, true);
  INFO((staged ? "staged device path" : "host path"));
  std::unique_ptr<DeviceComm> dc = staged ? make_staged_comm(comm, Device::cpu) : nullptr;
  comm.set_device_comm(dc.get());
  auto halo = make_halo_exchange(plan, comm);

  int64_t sent_messages = 0, back_messages = 0;
  for (size_t j = 0; j < plan.peers.size(); ++j) {
    sent_messages += plan.send_rows[j].empty() ? 0 : 1;
    back_messages += plan.recv_rows[j].empty() ? 0 : 1;
  }
  for (int64_t limit : {int64_t(0), int64_t(5), int64_t(0)}) {  // the last reuses buffers
    CountLimit scope(limit > 0 ? limit : mpi::max_count());
    std::vector<float> x(size_t(n_all * ld), -1.f);
    for (int64_t i = 0; i < n_owned; ++i)
      for (int64_t c = 0; c < f; ++c) x[i * ld + c] = value(sh.start[r] + i, c);
    comm.stats().reset();
    halo->forward_begin(ConstMatView(x.data(), n_all, f, ld));
    halo->forward_end(MatView{x.data(), n_all, f, ld});
    CHECK(comm.stats().bytes_sent == plan.rows_sent() * f * 4);
    CHECK(comm.stats().messages == sent_messages);
    for (size_t j = 0; j < plan.peers.size(); ++j) {
      const int owner = plan.peers[j];
      const std::vector<int32_t> rows = sh.wants(r, owner);
      for (size_t k = 0; k < rows.size(); ++k)
        for (int64_t c = 0; c < f; ++c)
          CHECK(x[plan.recv_rows[j][k] * ld + c] == value(sh.start[owner] + rows[k], c));
    }
    for (int64_t i = 0; i < n_owned; ++i) CHECK(x[i * ld] == value(sh.start[r] + i, 0));

    // Gradient: 0.5 in owned rows, a requester-specific value in each halo copy.
    std::vector<float> g(size_t(n_all * ld), 0.5f);
    for (size_t j = 0; j < plan.peers.size(); ++j) {
      const int owner = plan.peers[j];
      const std::vector<int32_t> rows = sh.wants(r, owner);
      for (size_t k = 0; k < rows.size(); ++k)
        for (int64_t c = 0; c < f; ++c)
          g[plan.recv_rows[j][k] * ld + c] = halo_grad(r, sh.start[owner] + rows[k], c);
    }
    halo->backward_begin(ConstMatView(g.data(), n_all, f, ld));
    halo->backward_end(MatView{g.data(), n_all, f, ld});
    CHECK(comm.stats().bytes_sent == (plan.rows_sent() + plan.rows_received()) * f * 4);
    CHECK(comm.stats().messages == sent_messages + back_messages);
    for (int64_t i = 0; i < n_owned; ++i) {
      for (int64_t c = 0; c < f; ++c) {
        float want = 0.5f;
        for (int q = 0; q < p; ++q)
          for (int32_t row : sh.wants(q, r))
            if (row == i) want += halo_grad(q, sh.start[r] + i, c);
        CHECK(g[i * ld + c] == want);
      }
    }
  }
}

TEST_CASE("a streamed halo exchange moves what a whole one does, holding four pieces", "[comm]") {
  Communicator& comm = multi_rank_world();
  const int p = comm.size(), r = comm.rank();
  const SyntheticHalo sh(p);
  const HaloPlan plan = sh.plan(r);
  const int64_t n_owned = sh.owned(r), f = 3;
  // Pieces of 1, 2 and 3 rows: more rounds than peers, and counts that differ between the two
  // directions of a stage.
  const int64_t rows = GENERATE(int64_t(1), int64_t(2), int64_t(3));
  INFO("pieces of " << rows << " rows");
  auto halo = make_halo_exchange(plan, comm);
  REQUIRE(agree_piece_rows(*halo, comm, rows) == rows);
  std::vector<float> x(size_t(n_owned * f));
  for (int64_t i = 0; i < n_owned; ++i)
    for (int64_t c = 0; c < f; ++c) x[size_t(i * f + c)] = value(sh.start[r] + i, c);
  // Where each halo row came from: (owner, its local row), by local id.
  std::vector<std::pair<int, int32_t>> origin(size_t(n_owned + plan.rows_received()), {-1, -1});
  for (size_t j = 0; j < plan.peers.size(); ++j) {
    const std::vector<int32_t> want = sh.wants(r, plan.peers[j]);
    for (size_t k = 0; k < want.size(); ++k) origin[size_t(plan.recv_rows[j][k])] = {plan.peers[j], want[k]};
  }
  comm.stats().reset();
  bool local_ran = false;
  int64_t seen = 0;
  halo->stream_forward(
      ConstMatView(x.data(), n_owned, f, f), [&] { local_ran = true; },
      [&](size_t piece, ConstMatView got) {
        const auto [first, end] = halo->pieces()[piece];
        REQUIRE(got.rows == end - first);
        REQUIRE(got.rows <= rows);
        for (int64_t k = 0; k < got.rows; ++k) {
          const auto [owner, row] = origin[size_t(first + k)];
          for (int64_t c = 0; c < f; ++c) CHECK(got.row(k)[c] == value(sh.start[owner] + row, c));
        }
        seen += got.rows;
      });
  CHECK(local_ran);
  CHECK(seen == plan.rows_received());
  CHECK(comm.stats().bytes_sent == plan.rows_sent() * f * 4);
  CHECK(halo->buffer_bytes() <= 4 * rows * f * 4);

  std::vector<float> g(size_t(n_owned * f), 0.5f);
  halo->stream_backward(
      [&](size_t piece, MatView out) {
        const auto [first, end] = halo->pieces()[piece];
        for (int64_t k = 0; k < end - first; ++k) {
          const auto [owner, row] = origin[size_t(first + k)];
          for (int64_t c = 0; c < f; ++c) out.row(k)[c] = halo_grad(r, sh.start[owner] + row, c);
        }
      },
      [] {}, MatView{g.data(), n_owned, f, f});
  for (int64_t i = 0; i < n_owned; ++i)
    for (int64_t c = 0; c < f; ++c) {
      float want = 0.5f;
      for (int q = 0; q < p; ++q)
        for (int32_t row : sh.wants(q, r))
          if (row == i) want += halo_grad(q, sh.start[r] + i, c);
      CHECK(g[size_t(i * f + c)] == want);
    }
  CHECK(halo->buffer_bytes() <= 4 * rows * f * 4);
}

TEST_CASE("exchanges sharing buffers hold one set, and refuse to overlap", "[comm]") {
  Communicator& comm = multi_rank_world();
  const int r = comm.rank();
  const SyntheticHalo sh(comm.size());
  const HaloPlan plan = sh.plan(r);
  const int64_t n_owned = sh.owned(r), n_all = n_owned + plan.rows_received(), f = 2;
  auto buffers = make_halo_buffers();
  auto a = make_halo_exchange(plan, comm, Device::cpu, buffers);
  auto b = make_halo_exchange(plan, comm, Device::cpu, buffers);
  std::vector<float> x(size_t(n_all * f), 1.f);
  a->forward_begin(ConstMatView(x.data(), n_all, f, f));
  CHECK_THROWS_AS(b->forward_begin(ConstMatView(x.data(), n_all, f, f)), CommError);
  a->forward_end(MatView{x.data(), n_all, f, f});
  b->forward_begin(ConstMatView(x.data(), n_all, f, f));
  b->forward_end(MatView{x.data(), n_all, f, f});
  CHECK(a->buffer_bytes() == b->buffer_bytes());  // one set, seen from both
  CHECK(a->buffer_bytes() == (plan.rows_sent() + plan.rows_received()) * f * 4);
}
