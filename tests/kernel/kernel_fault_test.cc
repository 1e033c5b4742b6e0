// kernel_fault_test: SIGFPE, SIGSEGV and SIGBUS raised by kernel code stop
// the kernel with a message naming the signal, the kernel function and its
// file:line; the process and the emulator go on (kernel/src/kernel_faults.h).
// Faults outside kernel code, or in the emulator's own code, keep the
// process's normal behaviour.
#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "cmodel_host.h"
#include "support/test_support.h"
#include "tpu_kernel.h"

// The faults below are the point: the sanitizers must not report them
// first (UBSan stops on a division by zero, ASan on a wild access).
#define NO_SANITIZE __attribute__((no_sanitize("address", "undefined"), noinline))

namespace {

volatile int g_sink;

// ---- kernels that fault ------------------------------------------------------
// Each k*Line names the line of the faulting statement, which the message
// must give: keep each constant right above its function.

constexpr int kDivideLine = __LINE__ + 3;
extern "C" NO_SANITIZE void fault_divide_by_zero(const void *) {
  volatile int numerator = 7, zero = 0;  // 1 / x would become a comparison
  g_sink = numerator / zero;
}

constexpr int kWildWriteLine = __LINE__ + 3;
extern "C" NO_SANITIZE void fault_wild_write(const void *) {
  int *volatile wild = reinterpret_cast<int *>(0x10);
  *wild = 1;
}

constexpr int kBusLine = __LINE__ + 2;
extern "C" NO_SANITIZE void fault_read_past_file_end(const void *mapping) {
  g_sink = *static_cast<const volatile int *>(mapping);
}

// A region the kernel leaves open: the next run must not inherit it.
extern "C" NO_SANITIZE void fault_inside_parallel_region(const void *) {
  tpu_parallel_start();
  volatile int numerator = 7, zero = 0;
  g_sink = numerator / zero;
}

// Each frame hands its array to the next call, so the recursion cannot
// become a loop; depth never goes negative, the test only quiets GCC's
// infinite-recursion warning.
extern "C" NO_SANITIZE int recurse_deeper(int depth, volatile char *caller_frame) {
  volatile char frame[512];
  frame[0] = char(depth);
  if (depth < 0) return caller_frame[0];
  return recurse_deeper(depth + 1, frame) + frame[1];
}
extern "C" NO_SANITIZE void fault_stack_overflow(const void *) { g_sink = recurse_deeper(0, nullptr); }

// A wild shape pointer reaches the emulator, which faults in its own code.
extern "C" void pass_a_wild_pointer_to_the_api(const void *) {
  tpu_gdma_cpy_S2S(0, 0, reinterpret_cast<const dim4 *>(0x10), nullptr, nullptr, DT_FP32);
}

// ---- a kernel that works ---------------------------------------------------
struct Copy {
  uint64_t src, dst;
  int count;
};

extern "C" void copy_kernel(const void *arg) {
  const Copy &c = *static_cast<const Copy *>(arg);
  const dim4 shape = {1, 1, 1, c.count};
  tpu_parallel_start();
  tpu_gdma_cpy_S2S(c.dst, c.src, &shape, nullptr, nullptr, DT_FP32);
  tpu_parallel_end();
}

std::string site(const char *function, int line) {
  return std::string(function) + " (kernel_fault_test.cc:" + std::to_string(line) + ")";
}

class KernelFault : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_EQ(cmodel_open("bm1684x"), 0) << cmodel_last_error(); }
  void TearDown() override { cmodel_close(); }

  // cmodel_run fails with a message; returns the message.
  static std::string failure_of(void (*kernel)(const void *), const void *arg = nullptr) {
    EXPECT_NE(cmodel_run(kernel, arg), 0) << "the kernel was expected to fault";
    return cmodel_last_error();
  }

  // The emulator still works: a kernel with a parallel region copies data.
  static void expect_emulator_usable() {
    std::vector<float> in = {1.5f, -2.f, 3.25f, 8.f}, out(4, 0.f);
    const uint64_t bytes = in.size() * sizeof(float);
    Copy copy{cmodel_global_alloc(bytes), cmodel_global_alloc(bytes), int(in.size())};
    ASSERT_NE(copy.src, 0u);
    ASSERT_NE(copy.dst, 0u);
    ASSERT_EQ(cmodel_global_write(copy.src, in.data(), bytes), 0);
    EXPECT_EQ(cmodel_run(copy_kernel, &copy), 0) << cmodel_last_error();
    EXPECT_STREQ(cmodel_last_error(), "");
    ASSERT_EQ(cmodel_global_read(out.data(), copy.dst, bytes), 0);
    EXPECT_EQ(out, in);
    cmodel_global_free(copy.src);
    cmodel_global_free(copy.dst);
  }
};

TEST_F(KernelFault, IntegerDivisionByZero) {
  EXPECT_EQ(failure_of(fault_divide_by_zero),
            "SIGFPE (integer divide by zero) in kernel code [kernel fault]; in " +
                site("fault_divide_by_zero", kDivideLine));
  expect_emulator_usable();
}

TEST_F(KernelFault, WildPointerWrite) {
  EXPECT_EQ(failure_of(fault_wild_write),
            "SIGSEGV (address not mapped) at address 0x10 in kernel code [kernel fault]; in " +
                site("fault_wild_write", kWildWriteLine));
  expect_emulator_usable();
}

// Reading a file mapping past the end of its (shrunk) file is SIGBUS.
TEST_F(KernelFault, ReadPastTheEndOfAMappedFile) {
  const long page = sysconf(_SC_PAGESIZE);
  const int fd = memfd_create("kernel_fault_test", 0);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(ftruncate(fd, page), 0);
  void *mapping = mmap(nullptr, size_t(page), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  ASSERT_NE(mapping, MAP_FAILED);
  ASSERT_EQ(ftruncate(fd, 0), 0);

  EXPECT_EQ(failure_of(fault_read_past_file_end, mapping),
            "SIGBUS (no memory behind the address, e.g. a file mapping past the end of the file) at address " +
                test::hex(reinterpret_cast<uintptr_t>(mapping)) + " in kernel code [kernel fault]; in " +
                site("fault_read_past_file_end", kBusLine));
  munmap(mapping, size_t(page));
  close(fd);
  expect_emulator_usable();
}

TEST_F(KernelFault, StackOverflow) {
  rlimit stack{};
  ASSERT_EQ(getrlimit(RLIMIT_STACK, &stack), 0);
  if (stack.rlim_cur == RLIM_INFINITY || stack.rlim_cur > (rlim_t(64) << 20))
    GTEST_SKIP() << "the stack limit is too large to overflow quickly";
  const std::string message = failure_of(fault_stack_overflow);
  EXPECT_TRUE(message.starts_with("SIGSEGV (")) << message;
  EXPECT_NE(message.find("the kernel's stack overflowed in kernel code [kernel fault]; in recurse_deeper "
                         "(kernel_fault_test.cc:"),
            std::string::npos)
      << message;
  expect_emulator_usable();
}

// The parallel region the faulting kernel opened is gone: the next kernel
// opens its own (a nested start would be an error).
TEST_F(KernelFault, StateOfTheFaultingRunIsReset) {
  EXPECT_NE(failure_of(fault_inside_parallel_region).find("SIGFPE (integer divide by zero)"), std::string::npos);
  expect_emulator_usable();
}

// The handlers are the run's: afterwards the process has its own again.
TEST_F(KernelFault, PreviousHandlersAreRestored) {
  struct sigaction mine {}, before {}, after {};
  mine.sa_handler = [](int) {};
  sigemptyset(&mine.sa_mask);
  ASSERT_EQ(sigaction(SIGBUS, &mine, &before), 0);
  EXPECT_NE(failure_of(fault_divide_by_zero), "");
  expect_emulator_usable();
  ASSERT_EQ(sigaction(SIGBUS, &before, &after), 0);
  EXPECT_EQ(after.sa_handler, mine.sa_handler);
}

// With AddressSanitizer (linked in the sanitizer build, though the test code
// itself is not instrumented) the previous handler is its own, which
// reports and exits; otherwise the default action kills the process.
#if defined(TPU_SDK_TESTS_SANITIZED)
#define EXPECT_KILLED_BY_SEGV(statement) EXPECT_DEATH(statement, "AddressSanitizer")
#else
#define EXPECT_KILLED_BY_SEGV(statement) EXPECT_EXIT(statement, ::testing::KilledBySignal(SIGSEGV), "")
#endif

TEST_F(KernelFault, FaultOutsideAKernelIsNotSwallowed) {
  EXPECT_NE(failure_of(fault_divide_by_zero), "");  // handlers were installed and removed
  EXPECT_KILLED_BY_SEGV(raise(SIGSEGV));
}

// A fault in the emulator's code while it serves the kernel's API call is
// the kernel's bad pointer argument: named, and the process goes on
// (kernel_exit_test checks the call site).
TEST_F(KernelFault, AWildPointerArgumentFaultsInTheEmulatorAndIsNamed) {
  const std::string message = failure_of(pass_a_wild_pointer_to_the_api);
  EXPECT_NE(message.find("tpu_gdma_cpy_S2S: SIGSEGV (address not mapped) at address 0x10 inside the call: a pointer "
                         "argument is not valid [kernel fault]"),
            std::string::npos)
      << message;
  expect_emulator_usable();
}

}  // namespace
