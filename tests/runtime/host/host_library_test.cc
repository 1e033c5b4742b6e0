// host_library_test.cc: opening host libraries (the checks of
// HostOpLibrary::open), the Callback form, and pack_ap_params.
#include <cstdlib>
#include <fstream>

#include "runtime/host/host_test_support.h"

namespace {

using namespace host_test;
using namespace tpu_runtime;

const std::string kFixtures = HOST_FIXTURES_DIR;

std::string open_error(const std::string &path, HostOpKind kind) {
  return error_of([&] { HostOpLibrary::open(path, kind); });
}

TEST(HostLibrary, TheSampleOpensAndSaysWhatItIs) {
  auto lib = HostOpLibrary::open(SAMPLE_AP_LIBRARY, HostOpKind::vendor_ap);
  EXPECT_EQ(lib->path(), SAMPLE_AP_LIBRARY);
  EXPECT_EQ(lib->kind(), HostOpKind::vendor_ap);
}

TEST(HostLibrary, MessagesNameTheLibraryAsTheCallerShowsIt) {
  const std::string shown = "model.tpum: host library libcustomapop.so";
  EXPECT_CONTAINS(error_of([&] { HostOpLibrary::open(kFixtures + "/wrong_level/libcustomapop.so", HostOpKind::vendor_ap, shown); }),
                  shown + ": built for AP API level 99");
  EXPECT_CONTAINS(error_of([&] { HostOpLibrary::open(kFixtures + "/none.so", HostOpKind::vendor_ap, shown); }),
                  shown + ": no such file");
  auto lib = HostOpLibrary::open(kFixtures + "/faulty/libcustomapop.so", HostOpKind::vendor_ap, shown);
  EXPECT_CONTAINS(error_of([&] {
                    run_host_op(*lib, "ap.fail", pack_ap_params(nullptr), {floats({1}, {1})},
                                {spec(Dtype::fp32, {1})}, "layer x");
                  }),
                  "layer x: host op 'ap.fail' (" + shown + "): customcpu_process returned 3");
}

TEST(HostLibrary, AnApLibraryBuiltByTheVendorsScriptsIsRefusedWithTheFix) {
  const std::string message = open_error(kFixtures + "/vendor_built/libcustomapop.so", HostOpKind::vendor_ap);
  EXPECT_CONTAINS(message, "vendor_built/libcustomapop.so: no tpu_sdk_ap_op_type");
  EXPECT_CONTAINS(message, "rebuild_custom_apop_x86");
}

TEST(HostLibrary, AnotherApApiLevelIsRefused) {
  EXPECT_CONTAINS(open_error(kFixtures + "/wrong_level/libcustomapop.so", HostOpKind::vendor_ap),
                  "wrong_level/libcustomapop.so: built for AP API level 99, but this SDK is at level 1");
}

TEST(HostLibrary, MissingEntryPointsAreNamed) {
  EXPECT_CONTAINS(open_error(kFixtures + "/libhost_callback.so", HostOpKind::vendor_ap), "missing symbol bmcpu_init");
  EXPECT_CONTAINS(open_error(SAMPLE_AP_LIBRARY, HostOpKind::callback), "missing symbol Callback");
}

TEST(HostLibrary, ACallbackLibraryOfAnotherApiLevelIsRefused) {
  EXPECT_CONTAINS(open_error(kFixtures + "/libhost_callback_level1.so", HostOpKind::callback),
                  "custom_op_api_level is 1, but this SDK loads callback libraries of API level 2");
}

TEST(HostLibrary, NotAnElfFileIsRefused) {
  const std::string path = ::testing::TempDir() + "/not_a_library.so";
  std::ofstream(path) << "this is text\n";
  EXPECT_CONTAINS(open_error(path, HostOpKind::vendor_ap), path);
  EXPECT_CONTAINS(open_error(path + ".missing", HostOpKind::callback), "no such file");
}

// A shared object for AArch64 with the AP entry points, made with Debian's
// cross binutils (binutils-aarch64-linux-gnu).
TEST(HostLibrary, ALibraryForAnotherArchitectureIsRefused) {
  if (std::system("command -v aarch64-linux-gnu-as >/dev/null 2>&1 && command -v aarch64-linux-gnu-ld >/dev/null "
                  "2>&1") != 0)
    GTEST_SKIP() << "binutils-aarch64-linux-gnu is not installed";
  const std::string base = ::testing::TempDir() + "/aarch64_ap";
  {
    std::ofstream s(base + ".s");
    s << "  .text\n";
    for (const char *sym : {"bmcpu_init", "bmcpu_uninit", "customcpu_process", "tpu_sdk_ap_op_type"})
      s << "  .globl " << sym << "\n  .type " << sym << ", %function\n" << sym << ":\n  ret\n";
  }
  ASSERT_EQ(std::system(("aarch64-linux-gnu-as " + base + ".s -o " + base + ".o && aarch64-linux-gnu-ld -shared -z "
                         "max-page-size=4096 " + base + ".o -o " + base + ".so")
                            .c_str()),
            0);
  const std::string message = open_error(base + ".so", HostOpKind::vendor_ap);
  EXPECT_CONTAINS(message, base + ".so");
  EXPECT_CONTAINS(message, "AArch64");
}

TEST(HostCallback, RunsByNameWithDeclaredOutputs) {
  auto lib = HostOpLibrary::open(kFixtures + "/libhost_callback.so", HostOpKind::callback);
  const HostOpRun scale = run_host_op(*lib, "scale2", {}, {floats({2, 2}, {1, -2, 3.5f, 0})},
                                      {spec(Dtype::fp32, {2, 2})}, "layer cb");
  EXPECT_EQ(scale.outputs[0].shape, (Shape{2, 2}));
  EXPECT_EQ(values_of<float>(scale.outputs[0]), (std::vector<float>{2, -4, 7, 0}));
  const HostOpRun addsub =
      run_host_op(*lib, "addsub", {}, {floats({3}, {1, 2, 3}), floats({3}, {10, 20, 30})},
                  {spec(Dtype::fp32, {3}), spec(Dtype::fp32, {3})}, "layer cb");
  EXPECT_EQ(values_of<float>(addsub.outputs[0]), (std::vector<float>{11, 22, 33}));
  EXPECT_EQ(values_of<float>(addsub.outputs[1]), (std::vector<float>{-9, -18, -27}));
  EXPECT_GT(addsub.host_seconds, 0);
}

std::vector<std::uint8_t> element(int index, const std::vector<std::uint8_t> &bytes) {
  return {bytes.begin() + index * 64, bytes.begin() + (index + 1) * 64};
}

template <typename T>
std::vector<std::uint8_t> element_of(std::vector<T> values) {
  std::vector<std::uint8_t> bytes(64, 0);
  std::memcpy(bytes.data(), values.data(), values.size() * sizeof(T));
  return bytes;
}

TEST(PackApParams, EveryKindInOrderAfterAZeroElement) {
  const nlohmann::json params = nlohmann::json::parse(
      R"([{"axis": 1}, {"scale": 0.5}, {"flag": true}, ["ids", [3, -4, 5]], {"w": [1.5, 2]}])");
  const std::vector<std::uint8_t> bytes = pack_ap_params(params);
  ASSERT_EQ(bytes.size(), 6u * 64);
  EXPECT_EQ(element(0, bytes), std::vector<std::uint8_t>(64, 0));
  EXPECT_EQ(element(1, bytes), element_of<int>({1}));
  EXPECT_EQ(element(2, bytes), element_of<float>({0.5f}));
  EXPECT_EQ(element(3, bytes), element_of<int>({1}));
  EXPECT_EQ(element(4, bytes), element_of<int>({3, -4, 5}));
  EXPECT_EQ(element(5, bytes), element_of<float>({1.5f, 2.0f}));
  EXPECT_EQ(pack_ap_params(nullptr).size(), 64u);
  EXPECT_EQ(pack_ap_params(nlohmann::json{{"K", 10}}).size(), 128u);
}

TEST(PackApParams, WhatTheVendorWouldMisreadIsRefusedByName) {
  EXPECT_CONTAINS(error_of([] { pack_ap_params(nlohmann::json::parse(R"([{"name": "x"}])")); }),
                  "AP op parameter 'name': \"x\" is not an int");
  EXPECT_CONTAINS(error_of([] { pack_ap_params(nlohmann::json::parse(R"([{"big": 4294967296}])")); }),
                  "AP op parameter 'big': 4294967296 does not fit an int");
  EXPECT_CONTAINS(error_of([] { pack_ap_params(nlohmann::json::parse(R"([{"l": [1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17]}])")); }),
                  "a list of 17 values; custom_param_t holds 1 to 16");
  EXPECT_CONTAINS(error_of([] { pack_ap_params(nlohmann::json{{"a", 1}, {"b", 2}}); }), "loses their order");
  EXPECT_CONTAINS(error_of([] { pack_ap_params(nlohmann::json::parse(R"([{"f": 1e300}])")); }), "does not fit a float");
}

TEST(PackApParams, UpperNames) {
  EXPECT_EQ(ap_upper_name("ap.topk"), "TOPK");
  EXPECT_EQ(ap_upper_name("topk"), "TOPK");
  EXPECT_EQ(ap_upper_name("AP.TopK"), "TOPK");
}

}  // namespace
