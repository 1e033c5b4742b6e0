// fault_injection_test: kernels that call the host side of the emulator
// (cmodel_host.h). A kernel is device code: every host function that
// changes the emulator or its state is refused while a kernel runs, with a
// message naming that function (not "operator()"), and nothing a kernel
// tried to set outlives its run.
#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "cmodel_host.h"
#include "tpu_kernel.h"

namespace {

struct Attempt {
  std::string function;
  int status;
  std::string message;
};

std::vector<Attempt> &attempts() {
  static std::vector<Attempt> list;
  return list;
}

void note(const char *function, int status) { attempts().push_back({function, status, cmodel_last_error()}); }

void noop_kernel(const void *) {}

void sink(void *, const char *, void *, int) {}

// Calls every host function that sets something, as a kernel must not.
void host_calling_kernel(const void *) {
  const int64_t range[2] = {0, 64};
  note("cmodel_watch_local", cmodel_watch_local(range, 1, range, 1));
  note("cmodel_set_owner", cmodel_set_owner("a kernel"));
  note("cmodel_set_option", cmodel_set_option("hazards", "warning"));
  note("cmodel_global_alloc", cmodel_global_alloc(4096) == 0 ? -1 : 0);
  note("cmodel_global_alloc_aligned", cmodel_global_alloc_aligned(4096, 4096) == 0 ? -1 : 0);
  note("cmodel_global_alloc_at", cmodel_global_alloc_at(0x100000000ull + (1ull << 30), 4096) == 0 ? -1 : 0);
  uint8_t byte = 0;
  note("cmodel_global_write", cmodel_global_write(0x100000000ull, &byte, 1));
  note("cmodel_global_read", cmodel_global_read(&byte, 0x100000000ull, 1));
  note("cmodel_global_copy", cmodel_global_copy(0x100000000ull, 0x100000000ull, 1));
  note("cmodel_global_fill", cmodel_global_fill(0x100000000ull, &byte, 1, 1));
  note("cmodel_set_global_mem_size", cmodel_set_global_mem_size(1ull << 30));
  note("cmodel_open", cmodel_open("bm1688"));
  note("cmodel_set_core", cmodel_set_core(0, 1));
  note("cmodel_run", cmodel_run(noop_kernel, nullptr));
  note("cmodel_run_registered", cmodel_run_registered("noop", nullptr, 0));
  note("cmodel_batch_begin", cmodel_batch_begin());
  note("cmodel_record_begin", cmodel_record_begin("a kernel"));
  note("cmodel_trace_enable", cmodel_trace_enable(1));
  note("cmodel_total_stats_reset", cmodel_total_stats_reset());
  // Functions that return nothing leave their refusal in cmodel_last_error().
  cmodel_unwatch_local();
  note("cmodel_unwatch_local", -1);
  cmodel_capture_registrations(sink, nullptr);
  note("cmodel_capture_registrations", -1);
  cmodel_global_free(0x100000000ull);
  note("cmodel_global_free", -1);
  cmodel_close();
  note("cmodel_close", -1);
}

TEST(HostCallsFromKernels, AreRefusedNamingTheFunctionAndLeaveNoState) {
  ASSERT_EQ(cmodel_open("bm1684x"), 0) << cmodel_last_error();
  attempts().clear();
  ASSERT_EQ(cmodel_run(host_calling_kernel, nullptr), 0) << cmodel_last_error();
  ASSERT_EQ(attempts().size(), 23u);
  for (const Attempt &a : attempts()) {
    SCOPED_TRACE(a.function);
    EXPECT_NE(a.status, 0) << "the call was accepted";
    EXPECT_EQ(a.message.rfind(a.function + ": " + a.function + " cannot be called from inside a running kernel", 0),
              0u)
        << a.message;
    EXPECT_EQ(a.message.find("operator()"), std::string::npos) << a.message;
  }
  // Nothing the kernel tried outlived the run: the same emulator is open,
  // nobody holds it, no batch is open.
  EXPECT_STREQ(cmodel_chip(), "bm1684x");
  EXPECT_EQ(cmodel_global_size(), 12ull << 30) << "the kernel's size change was refused";
  EXPECT_EQ(cmodel_set_owner("the test"), 0) << cmodel_last_error() << " (held by the kernel?)";
  EXPECT_EQ(cmodel_set_owner(nullptr), 0) << cmodel_last_error();
  EXPECT_EQ(cmodel_run(noop_kernel, nullptr), 0) << cmodel_last_error();
  EXPECT_EQ(cmodel_batch_end(), -1) << "no batch was opened by the kernel";
  cmodel_close();
  EXPECT_STREQ(cmodel_chip(), "");
}

}  // namespace
