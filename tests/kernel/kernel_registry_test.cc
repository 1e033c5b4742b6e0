// kernel_registry_test: kernels registered with the vendor macros, compiled
// as C++ here (the C side is tests/kernel/compat), looked up and run by name with
// cmodel_run_registered.
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "cmodel_host.h"
#include "tpu_kernel.h"

namespace {

struct Blob {
  uint64_t out;
  int value;
};

int seen_calls = 0;

// Writes value + 1 to out: an int-returning FUNC_TYPE_1 kernel.
int registry_plus_one(const void *args) {
  const Blob *b = static_cast<const Blob *>(args);
  scalar_t v;
  v.s32 = b->value + 1;
  tpu_gdma_system_set(b->out, v, 1, DT_INT32);
  ++seen_calls;
  return 42;  // ignored, as on the device
}

// Records the size it was given and scribbles on its copy of the blob.
void registry_sized(void *args, int size) {
  Blob *b = static_cast<Blob *>(args);
  scalar_t v;
  v.s32 = size;
  tpu_gdma_system_set(b->out, v, 1, DT_INT32);
  b->value = -1;
}

}  // namespace

// At namespace scope, as kernels write them: both forms of the trailing ';'.
TPUKERNEL_FUNC_REGISTER(registry_plus_one);
TPUKERNEL_FUNC2_REGISTER(registry_sized)

namespace {

class KernelRegistry : public ::testing::TestWithParam<const char *> {
 protected:
  void SetUp() override { ASSERT_EQ(cmodel_open(GetParam()), 0) << cmodel_last_error(); }
  void TearDown() override { cmodel_close(); }

  int32_t read_int(uint64_t addr) {
    int32_t v = 0;
    EXPECT_EQ(cmodel_global_read(&v, addr, sizeof v), 0) << cmodel_last_error();
    return v;
  }
};

TEST_P(KernelRegistry, RunsTypeOneKernelsWithTheirBlob) {
  Blob blob{cmodel_global_alloc(64), 41};
  seen_calls = 0;
  ASSERT_EQ(cmodel_run_registered("registry_plus_one", &blob, sizeof blob), 0) << cmodel_last_error();
  EXPECT_EQ(read_int(blob.out), 42);
  EXPECT_EQ(seen_calls, 1);
}

TEST_P(KernelRegistry, RunsTypeTwoKernelsWithACopyAndTheSize) {
  Blob blob{cmodel_global_alloc(64), 7};
  ASSERT_EQ(cmodel_run_registered("registry_sized", &blob, sizeof blob), 0) << cmodel_last_error();
  EXPECT_EQ(read_int(blob.out), int32_t(sizeof blob));
  EXPECT_EQ(blob.value, 7) << "the kernel must get a copy of the blob";
}

TEST_P(KernelRegistry, ListsTheRegisteredKernels) {
  const std::string names = cmodel_registered_kernels();
  EXPECT_NE(names.find("registry_plus_one"), std::string::npos) << names;
  EXPECT_NE(names.find("registry_sized"), std::string::npos) << names;
  // The generated wrapper names have external linkage, as the vendor's do.
  EXPECT_NE(&registry_plus_one_wrapper, nullptr);
  EXPECT_NE(&tpu_kernel_register_registry_sized, nullptr);
}

TEST_P(KernelRegistry, UnknownNamesListTheKnownOnes) {
  EXPECT_NE(cmodel_run_registered("registry_missing", nullptr, 0), 0);
  const std::string error = cmodel_last_error();
  EXPECT_NE(error.find("cmodel_run_registered: no kernel is registered under the name \"registry_missing\" "
                       "(registered: "),
            std::string::npos)
      << error;
  EXPECT_NE(error.find("registry_plus_one"), std::string::npos) << error;
  EXPECT_NE(cmodel_run_registered(nullptr, nullptr, 0), 0);
  EXPECT_NE(std::string(cmodel_last_error()).find("kernel name is null"), std::string::npos) << cmodel_last_error();
}

TEST_P(KernelRegistry, RejectsAMissingBlob) {
  EXPECT_NE(cmodel_run_registered("registry_sized", nullptr, 8), 0);
  EXPECT_NE(std::string(cmodel_last_error()).find("args is null but size is 8"), std::string::npos)
      << cmodel_last_error();
}

TEST_P(KernelRegistry, RejectsBadRegistrations) {
  tpu_register_kernel_func("registry_bad_type", reinterpret_cast<void *>(&registry_sized), func_type_t(7));
  EXPECT_NE(std::string(cmodel_last_error()).find("type 7 of kernel \"registry_bad_type\" is neither FUNC_TYPE_1 "
                                                  "(0) nor FUNC_TYPE_2 (1)"),
            std::string::npos)
      << cmodel_last_error();
  tpu_register_kernel_func(nullptr, reinterpret_cast<void *>(&registry_sized), FUNC_TYPE_1);
  EXPECT_NE(std::string(cmodel_last_error()).find("name and func must not be null"), std::string::npos)
      << cmodel_last_error();
  EXPECT_EQ(std::string(cmodel_registered_kernels()).find("registry_bad_type"), std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(Chips, KernelRegistry, ::testing::Values("bm1684x", "bm1688"));

}  // namespace
