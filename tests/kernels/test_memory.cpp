// Allocation, copies, fills, and what the dispatcher says about devices this build lacks.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cstdint>
#include <string>
#include <vector>

#include "dgnn/common/error.hpp"
#include "dgnn/dgnn_config.hpp"
#include "dgnn/kernels/cpu/cpu_kernels.hpp"
#include "dgnn/kernels/kernels.hpp"

using namespace dgnn;

TEST_CASE("alloc is 64-byte aligned and never null", "[kernels][memory]") {
  for (size_t bytes : {size_t(0), size_t(1), size_t(63), size_t(65), size_t(1) << 20}) {
    void* p = kernels::alloc(Device::cpu, bytes);
    REQUIRE(p != nullptr);
    CHECK(reinterpret_cast<uintptr_t>(p) % 64 == 0);
    kernels::free(Device::cpu, p);
  }
  kernels::free(Device::cpu, nullptr);  // harmless
}

TEST_CASE("a freed large block serves a later request of a slightly different size",
          "[kernels][memory]") {
  // Mini-batch steps allocate shapes that differ a little from batch to batch: the pool must
  // hand the block back for them (same size class), and the block must hold the larger request.
  kernels::release_cached(Device::cpu);
  const size_t a = (size_t(1) << 21) + 1000, b = (size_t(1) << 21) + 90000;
  void* p = kernels::alloc(Device::cpu, a);
  kernels::free(Device::cpu, p);
  void* q = kernels::alloc(Device::cpu, b);
  CHECK(q == p);
  static_cast<char*>(q)[b - 1] = 1;  // the whole request is usable
  kernels::free(Device::cpu, q);
  // A request a size class up gets another block.
  void* r = kernels::alloc(Device::cpu, size_t(1) << 22);
  CHECK(r != p);
  kernels::free(Device::cpu, r);
  kernels::release_cached(Device::cpu);
}

TEST_CASE("blocks from 128 KB are pooled: a rank's share's rows are reused, not left in holes",
          "[kernels][memory]") {
  kernels::release_cached(Device::cpu);
  // 200 kB and 210 kB share the 224 kB class (four classes from 128 kB to 256 kB). Live blocks
  // on both sides keep malloc from growing a freed 200 kB chunk into a 210 kB one: only the
  // pool hands the same block back.
  void* before = std::malloc(200 << 10);
  void* p = kernels::alloc(Device::cpu, 200 << 10);
  void* after = std::malloc(200 << 10);
  kernels::free(Device::cpu, p);
  void* q = kernels::alloc(Device::cpu, 210 << 10);
  CHECK(q == p);
  static_cast<char*>(q)[(210 << 10) - 1] = 1;
  kernels::free(Device::cpu, q);
  std::free(before);
  std::free(after);
  kernels::release_cached(Device::cpu);
}

#ifdef __GLIBC__
namespace {
// This process's resident bytes now (/proc/self/statm's second field, in pages).
int64_t resident_now() {
  std::FILE* f = std::fopen("/proc/self/statm", "r");
  long size = 0, resident = 0;
  if (f) {
    if (std::fscanf(f, "%ld %ld", &size, &resident) != 2) resident = 0;
    std::fclose(f);
  }
  return int64_t(resident) * sysconf(_SC_PAGE_SIZE);
}
}  // namespace

TEST_CASE("trim_host_heap hands freed pages between live blocks back, and leaves a tidy heap be",
          "[kernels][memory]") {
  // 48 MB of 32 kB objects (malloc's heap, not mmap), touched; all freed but the last, which
  // keeps the heap's top in place: free() alone returns none of their pages.
  std::vector<char*> blocks;
  for (int i = 0; i < 1536; ++i) {
    char* b = static_cast<char*>(std::malloc(32 << 10));
    REQUIRE(b != nullptr);
    std::memset(b, 1, 32 << 10);
    blocks.push_back(b);
  }
  for (size_t i = 0; i + 1 < blocks.size(); ++i) std::free(blocks[i]);
  const int64_t before = resident_now();
  kernels::trim_host_heap();
  const int64_t after = resident_now();
  CHECK(before - after > (int64_t(32) << 20));
  std::free(blocks.back());
  // Nothing much free now: nothing to do.
  kernels::trim_host_heap();
  CHECK(!kernels::cpu::trim_free_heap());
}
#endif

TEST_CASE("fill, copy and copy_view", "[kernels][memory]") {
  float* p = static_cast<float*>(kernels::alloc(Device::cpu, 5 * sizeof(float)));
  kernels::fill(Device::cpu, p, 5, 2.5f);
  std::vector<float> host(5);
  kernels::copy(Device::cpu, host.data(), Device::cpu, p, 5 * sizeof(float));
  CHECK(host == std::vector<float>(5, 2.5f));
  kernels::free(Device::cpu, p);

  const std::vector<float> src = {1, 2, 3, 4, 5, 6};  // columns 1..2 of a 2 x 3
  std::vector<float> dst(4, 1.f);
  kernels::copy_view(Device::cpu, ConstMatView(src.data() + 1, 2, 2, 3), {dst.data(), 2, 2, 2});
  CHECK(dst == std::vector<float>{2, 3, 5, 6});
  kernels::copy_view(Device::cpu, ConstMatView(src.data() + 1, 2, 2, 3), {dst.data(), 2, 2, 2},
                     true);
  CHECK(dst == std::vector<float>{4, 6, 10, 12});
  CHECK_THROWS_AS(
      kernels::copy_view(Device::cpu, ConstMatView(src.data(), 2, 3, 3), {dst.data(), 2, 2, 2}),
      ShapeError);
}

TEST_CASE("views with ld < cols are rejected", "[kernels][memory]") {
  std::vector<float> buf(8);
  CHECK_THROWS_AS(kernels::add_row_vector(Device::cpu, {buf.data(), 2, 4, 3}, buf.data()),
                  ShapeError);
}

#if !DGNN_HAVE_CUDA
TEST_CASE("a build without CUDA says so", "[kernels][device]") {
  std::string why;
  CHECK_FALSE(kernels::cuda_available(&why));
  CHECK(why == "this dgnn was built without CUDA");
  CHECK_FALSE(kernels::cuda_available(nullptr));
  try {
    kernels::alloc(Device::cuda, 16);
    FAIL("no DeviceError");
  } catch (const DeviceError& e) {
    CHECK(std::string(e.what()).find("built without CUDA") != std::string::npos);
  }
  std::vector<float> x(4);
  CHECK_THROWS_AS(kernels::fill(Device::cuda, x.data(), 4, 1.f), DeviceError);
  CHECK_THROWS_AS(kernels::copy(Device::cpu, x.data(), Device::cuda, x.data(), 4), DeviceError);
  CHECK_THROWS_AS(kernels::unary(Device::cuda, kernels::Unary::relu, x.data(), x.data(), 4),
                  DeviceError);
}
#endif
