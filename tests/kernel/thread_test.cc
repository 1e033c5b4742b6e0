// thread_test: the emulator used from several threads. It is one per
// process; cmodel_* host calls (cmodel_run for the whole run) and API calls
// made outside a run take turns through one lock, each thread reads its own
// last error, and a thread a kernel starts is refused (session.h).
#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "cmodel_host.h"
#include "tpu_kernel.h"

namespace {

global_addr_t g_in, g_out;

extern "C" void good_kernel(const void *) {
  const dim4 shape = {1, 3, 4, 5};
  tpu_gdma_cpy_S2L(0, g_in, &shape, nullptr, nullptr, DT_FP32);
  tpu_gdma_cpy_L2S(g_out, 0, &shape, nullptr, nullptr, DT_FP32);
}

// A channel count of 0: an illegal command.
extern "C" void bad_kernel(const void *) {
  const dim4 shape = {1, 0, 4, 5};
  tpu_gdma_cpy_S2L(0, g_in, &shape, nullptr, nullptr, DT_FP32);
}

class Threads : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(cmodel_open("bm1688"), 0) << cmodel_last_error();
    g_in = cmodel_global_alloc(1 << 16);
    g_out = cmodel_global_alloc(1 << 16);
    const std::vector<char> zeros(1 << 16);
    ASSERT_EQ(cmodel_global_write(g_in, zeros.data(), zeros.size()), 0);
  }
  void TearDown() override { cmodel_close(); }
};

// One thread's kernels all fail, the other's all pass: every result and
// every message must be the thread's own.
TEST_F(Threads, RunsFromTwoThreadsTakeTurnsAndKeepTheirOwnErrors) {
  constexpr int kRuns = 300;
  std::atomic<int> wrong{0};
  std::string first_wrong;
  std::thread failing([&] {
    for (int i = 0; i < kRuns; ++i) {
      const int status = cmodel_run(bad_kernel, nullptr);
      const std::string message = cmodel_last_error();
      if (status == 0 || message.find("[illegal command]") == std::string::npos) {
        if (wrong++ == 0) first_wrong = "failing thread: status " + std::to_string(status) + ": " + message;
      }
    }
  });
  std::thread passing([&] {
    for (int i = 0; i < kRuns; ++i) {
      const int status = cmodel_run(good_kernel, nullptr);
      const std::string message = cmodel_last_error();
      if (status != 0 || !message.empty()) {
        if (wrong++ == 0) first_wrong = "passing thread: status " + std::to_string(status) + ": " + message;
      }
    }
  });
  failing.join();
  passing.join();
  EXPECT_EQ(wrong.load(), 0) << first_wrong;
}

// API calls a host program makes directly, outside any run, from two
// threads at once: they take turns and all succeed.
TEST_F(Threads, DirectApiCallsFromTwoThreadsTakeTurns) {
  std::atomic<int> failures{0};
  auto copy_many = [&](local_addr_t local) {
    const dim4 shape = {1, 2, 8, 8};
    for (int i = 0; i < 2000; ++i) {
      tpu_gdma_cpy_S2L(local, g_in, &shape, nullptr, nullptr, DT_FP32);
      if (*cmodel_last_error()) ++failures;
    }
  };
  std::thread a(copy_many, 0), b(copy_many, 4096);
  a.join();
  b.join();
  EXPECT_EQ(failures.load(), 0);
}

std::string g_helper_error;

// The kernel starts a thread that calls the API: refused, with a message in
// that thread; the kernel itself carries on.
extern "C" void kernel_starting_a_thread(const void *) {
  std::thread helper([] {
    (void)tpu_npu_num();
    g_helper_error = cmodel_last_error();
  });
  helper.join();
  good_kernel(nullptr);
}

TEST_F(Threads, AThreadAKernelStartsIsRefused) {
  ASSERT_EQ(cmodel_run(kernel_starting_a_thread, nullptr), 0) << cmodel_last_error();
  EXPECT_NE(g_helper_error.find("tpu_npu_num was called from a thread other than the one running the kernel"),
            std::string::npos)
      << g_helper_error;
}

}  // namespace
