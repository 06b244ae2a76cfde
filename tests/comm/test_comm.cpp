// One-process communication: SelfCommunicator, the halo exchange over it (a rank whose halo is
// some of its own rows exercises every pack / unpack path) on host buffers and through the
// staged device communicator (on CPU memory here), the choice of GPU transport, world() and
// fail_job.
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <algorithm>
#include <cstdlib>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include "dgnn/comm/communicator.hpp"
#include "dgnn/comm/device_comm.hpp"
#include "dgnn/comm/halo.hpp"
#include "dgnn/common/error.hpp"

using namespace dgnn;

namespace {

// rows x cols with padding (ld = cols + 2), so that strided views are exercised.
struct Mat {
  int64_t rows, cols, ld;
  std::vector<float> data;
  Mat(int64_t r, int64_t c) : rows(r), cols(c), ld(c + 2), data(size_t(r * (c + 2)), -7.f) {}
  MatView view() { return {data.data(), rows, cols, ld}; }
  float& at(int64_t r, int64_t c) { return data[size_t(r * ld + c)]; }
};

// Attaches a staged device communicator over CPU memory to `comm` for its lifetime when asked:
// the halo exchange then takes its device path, whose kernels and staging run on the CPU.
struct MaybeStaged {
  std::unique_ptr<DeviceComm> dc;
  MaybeStaged(Communicator& comm, bool staged) {
    if (!staged) return;
    dc = make_staged_comm(comm, Device::cpu);
    comm.set_device_comm(dc.get());
  }
};

}  // namespace

TEST_CASE("self communicator copies exchanges and alltoallv", "[comm]") {
  SelfCommunicator self;
  CHECK(self.rank() == 0);
  CHECK(self.size() == 1);
  std::vector<char> a{'a', 'b', 'c'}, b{'x', 'y'}, ra(3), rb(2);
  auto pending = self.exchange_begin({{0, a.data(), 3}, {0, b.data(), 2}},
                                     {{0, ra.data(), 3}, {0, rb.data(), 2}});
  pending->wait();
  CHECK(ra == a);
  CHECK(rb == b);
  CHECK_THROWS_AS(self.exchange_begin({{0, a.data(), 3}}, {{0, ra.data(), 2}}), CommError);
  CHECK_THROWS_AS(self.exchange_begin({{0, a.data(), 3}}, {}), CommError);

  std::vector<char> send{'0', '1', '2', '3', '4'}, recv(6, '.');
  self.alltoallv(send.data(), {3}, {1}, recv.data(), {3}, {2});
  CHECK(std::string(recv.begin(), recv.end()) == "..123.");
  CHECK_THROWS_AS(self.alltoallv(send.data(), {3}, {0}, recv.data(), {2}, {0}), CommError);

  double d = 2.5;
  self.allreduce_sum(&d, 1);
  self.allreduce_max(&d, 1);
  CHECK(d == 2.5);
}

TEST_CASE("world is one process when not launched by mpiexec", "[comm]") {
  if (std::getenv("OMPI_COMM_WORLD_SIZE") || std::getenv("PMI_SIZE") || std::getenv("PMIX_RANK") ||
      std::getenv("DGNN_FORCE_MPI")) {
    WARN("SKIP: launched under an MPI launcher");
    return;
  }
  CHECK(world().size() == 1);
  CHECK(world().rank() == 0);
  CHECK(&world() == &world());
}

TEST_CASE("halo exchange with no peers does nothing", "[comm]") {
  SelfCommunicator self;
  const bool staged = GENERATE(false, true);
  INFO((staged ? "staged device path" : "host path"));
  MaybeStaged link(self, staged);
  auto halo = make_halo_exchange(HaloPlan{}, self);
  Mat x(4, 3);
  for (size_t i = 0; i < x.data.size(); ++i) x.data[i] = float(i);
  const std::vector<float> before = x.data;
  halo->forward_begin(x.view());
  halo->forward_end(x.view());
  halo->backward_begin(x.view());
  halo->backward_end(x.view());
  CHECK(x.data == before);
  CHECK(self.stats().bytes_sent == 0);
}

TEST_CASE("halo exchange over self fills halo rows and sums gradients into owners", "[comm]") {
  // 5 owned rows, 3 halo rows that are copies of owned rows 4, 1, 4 (row 4 is needed twice).
  SelfCommunicator self;
  const bool staged = GENERATE(false, true);
  INFO((staged ? "staged device path" : "host path"));
  MaybeStaged link(self, staged);
  HaloPlan plan;
  plan.peers = {0};
  plan.send_rows = {{4, 1, 4}};
  plan.recv_rows = {{6, 5, 7}};
  auto halo = make_halo_exchange(plan, self);
  const int64_t n_owned = 5, f = 3;
  for (int pass = 0; pass < 2; ++pass) {  // twice: the buffers are reused
    Mat x(8, f);
    for (int64_t r = 0; r < n_owned; ++r)
      for (int64_t c = 0; c < f; ++c) x.at(r, c) = float(10 * r + c + pass);
    halo->forward_begin(x.view());
    halo->forward_end(x.view());
    for (int64_t c = 0; c < f; ++c) {
      CHECK(x.at(6, c) == float(40 + c + pass));
      CHECK(x.at(5, c) == float(10 + c + pass));
      CHECK(x.at(7, c) == float(40 + c + pass));
      CHECK(x.at(2, c) == float(20 + c + pass));  // owned rows untouched
    }
    CHECK(x.at(5, f) == -7.f);  // padding untouched

    Mat g(8, f);
    for (int64_t r = 0; r < 8; ++r)
      for (int64_t c = 0; c < f; ++c) g.at(r, c) = r < n_owned ? 1.f : float(100 * r + c);
    halo->backward_begin(g.view());
    halo->backward_end(g.view());
    for (int64_t c = 0; c < f; ++c) {
      CHECK(g.at(4, c) == float(1 + 600 + c + 700 + c));  // halo rows 6 and 7 come back to 4
      CHECK(g.at(1, c) == float(1 + 500 + c));
      CHECK(g.at(0, c) == 1.f);
      CHECK(g.at(6, c) == float(600 + c));  // halo rows are read, not cleared
    }
  }
  // A different width resizes the buffers.
  Mat y(8, 1);
  for (int64_t r = 0; r < n_owned; ++r) y.at(r, 0) = float(r);
  halo->forward_begin(y.view());
  halo->forward_end(y.view());
  CHECK(y.at(5, 0) == 1.f);
  CHECK(y.at(6, 0) == 4.f);
}

TEST_CASE("halo exchange with an ascending send list and a run of halo rows (kept compactly)",
          "[comm]") {
  // 100 owned rows; 60 of them sent, ascending (kept as bits: 16 bytes instead of 240), into
  // halo rows 100..159 (one run: kept as its first row). The exchange moves what the lists say,
  // forward and back. (Streamed exchanges of such plans: tests/mpi/test_comm.cpp, whose
  // synthetic plans are ascending runs too; self is no streaming peer.)
  SelfCommunicator self;
  const bool staged = GENERATE(false, true);
  INFO((staged ? "staged device path" : "host path"));
  MaybeStaged link(self, staged);
  const int64_t n_owned = 100, n_halo = 60, f = 2;
  HaloPlan plan;
  plan.peers = {0};
  plan.send_rows.resize(1);
  plan.recv_rows.resize(1);
  for (int32_t k = 0; k < n_halo; ++k) {
    plan.send_rows[0].push_back(k < 30 ? 2 * k : 30 + k);  // 0, 2, .., 58, 60, .., 89
    plan.recv_rows[0].push_back(int32_t(n_owned) + k);
  }
  const std::vector<int32_t> sent = plan.send_rows[0];
  auto halo = make_halo_exchange(plan, self);
  for (int pass = 0; pass < 2; ++pass) {  // twice: the expanded list's scratch is reused
    Mat x(n_owned + n_halo, f);
    for (int64_t r = 0; r < n_owned; ++r)
      for (int64_t c = 0; c < f; ++c) x.at(r, c) = float(10 * r + c + pass);
    Mat g(n_owned + n_halo, f);
    for (int64_t r = 0; r < n_owned + n_halo; ++r)
      for (int64_t c = 0; c < f; ++c) g.at(r, c) = r < n_owned ? 1.f : float(1000 * r + c);
    halo->forward_begin(x.view());
    halo->forward_end(x.view());
    halo->backward_begin(g.view());
    halo->backward_end(g.view());
    for (int64_t k = 0; k < n_halo; ++k)
      for (int64_t c = 0; c < f; ++c)
        CHECK(x.at(n_owned + k, c) == float(10 * sent[size_t(k)] + c + pass));
    for (int64_t r = 0; r < n_owned; ++r) {
      const auto it = std::find(sent.begin(), sent.end(), int32_t(r));
      const float want =
          it == sent.end() ? 1.f : 1.f + float(1000 * (n_owned + (it - sent.begin())));
      for (int64_t c = 0; c < f; ++c) CHECK(g.at(r, c) == want + float(it == sent.end() ? 0 : c));
    }
  }
}

TEST_CASE("halo exchange rejects bad plans and bad call orders", "[comm]") {
  SelfCommunicator self;
  const bool staged = GENERATE(false, true);
  INFO((staged ? "staged device path" : "host path"));
  MaybeStaged link(self, staged);
  HaloPlan plan;
  plan.peers = {0};
  plan.send_rows = {{0}};
  plan.recv_rows = {{3}};
  auto halo = make_halo_exchange(plan, self);
  Mat x(4, 2), small(3, 2), wide(4, 3);
  CHECK_THROWS_AS(halo->forward_end(x.view()), CommError);
  CHECK_THROWS_AS(halo->forward_begin(small.view()), ShapeError);
  halo->forward_begin(x.view());  // the failed begin left it idle
  CHECK_THROWS_AS(halo->forward_begin(x.view()), CommError);
  CHECK_THROWS_AS(halo->backward_end(x.view()), CommError);
  CHECK_THROWS_AS(halo->forward_end(wide.view()), ShapeError);

  HaloPlan bad = plan;
  bad.peers = {1};
  CHECK_THROWS_AS(make_halo_exchange(bad, self), CommError);
  bad = plan;
  bad.recv_rows.clear();
  CHECK_THROWS_AS(make_halo_exchange(bad, self), CommError);
  bad = plan;
  bad.send_rows = {{-1}};
  CHECK_THROWS_AS(make_halo_exchange(bad, self), CommError);
  // GPU memory with peers needs a device communicator for that memory.
  CHECK_THROWS_AS(make_halo_exchange(plan, self, Device::cuda), CommError);
  if (staged) {
    bad = plan;
    bad.send_rows = {{0, 1}};
    bad.recv_rows = {{3, 3}};
    CHECK_THROWS_WITH(make_halo_exchange(bad, self), Catch::Contains("received twice"));
  }
}

TEST_CASE("the staged device communicator moves memory like the host one", "[comm]") {
  SelfCommunicator self;
  auto dc = make_staged_comm(self, Device::cpu);
  CHECK(dc->transport() == DeviceTransport::staged);
  CHECK(std::string(transport_name(dc->transport())) == "mpi");
  CHECK(dc->size() == 1);
  std::vector<char> a{'a', 'b', 'c'}, ra(3);
  dc->exchange_begin({{0, a.data(), 3}}, {{0, ra.data(), 3}})->wait();
  CHECK(ra == a);
  std::vector<char> send{'0', '1', '2', '3', '4'}, recv(6, '.');
  dc->alltoallv(send.data(), {3}, {1}, recv.data(), {3}, {2});
  CHECK(std::string(recv.begin(), recv.end()) == "..123.");  // bytes outside the block kept
  std::vector<float> x{1.f, 2.f};
  dc->allreduce_sum(x.data(), 2);
  CHECK(x == std::vector<float>{1.f, 2.f});
  CHECK_THROWS_AS(dc->alltoallv(send.data(), {3, 1}, {0, 0}, recv.data(), {3}, {0}), CommError);

  // Attached, it carries the helpers' CPU-memory traffic; detached when it goes.
  self.set_device_comm(dc.get());
  std::fill(recv.begin(), recv.end(), '.');
  alltoallv_on(self, Device::cpu, send.data(), {2}, {0}, recv.data(), {2}, {4});
  CHECK(std::string(recv.begin(), recv.end()) == "....01");
  dc.reset();
  CHECK(self.device_comm() == nullptr);
  // Unattached: the host communicator for CPU memory.
  std::fill(ra.begin(), ra.end(), '.');
  exchange_begin_on(self, Device::cpu, {{0, a.data(), 3}}, {{0, ra.data(), 3}})->wait();
  CHECK(ra == a);
}

TEST_CASE("the GPU transport: nccl when built and every rank has its own GPU, else staged",
          "[comm]") {
  const std::vector<std::string> distinct{"aa", "bb", "cc"}, shared{"aa", "bb", "aa"};
  std::string why;
  CHECK(choose_transport("auto", distinct, true, &why) == DeviceTransport::nccl);
  CHECK(choose_transport("auto", shared, true, &why) == DeviceTransport::staged);
  CHECK_THAT(why, Catch::Contains("ranks 0 and 2 share GPU aa"));
  CHECK(choose_transport("auto", distinct, false, &why) == DeviceTransport::staged);
  CHECK_THAT(why, Catch::Contains("without NCCL"));
  CHECK(choose_transport("mpi", distinct, true) == DeviceTransport::staged);
  CHECK(choose_transport("nccl", distinct, true) == DeviceTransport::nccl);
  CHECK_THROWS_WITH(choose_transport("nccl", shared, true),
                    Catch::Contains("--comm nccl: ranks 0 and 2 share GPU aa") &&
                        Catch::Contains("--comm mpi"));
  CHECK_THROWS_AS(choose_transport("nccl", shared, true), OptionError);
  CHECK_THROWS_WITH(choose_transport("nccl", distinct, false),
                    Catch::Contains("built without NCCL"));
  CHECK_THROWS_AS(choose_transport("gloo", distinct, true), OptionError);
  // One rank, or a single GPU per rank listed once: nothing is shared.
  CHECK(choose_transport("auto", {"aa"}, true) == DeviceTransport::nccl);
}

TEST_CASE("attach_device_comm: --comm on the CPU and on one rank", "[comm]") {
  SelfCommunicator self;
  CHECK_THROWS_AS(attach_device_comm(self, Device::cpu, "nccl"), OptionError);
  CHECK_THROWS_WITH(attach_device_comm(self, Device::cpu, "nccl"),
                    Catch::Contains("--comm nccl") && Catch::Contains("--device cuda"));
  CHECK_THROWS_AS(attach_device_comm(self, Device::cpu, "bogus"), OptionError);
  CHECK(attach_device_comm(self, Device::cpu, "auto") == nullptr);
  CHECK(attach_device_comm(self, Device::cpu, "mpi") == nullptr);
  // One rank on a GPU: nothing crosses ranks, nothing is attached (no GPU needed to say so).
  CHECK(attach_device_comm(self, Device::cuda, "auto") == nullptr);
  CHECK(self.device_comm() == nullptr);
  if (nccl_built())
    CHECK(attach_device_comm(self, Device::cuda, "nccl") == nullptr);
  else
    CHECK_THROWS_AS(attach_device_comm(self, Device::cuda, "nccl"), OptionError);
  CHECK(allgather_strings(self, "GPU-1") == std::vector<std::string>{"GPU-1"});
}

namespace {

struct ChildResult {
  int exit_code = -1;
  std::string err;
};

// Runs fn in a forked child with stderr captured.
template <class Fn>
ChildResult run_child(Fn fn) {
  int fds[2];
  REQUIRE(pipe(fds) == 0);
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    close(fds[0]);
    dup2(fds[1], 2);
    fn();
    _exit(99);  // fn must not return
  }
  close(fds[1]);
  ChildResult r;
  char buf[256];
  for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) > 0;) r.err.append(buf, size_t(n));
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  return r;
}

}  // namespace

TEST_CASE("fail_job prints one line and exits with the code", "[comm]") {
  if (std::getenv("OMPI_COMM_WORLD_SIZE") || std::getenv("PMI_SIZE")) {
    WARN("SKIP: launched under an MPI launcher");
    return;
  }
  ChildResult r = run_child([] { fail_job("parts/part.3: cannot open", 7); });
  CHECK(r.exit_code == 7);
  CHECK(r.err == "dgnn: error: parts/part.3: cannot open\n");
  r = run_child([] { fail_job("bad", 0); });
  CHECK(r.exit_code == 1);
}
