// bmlib_test: device programs written against bmlib_runtime.h run on the
// emulator unchanged: the compatibility flows of the bmlib spec (§5) on
// both chips, the public struct layouts, and bad handles, sizes, ids and
// addresses refused with their status while the process carries on.
//
// The kernel module is tests/bmlib/fixtures/bmlib_kernels.c, built with
// tpu_kernel_module(); one kernel (by_name_kernel) is linked into this
// program to stand for the kernels a device's firmware carries.
#include <elf.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <openssl/evp.h>

#include <array>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "bmlib_kernels.h"
#include "bmlib_runtime.h"
#include "cmodel_host.h"
#include "support/temp_dir.h"
#include "support/test_support.h"
#include "tpu_kernel.h"

// ---- a kernel in the process-wide table -----------------------------------

namespace {
struct ByNameArgs {
  uint64_t out;
  int32_t value;
  int32_t pad;
};
void by_name_kernel(const void *args) {
  const auto *p = static_cast<const ByNameArgs *>(args);
  *static_cast<int32_t *>(tpu_global_mem_addr(p->out)) = p->value * 3;
}
}  // namespace
TPUKERNEL_FUNC_REGISTER(by_name_kernel);

namespace {

// ---- ABI: the layouts of the spec's tables (§3) ------------------------------

static_assert(sizeof(bm_device_mem_t) == 24 && alignof(bm_device_mem_t) == 8);
static_assert(offsetof(bm_device_mem_t, u.device.device_addr) == 0);
static_assert(offsetof(bm_device_mem_t, u.device.reserved) == 8);
static_assert(offsetof(bm_device_mem_t, u.device.dmabuf_fd) == 12);
static_assert(offsetof(bm_device_mem_t, u.system.system_addr) == 0);
static_assert(offsetof(bm_device_mem_t, flags) == 16);
static_assert(offsetof(bm_device_mem_t, size) == 20);
static_assert(sizeof(bm_mem_flags_t) == 4);
static_assert(sizeof(sg_device_mem_t) == 32 && sizeof(bm_device_mem_u64_t) == 32);
static_assert(sizeof(struct bm_module) == 80 && offsetof(struct bm_module, md5) == 64);
static_assert(sizeof(tpu_launch_param_t) == 24);
static_assert(offsetof(tpu_launch_param_t, func_id) == 4 && offsetof(tpu_launch_param_t, param_data) == 8 &&
              offsetof(tpu_launch_param_t, param_size) == 16);
static_assert(sizeof(struct bm_misc_info) == 80);
static_assert(offsetof(struct bm_misc_info, ddr_ecc_enable) == 4 && offsetof(struct bm_misc_info, ddr0a_size) == 8 &&
              offsetof(struct bm_misc_info, ddr0b_size) == 16 && offsetof(struct bm_misc_info, ddr1_size) == 24 &&
              offsetof(struct bm_misc_info, ddr2_size) == 32 && offsetof(struct bm_misc_info, chipid) == 40 &&
              offsetof(struct bm_misc_info, tpu_core_num) == 44 &&
              offsetof(struct bm_misc_info, chipid_bit_mask) == 48 &&
              offsetof(struct bm_misc_info, driver_version) == 56 && offsetof(struct bm_misc_info, domain_bdf) == 60 &&
              offsetof(struct bm_misc_info, board_version) == 64 && offsetof(struct bm_misc_info, a53_enable) == 68 &&
              offsetof(struct bm_misc_info, dyn_enable) == 72);
static_assert(sizeof(bm_status_t) == sizeof(int) && sizeof(tpu_kernel_function_t) == sizeof(int));
static_assert(BM_SUCCESS == 0 && BM_ERR_DEVNOTREADY == 1 && BM_ERR_FAILURE == 2 && BM_ERR_TIMEOUT == 3 &&
              BM_ERR_PARAM == 4 && BM_ERR_NOMEM == 5 && BM_ERR_DATA == 6 && BM_ERR_BUSY == 7 &&
              BM_ERR_NOFEATURE == 8 && BM_NOT_SUPPORTED == 9);
static_assert(BM_MEM_TYPE_DEVICE == 0 && BM_MEM_TYPE_HOST == 1 && BM_MEM_TYPE_SYSTEM == 2 &&
              BM_MEM_TYPE_INT8_DEVICE == 3 && BM_MEM_TYPE_INVALID == 4);
static_assert(BMLIB_LOG_QUIET == -8 && BMLIB_LOG_PANIC == 0 && BMLIB_LOG_FATAL == 8 && BMLIB_LOG_ERROR == 16 &&
              BMLIB_LOG_WARNING == 24 && BMLIB_LOG_INFO == 32 && BMLIB_LOG_VERBOSE == 40 && BMLIB_LOG_DEBUG == 48 &&
              BMLIB_LOG_TRACE == 56);
static_assert(BM_MEM_ADDR_NULL == 0xfffffffffULL && MD5SUM_LEN == 16 && LIB_MAX_NAME_LEN == 64 &&
              FUNC_MAX_NAME_LEN == 64);
static_assert(BM1682_CHIPID_BIT_MASK == 1 && BM1684_CHIPID_BIT_MASK == 2 && BM1686_CHIPID_BIT_MASK == 4);

TEST(BmlibAbi, DescriptorsHaveTheVendorBitsAndZeroes) {
  bm_device_mem_t mem = bm_mem_from_device(0x123456000ull, 4096);
  EXPECT_EQ(mem.u.device.device_addr, 0x123456000ul);
  EXPECT_EQ(mem.u.device.reserved, 0u);
  EXPECT_EQ(mem.u.device.dmabuf_fd, 0);
  EXPECT_EQ(mem.flags.u.gmem_heapid, 0u);
  EXPECT_EQ(mem.flags.rawflags, 0u);  // DEVICE = 0 in bits 0-2, heap 0 in bits 3-5
  EXPECT_EQ(mem.size, 4096u);
  mem.flags.u.gmem_heapid = 5;
  EXPECT_EQ(mem.flags.rawflags, 5u << 3);
  const bm_device_mem_t null_mem = BM_MEM_NULL;
  EXPECT_EQ(bm_mem_get_type(null_mem), BM_MEM_TYPE_INVALID);
  EXPECT_EQ(null_mem.flags.rawflags, 4u);
  EXPECT_EQ(null_mem.size, 0u);
  EXPECT_EQ(null_mem.u.device.device_addr, 0ul);
  int host_value = 0;
  const bm_system_mem_t sys = bm_mem_from_system(&host_value);
  EXPECT_EQ(bm_mem_get_type(sys), BM_MEM_TYPE_SYSTEM);
  EXPECT_EQ(bm_mem_get_system_addr(sys), &host_value);
  bm_device_mem_t set{};
  set.u.device.dmabuf_fd = 9;
  bm_set_device_mem(&set, 64, 0x100002000ull);
  EXPECT_EQ(bm_mem_get_device_addr(set), 0x100002000ull);
  EXPECT_EQ(bm_mem_get_device_size(set), 64u);
  EXPECT_EQ(set.u.device.dmabuf_fd, 9);  // other fields untouched
  bm_mem_set_device_addr(&set, 0x100003000ull);
  bm_mem_set_device_size(&set, 128);
  EXPECT_EQ(set.u.device.device_addr, 0x100003000ul);
  EXPECT_EQ(set.size, 128u);
}

// ---- log capture ---------------------------------------------------------------

struct LogLine {
  std::string tag;
  int level;
  std::string text;
};
std::mutex g_log_mutex;
std::vector<LogLine> g_log;

void capture_log(const char *tag, int level, const char *fmt, va_list args) {
  va_list copy;
  va_copy(copy, args);
  char text[4096];
  std::vsnprintf(text, sizeof text, fmt, copy);
  va_end(copy);
  std::lock_guard<std::mutex> guard(g_log_mutex);
  g_log.push_back({tag, level, text});
}

// The error lines logged since the last clear, joined.
std::string logged_errors() {
  std::lock_guard<std::mutex> guard(g_log_mutex);
  std::string all;
  for (const LogLine &line : g_log)
    if (line.level == BMLIB_LOG_ERROR) all += "[" + line.tag + "] " + line.text;
  return all;
}
std::string logged_all() {
  std::lock_guard<std::mutex> guard(g_log_mutex);
  std::string all;
  for (const LogLine &line : g_log) all += "[" + line.tag + "] " + line.text;
  return all;
}
void clear_log() {
  std::lock_guard<std::mutex> guard(g_log_mutex);
  g_log.clear();
}

std::string file_bytes(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

std::array<unsigned char, 16> md5(const std::string &bytes) {
  std::array<unsigned char, 16> digest{};
  unsigned int length = 0;
  EVP_Digest(bytes.data(), bytes.size(), digest.data(), &length, EVP_md5(), nullptr);
  return digest;
}

constexpr const char *module_path = BMLIB_TEST_MODULE;

// ---- the device fixture, on both chips ------------------------------------------

class Bmlib : public ::testing::TestWithParam<const char *> {
 protected:
  void SetUp() override {
    setenv("TPU_SDK_CHIP", GetParam(), 1);
    bmlib_log_set_callback(capture_log);
    clear_log();
    ASSERT_EQ(bm_dev_request(&handle, 0), BM_SUCCESS) << logged_errors();
  }
  void TearDown() override {
    if (handle) bm_dev_free(handle);
    EXPECT_STREQ(cmodel_chip(), "") << "the device must close with its last handle";
    bmlib_log_set_callback(nullptr);
    unsetenv("TPU_SDK_CHIP");
  }

  bool multicore() const { return std::string(GetParam()) == "bm1688"; }

  bm_device_mem_t alloc(unsigned int bytes) {
    bm_device_mem_t mem = bm_mem_null();
    EXPECT_EQ(bm_malloc_device_byte(handle, &mem, bytes), BM_SUCCESS) << logged_errors();
    return mem;
  }
  template <typename T>
  bm_device_mem_t upload(const std::vector<T> &values) {
    bm_device_mem_t mem = alloc(unsigned(values.size() * sizeof(T)));
    EXPECT_EQ(bm_memcpy_s2d(handle, mem, const_cast<T *>(values.data())), BM_SUCCESS) << logged_errors();
    return mem;
  }
  template <typename T>
  std::vector<T> download(bm_device_mem_t mem) {
    std::vector<T> values(mem.size / sizeof(T));
    EXPECT_EQ(bm_memcpy_d2s(handle, values.data(), mem), BM_SUCCESS) << logged_errors();
    return values;
  }
  int32_t read_int(bm_device_mem_t mem, unsigned int offset = 0) {
    int32_t v = -12345;
    EXPECT_EQ(bm_memcpy_d2s_partial_offset(handle, &v, mem, 4, offset), BM_SUCCESS) << logged_errors();
    return v;
  }

  tpu_kernel_module_t load_module() {
    tpu_kernel_module_t module = tpu_kernel_load_module_file(handle, module_path);
    EXPECT_NE(module, nullptr) << logged_errors();
    return module;
  }

  bm_handle_t handle = nullptr;
};

INSTANTIATE_TEST_SUITE_P(Chips, Bmlib, ::testing::Values("bm1684x", "bm1688"));

// Flow 1: the D1/D2 program shape.
TEST_P(Bmlib, BasicFlowAddsTwoArrays) {
  tpu_kernel_module_t module = load_module();
  ASSERT_NE(module, nullptr);
  EXPECT_STREQ(module->lib_name, "libbmlib_test_kernels.so");
  const auto file_md5 = md5(file_bytes(module_path));
  EXPECT_EQ(std::memcmp(module->md5, file_md5.data(), 16), 0);
  const tpu_kernel_function_t add = tpu_kernel_get_function(handle, module, "add_kernel");
  ASSERT_GE(add, 0) << logged_errors();

  const int count = 1000;
  std::vector<int32_t> a(count), b(count), expected(count);
  for (int i = 0; i < count; ++i) {
    a[size_t(i)] = i * 3 - 700;
    b[size_t(i)] = 5000 - i * i;
    expected[size_t(i)] = a[size_t(i)] + b[size_t(i)];
  }
  bm_device_mem_t in_a = upload(a), in_b = upload(b), out = alloc(count * 4);
  for (const bm_device_mem_t &mem : {in_a, in_b, out}) {
    EXPECT_EQ(bm_mem_get_device_addr(mem) % 4096, 0u);
    EXPECT_EQ(bm_mem_get_type(mem), BM_MEM_TYPE_DEVICE);
    EXPECT_EQ(bm_mem_get_device_size(mem), count * 4u);
    EXPECT_GE(bm_mem_get_device_addr(mem), 0x100000000ull);
  }
  add_args_t args{bm_mem_get_device_addr(in_a), bm_mem_get_device_addr(in_b), bm_mem_get_device_addr(out), count};
  static_assert(sizeof args % 4 == 0);
  EXPECT_EQ(tpu_kernel_launch(handle, add, &args, sizeof args), BM_SUCCESS) << logged_errors();
  EXPECT_EQ(bm_thread_sync(handle), BM_SUCCESS);
  EXPECT_EQ(download<int32_t>(out), expected);
  for (const bm_device_mem_t &mem : {in_a, in_b, out}) bm_free_device(handle, mem);
  EXPECT_EQ(tpu_kernel_unload_module(handle, module), BM_SUCCESS);
  EXPECT_EQ(logged_errors(), "");
  bm_dev_free(handle);
  handle = nullptr;
}

// Flow 2: async launch whose args are overwritten at once, partial reads.
TEST_P(Bmlib, AsyncLaunchUsesTheArgumentsAtCallTime) {
  tpu_kernel_module_t module = load_module();
  const tpu_kernel_function_t detect = tpu_kernel_get_function(handle, module, "detect_kernel");
  ASSERT_GE(detect, 0);
  bm_device_mem_t count_mem = alloc(4), out_mem = alloc(64 * 7 * 4);
  detect_args_t args{bm_mem_get_device_addr(count_mem), bm_mem_get_device_addr(out_mem), 5, 1.5f};
  ASSERT_EQ(tpu_kernel_launch_async(handle, detect, &args, sizeof args), BM_SUCCESS) << logged_errors();
  args.count = 60;  // the program reuses its struct right away
  args.base = -100.0f;
  EXPECT_EQ(bm_thread_sync(handle), BM_SUCCESS);
  int n = 0;
  ASSERT_EQ(bm_memcpy_d2s_partial_offset(handle, &n, count_mem, 4, 0), BM_SUCCESS);
  ASSERT_EQ(n, 5);
  std::vector<float> boxes(size_t(n) * 7);
  ASSERT_EQ(bm_memcpy_d2s_partial_offset(handle, boxes.data(), out_mem, unsigned(n) * 7 * 4, 0), BM_SUCCESS);
  for (int i = 0; i < n * 7; ++i) EXPECT_EQ(boxes[size_t(i)], 1.5f + float(i)) << i;

  // Another thread's failed launch is not this thread's business.
  const tpu_kernel_function_t fault = tpu_kernel_get_function(handle, module, "fault_kernel");
  fault_args_t fault_args{bm_mem_get_device_addr(out_mem)};
  bm_status_t other_launch = BM_ERR_DATA, other_sync = BM_ERR_DATA;
  std::thread other([&] {
    other_launch = tpu_kernel_launch_async(handle, fault, &fault_args, sizeof fault_args);
    other_sync = bm_thread_sync(handle);
  });
  ASSERT_EQ(tpu_kernel_launch_async(handle, detect, &args, sizeof args), BM_SUCCESS);
  other.join();
  EXPECT_EQ(other_launch, BM_SUCCESS);
  EXPECT_EQ(other_sync, BM_ERR_FAILURE);
  EXPECT_EQ(bm_thread_sync(handle), BM_SUCCESS);
  EXPECT_EQ(read_int(count_mem), 60);
}

// Flow 3: a module embedded in the program, looked up before every launch.
TEST_P(Bmlib, EmbeddedModuleKeepsOneIdAcrossLaunches) {
  const std::string bytes = file_bytes(module_path);
  ASSERT_GT(bytes.size(), 1000u);
  tpu_kernel_module_t module = tpu_kernel_load_module(handle, bytes.data(), bytes.size());
  ASSERT_NE(module, nullptr) << logged_errors();
  const auto digest = md5(bytes);
  std::string expected_name;
  for (int i : {0, 1, 2, 3, 4, 5, 10, 11, 12, 13, 14, 15}) {
    char hex[4];
    std::snprintf(hex, sizeof hex, "%x", digest[size_t(i)]);
    expected_name += hex;
  }
  EXPECT_EQ(std::string(module->lib_name), expected_name + ".so");
  EXPECT_EQ(std::memcmp(module->md5, digest.data(), 16), 0);

  bm_device_mem_t out = alloc(4);
  count_args_t args{bm_mem_get_device_addr(out)};
  const tpu_kernel_function_t first = tpu_kernel_get_function(handle, module, "count_kernel");
  ASSERT_GE(first, 0) << logged_errors();
  for (int i = 1; i <= 100; ++i) {
    const tpu_kernel_function_t id = tpu_kernel_get_function(handle, module, "count_kernel");
    ASSERT_EQ(id, first);
    ASSERT_EQ(tpu_kernel_launch(handle, id, &args, sizeof args), BM_SUCCESS) << logged_errors();
    ASSERT_EQ(read_int(out), i);  // a copy loaded from memory counts on its own
  }
  EXPECT_EQ(tpu_kernel_free_module(handle, module), BM_SUCCESS);
  bm_free_device(handle, out);
  EXPECT_EQ(logged_errors(), "");
}

// Flow 4: bmcv's load-by-key, get, launch, free per call.
TEST_P(Bmlib, KeyedLoadsShareOneLoadedLibrary) {
  bm_device_mem_t out = alloc(4);
  count_args_t args{bm_mem_get_device_addr(out)};
  const char key[] = "bmcv-kernel-module-key";
  for (int i = 1; i <= 50; ++i) {
    tpu_kernel_module_t module = tpu_kernel_load_module_file_key(handle, module_path, key, sizeof key);
    ASSERT_NE(module, nullptr) << logged_errors();
    const auto key_md5 = md5(std::string(key, sizeof key));
    ASSERT_EQ(std::memcmp(module->md5, key_md5.data(), 16), 0);
    const tpu_kernel_function_t id = tpu_kernel_get_function(handle, module, "count_kernel");
    ASSERT_GE(id, 0);
    ASSERT_EQ(tpu_kernel_launch(handle, id, &args, sizeof args), BM_SUCCESS) << logged_errors();
    // The kernel's static counter survives: the library stayed loaded.
    ASSERT_EQ(read_int(out), i);
    ASSERT_EQ(tpu_kernel_free_module(handle, module), BM_SUCCESS);
  }
}

// Flow 5: copies and fills, including sub-ranges of a buffer.
TEST_P(Bmlib, CopiesAndFillsMoveTheRightBytes) {
  bm_device_mem_t mem = alloc(8192);
  ASSERT_EQ(bm_memset_device(handle, 0x11223344, mem), BM_SUCCESS);
  for (uint32_t word : download<uint32_t>(mem)) ASSERT_EQ(word, 0x11223344u);

  unsigned char byte = 0xab;
  ASSERT_EQ(bm_memset_device_ext(handle, &byte, 1, mem), BM_SUCCESS);
  for (uint8_t v : download<uint8_t>(mem)) ASSERT_EQ(v, 0xab);
  const uint16_t half = 0xbeef;
  ASSERT_EQ(bm_memset_device_ext(handle, const_cast<uint16_t *>(&half), 2, mem), BM_SUCCESS);
  for (uint16_t v : download<uint16_t>(mem)) ASSERT_EQ(v, 0xbeef);

  std::vector<uint8_t> middle(100);
  for (size_t i = 0; i < middle.size(); ++i) middle[i] = uint8_t(i * 7 + 1);
  ASSERT_EQ(bm_memcpy_s2d_partial_offset(handle, mem, middle.data(), 100, 3000), BM_SUCCESS);
  std::vector<uint8_t> head(3100);
  ASSERT_EQ(bm_memcpy_d2s_partial(handle, head.data(), mem, 3100), BM_SUCCESS);
  for (size_t i = 0; i < 3000; ++i) ASSERT_EQ(head[i], i % 2 ? 0xbe : 0xef) << i;
  for (size_t i = 0; i < 100; ++i) ASSERT_EQ(head[3000 + i], middle[i]) << i;

  // d2d: len in words, offsets in bytes.
  std::vector<int32_t> src_values = {10, 20, 30, 40, 50, 60};
  bm_device_mem_t src = upload(src_values);
  bm_device_mem_t dst = upload(std::vector<int32_t>(6, -1));
  ASSERT_EQ(bm_memcpy_d2d(handle, dst, 4, src, 8, 3), BM_SUCCESS);
  EXPECT_EQ(download<int32_t>(dst), (std::vector<int32_t>{-1, 30, 40, 50, -1, -1}));
  ASSERT_EQ(bm_memcpy_d2d_byte(handle, dst, 1, src, 0, 5), BM_SUCCESS);
  std::vector<uint8_t> expected_bytes(24);
  std::memcpy(expected_bytes.data(), std::vector<int32_t>{-1, 30, 40, 50, -1, -1}.data(), 24);
  std::memcpy(expected_bytes.data() + 1, src_values.data(), 5);
  EXPECT_EQ(download<uint8_t>(dst), expected_bytes);

  // A sub-range descriptor over an allocation works with every copy.
  bm_device_mem_t sub = bm_mem_from_device(bm_mem_get_device_addr(mem) + 4096, 64);
  ASSERT_EQ(bm_memset_device(handle, 0x01020304, sub), BM_SUCCESS);
  std::vector<int32_t> sub_values(16);
  for (int i = 0; i < 16; ++i) sub_values[size_t(i)] = i * i;
  ASSERT_EQ(bm_memcpy_s2d(handle, sub, sub_values.data()), BM_SUCCESS);
  ASSERT_EQ(bm_memcpy_d2d(handle, dst, 0, sub, 4, 2), BM_SUCCESS);
  EXPECT_EQ(download<int32_t>(dst)[0], 1);
  EXPECT_EQ(download<int32_t>(dst)[1], 4);
  EXPECT_EQ(download<int32_t>(sub), sub_values);
  std::vector<uint32_t> whole(2048);
  ASSERT_EQ(bm_memcpy_d2s(handle, whole.data(), mem), BM_SUCCESS);
  EXPECT_EQ(whole[1023], 0xbeefbeefu);  // just before the sub-range
  EXPECT_EQ(whole[1024], 0u);           // sub_values[0]
  EXPECT_EQ(whole[1024 + 16], 0xbeefbeefu);

  // Stride gather: every second int16.
  std::vector<int16_t> strided = {1, -1, 2, -2, 3, -3, 4, -4};
  bm_device_mem_t strided_mem = upload(strided);
  bm_device_mem_t gathered = upload(std::vector<int16_t>(4, 0));
  ASSERT_EQ(bm_memcpy_d2d_stride(handle, gathered, 1, strided_mem, 2, 4, 2), BM_SUCCESS);
  EXPECT_EQ(download<int16_t>(gathered), (std::vector<int16_t>{1, 2, 3, 4}));
  for (const bm_device_mem_t &m : {mem, src, dst, strided_mem, gathered}) bm_free_device(handle, m);
  EXPECT_EQ(logged_errors(), "");
}

// Flow 6: argument and handle errors, each refused with its status and a
// message that says what was wrong.
TEST_P(Bmlib, ArgumentAndHandleErrorsAreRefused) {
  tpu_kernel_module_t module = load_module();
  const tpu_kernel_function_t seven = tpu_kernel_get_function(handle, module, "seven_kernel");
  ASSERT_GE(seven, 0);
  bm_device_mem_t out = alloc(64);
  ASSERT_EQ(bm_memset_device(handle, 0, out), BM_SUCCESS);
  struct {
    seven_args_t args;
    char extra[8];
  } odd{{bm_mem_get_device_addr(out)}, {}};

  clear_log();
  EXPECT_EQ(tpu_kernel_launch(handle, seven, &odd, 6), BM_ERR_PARAM);
  EXPECT_NE(logged_errors().find("argument size 6 is not a multiple of 4"), std::string::npos) << logged_errors();
  EXPECT_EQ(read_int(out), 0) << "the kernel must not have run";
  EXPECT_EQ(tpu_kernel_launch(handle, seven, nullptr, 8), BM_ERR_PARAM);

  clear_log();
  EXPECT_EQ(tpu_kernel_get_function(handle, module, "no_such_kernel"), -1);
  EXPECT_NE(logged_errors().find("no kernel \"no_such_kernel\""), std::string::npos) << logged_errors();
  EXPECT_NE(logged_errors().find("add_kernel"), std::string::npos) << "the message lists the module's kernels";
  EXPECT_EQ(tpu_kernel_get_function(handle, nullptr, "add_kernel"), -1);
  EXPECT_EQ(tpu_kernel_get_function(handle, module, std::string(64, 'k').c_str()), -1);
  EXPECT_EQ(tpu_kernel_get_function(handle, module, nullptr), -1);

  clear_log();
  EXPECT_EQ(tpu_kernel_launch(handle, 12345, &odd.args, sizeof odd.args), BM_ERR_PARAM);
  EXPECT_NE(logged_errors().find("function id 12345 was not returned"), std::string::npos) << logged_errors();
  EXPECT_EQ(tpu_kernel_launch(handle, -1, &odd.args, sizeof odd.args), BM_ERR_PARAM);

  clear_log();
  EXPECT_EQ(tpu_kernel_load_module_file(handle, "/nonexistent/libnothing.so"), nullptr);
  EXPECT_NE(logged_errors().find("cannot read module file /nonexistent/libnothing.so"), std::string::npos);
  test::TempDir dir("bmlib_test");
  const std::string long_name = dir.file(std::string(61, 'm') + ".so");  // 64-character basename
  std::ofstream(long_name, std::ios::binary) << file_bytes(module_path);
  clear_log();
  EXPECT_EQ(tpu_kernel_load_module_file(handle, long_name.c_str()), nullptr);
  EXPECT_NE(logged_errors().find("longer than 63 characters"), std::string::npos) << logged_errors();
  const std::string not_a_library = dir.file("libbroken.so");
  std::vector<char> fake_elf(128, 0);
  std::memcpy(fake_elf.data(), "\177ELF\2\1\1", 7);
  fake_elf[18] = 62;  // EM_X86_64: an ELF for this machine that dlopen rejects
  std::ofstream(not_a_library, std::ios::binary).write(fake_elf.data(), std::streamsize(fake_elf.size()));
  clear_log();
  EXPECT_EQ(tpu_kernel_load_module_file(handle, not_a_library.c_str()), nullptr);
  EXPECT_NE(logged_errors().find("cannot load kernel module"), std::string::npos) << logged_errors();

  EXPECT_EQ(bm_dev_request(nullptr, 0), BM_ERR_DEVNOTREADY);
  bm_handle_t other = nullptr;
  EXPECT_EQ(bm_dev_request(&other, 1), BM_ERR_FAILURE);
  EXPECT_EQ(other, nullptr);
  EXPECT_EQ(bm_malloc_device_byte(handle, nullptr, 64), BM_ERR_DEVNOTREADY);
  bm_device_mem_t mem = bm_mem_null();
  EXPECT_EQ(bm_malloc_device_byte_heap_mask(handle, &mem, 0, 64), BM_ERR_DEVNOTREADY);
  EXPECT_EQ(bm_malloc_device_byte(handle, &mem, 0), BM_ERR_PARAM);
  EXPECT_EQ(bm_malloc_neuron_device(handle, &mem, 1024, 1024, 1024, 1), BM_NOT_SUPPORTED);

  std::vector<uint8_t> host(80, 0x5a);
  clear_log();
  EXPECT_EQ(bm_memcpy_d2s_partial_offset(handle, host.data(), out, 16, 56), BM_ERR_PARAM);
  EXPECT_NE(logged_errors().find("16 bytes at offset 56 exceed the 64-byte device buffer"), std::string::npos);
  EXPECT_EQ(host, std::vector<uint8_t>(80, 0x5a)) << "the host buffer is untouched";
  EXPECT_EQ(bm_memcpy_s2d_partial_offset(handle, out, host.data(), 65, 0), BM_ERR_PARAM);
  // Outside global memory and L2 SRAM.
  EXPECT_EQ(bm_memcpy_s2d(handle, bm_mem_from_device(0x80000000ull, 16), host.data()), BM_ERR_PARAM);
  EXPECT_EQ(bm_memcpy_d2s(handle, host.data(), bm_mem_from_device(0x900000000ull, 16)), BM_ERR_PARAM);
  EXPECT_EQ(host, std::vector<uint8_t>(80, 0x5a));
  EXPECT_EQ(bm_memset_device(handle, 1, bm_mem_from_device(bm_mem_get_device_addr(out), 6)), BM_ERR_PARAM);
  int pattern = 7;
  EXPECT_EQ(bm_memset_device_ext(handle, &pattern, 5, out), BM_ERR_PARAM);
  EXPECT_EQ(bm_memset_device_ext(handle, nullptr, 4, out), BM_ERR_PARAM);
  EXPECT_EQ(bm_memcpy_d2d_stride(handle, out, 2, out, 1, 4, 4), BM_ERR_PARAM);

  EXPECT_EQ(tpu_kernel_free_module(handle, nullptr), BM_ERR_FAILURE);
  const int cores[] = {0, 1};
  EXPECT_EQ(tpu_kernel_launch_sync_multi_cores(handle, "seven_kernel", &odd.args, sizeof odd.args, cores, 2),
            BM_ERR_FAILURE);

  clear_log();
  bm_free_device(handle, out);
  EXPECT_EQ(logged_errors(), "");
  bm_free_device(handle, out);
  EXPECT_NE(logged_errors().find("is not an allocated device buffer"), std::string::npos) << logged_errors();
  bm_free_device(handle, bm_mem_from_device(0x100000010ull, 4));  // never allocated
  EXPECT_EQ(tpu_kernel_unload_module(handle, module), BM_SUCCESS);
  clear_log();
  EXPECT_EQ(tpu_kernel_unload_module(handle, module), BM_ERR_FAILURE);  // already freed
  EXPECT_NE(logged_errors().find("is not a loaded module"), std::string::npos) << logged_errors();
  // The id died with the module.
  EXPECT_EQ(tpu_kernel_launch(handle, seven, &odd.args, sizeof odd.args), BM_ERR_PARAM);
}

TEST_P(Bmlib, NullAndFreedHandlesAreRefused) {
  bm_handle_t second = nullptr;
  ASSERT_EQ(bm_dev_request(&second, 0), BM_SUCCESS);
  bm_dev_free(second);  // `second` now dangles; the handle registry knows
  clear_log();
  bm_device_mem_t mem = bm_mem_null();
  EXPECT_EQ(bm_malloc_device_byte(second, &mem, 64), BM_ERR_DEVNOTREADY);
  EXPECT_NE(logged_errors().find("is not an open device handle"), std::string::npos) << logged_errors();
  EXPECT_EQ(bm_malloc_device_byte(nullptr, &mem, 64), BM_ERR_DEVNOTREADY);
  EXPECT_EQ(bm_memcpy_s2d(nullptr, mem, &mem), BM_ERR_DEVNOTREADY);
  EXPECT_EQ(bm_thread_sync(second), BM_ERR_DEVNOTREADY);
  EXPECT_EQ(tpu_kernel_load_module_file(nullptr, module_path), nullptr);
  EXPECT_EQ(tpu_kernel_launch(nullptr, 1, nullptr, 0), BM_ERR_DEVNOTREADY);
  EXPECT_EQ(bm_get_devid(nullptr), -1);
  EXPECT_EQ(bm_get_devid(second), -1);
  unsigned int chipid = 0;
  EXPECT_EQ(bm_get_chipid(nullptr, &chipid), BM_ERR_DEVNOTREADY);
  clear_log();
  bm_dev_free(second);  // a second free is logged, nothing else
  EXPECT_NE(logged_errors().find("bm_dev_free"), std::string::npos);
  bm_dev_free(nullptr);
  EXPECT_STREQ(cmodel_chip(), GetParam()) << "the fixture's handle keeps the device open";
}

// The device reopened with TPU_SDK_GLOBAL_MEM_SIZE=`size` (nullptr: unset).
// The fixture's handle is replaced; TearDown frees the new one.
bm_status_t reopen_with_global_size(bm_handle_t &handle, const char *size) {
  if (handle) bm_dev_free(handle);
  handle = nullptr;
  if (size)
    setenv("TPU_SDK_GLOBAL_MEM_SIZE", size, 1);
  else
    unsetenv("TPU_SDK_GLOBAL_MEM_SIZE");
  const bm_status_t status = bm_dev_request(&handle, 0);
  unsetenv("TPU_SDK_GLOBAL_MEM_SIZE");
  return status;
}

constexpr unsigned int one_gib = 1u << 30;

TEST_P(Bmlib, AllocationFailureGivesNoMemAndTheNullAddress) {
  ASSERT_EQ(reopen_with_global_size(handle, "4G"), BM_SUCCESS) << logged_errors();
  bm_device_mem_t huge = bm_mem_null();
  // 3 GiB of the 4 GiB global memory, then 1.25 GiB more.
  EXPECT_EQ(bm_malloc_device_byte(handle, &huge, 0xc0000000u), BM_SUCCESS) << logged_errors();
  bm_device_mem_t more = bm_mem_null();
  clear_log();
  EXPECT_EQ(bm_malloc_device_byte(handle, &more, 0x50000000u), BM_ERR_NOMEM);
  EXPECT_EQ(bm_mem_get_device_addr(more), BM_MEM_ADDR_NULL);
  EXPECT_NE(logged_errors().find("out of device memory"), std::string::npos) << logged_errors();
  bm_free_device(handle, huge);
  EXPECT_EQ(bm_malloc_device_byte(handle, &more, 0x50000000u), BM_SUCCESS);
  bm_free_device(handle, more);
}

// Boards carry 12 GiB (bm1684x) and 8 GiB (bm1688, as chosen in
// docs/host-programs.md) by default. A buffer costs its size only: as many
// 1 GiB buffers fit as the memory has GiB, each 4 KiB aligned, and their
// first and last bytes hold what is written there (reserved lazily, so the
// untouched gigabytes cost no host memory).
TEST_P(Bmlib, DefaultGlobalMemoryHoldsBoardSizedBuffers) {
  const uint64_t expected_gib = multicore() ? 8 : 12;
  EXPECT_EQ(cmodel_global_size(), expected_gib << 30);
  std::vector<bm_device_mem_t> buffers;
  for (;;) {
    bm_device_mem_t mem = bm_mem_null();
    if (bm_malloc_device_byte(handle, &mem, one_gib) != BM_SUCCESS) break;
    buffers.push_back(mem);
    ASSERT_LE(buffers.size(), expected_gib) << "more 1 GiB buffers than the memory has GiB";
  }
  EXPECT_EQ(buffers.size(), expected_gib) << logged_errors();
  for (size_t i = 0; i < buffers.size() && i < 4; ++i) {
    EXPECT_EQ(bm_mem_get_device_addr(buffers[i]) % 4096, 0u);
    const uint32_t head = 0x11110000u + uint32_t(i), tail = 0x22220000u + uint32_t(i);
    ASSERT_EQ(bm_memcpy_s2d_partial_offset(handle, buffers[i], const_cast<uint32_t *>(&head), 4, 0), BM_SUCCESS)
        << logged_errors();
    ASSERT_EQ(bm_memcpy_s2d_partial_offset(handle, buffers[i], const_cast<uint32_t *>(&tail), 4, one_gib - 4),
              BM_SUCCESS)
        << logged_errors();
  }
  for (size_t i = 0; i < buffers.size() && i < 4; ++i) {
    EXPECT_EQ(uint32_t(read_int(buffers[i], 0)), 0x11110000u + uint32_t(i));
    EXPECT_EQ(uint32_t(read_int(buffers[i], one_gib - 4)), 0x22220000u + uint32_t(i));
  }
  for (const bm_device_mem_t &mem : buffers) bm_free_device(handle, mem);
}

// TPU_SDK_GLOBAL_MEM_SIZE sets the size at bm_dev_request: four 1 GiB
// buffers on a 12 GiB bm1688; 4 GiB + 4 KiB holds four 1 GiB buffers and a
// 4 KiB one, not a fifth of 4 KiB + 1 byte.
TEST_P(Bmlib, GlobalMemorySizeFromTheEnvironment) {
  ASSERT_EQ(reopen_with_global_size(handle, "12G"), BM_SUCCESS) << logged_errors();
  EXPECT_EQ(cmodel_global_size(), 12ull << 30);
  ASSERT_EQ(reopen_with_global_size(handle, "4194308K"), BM_SUCCESS) << logged_errors();
  EXPECT_EQ(cmodel_global_size(), (4ull << 30) + 4096);
  std::vector<bm_device_mem_t> buffers(5, bm_mem_null());
  for (int i = 0; i < 4; ++i) EXPECT_EQ(bm_malloc_device_byte(handle, &buffers[i], one_gib), BM_SUCCESS);
  bm_device_mem_t too_big = bm_mem_null();
  EXPECT_EQ(bm_malloc_device_byte(handle, &too_big, 4097), BM_ERR_NOMEM);
  EXPECT_EQ(bm_malloc_device_byte(handle, &buffers[4], 4096), BM_SUCCESS) << logged_errors();
  EXPECT_EQ(bm_mem_get_device_addr(buffers[4]), bm_mem_get_device_addr(buffers[0]) + (4ull << 30));
  for (const bm_device_mem_t &mem : buffers) bm_free_device(handle, mem);
}

TEST_P(Bmlib, MalformedGlobalMemorySizeIsAClearError) {
  for (const char *bad : {"12X", "0", "-4G", "33G", "1000", "G"}) {
    clear_log();
    EXPECT_EQ(reopen_with_global_size(handle, bad), BM_ERR_FAILURE) << bad;
    EXPECT_EQ(handle, nullptr);
    EXPECT_NE(logged_errors().find(std::string("TPU_SDK_GLOBAL_MEM_SIZE=\"") + bad + "\" is not a size of global memory"),
              std::string::npos)
        << logged_errors();
  }
  ASSERT_EQ(reopen_with_global_size(handle, nullptr), BM_SUCCESS) << logged_errors();
}

// The done-when of issue 36: four 1 GiB buffers on a 12 GiB memory, set
// through the SDK's bmlib-side setter while nothing is allocated; refused
// (BM_ERR_BUSY) once a buffer is; for the next device when none is open.
TEST_P(Bmlib, MemorySizeSetterBeforeTheFirstAllocation) {
  ASSERT_EQ(bm_emu_set_global_mem_size(12ull << 30), BM_SUCCESS) << logged_errors();
  EXPECT_EQ(cmodel_global_size(), 12ull << 30);
  std::vector<bm_device_mem_t> buffers(4, bm_mem_null());
  for (bm_device_mem_t &mem : buffers) ASSERT_EQ(bm_malloc_device_byte(handle, &mem, one_gib), BM_SUCCESS);
  clear_log();
  EXPECT_EQ(bm_emu_set_global_mem_size(16ull << 30), BM_ERR_BUSY);
  EXPECT_NE(logged_errors().find("global memory is in use (4 buffers hold"), std::string::npos) << logged_errors();
  EXPECT_EQ(bm_emu_set_global_mem_size(1000), BM_ERR_PARAM);
  EXPECT_EQ(cmodel_global_size(), 12ull << 30);
  for (const bm_device_mem_t &mem : buffers) bm_free_device(handle, mem);
  bm_dev_free(handle);
  handle = nullptr;
  ASSERT_EQ(bm_emu_set_global_mem_size(4ull << 30), BM_SUCCESS) << logged_errors();
  ASSERT_EQ(bm_dev_request(&handle, 0), BM_SUCCESS) << logged_errors();
  EXPECT_EQ(cmodel_global_size(), 4ull << 30);
  ASSERT_EQ(bm_emu_set_global_mem_size(0), BM_SUCCESS) << logged_errors();
  EXPECT_EQ(cmodel_global_size(), (multicore() ? 8ull : 12ull) << 30);
}

// Strict by default: a copy outside the buffers fails, the log naming the
// buffers below and above; device-like (API or environment), any range of
// device memory takes host copies, and the end of memory still ends it.
TEST_P(Bmlib, UnallocatedCopiesStrictOrDeviceLike) {
  bm_device_mem_t below = alloc(100), above = alloc(8192);
  const uint64_t gap = bm_mem_get_device_addr(below) + 1024;
  ASSERT_LT(gap + 64, bm_mem_get_device_addr(above));
  std::vector<uint32_t> words(16), back(16);
  for (size_t i = 0; i < words.size(); ++i) words[i] = 0x5000 + uint32_t(i);
  clear_log();
  EXPECT_EQ(bm_memcpy_s2d(handle, bm_mem_from_device(gap, 64), words.data()), BM_ERR_PARAM);
  const std::string errors = logged_errors();
  EXPECT_NE(errors.find(fmt::format("the buffer below is [{:#x}, {:#x})", bm_mem_get_device_addr(below),
                                    bm_mem_get_device_addr(below) + 100)),
            std::string::npos)
      << errors;
  EXPECT_NE(errors.find(fmt::format("the buffer above is [{:#x}, {:#x})", bm_mem_get_device_addr(above),
                                    bm_mem_get_device_addr(above) + 8192)),
            std::string::npos)
      << errors;
  EXPECT_NE(errors.find("TPU_SDK_UNALLOCATED_COPIES=allow"), std::string::npos) << errors;

  ASSERT_EQ(bm_emu_set_unallocated_copies(1), BM_SUCCESS) << logged_errors();
  ASSERT_EQ(bm_memcpy_s2d(handle, bm_mem_from_device(gap, 64), words.data()), BM_SUCCESS) << logged_errors();
  ASSERT_EQ(bm_memcpy_d2s(handle, back.data(), bm_mem_from_device(gap, 64)), BM_SUCCESS) << logged_errors();
  EXPECT_EQ(back, words);
  const uint64_t end = 0x100000000ull + cmodel_global_size();
  EXPECT_EQ(bm_memcpy_s2d(handle, bm_mem_from_device(end - 32, 64), words.data()), BM_ERR_PARAM);
  ASSERT_EQ(bm_emu_set_unallocated_copies(-1), BM_SUCCESS);
  EXPECT_EQ(bm_memcpy_d2s(handle, back.data(), bm_mem_from_device(gap, 64)), BM_ERR_PARAM);
  bm_free_device(handle, below);
  bm_free_device(handle, above);

  bm_dev_free(handle);
  setenv("TPU_SDK_UNALLOCATED_COPIES", "allow", 1);
  const bm_status_t reopened = bm_dev_request(&handle, 0);
  unsetenv("TPU_SDK_UNALLOCATED_COPIES");
  ASSERT_EQ(reopened, BM_SUCCESS) << logged_errors();
  EXPECT_EQ(bm_memcpy_s2d(handle, bm_mem_from_device(gap, 64), words.data()), BM_SUCCESS) << logged_errors();
}

// bm_memset_device / bm_memcpy_d2d_byte run inside the emulator: a fill
// with a 3-byte pattern and overlapping moves in both directions over a
// multi-MiB range, checked against the same on a host copy.
TEST_P(Bmlib, FillsAndDeviceCopiesOverLargeRanges) {
  const unsigned int bytes = (5u << 20) + 1;  // a whole number of 3-byte patterns
  bm_device_mem_t mem = alloc(bytes);
  std::vector<uint8_t> model(bytes);
  const uint8_t pattern[3] = {0x10, 0x20, 0x30};
  ASSERT_EQ(bm_memset_device_ext(handle, const_cast<uint8_t *>(pattern), 3, mem), BM_SUCCESS) << logged_errors();
  for (size_t i = 0; i < bytes; ++i) model[i] = pattern[i % 3];
  EXPECT_EQ(download<uint8_t>(mem), model);
  for (size_t i = 0; i < bytes; i += 4099) model[i] = uint8_t(i >> 12);
  ASSERT_EQ(bm_memcpy_s2d(handle, mem, model.data()), BM_SUCCESS);
  ASSERT_EQ(bm_memcpy_d2d_byte(handle, mem, 12345, mem, 3, 4u << 20), BM_SUCCESS) << logged_errors();
  std::memmove(model.data() + 12345, model.data() + 3, 4u << 20);
  ASSERT_EQ(bm_memcpy_d2d_byte(handle, mem, 1, mem, 700001, 4u << 20), BM_SUCCESS) << logged_errors();
  std::memmove(model.data() + 1, model.data() + 700001, 4u << 20);
  EXPECT_EQ(download<uint8_t>(mem), model);
  ASSERT_EQ(bm_memset_device(handle, int(0x89abcdef), bm_mem_from_device(bm_mem_get_device_addr(mem) + 4, 8)),
            BM_SUCCESS);
  EXPECT_EQ(uint32_t(read_int(mem, 4)), 0x89abcdefu);
  EXPECT_EQ(uint32_t(read_int(mem, 8)), 0x89abcdefu);
  bm_free_device(handle, mem);
}

// The *_u64 family: a buffer larger than a 32-bit size, copies at offsets
// past 4 GiB, device copies and mapping; bm_mem_get_size for any type.
TEST_P(Bmlib, SixtyFourBitDescriptors) {
  const unsigned long long big = (5ull << 30) + 4096;
  bm_device_mem_u64_t mem;
  ASSERT_EQ(bm_malloc_device_byte_u64(handle, &mem, big), BM_SUCCESS) << logged_errors();
  EXPECT_EQ(bm_mem_get_device_size_u64(mem), big);
  EXPECT_EQ(bm_mem_get_device_addr_u64(mem) % 4096, 0u);
  EXPECT_EQ(cmodel_global_allocated(), big);
  const uint64_t far = (4ull << 30) + 100;
  const uint64_t value = 0x0123456789abcdefull;
  ASSERT_EQ(bm_memcpy_s2d_partial_offset_u64(handle, mem, const_cast<uint64_t *>(&value), 8, far), BM_SUCCESS)
      << logged_errors();
  ASSERT_EQ(bm_memcpy_d2d_byte_u64(handle, mem, far + 1000, mem, far, 8), BM_SUCCESS) << logged_errors();
  uint64_t back = 0;
  ASSERT_EQ(bm_memcpy_d2s_partial_offset_u64(handle, &back, mem, 8, far + 1000), BM_SUCCESS) << logged_errors();
  EXPECT_EQ(back, value);
  EXPECT_EQ(bm_memcpy_d2s_partial_offset_u64(handle, &back, mem, 8, big - 4), BM_ERR_PARAM);
  unsigned long long mapped = 0;
  ASSERT_EQ(bm_mem_mmap_device_mem_u64(handle, &mem, &mapped), BM_SUCCESS) << logged_errors();
  uint64_t through_map = 0;
  std::memcpy(&through_map, reinterpret_cast<const char *>(mapped) + far, 8);
  EXPECT_EQ(through_map, value);
  bm_device_mem_u64_t described = bm_mem_from_device_u64(0x100002000ull, big);
  bm_set_device_mem_u64(&described, 64, 0x100003000ull);
  bm_mem_set_device_size_u64(&described, 128);
  bm_mem_set_device_addr_u64(&described, 0x100004000ull);
  EXPECT_EQ(described.size, 128u);
  EXPECT_EQ(described.u.device.device_addr, 0x100004000ul);
  EXPECT_EQ(bm_mem_get_size(bm_mem_from_system(&back)), 0u);
  EXPECT_EQ(bm_mem_get_size(bm_mem_from_device(0x100000000ull, 77)), 77u);
  bm_free_device_u64(handle, mem);
  EXPECT_EQ(cmodel_global_allocated(), 0u);
  clear_log();
  bm_free_device_u64(handle, mem);
  EXPECT_NE(logged_errors().find("is not an allocated device buffer"), std::string::npos);
}

TEST_P(Bmlib, AllocationByAddressAndChipToChipCopies) {
  unsigned long long addr = 0;
  ASSERT_EQ(bm_malloc_device_mem(handle, &addr, 0, 10000), BM_SUCCESS) << logged_errors();
  EXPECT_EQ(addr % 4096, 0u);
  EXPECT_EQ(cmodel_global_allocated(), 10000u);
  unsigned long long masked = 0;
  ASSERT_EQ(bm_malloc_device_mem_mask(handle, &masked, 1, 300), BM_SUCCESS) << logged_errors();
  EXPECT_EQ(cmodel_global_allocated(), 10300u);
  EXPECT_EQ(bm_malloc_device_mem_mask(handle, &masked, 0, 300), BM_ERR_DEVNOTREADY);
  EXPECT_EQ(bm_malloc_device_mem(handle, nullptr, 0, 300), BM_ERR_DEVNOTREADY);

  bm_handle_t other = nullptr;
  ASSERT_EQ(bm_dev_request(&other, 0), BM_SUCCESS);
  const std::vector<int32_t> values = {3, 1, 4, 1, 5, 9, 2, 6};
  bm_device_mem_t src = upload(values), dst = alloc(32), small = alloc(16);
  ASSERT_EQ(bm_memcpy_c2c(handle, other, src, dst, false), BM_SUCCESS) << logged_errors();
  EXPECT_EQ(download<int32_t>(dst), values);
  EXPECT_EQ(bm_memcpy_c2c(handle, other, src, small, true), BM_ERR_PARAM);
  EXPECT_EQ(bm_memcpy_c2c(handle, nullptr, src, dst, false), BM_ERR_DEVNOTREADY);
  bm_dev_free(other);

  char sn[18];
  std::memset(sn, 'x', sizeof sn);
  ASSERT_EQ(bm_get_sn(handle, sn), BM_SUCCESS);
  EXPECT_STREQ(sn, multicore() ? "EMU-BM1688" : "EMU-BM1684X");
  EXPECT_EQ(bm_get_sn(handle, nullptr), BM_ERR_PARAM);
  for (const bm_device_mem_t &mem : {src, dst, small}) bm_free_device(handle, mem);
  bm_free_device_mem(handle, addr);
  bm_free_device_mem(handle, masked);
  EXPECT_EQ(cmodel_global_allocated(), 0u);
}

// The emulator's figures of the last run, read independently of bmlib.
struct RunFigures {
  double total_us, bdc_busy_us;
  uint64_t commands;
};
RunFigures last_run_figures() {
  const nlohmann::json stats = nlohmann::json::parse(cmodel_last_run_stats());
  uint64_t commands = 0;
  for (const auto &engine : stats["engines"]) commands += engine["commands"].get<uint64_t>();
  return {stats["total_us"].get<double>(), stats["engines"]["bdc"]["busy_us"].get<double>(), commands};
}

// bm_get_stat and the heap figures are the emulator's memory in use;
// bm_get_profile counts copies and launches and adds the runs' emulated
// time per core, each checked against figures read from the emulator or
// counted by hand here.
TEST_P(Bmlib, StatisticsAndProfileAreTheEmulatorsFigures) {
  bm_profile_t profile;
  ASSERT_EQ(bm_get_profile(handle, &profile), BM_SUCCESS);
  EXPECT_EQ(profile.sent_api_counter, 0u);
  EXPECT_EQ(profile.tpu_process_time, 0u);
  tpu_kernel_module_t module = load_module();
  const tpu_kernel_function_t engine = tpu_kernel_get_function(handle, module, "engine_kernel");
  const tpu_kernel_function_t fault = tpu_kernel_get_function(handle, module, "fault_kernel");
  ASSERT_GE(engine, 0);
  // An id holds on the core it was obtained for: bm1688's core 1 loads the module too.
  tpu_kernel_function_t engine_on[2] = {engine, engine};
  if (multicore()) {
    tpu_kernel_module_t on_core1 = tpu_kernel_load_module_file_to_core(handle, module_path, 1);
    ASSERT_NE(on_core1, nullptr) << logged_errors();
    engine_on[1] = tpu_kernel_get_function_from_core(handle, on_core1, "engine_kernel", 1);
  }
  const unsigned int out_bytes = 1u << 20;  // 64 NPUs x 16 x 256 floats at most
  bm_device_mem_t a = upload(std::vector<int32_t>(1000, 1)), b = upload(std::vector<int8_t>(77, 1));  // 2 copies in
  bm_device_mem_t out = alloc(out_bytes);
  engine_args_t args{bm_mem_get_device_addr(out)};
  double core_us[2] = {0, 0}, bdc_us = 0;
  for (int launch = 0; launch < 3; ++launch) {
    const int core = multicore() ? launch % 2 : 0;
    ASSERT_EQ(tpu_kernel_launch_from_core(handle, engine_on[core], &args, sizeof args, core), BM_SUCCESS)
        << logged_errors();
    const RunFigures run = last_run_figures();
    core_us[core] += run.total_us;
    bdc_us += run.bdc_busy_us;
  }
  ASSERT_GT(core_us[0], 0.5) << "a run long enough for whole microseconds";
  ASSERT_GT(bdc_us, 0.0);
  fault_args_t fault_args{bm_mem_get_device_addr(out)};
  EXPECT_EQ(tpu_kernel_launch(handle, fault, &fault_args, sizeof fault_args), BM_ERR_FAILURE);
  core_us[0] += last_run_figures().total_us;
  const unsigned int written = (multicore() ? 32u : 64u) * 16 * 256;
  std::vector<float> result(written);
  ASSERT_EQ(bm_memcpy_d2s_partial(handle, result.data(), out, written * 4), BM_SUCCESS);  // 1 copy out
  EXPECT_EQ(result, std::vector<float>(written, 2.0f));
  ASSERT_EQ(bm_get_profile(handle, &profile), BM_SUCCESS);
  EXPECT_EQ(profile.cdma_in_counter, 2u);
  EXPECT_EQ(profile.cdma_out_counter, 1u);
  EXPECT_EQ(profile.sent_api_counter, 4u);
  EXPECT_EQ(profile.completed_api_counter, 3u);
  EXPECT_EQ(profile.tpu_process_time, std::llround(core_us[0]));
  EXPECT_EQ(profile.tpu1_process_time, std::llround(core_us[1]));

  bm_dev_stat_t stat;
  ASSERT_EQ(bm_get_stat(handle, &stat), BM_SUCCESS);
  const uint64_t in_use = 4000 + 77 + out_bytes;  // the three buffers, as asked for
  EXPECT_EQ(cmodel_global_allocated(), in_use);
  EXPECT_EQ(uint64_t(stat.mem_total), cmodel_global_size() >> 20);
  EXPECT_EQ(stat.mem_used, 1);
  EXPECT_EQ(stat.heap_num, 1);
  EXPECT_EQ(stat.heap_stat[0].mem_used, 1u);
  EXPECT_EQ(stat.heap_stat[0].mem_avail, (cmodel_global_size() - in_use) >> 20);
  EXPECT_EQ(stat.tpu_util, std::lround(100 * bdc_us / (core_us[0] + core_us[1])));
  bm_heap_stat_byte_t heap;
  ASSERT_EQ(bm_get_gmem_heap_stat_byte_by_id(handle, &heap, 0), BM_SUCCESS);
  EXPECT_EQ(heap.mem_used, in_use);
  EXPECT_EQ(heap.mem_total, cmodel_global_size());
  EXPECT_EQ(heap.mem_avail, cmodel_global_size() - in_use);
  EXPECT_EQ(heap.mem_start_addr, 0x100000000ull);
  EXPECT_EQ(bm_get_gmem_heap_stat_byte_by_id(handle, &heap, 1), BM_ERR_PARAM);
  unsigned int heaps = 0;
  EXPECT_EQ(bm_get_gmem_total_heap_num(handle, &heaps), BM_SUCCESS);
  EXPECT_EQ(heaps, 1u);
  EXPECT_EQ(bm_get_stat(handle, nullptr), BM_ERR_PARAM);
  EXPECT_EQ(bm_get_profile(nullptr, &profile), BM_ERR_DEVNOTREADY);
  for (const bm_device_mem_t &mem : {a, b, out}) bm_free_device(handle, mem);
}

// The trace holds the traced run's engine commands: as many complete
// events on the engine lanes as the run's statistics count.
TEST_P(Bmlib, TraceDumpWritesTheTracedRuns) {
  test::TempDir dir;
  const std::string path = dir.file("trace.json");
  setenv("TPU_SDK_BMLIB_TRACE", path.c_str(), 1);
  clear_log();
  EXPECT_EQ(bm_trace_dump(handle), BM_ERR_FAILURE) << "nothing traced yet";
  EXPECT_NE(logged_errors().find("no trace was recorded"), std::string::npos) << logged_errors();
  tpu_kernel_module_t module = load_module();
  const tpu_kernel_function_t engine = tpu_kernel_get_function(handle, module, "engine_kernel");
  bm_device_mem_t out = alloc(1u << 20);
  engine_args_t args{bm_mem_get_device_addr(out)};
  ASSERT_EQ(bm_trace_enable(handle), BM_SUCCESS);
  ASSERT_EQ(tpu_kernel_launch(handle, engine, &args, sizeof args), BM_SUCCESS) << logged_errors();
  const uint64_t commands = last_run_figures().commands;
  ASSERT_EQ(bm_trace_disable(handle), BM_SUCCESS);
  ASSERT_EQ(tpu_kernel_launch(handle, engine, &args, sizeof args), BM_SUCCESS) << "not traced";
  ASSERT_EQ(bm_trace_dump(handle), BM_SUCCESS) << logged_errors();
  unsetenv("TPU_SDK_BMLIB_TRACE");
  const nlohmann::json trace = nlohmann::json::parse(file_bytes(path));
  uint64_t events = 0;
  for (const auto &event : trace["traceEvents"]) events += event["ph"] == "X";
  EXPECT_EQ(commands, 3u);  // set_C, fp_add, cpy_L2S
  EXPECT_EQ(events, commands);
  bm_free_device(handle, out);
}

// A kernel that never ends is stopped at the time limit bm_set_sync_timeout
// sets (milliseconds), and the device carries on.
TEST_P(Bmlib, RunawayKernelStopsAtTheSyncTimeout) {
  tpu_kernel_module_t module = load_module();
  const tpu_kernel_function_t spin = tpu_kernel_get_function(handle, module, "spin_kernel");
  const tpu_kernel_function_t seven = tpu_kernel_get_function(handle, module, "seven_kernel");
  ASSERT_GE(spin, 0);
  ASSERT_EQ(bm_set_sync_timeout(handle, 300), BM_SUCCESS);
  clear_log();
  int unused = 0;
  EXPECT_EQ(tpu_kernel_launch(handle, spin, &unused, sizeof unused), BM_ERR_FAILURE);
  const std::string errors = logged_errors();
  EXPECT_NE(errors.find("[time limit exceeded]"), std::string::npos) << errors;
  EXPECT_NE(errors.find("time limit of 0.3 s"), std::string::npos) << errors;
  ASSERT_EQ(bm_set_sync_timeout(handle, 600000), BM_SUCCESS);
  bm_device_mem_t out = alloc(64);
  seven_args_t args{bm_mem_get_device_addr(out)};
  EXPECT_EQ(tpu_kernel_launch(handle, seven, &args, sizeof args), BM_SUCCESS) << logged_errors();
}

// Flow 7: a faulting kernel fails its launch (or the covering sync), the
// message names the bad command, the device stays usable.
TEST_P(Bmlib, FaultingKernelFailsAndTheDeviceCarriesOn) {
  tpu_kernel_module_t module = load_module();
  const tpu_kernel_function_t fault = tpu_kernel_get_function(handle, module, "fault_kernel");
  const tpu_kernel_function_t seven = tpu_kernel_get_function(handle, module, "seven_kernel");
  ASSERT_GE(fault, 0);
  ASSERT_GE(seven, 0);
  bm_device_mem_t buffer = alloc(4096);
  fault_args_t fault_args{bm_mem_get_device_addr(buffer)};

  clear_log();
  EXPECT_EQ(tpu_kernel_launch(handle, fault, &fault_args, sizeof fault_args), BM_ERR_FAILURE);
  const std::string errors = logged_errors();
  EXPECT_NE(errors.find("[tpu_kernel_launch] kernel \"fault_kernel\" failed"), std::string::npos) << errors;
  EXPECT_NE(errors.find("tpu_gdma_cpy_S2L"), std::string::npos) << errors;
  EXPECT_NE(std::string(cmodel_last_error()).find("tpu_gdma_cpy_S2L"), std::string::npos) << cmodel_last_error();

  EXPECT_EQ(tpu_kernel_launch_async(handle, fault, &fault_args, sizeof fault_args), BM_SUCCESS);
  EXPECT_EQ(bm_thread_sync(handle), BM_ERR_FAILURE);
  EXPECT_EQ(bm_thread_sync(handle), BM_SUCCESS) << "a failure is reported once";

  // An async failure also shows in the next synchronous launch's wait.
  EXPECT_EQ(tpu_kernel_launch_async(handle, fault, &fault_args, sizeof fault_args), BM_SUCCESS);
  seven_args_t seven_args{bm_mem_get_device_addr(buffer)};
  EXPECT_EQ(tpu_kernel_launch(handle, seven, &seven_args, sizeof seven_args), BM_ERR_FAILURE);
  EXPECT_EQ(read_int(buffer), 7) << "the good kernel ran";

  // A kernel returning 7 is a success; the device works after the faults.
  ASSERT_EQ(bm_memset_device(handle, 0, buffer), BM_SUCCESS);
  EXPECT_EQ(tpu_kernel_launch(handle, seven, &seven_args, sizeof seven_args), BM_SUCCESS);
  EXPECT_EQ(read_int(buffer), 7);
  EXPECT_EQ(bm_handle_sync(handle), BM_SUCCESS);
  EXPECT_EQ(bm_device_sync(handle), BM_SUCCESS);
  bm_free_device(handle, buffer);
}

// Flow 8: a FUNC_TYPE_2 kernel gets the exact size and both buffers.
TEST_P(Bmlib, TypeTwoKernelSeesTheWholeBlob) {
  tpu_kernel_module_t module = load_module();
  const tpu_kernel_function_t blob_id = tpu_kernel_get_function(handle, module, "blob_kernel");
  ASSERT_GE(blob_id, 0);
  bm_device_mem_t out = alloc(4096);
  std::vector<uint8_t> part_a(37), part_b(163);
  for (size_t i = 0; i < part_a.size(); ++i) part_a[i] = uint8_t(200 - i);
  for (size_t i = 0; i < part_b.size(); ++i) part_b[i] = uint8_t(i * 13);
  blob_header_t header{bm_mem_get_device_addr(out), uint32_t(part_a.size()), uint32_t(part_b.size())};
  std::vector<uint8_t> blob(sizeof header);
  std::memcpy(blob.data(), &header, sizeof header);
  blob.insert(blob.end(), part_a.begin(), part_a.end());
  blob.insert(blob.end(), part_b.begin(), part_b.end());
  blob.resize((blob.size() + 3) / 4 * 4, 0);  // whole words, as the device needs
  ASSERT_EQ(tpu_kernel_launch(handle, blob_id, blob.data(), blob.size()), BM_SUCCESS) << logged_errors();
  std::vector<uint8_t> result(12 + part_a.size() + part_b.size());
  ASSERT_EQ(bm_memcpy_d2s_partial(handle, result.data(), out, unsigned(result.size())), BM_SUCCESS);
  int32_t sizes[3];
  std::memcpy(sizes, result.data(), sizeof sizes);
  EXPECT_EQ(sizes[0], int32_t(blob.size()));
  EXPECT_EQ(sizes[1], 37);
  EXPECT_EQ(sizes[2], 163);
  EXPECT_EQ(std::vector<uint8_t>(result.begin() + 12, result.begin() + 49), part_a);
  EXPECT_EQ(std::vector<uint8_t>(result.begin() + 49, result.end()), part_b);
}

// Flow 9: programs that map device memory instead of copying.
TEST_P(Bmlib, MappedMemoryIsTheDeviceMemory) {
  struct bm_misc_info info;
  std::memset(&info, 0x7f, sizeof info);
  ASSERT_EQ(bm_get_misc_info(handle, &info), BM_SUCCESS);
  EXPECT_EQ(info.pcie_soc_mode, 0);
  EXPECT_EQ(info.tpu_core_num, multicore() ? 2 : 1);
  EXPECT_EQ(info.chipid, multicore() ? 0x1686a200u : 0x1686u);
  EXPECT_EQ(info.ddr_ecc_enable, 0);
  EXPECT_EQ(info.dyn_enable, 0);

  tpu_kernel_module_t module = load_module();
  const tpu_kernel_function_t add = tpu_kernel_get_function(handle, module, "add_kernel");
  const int count = 256;
  bm_device_mem_t a = alloc(count * 4), b = alloc(count * 4), out = alloc(count * 4);
  unsigned long long va = 0, vb = 0, vout = 0;
  ASSERT_EQ(bm_mem_mmap_device_mem(handle, &a, &va), BM_SUCCESS) << logged_errors();
  ASSERT_EQ(bm_mem_mmap_device_mem(handle, &b, &vb), BM_SUCCESS);
  ASSERT_EQ(bm_mem_mmap_device_mem(handle, &out, &vout), BM_SUCCESS);
  auto *pa = reinterpret_cast<int32_t *>(va);
  auto *pb = reinterpret_cast<int32_t *>(vb);
  for (int i = 0; i < count; ++i) {
    pa[i] = i * 11;
    pb[i] = -i * 4 + 3;
  }
  EXPECT_EQ(bm_mem_flush_device_mem(handle, &a), BM_SUCCESS);
  EXPECT_EQ(bm_mem_flush_partial_device_mem(handle, &b, 0, count * 4), BM_SUCCESS);
  add_args_t args{bm_mem_get_device_addr(a), bm_mem_get_device_addr(b), bm_mem_get_device_addr(out), count};
  ASSERT_EQ(tpu_kernel_launch(handle, add, &args, sizeof args), BM_SUCCESS) << logged_errors();
  EXPECT_EQ(bm_mem_invalidate_device_mem(handle, &out), BM_SUCCESS);
  EXPECT_EQ(bm_mem_invalidate_partial_device_mem(handle, &out, 0, 16), BM_SUCCESS);
  const auto *pout = reinterpret_cast<const int32_t *>(vout);
  for (int i = 0; i < count; ++i) ASSERT_EQ(pout[i], i * 11 - i * 4 + 3) << i;
  EXPECT_EQ(download<int32_t>(a)[5], 55) << "writes through the mapping are in device memory";
  for (unsigned long long v : {va, vb, vout})
    EXPECT_EQ(bm_mem_unmap_device_mem(handle, reinterpret_cast<void *>(v), count * 4), BM_SUCCESS);
  bm_device_mem_t outside = bm_mem_from_device(0x50000000ull, 64);
  unsigned long long vbad = 0;
  clear_log();
  EXPECT_EQ(bm_mem_mmap_device_mem(handle, &outside, &vbad), BM_ERR_PARAM);
  EXPECT_NE(logged_errors().find("is not a range of global memory"), std::string::npos) << logged_errors();
}

// Flow 10: four threads, each with its own handle on device 0.
TEST_P(Bmlib, ThreadsWithTheirOwnHandlesShareTheDevice) {
  bm_device_mem_t shared = alloc(4);
  ASSERT_EQ(bm_memset_device(handle, 0x5eed, shared), BM_SUCCESS);
  std::array<bool, 4> ok{};
  std::array<int32_t, 4> seen_shared{};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      bm_handle_t mine = nullptr;
      if (bm_dev_request(&mine, 0) != BM_SUCCESS) return;
      tpu_kernel_module_t module = tpu_kernel_load_module_file(mine, module_path);
      const tpu_kernel_function_t add = tpu_kernel_get_function(mine, module, "add_kernel");
      const int count = 300 + t;
      std::vector<int32_t> a(size_t(count), t), b(size_t(count), 0), result(size_t(count), 0);
      for (int i = 0; i < count; ++i) b[size_t(i)] = i * (t + 1);
      bm_device_mem_t ma, mb, mo;
      bool good = add >= 0 && bm_malloc_device_byte(mine, &ma, unsigned(count) * 4) == BM_SUCCESS &&
                  bm_malloc_device_byte(mine, &mb, unsigned(count) * 4) == BM_SUCCESS &&
                  bm_malloc_device_byte(mine, &mo, unsigned(count) * 4) == BM_SUCCESS &&
                  bm_memcpy_s2d(mine, ma, a.data()) == BM_SUCCESS && bm_memcpy_s2d(mine, mb, b.data()) == BM_SUCCESS;
      if (good) {
        add_args_t args{bm_mem_get_device_addr(ma), bm_mem_get_device_addr(mb), bm_mem_get_device_addr(mo), count};
        good = tpu_kernel_launch(mine, add, &args, sizeof args) == BM_SUCCESS &&
               bm_memcpy_d2s(mine, result.data(), mo) == BM_SUCCESS;
        for (int i = 0; good && i < count; ++i) good = result[size_t(i)] == t + i * (t + 1);
        bm_free_device(mine, ma);
        bm_free_device(mine, mb);
        bm_free_device(mine, mo);
      }
      // Memory allocated through the fixture's handle reads through this one.
      bm_memcpy_d2s(mine, &seen_shared[size_t(t)], shared);
      good = good && tpu_kernel_unload_module(mine, module) == BM_SUCCESS;
      bm_dev_free(mine);
      ok[size_t(t)] = good;
    });
  for (std::thread &thread : threads) thread.join();
  for (int t = 0; t < 4; ++t) {
    EXPECT_TRUE(ok[size_t(t)]) << "thread " << t << ": " << logged_errors();
    EXPECT_EQ(seen_shared[size_t(t)], 0x5eed) << "thread " << t;
  }
  EXPECT_STREQ(cmodel_chip(), GetParam()) << "still open: the fixture holds a handle";
  EXPECT_EQ(read_int(shared), 0x5eed) << "device memory survived the other handles";
  bm_dev_free(handle);
  handle = nullptr;
  EXPECT_STREQ(cmodel_chip(), "") << "closed with the last handle";
}

// Flow 11: cores, chip ids and per-core modules.
TEST_P(Bmlib, CoresAndChipIds) {
  unsigned int cores = 0, chipid = 0;
  ASSERT_EQ(bm_get_tpu_core_num(handle, &cores), BM_SUCCESS);
  ASSERT_EQ(bm_get_chipid(handle, &chipid), BM_SUCCESS);
  EXPECT_EQ(cores, multicore() ? 2u : 1u);
  EXPECT_EQ(chipid, multicore() ? 0x1686a200u : 0x1686u);
  EXPECT_EQ(bm_get_devid(handle), 0);
  int count = 0;
  EXPECT_EQ(bm_dev_getcount(&count), BM_SUCCESS);
  EXPECT_EQ(count, 1);
  EXPECT_EQ(bm_dev_query(0), BM_SUCCESS);
  EXPECT_EQ(bm_dev_query(1), BM_ERR_BUSY);

  std::array<tpu_kernel_module_t, 2> modules{};
  std::array<tpu_kernel_function_t, 2> ids{};
  for (int core = 0; core < 2; ++core) {
    modules[size_t(core)] = tpu_kernel_load_module_file_to_core(handle, module_path, core);
    ASSERT_NE(modules[size_t(core)], nullptr) << logged_errors();
    ids[size_t(core)] = tpu_kernel_get_function_from_core(handle, modules[size_t(core)], "core_kernel", core);
    ASSERT_GE(ids[size_t(core)], 0) << logged_errors();
  }
  bm_device_mem_t out = alloc(16);
  ASSERT_EQ(bm_memset_device(handle, -1, out), BM_SUCCESS);
  std::array<core_args_t, 2> args{{{bm_mem_get_device_addr(out), 0}, {bm_mem_get_device_addr(out), 1}}};
  tpu_launch_param_t params[2] = {{0, ids[0], &args[0], sizeof args[0]}, {1, ids[1], &args[1], sizeof args[1]}};
  ASSERT_EQ(tpu_kernel_launch_async_multicores(handle, params, 2), BM_SUCCESS) << logged_errors();
  EXPECT_EQ(bm_thread_sync_from_core(handle, 0), BM_SUCCESS);
  EXPECT_EQ(bm_thread_sync_from_core(handle, 1), BM_SUCCESS);
  const std::vector<int32_t> seen = download<int32_t>(out);
  if (multicore()) {
    EXPECT_EQ(seen, (std::vector<int32_t>{0, 2, 1, 2})) << "core index, group size per entry";
    EXPECT_NE(ids[0], ids[1]) << "ids are per core";
    clear_log();
    EXPECT_EQ(tpu_kernel_launch_from_core(handle, ids[0], &args[1], sizeof args[1], 1), BM_ERR_PARAM);
    EXPECT_NE(logged_errors().find("belongs to core 0, not core 1"), std::string::npos) << logged_errors();
    EXPECT_EQ(tpu_kernel_load_module_file_to_core(handle, module_path, 2), nullptr);
    EXPECT_EQ(tpu_kernel_get_function_from_core(handle, modules[0], "core_kernel", 2), -1);
    EXPECT_EQ(tpu_kernel_launch_from_core(handle, ids[1], &args[1], sizeof args[1], 2), BM_ERR_PARAM);
    EXPECT_EQ(bm_thread_sync_from_core(handle, 2), BM_ERR_PARAM);
    // A single launch on core 1 runs there alone.
    ASSERT_EQ(tpu_kernel_launch_from_core(handle, ids[1], &args[0], sizeof args[0], 1), BM_SUCCESS);
    EXPECT_EQ(read_int(out, 0), 1);
    EXPECT_EQ(read_int(out, 4), 1);
  } else {
    // bm1684x ignores core ids: both entries ran on core 0, alone.
    EXPECT_EQ(seen, (std::vector<int32_t>{0, 1, 0, 1}));
    EXPECT_EQ(tpu_kernel_launch_from_core(handle, ids[0], &args[0], sizeof args[0], 1), BM_SUCCESS);
  }
  for (int core = 0; core < 2; ++core)
    EXPECT_EQ(tpu_kernel_unload_module_from_core(handle, modules[size_t(core)], core), BM_SUCCESS);
}

// The entries of a multi-core launch run together (cmodel_run_group): a
// kernel waiting at tpu_sync_all for the other core passes when it comes.
// Launched on one core alone, the group is that core.
TEST_P(Bmlib, GroupLaunchesRunTheCoresTogether) {
  std::array<tpu_kernel_module_t, 2> modules{};
  std::array<tpu_kernel_function_t, 2> ids{};
  for (int core = 0; core < 2; ++core) {
    modules[size_t(core)] = tpu_kernel_load_module_file_to_core(handle, module_path, core);
    ASSERT_NE(modules[size_t(core)], nullptr);
    ids[size_t(core)] = tpu_kernel_get_function_from_core(handle, modules[size_t(core)], "sync_all_kernel", core);
  }
  bm_device_mem_t out = alloc(4);
  ASSERT_EQ(bm_memset_device(handle, 0, out), BM_SUCCESS);
  count_args_t args{bm_mem_get_device_addr(out)};
  tpu_launch_param_t params[2] = {{0, ids[0], &args, sizeof args}, {1, ids[1], &args, sizeof args}};
  clear_log();
  ASSERT_EQ(tpu_kernel_launch_async_multicores(handle, params, 2), BM_SUCCESS);
  EXPECT_EQ(bm_thread_sync(handle), BM_SUCCESS) << logged_errors();
  EXPECT_EQ(read_int(out), 1);
  if (multicore()) {
    ASSERT_EQ(bm_memset_device(handle, 0, out), BM_SUCCESS);
    // Two entries for one core cannot form a group.
    tpu_launch_param_t twice[2] = {{1, ids[1], &args, sizeof args}, {1, ids[1], &args, sizeof args}};
    EXPECT_EQ(tpu_kernel_launch_async_multicores(handle, twice, 2), BM_ERR_PARAM);
    EXPECT_NE(logged_errors().find("two entries of the launch list run on core 1"), std::string::npos)
        << logged_errors();
    EXPECT_EQ(tpu_kernel_launch_from_core(handle, ids[1], &args, sizeof args, 1), BM_SUCCESS) << logged_errors();
    EXPECT_EQ(read_int(out), 1);
  }
}

TEST_P(Bmlib, LaunchByNameFindsProcessKernels) {
  bm_device_mem_t out = alloc(4);
  ByNameArgs args{bm_mem_get_device_addr(out), 14, 0};
  ASSERT_EQ(tpu_kernel_launch_sync(handle, "by_name_kernel", &args, sizeof args), BM_SUCCESS) << logged_errors();
  EXPECT_EQ(read_int(out), 42);
  args.value = -5;
  ASSERT_EQ(tpu_kernel_launch_sync_by_core(handle, "by_name_kernel", &args, sizeof args, 1), BM_SUCCESS);
  EXPECT_EQ(read_int(out), -15);
  clear_log();
  EXPECT_EQ(tpu_kernel_launch_sync(handle, std::string(65, 'n').c_str(), &args, sizeof args), BM_ERR_PARAM);
  EXPECT_NE(logged_errors().find("1 to 64 characters"), std::string::npos) << logged_errors();
  clear_log();
  EXPECT_EQ(tpu_kernel_launch_sync(handle, "add_kernel", &args, sizeof args), BM_ERR_PARAM)
      << "module kernels are not in the process-wide table";
  EXPECT_NE(logged_errors().find("by_name_kernel"), std::string::npos) << "lists what is registered";
  EXPECT_EQ(tpu_kernel_launch_sync_by_core(handle, "by_name_kernel", &args, sizeof args, 2), BM_ERR_PARAM);

  // A module's get_function falls back on the process-wide table.
  tpu_kernel_module_t module = load_module();
  const tpu_kernel_function_t id = tpu_kernel_get_function(handle, module, "by_name_kernel");
  ASSERT_GE(id, 0) << logged_errors();
  args.value = 100;
  EXPECT_EQ(tpu_kernel_launch(handle, id, &args, sizeof args), BM_SUCCESS);
  EXPECT_EQ(read_int(out), 300);
}

// A device module (an ELF for the chip's controller) cannot run here: the
// load still succeeds, as on the vendor's cmodel, with a warning, and names
// resolve among the program's own kernels.
TEST_P(Bmlib, DeviceModuleBindsToTheProcessKernels) {
  test::TempDir dir("bmlib_test");
  const std::string device_module = dir.file("libbm1684x_kernel_module.so");
  std::vector<char> elf(256, 0);
  std::memcpy(elf.data(), "\177ELF\2\1\1", 7);
  elf[18] = char(multicore() ? 243 : 183);  // the chip's controller: EM_RISCV (BM1688) or EM_AARCH64 (BM1684X)
  std::ofstream(device_module, std::ios::binary).write(elf.data(), std::streamsize(elf.size()));
  bmlib_log_set_level(BMLIB_LOG_WARNING);
  clear_log();
  tpu_kernel_module_t module = tpu_kernel_load_module_file(handle, device_module.c_str());
  bmlib_log_set_level(BMLIB_LOG_ERROR);
  ASSERT_NE(module, nullptr) << logged_errors();
  const std::string log = logged_all();
  EXPECT_NE(log.find("is not a kernel library for this machine"), std::string::npos) << log;
  EXPECT_NE(log.find("by_name_kernel"), std::string::npos) << log;
  EXPECT_EQ(tpu_kernel_get_function(handle, module, "add_kernel"), -1);
  bm_device_mem_t out = alloc(4);
  ByNameArgs args{bm_mem_get_device_addr(out), 2, 0};
  const tpu_kernel_function_t id = tpu_kernel_get_function(handle, module, "by_name_kernel");
  ASSERT_GE(id, 0);
  EXPECT_EQ(tpu_kernel_launch(handle, id, &args, sizeof args), BM_SUCCESS);
  EXPECT_EQ(read_int(out), 6);
  EXPECT_EQ(tpu_kernel_unload_module(handle, module), BM_SUCCESS);
}

// Module files that crashed the program or loaded another file: a file cut
// short (dlopen mapped past its end: SIGBUS), a directory (reading it threw
// through the C API: abort), an ELF for a machine that is neither this host
// nor the chip's controller, and a library damaged where dlopen reads
// without checking. Each is refused with a message; the device carries on.
TEST_P(Bmlib, HostileModuleFilesAreRefusedWithAMessage) {
  test::TempDir dir("bmlib_test");
  const std::string bytes = file_bytes(module_path);
  const std::string truncated = dir.file("libtruncated.so");
  std::ofstream(truncated, std::ios::binary) << bytes.substr(0, bytes.size() / 2);
  clear_log();
  EXPECT_EQ(tpu_kernel_load_module_file(handle, truncated.c_str()), nullptr);
  EXPECT_NE(logged_errors().find("truncated ELF file"), std::string::npos) << logged_errors();

  clear_log();
  EXPECT_EQ(tpu_kernel_load_module_file(handle, dir.path().c_str()), nullptr);
  EXPECT_NE(logged_errors().find("is a directory, not a regular file"), std::string::npos) << logged_errors();

  std::vector<char> elf32(128, 0);
  std::memcpy(elf32.data(), "\177ELF\1\1\1", 7);
  elf32[18] = 3;  // EM_386
  const std::string i386 = dir.file("libi386.so");
  std::ofstream(i386, std::ios::binary).write(elf32.data(), std::streamsize(elf32.size()));
  clear_log();
  EXPECT_EQ(tpu_kernel_load_module_file(handle, i386.c_str()), nullptr);
  EXPECT_NE(logged_errors().find("an ELF file for 32-bit i386"), std::string::npos) << logged_errors();
  std::vector<char> other_chip(256, 0);
  std::memcpy(other_chip.data(), "\177ELF\2\1\1", 7);
  other_chip[18] = char(multicore() ? 183 : 243);  // the other chip's controller
  const std::string foreign = dir.file("libother_chip.so");
  std::ofstream(foreign, std::ios::binary).write(other_chip.data(), std::streamsize(other_chip.size()));
  clear_log();
  EXPECT_EQ(tpu_kernel_load_module_file(handle, foreign.c_str()), nullptr);
  EXPECT_NE(logged_errors().find(std::string("device modules (") + (multicore() ? "RISC-V" : "AArch64")),
            std::string::npos)
      << logged_errors();

  // PT_DYNAMIC moved 1 TiB away: dlopen read the dynamic section there (SIGSEGV).
  std::string damaged = bytes;
  Elf64_Ehdr h;
  std::memcpy(&h, damaged.data(), sizeof h);
  for (uint16_t i = 0; i < h.e_phnum; ++i) {
    Elf64_Phdr ph;
    char *at = damaged.data() + h.e_phoff + i * sizeof ph;
    std::memcpy(&ph, at, sizeof ph);
    if (ph.p_type != PT_DYNAMIC) continue;
    ph.p_vaddr += uint64_t(1) << 40;
    std::memcpy(at, &ph, sizeof ph);
  }
  const std::string wild = dir.file("libwild.so");
  std::ofstream(wild, std::ios::binary) << damaged;
  clear_log();
  EXPECT_EQ(tpu_kernel_load_module_file(handle, wild.c_str()), nullptr);
  EXPECT_NE(logged_errors().find("damaged ELF file"), std::string::npos) << logged_errors();
  clear_log();
  EXPECT_EQ(tpu_kernel_load_module(handle, damaged.data(), damaged.size()), nullptr);
  EXPECT_NE(logged_errors().find("damaged ELF file"), std::string::npos) << logged_errors();

  // The device still loads and runs a good module.
  tpu_kernel_module_t module = load_module();
  ASSERT_NE(module, nullptr);
  EXPECT_GE(tpu_kernel_get_function(handle, module, "add_kernel"), 0) << logged_errors();
  EXPECT_EQ(tpu_kernel_unload_module(handle, module), BM_SUCCESS);
}

// A name without '/' is a file in the current directory (the file the
// vendor's bmlib reads and sends to the device), resolved once: the bytes
// hashed into the module's MD5 and the library loaded are that file. It was
// hashed from the current directory but dlopen'ed from LD_LIBRARY_PATH and
// the system directories, so another library (or none) ran.
TEST_P(Bmlib, BareModuleNameIsTheFileInTheCurrentDirectory) {
  test::TempDir dir("bmlib_test");
  const std::string bytes = file_bytes(module_path);
  std::ofstream(dir.file("libbare_module.so"), std::ios::binary) << bytes;
  const std::filesystem::path before = std::filesystem::current_path();
  std::filesystem::current_path(dir.path());
  clear_log();
  tpu_kernel_module_t module = tpu_kernel_load_module_file(handle, "libbare_module.so");
  std::filesystem::current_path(before);
  ASSERT_NE(module, nullptr) << logged_errors();
  EXPECT_STREQ(module->lib_name, "libbare_module.so");
  const auto digest = md5(bytes);
  EXPECT_EQ(std::memcmp(module->md5, digest.data(), 16), 0);
  EXPECT_GE(tpu_kernel_get_function(handle, module, "add_kernel"), 0) << logged_errors();
  EXPECT_EQ(tpu_kernel_unload_module(handle, module), BM_SUCCESS);
}

// The SDK's own host API and bmlib drive the same emulator: neither may
// pull it from under the other.
TEST_P(Bmlib, CmodelOpenIsRefusedWhileAHandleIsOpen) {
  EXPECT_NE(cmodel_open("bm1684x"), 0);
  EXPECT_NE(std::string(cmodel_last_error()).find("held by bmlib"), std::string::npos) << cmodel_last_error();
  cmodel_close();
  EXPECT_STREQ(cmodel_chip(), GetParam());
  bm_dev_free(handle);
  handle = nullptr;
  ASSERT_EQ(cmodel_open(GetParam()), 0) << cmodel_last_error();
  bm_handle_t busy = nullptr;
  clear_log();
  EXPECT_EQ(bm_dev_request(&busy, 0), BM_ERR_BUSY);
  EXPECT_NE(logged_errors().find("already open through cmodel_open"), std::string::npos) << logged_errors();
  cmodel_close();
  EXPECT_EQ(bm_dev_request(&handle, 0), BM_SUCCESS);
}

TEST(BmlibChip, UnknownChipIsAClearError) {
  bmlib_log_set_callback(capture_log);
  clear_log();
  setenv("TPU_SDK_CHIP", "bm1686", 1);
  bm_handle_t handle = nullptr;
  EXPECT_EQ(bm_dev_request(&handle, 0), BM_ERR_PARAM);
  EXPECT_EQ(handle, nullptr);
  EXPECT_NE(logged_errors().find("TPU_SDK_CHIP=\"bm1686\" is not a chip this SDK emulates; set it to bm1684x or "
                                 "bm1688"),
            std::string::npos)
      << logged_errors();
  unsetenv("TPU_SDK_CHIP");
  ASSERT_EQ(bm_dev_request(&handle, 0), BM_SUCCESS);
  unsigned int chipid = 0;
  EXPECT_EQ(bm_get_chipid(handle, &chipid), BM_SUCCESS);
  EXPECT_EQ(chipid, 0x1686u) << "bm1684x by default";
  bm_dev_free(handle);
  bmlib_log_set_callback(nullptr);
}

// A program that exits with a handle and a module still open: the library
// closes them on the way out, before the emulator's statics go.
TEST(BmlibExit, ExitingWithOpenHandlesIsClean) {
  EXPECT_EXIT(
      {
        bm_handle_t handle = nullptr;
        if (bm_dev_request(&handle, 0) != BM_SUCCESS) std::_Exit(3);
        if (!tpu_kernel_load_module_file(handle, module_path)) std::_Exit(4);
        bm_device_mem_t mem;
        if (bm_malloc_device_byte(handle, &mem, 4096) != BM_SUCCESS) std::_Exit(5);
        std::exit(0);
      },
      ::testing::ExitedWithCode(0), "");
}

TEST(BmlibLog, LevelsFilterAndTheDefaultIsError) {
  EXPECT_EQ(bmlib_log_get_level(), BMLIB_LOG_ERROR);
  bmlib_log_set_callback(capture_log);
  clear_log();
  bmlib_log("t", BMLIB_LOG_INFO, "hidden %d\n", 1);
  bmlib_log("t", BMLIB_LOG_ERROR, "shown %d %s\n", 2, "x");
  bmlib_log_set_level(BMLIB_LOG_TRACE);
  bmlib_log("t", BMLIB_LOG_INFO, "now shown %d\n", 3);
  bmlib_log_set_level(BMLIB_LOG_ERROR);
  EXPECT_EQ(logged_all(), "[t] shown 2 x\n[t] now shown 3\n");
  bmlib_log_set_callback(nullptr);
}

}  // namespace
