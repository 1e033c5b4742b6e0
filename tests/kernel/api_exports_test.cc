// api_exports_test: every function tpu_kernel.h declares is exported by
// libcmodel.so, and the ones that are implemented are not the weak
// "not implemented" stubs.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cmodel_host.h"
#include "tpu_kernel.h"

namespace {

struct ApiFunction {
  std::string family, name;
};

const std::vector<ApiFunction> &api_functions() {
  static const std::vector<ApiFunction> list = {
#define TPU_API_FUNCTION(family, name, policy) {#family, #name},
#include "api_functions.def"
#undef TPU_API_FUNCTION
  };
  return list;
}

TEST(ApiExports, EveryDeclaredFunctionIsExported) {
  void *library = dlopen("libcmodel.so.0", RTLD_NOW | RTLD_NOLOAD);
  ASSERT_NE(library, nullptr) << "libcmodel.so should already be loaded: " << dlerror();
  EXPECT_GT(api_functions().size(), 670u);
  for (const ApiFunction &f : api_functions())
    EXPECT_NE(dlsym(library, f.name.c_str()), nullptr) << f.name << " (family " << f.family << ") is not exported";
  dlclose(library);
}

// The weak stub and the implementation are different code: calling an
// implemented function must not produce the "not implemented" message.
TEST(ApiExports, TierZeroFunctionsAreImplemented) {
  ASSERT_EQ(cmodel_open("bm1684x"), 0);
  EXPECT_EQ(tpu_npu_num(), 64);
  EXPECT_EQ(tpu_local_mem_size_per_npu(), 1 << 18);
  dim4 stride{}, shape{2, 70, 3, 5};
  tpu_aligned_stride(&stride, 2, &shape, DT_FP32);
  EXPECT_EQ(std::string(cmodel_last_error()), "");
  EXPECT_EQ(stride.c, 16);  // ALIGN(3 * 5, 16 fp32 lanes)
  cmodel_close();
}

TEST(ApiExports, StubsNameTheFunction) {
  ASSERT_EQ(cmodel_open("bm1688"), 0);
  tpu_hau_poll();  // implemented: no error
  EXPECT_STREQ(cmodel_last_error(), "");
  const dim4 shape{1, 1, 1, 1};
  tpu_gdma_compress_normal_L2S(0, 0, &shape, nullptr, DT_INT8, 0, 0, false);  // outside a run the stub returns
  EXPECT_NE(std::string(cmodel_last_error()).find("tpu_gdma_compress_normal_L2S is not implemented in this SDK"),
            std::string::npos)
      << cmodel_last_error();
  cmodel_close();
}

}  // namespace
