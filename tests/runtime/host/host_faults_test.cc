// host_faults_test.cc: a host op that throws, faults, exits, aborts,
// returns nonzero or writes past its output stops with an Error naming the
// layer, the op, the library and the fault, and the process carries on
// (each test runs the sample top-k afterwards). Fixture libraries:
// tests/runtime/host/fixtures.
#include "cmodel_host.h"
#include "runtime/host/host_test_support.h"

namespace {

using namespace host_test;
using namespace tpu_runtime;

const std::string kFaulty = std::string(HOST_FIXTURES_DIR) + "/faulty/libcustomapop.so";
const std::string kCallback = std::string(HOST_FIXTURES_DIR) + "/libhost_callback.so";

std::shared_ptr<HostOpLibrary> faulty() {
  static std::shared_ptr<HostOpLibrary> lib = HostOpLibrary::open(kFaulty, HostOpKind::vendor_ap);
  return lib;
}
std::shared_ptr<HostOpLibrary> callback() {
  static std::shared_ptr<HostOpLibrary> lib = HostOpLibrary::open(kCallback, HostOpKind::callback);
  return lib;
}

// The sample top-k still runs: the process and the trap survived.
void expect_still_working() {
  static std::shared_ptr<HostOpLibrary> sample = HostOpLibrary::open(SAMPLE_AP_LIBRARY, HostOpKind::vendor_ap);
  const HostOpRun run = run_host_op(*sample, "ap.topk", pack_ap_params(nlohmann::json::array({{{"axis", 0}}, {{"K", 1}}})),
                                    {floats({3}, {1, 3, 2})}, {spec(Dtype::fp32, {1})}, "layer after");
  EXPECT_EQ(values_of<float>(run.outputs[0]), std::vector<float>{3});
}

std::string run_faulty(const std::string &op) {
  return error_of([&] {
    run_host_op(*faulty(), op, pack_ap_params(nullptr), {floats({4, 2}, std::vector<float>(8, 1.0f))},
                {spec(Dtype::fp32, {4, 2})}, "layer L7");
  });
}

void expect_named(const std::string &message, const std::string &op, const std::string &library,
                  const std::string &fault) {
  EXPECT_CONTAINS(message, "layer L7: host op '" + op + "'");
  EXPECT_CONTAINS(message, library);
  EXPECT_CONTAINS(message, fault);
  expect_still_working();
}

TEST(HostFaults, ApOpThatThrows) {
  expect_named(run_faulty("ap.throw"), "ap.throw", "faulty/libcustomapop.so",
               "threw std::runtime_error: faulty: the op refuses on purpose");
}

TEST(HostFaults, ApOpThatDereferencesABadPointer) {
  const std::string message = run_faulty("ap.segv");
  expect_named(message, "ap.segv", "faulty/libcustomapop.so", "SIGSEGV (address not mapped) at address 0x0");
  EXPECT_CONTAINS(message, "in host op code");
  EXPECT_CONTAINS(message, "faulty_ops.cpp");
}

TEST(HostFaults, ApOpThatDividesByZero) {
  expect_named(run_faulty("ap.fpe"), "ap.fpe", "faulty/libcustomapop.so", "SIGFPE (integer divide by zero)");
}

TEST(HostFaults, ApOpWhoseCpuAssertExits) {
  expect_named(run_faulty("ap.exit"), "ap.exit", "faulty/libcustomapop.so", "called exit(-1)");
}

TEST(HostFaults, ApOpThatAborts) {
  expect_named(run_faulty("ap.abort"), "ap.abort", "faulty/libcustomapop.so", "called abort()");
}

TEST(HostFaults, ApOpThatReturnsNonzero) {
  expect_named(run_faulty("ap.fail"), "ap.fail", "faulty/libcustomapop.so",
               "customcpu_process returned 3 (0 = success)");
}

TEST(HostFaults, ApOpThatWritesPastItsOutput) {
  expect_named(run_faulty("ap.overrun"), "ap.overrun", "faulty/libcustomapop.so",
               "wrote past the end of output 0 (fp32 [4, 2], 32 bytes): guard byte 0 behind it was overwritten");
}

TEST(HostFaults, ADynamicOutputShapeMayShrinkButNotGrow) {
  const HostOpRun run = run_host_op(*faulty(), "ap.shrink", pack_ap_params(nullptr),
                                    {floats({4, 2}, {1, 2, 3, 4, 5, 6, 7, 8})}, {spec(Dtype::fp32, {4, 2})}, "layer L7");
  EXPECT_EQ(run.outputs[0].shape, (Shape{2, 2}));
  EXPECT_EQ(values_of<float>(run.outputs[0]), (std::vector<float>{1, 2, 3, 4}));
  expect_named(run_faulty("ap.grow"), "ap.grow", "faulty/libcustomapop.so",
               "the op set output 0's shape to [5, 2], which does not fit its static shape [4, 2]");
}

std::string run_callback(const std::string &op) {
  return error_of([&] {
    run_host_op(*callback(), op, {}, {floats({4}, {1, 2, 3, 4})}, {spec(Dtype::fp32, {4})}, "layer L7");
  });
}

TEST(HostFaults, CallbackThatThrows) {
  expect_named(run_callback("throw"), "throw", "libhost_callback.so", "threw std::logic_error: callback: no such mode");
}

TEST(HostFaults, CallbackThatDereferencesABadPointer) {
  expect_named(run_callback("segv"), "segv", "libhost_callback.so", "SIGSEGV (address not mapped) at address 0x0");
}

TEST(HostFaults, CallbackThatDividesByZero) {
  expect_named(run_callback("fpe"), "fpe", "libhost_callback.so", "SIGFPE (integer divide by zero)");
}

TEST(HostFaults, CallbackThatExits) {
  expect_named(run_callback("exit"), "exit", "libhost_callback.so", "called exit(4)");
}

TEST(HostFaults, CallbackThatAborts) {
  expect_named(run_callback("abort"), "abort", "libhost_callback.so", "called abort()");
}

TEST(HostFaults, CallbackThatWritesPastItsOutput) {
  expect_named(run_callback("overrun"), "overrun", "libhost_callback.so", "wrote past the end of output 0 (fp32 [4]");
}

// A host op that never returns is stopped by the run's time limit (1 s
// here), as a kernel is, and named.
TEST(HostFaults, CallbackThatNeverReturnsIsStoppedByTheTimeLimit) {
  ASSERT_EQ(cmodel_set_option("run_timeout", "1"), 0);
  const std::string message = run_callback("spin");
  ASSERT_EQ(cmodel_set_option("run_timeout", "600"), 0);
  expect_named(message, "spin", "libhost_callback.so", "the host op ran past the run's time limit of 1 s");
}

// A library linked without the SDK's exit wrappers: its exit() cannot be
// stopped, but the process ends with 70 and a line naming the op, never
// with the status the op asked for (4, or 0 that would pass for success).
TEST(HostFaultsDeathTest, ExitWithoutTheWrappersEndsTheProcessWith70NamingTheOp) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  const std::string path = std::string(HOST_FIXTURES_DIR) + "/libhost_callback_unwrapped.so";
  EXPECT_EXIT(
      {
        auto lib = HostOpLibrary::open(path, HostOpKind::callback);
        run_host_op(*lib, "exit", {}, {floats({4}, {1, 2, 3, 4})}, {spec(Dtype::fp32, {4})}, "layer L7");
      },
      ::testing::ExitedWithCode(70), "host op exit called exit\\(\\) \\(its library was not linked");
}

}  // namespace
