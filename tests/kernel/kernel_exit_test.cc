// kernel_exit_test: kernel code that calls exit(), _exit(), abort() or fails
// an assert(), that never ends, or that hands an API function a wild
// pointer. Each becomes the run's named error and the process goes on
// (kernel/src/kernel_exits.cc, kernel/src/kernel_faults.h); a kernel that
// exits through libc's own exit() (not built with the SDK's wrappers) ends
// the process with status 70, never 0.
//
// This program is linked like a kernel library (tpu_kernel_wrap_exits), so
// the kernels below reach the wrappers.
#undef NDEBUG  // the assert below must be compiled in
#include <dlfcn.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cassert>
#include <chrono>
#include <cstdlib>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "cmodel_host.h"
#include "tpu_kernel.h"

namespace {

#define CONTAINS(text, part) EXPECT_NE(std::string(text).find(part), std::string::npos) << (text)

volatile int g_sink;
global_addr_t g_buffer;

class KernelExit : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(cmodel_open("bm1684x"), 0) << cmodel_last_error();
    g_buffer = cmodel_global_alloc(1 << 16);
    const std::vector<char> zeros(1 << 16);
    ASSERT_EQ(cmodel_global_write(g_buffer, zeros.data(), zeros.size()), 0);
  }
  void TearDown() override {
    EXPECT_EQ(cmodel_set_option("run_timeout", "600"), 0);
    cmodel_close();
  }

  // The emulator still works after the stopped kernel.
  static void good_kernel(const void *) {
    const dim4 shape = {1, 2, 4, 4};
    tpu_gdma_cpy_S2L(0, g_buffer, &shape, nullptr, nullptr, DT_FP32);
  }
  std::string expect_stopped(void (*kernel)(const void *)) {
    EXPECT_NE(cmodel_run(kernel, nullptr), 0) << "the run should have failed";
    const std::string message = cmodel_last_error();
    EXPECT_EQ(cmodel_run(good_kernel, nullptr), 0) << cmodel_last_error();
    return message;
  }
};

constexpr int kExitLine = __LINE__ + 1;
extern "C" void kernel_calls_exit(const void *) { exit(0); }

constexpr int kUnderscoreExitLine = __LINE__ + 1;
extern "C" void kernel_calls_underscore_exit(const void *) { _exit(3); }

constexpr int kAbortLine = __LINE__ + 1;
extern "C" void kernel_calls_abort(const void *) { abort(); }

constexpr int kAssertLine = __LINE__ + 3;
extern "C" void kernel_fails_assert(const void *) {
  volatile int channels = 3;
  assert(channels == 4);
}

extern "C" void kernel_raises_sigabrt(const void *) { raise(SIGABRT); }

extern "C" void kernel_spins(const void *) {
  for (;;) g_sink = g_sink + 1;
}

// Most of its time is spent inside API calls: the stop comes at a call.
extern "C" void kernel_spins_in_the_api(const void *) {
  for (;;) g_sink = tpu_npu_num();
}

constexpr int kWildPointerLine = __LINE__ + 2;
extern "C" void kernel_passes_a_wild_shape(const void *) {
  tpu_gdma_cpy_S2L(0, g_buffer, reinterpret_cast<const dim4 *>(0x10), nullptr, nullptr, DT_FP32);
  g_sink = 1;  // not a tail call: the call site stays in this function
}

TEST_F(KernelExit, ExitStopsTheKernelNotTheProcess) {
  const std::string m = expect_stopped(kernel_calls_exit);
  CONTAINS(m, "the kernel called exit(0) [kernel fault]");
  CONTAINS(m, "kernel_exit_test.cc:" + std::to_string(kExitLine));
  const std::string u = expect_stopped(kernel_calls_underscore_exit);
  CONTAINS(u, "the kernel called _exit(3)");
  CONTAINS(u, "kernel_exit_test.cc:" + std::to_string(kUnderscoreExitLine));
}

TEST_F(KernelExit, AbortAndAFailedAssertAreNamed) {
  const std::string a = expect_stopped(kernel_calls_abort);
  CONTAINS(a, "the kernel called abort()");
  CONTAINS(a, "kernel_exit_test.cc:" + std::to_string(kAbortLine));
  const std::string f = expect_stopped(kernel_fails_assert);
  CONTAINS(f, "assert(channels == 4) failed in ");
  CONTAINS(f, "kernel_fails_assert");
  CONTAINS(f, "(kernel_exit_test.cc:" + std::to_string(kAssertLine) + ")");
  CONTAINS(f, "[kernel assertion failed]");
  // Raised without the wrapper (as libc's own abort does): the signal.
  const std::string s = expect_stopped(kernel_raises_sigabrt);
  CONTAINS(s, "SIGABRT");
}

TEST_F(KernelExit, ARunawayKernelIsStoppedAtTheTimeLimit) {
  ASSERT_EQ(cmodel_set_option("run_timeout", "0.3"), 0) << cmodel_last_error();
  const auto start = std::chrono::steady_clock::now();
  const std::string m = expect_stopped(kernel_spins);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  CONTAINS(m, "time limit of 0.3 s");
  CONTAINS(m, "[time limit exceeded]");
  CONTAINS(m, "kernel_spins");
  EXPECT_LT(seconds, 30.0);
  const std::string api = expect_stopped(kernel_spins_in_the_api);
  CONTAINS(api, "[time limit exceeded]");
  CONTAINS(api, "tpu_npu_num");  // stopped at the call, or in between: then named as the last call
}

TEST_F(KernelExit, ABadTimeLimitIsRefused) {
  EXPECT_NE(cmodel_set_option("run_timeout", "soon"), 0);
  CONTAINS(cmodel_last_error(), "run_timeout");
  EXPECT_NE(cmodel_set_option("run_timeout", "-1"), 0);
}

TEST_F(KernelExit, AWildPointerArgumentIsNamed) {
  const std::string m = expect_stopped(kernel_passes_a_wild_shape);
  CONTAINS(m, "tpu_gdma_cpy_S2L: SIGSEGV");
  CONTAINS(m, "a pointer argument is not valid [kernel fault]");
  CONTAINS(m, "kernel_exit_test.cc:" + std::to_string(kWildPointerLine));
}

// libc's own exit(), as a kernel built without the wrappers calls it: the
// process cannot go on, but it must not end with the kernel's status 0.
extern "C" void kernel_calls_libc_exit(const void *) {
  auto *libc_exit = reinterpret_cast<void (*)(int)>(dlsym(RTLD_DEFAULT, "exit"));
  libc_exit(0);
}

TEST_F(KernelExit, AnUnwrappedExitDuringARunEndsWithStatus70) {
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    cmodel_run(kernel_calls_libc_exit, nullptr);
    _exit(0);  // not reached: the kernel's exit ends the process
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 70);
}

}  // namespace
