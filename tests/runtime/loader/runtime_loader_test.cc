// runtime_loader_test.cc: Plugin, Backend and Firmware
// (runtime/loader/include/tpu_runtime/custom_libraries.h) on the fixture op sets of
// tests/runtime/loader/fixtures/ (TPU_TEST_FIXTURES_DIR):
//
//   good/  fx_copy (every plugin hook, local), fx_plain (no hook),
//          fx_scratch (global scratch buffer), fx_local (local buffer),
//          fx_fail (out-of-range GDMA), fx_fault (SIGFPE), fx_cast (dtype
//          conversion); firmware for both chips
//   bare/  fx_bare only, no local op
//   odd/   libfx_wrong_level.so (API level 999), libfx_unresolved.so
//
// The fixture libraries export fx_seen_* variables recording what a call
// received; fixture_variable() reads them through the loaded copy.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "api_common.h"
#include "runtime/loader/shared_library.h"
#include "cmodel_host.h"
#include "tpu_kernel.h"
#include "tpu_runtime/custom_libraries.h"
#include "tpu_runtime/error.h"
#include "tpu_runtime/library_paths.h"
#include "tpu_runtime/params.h"
#include "support/test_support.h"

namespace {

using tpu_runtime::Backend;
using tpu_runtime::Error;
using tpu_runtime::Firmware;
using tpu_runtime::PackedParams;
using tpu_runtime::Plugin;
using tpu_runtime::Shape;
using tpu_runtime::SharedLibrary;

const std::string kFixtures = TPU_TEST_FIXTURES_DIR;
const std::string kGoodPlugin = kFixtures + "/good/libplugin_custom.so";
const std::string kGoodBackend = kFixtures + "/good/libbackend_custom.so";
const std::string kGoodFirmware1684x = kFixtures + "/good/libcmodel_custom_bm1684x.so";
const std::string kGoodFirmware1688 = kFixtures + "/good/libcmodel_custom_bm1688.so";
const std::string kBareBackend = kFixtures + "/bare/libbackend_custom.so";
const std::string kBareFirmware = kFixtures + "/bare/libcmodel_custom_bm1684x.so";
const std::string kPartialBackend = kFixtures + "/partial/libbackend_custom.so";
const std::string kPartialFirmware = kFixtures + "/partial/libcmodel_custom_bm1684x.so";
const std::string kStaleBackend = kFixtures + "/stale/libbackend_custom.so";
const std::string kWrongLevel = kFixtures + "/odd/libfx_wrong_level.so";
const std::string kUnresolved = kFixtures + "/odd/libfx_unresolved.so";
const std::string kGoodOps = "fx_copy, fx_plain, fx_scratch, fx_local, fx_fail, fx_fault, fx_cast, fx_short";

// The Error message of `body`; a failure when nothing (or something else) is thrown.
template <typename Body>
std::string error_of(Body &&body) {
  try {
    body();
  } catch (const Error &e) {
    return e.what();
  }
  ADD_FAILURE() << "no tpu_runtime::Error thrown";
  return "";
}

// A variable a loaded fixture library exports.
template <typename T>
T *fixture_variable(const std::string &library, const char *name) {
  void *handle = dlopen(library.c_str(), RTLD_NOW | RTLD_NOLOAD);
  if (!handle) {
    ADD_FAILURE() << library << " is not loaded";
    return nullptr;
  }
  void *address = dlsym(handle, name);
  dlclose(handle);  // the runtime's own handle keeps the library loaded
  if (!address) ADD_FAILURE() << library << " has no " << name;
  return static_cast<T *>(address);
}

// Sets (or unsets, with nullptr) an environment variable for one scope.
class ScopedEnv {
 public:
  ScopedEnv(const char *name, const char *value) : name_(name) {
    if (const char *old = std::getenv(name)) old_ = old;
    if (value)
      setenv(name, value, 1);
    else
      unsetenv(name);
  }
  ~ScopedEnv() {
    if (old_)
      setenv(name_, old_->c_str(), 1);
    else
      unsetenv(name_);
  }

 private:
  const char *name_;
  std::optional<std::string> old_;
};

PackedParams params(const std::string &json) { return PackedParams::from_json_text(json); }

// ---- opening ------------------------------------------------------------

TEST(Open, MissingFileNamesThePath) {
  const std::string path = kFixtures + "/no_such_dir/libplugin_custom.so";
  for (const std::string &message :
       {error_of([&] { Plugin::open(path); }), error_of([&] { Backend::open(path); }),
        error_of([&] { Firmware::open(path, "bm1684x"); })}) {
    EXPECT_CONTAINS(message, path);
    EXPECT_CONTAINS(message, "no such file");
  }
}

TEST(Open, FileThatIsNotASharedObject) {
  const std::string path = testing::TempDir() + "/runtime_loader_not_a_library_" + std::to_string(getpid()) + ".so";
  std::ofstream(path) << "this is text, not ELF\n";
  const std::string message = error_of([&] { Backend::open(path); });
  std::filesystem::remove(path);
  EXPECT_CONTAINS(message, path);
  EXPECT_CONTAINS(message, "not an ELF file");
}

// dlopen would map a cut-short library past its end and die of SIGBUS;
// the runtime checks the file first.
TEST(Open, TruncatedLibraryIsAnErrorNotACrash) {
  const std::string original = kGoodBackend;
  const std::string path = testing::TempDir() + "/runtime_loader_truncated_" + std::to_string(getpid()) + ".so";
  std::filesystem::copy_file(original, path, std::filesystem::copy_options::overwrite_existing);
  std::filesystem::resize_file(path, std::filesystem::file_size(original) / 2);
  const std::string message = error_of([&] { Backend::open(path); });
  std::filesystem::remove(path);
  EXPECT_CONTAINS(message, path);
  EXPECT_CONTAINS(message, "truncated");
}

// Opens of an unchanged library file share one load (a run_op opens three
// libraries per call); a file replaced at the same path is loaded anew, not
// served from the old mapping.
TEST(Open, AnUnchangedLibraryIsSharedAndAReplacedOneLoadedAnew) {
  const std::filesystem::path dir = testing::TempDir() + "/runtime_loader_shared_" + std::to_string(getpid());
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "libbackend_custom.so").string();
  std::filesystem::copy_file(kGoodBackend, path, std::filesystem::copy_options::overwrite_existing);
  const std::vector<std::string> good_ops = Backend::open(kGoodBackend).registered_ops();
  const std::vector<std::string> partial_ops = Backend::open(kPartialBackend).registered_ops();
  ASSERT_NE(good_ops, partial_ops) << "the fixtures must differ for this test";
  {
    const std::shared_ptr<SharedLibrary> first = SharedLibrary::open_shared(path);
    const std::shared_ptr<SharedLibrary> second = SharedLibrary::open_shared(path);
    EXPECT_EQ(first.get(), second.get());
    EXPECT_EQ(first->path(), path);
    EXPECT_EQ(Backend::open(path).registered_ops(), good_ops);
  }
  // Replaced (a new file, as a rebuild writes): its own ops, not the old mapping's.
  std::filesystem::remove(path);
  std::filesystem::copy_file(kPartialBackend, path);
  EXPECT_EQ(Backend::open(path).registered_ops(), partial_ops);
  std::filesystem::remove_all(dir);
}

TEST(Open, UnresolvedSymbolIsReportedAtOnce) {
  // RTLD_NOW: the undefined function is found at open, not at the first call.
  const std::string message = error_of([] { Plugin::open(kUnresolved); });
  EXPECT_CONTAINS(message, kUnresolved);
  EXPECT_CONTAINS(message, "fx_function_nobody_defines");
}

TEST(Open, LibraryNotBuiltByThisSdkIsRefused) {
  // The plugin is not a generated library: it has no tpu_custom_api_level.
  for (const std::string &message : {error_of([] { Backend::open(kGoodPlugin); }),
                                     error_of([] { Firmware::open(kGoodPlugin, "bm1684x"); })}) {
    EXPECT_CONTAINS(message, kGoodPlugin);
    EXPECT_CONTAINS(message, "tpu_custom_api_level");
    EXPECT_CONTAINS(message, "not built by this SDK's TpuCustomLayer.cmake");
  }
}

TEST(Open, OtherApiLevelIsRefused) {
  const std::string message = error_of([] { Backend::open(kWrongLevel); });
  EXPECT_CONTAINS(message, kWrongLevel);
  EXPECT_CONTAINS(message, "API level 999");
  EXPECT_CONTAINS(message, "this SDK is at level 1");
}

TEST(Open, FirmwareAndBackendAreNotInterchangeable) {
  std::string message = error_of([] { Backend::open(kGoodFirmware1684x); });
  EXPECT_CONTAINS(message, "firmware library");
  message = error_of([] { Firmware::open(kGoodBackend, "bm1684x"); });
  EXPECT_CONTAINS(message, kGoodBackend);
  EXPECT_CONTAINS(message, "not a firmware library");
}

TEST(Open, FirmwareForTheOtherChipIsRefused) {
  std::string message = error_of([] { Firmware::open(kGoodFirmware1688, "bm1684x"); });
  EXPECT_CONTAINS(message, kGoodFirmware1688);
  EXPECT_CONTAINS(message, "built for bm1688, but bm1684x was asked for");
  message = error_of([] { Firmware::open(kGoodFirmware1684x, "bm1688"); });
  EXPECT_CONTAINS(message, "built for bm1684x, but bm1688 was asked for");
  message = error_of([] { Firmware::open(kGoodFirmware1684x, "bm1684"); });
  EXPECT_CONTAINS(message, "unknown chip 'bm1684'");
  EXPECT_EQ(Firmware::open(kGoodFirmware1688, "bm1688").chip(), "bm1688");
}

TEST(Open, EmptyPathSaysWhatIsMissing) {
  ScopedEnv root("TPUC_ROOT", nullptr), firmware("TPUKERNEL_CUSTOM_FIRMWARE_PATH", nullptr);
  EXPECT_CONTAINS(error_of([] { Plugin::open(""); }),
                  "no path for libplugin_custom.so: TPUC_ROOT is not set (source envsetup.sh) and no path was given");
  EXPECT_CONTAINS(error_of([] { Backend::open(""); }),
                  "no path for libbackend_custom.so: TPUC_ROOT is not set (source envsetup.sh) and no path was given");
  const std::string message = error_of([] { Firmware::open("", "bm1688"); });
  EXPECT_CONTAINS(message, "no path for libcmodel_custom_bm1688.so");
  EXPECT_CONTAINS(message, "TPUKERNEL_CUSTOM_FIRMWARE_PATH");
  EXPECT_CONTAINS(message, "TPUC_ROOT");

  ScopedEnv set_root("TPUC_ROOT", "/opt/tpu");
  EXPECT_CONTAINS(error_of([] { Plugin::open(""); }), "no path for libplugin_custom.so was given");
}

// The stand-ins a model of built-in layers only is built with: no op is
// registered, optional hooks take their defaults, required ones are refused
// naming the missing library.
TEST(Open, NoLibraryRegistersNothingAndRefusesRequiredHooks) {
  const Plugin plugin = Plugin::none();
  const Backend backend = Backend::none();
  const Firmware firmware = Firmware::none("bm1688");
  EXPECT_TRUE(backend.registered_ops().empty());
  EXPECT_TRUE(backend.registered_local_ops().empty());
  EXPECT_TRUE(backend.gradients().empty());
  EXPECT_TRUE(firmware.registered_ops().empty());
  EXPECT_EQ(firmware.chip(), "bm1688");
  EXPECT_TRUE(backend.build_identity().id.empty());
  EXPECT_CONTAINS(firmware.path(), "libcmodel_custom_bm1688.so");
  EXPECT_FALSE(plugin.has_symbol("malloc"));  // not the process's own symbols
  EXPECT_FALSE(plugin.force_dynamic_run("op", PackedParams()));
  EXPECT_FALSE(plugin.param_types("op").has_value());
  EXPECT_EQ(plugin.shape_inference("op", PackedParams(), {{2, 3}}, 1), (std::vector<Shape>{{2, 3}}));
  const std::vector<float> in(4);
  std::vector<float> out(4);
  const std::string message = error_of([&] { plugin.inference("op", PackedParams(), {{4}}, {in.data()}, {out.data()}); });
  EXPECT_CONTAINS(message, "no libplugin_custom.so");
  EXPECT_CONTAINS(message, "inference_op");
  EXPECT_CONTAINS(message, "built-in layers only");
}

TEST(LibraryPaths, DefaultsWithoutTpucRootAreEmpty) {
  ScopedEnv root("TPUC_ROOT", nullptr), firmware("TPUKERNEL_CUSTOM_FIRMWARE_PATH", nullptr);
  const auto paths = tpu_runtime::default_library_paths("bm1684x");
  EXPECT_EQ(paths.plugin, "");
  EXPECT_EQ(paths.backend, "");
  EXPECT_EQ(paths.firmware, "");
  EXPECT_CONTAINS(error_of([] { tpu_runtime::default_library_paths("bm1690"); }), "unknown chip 'bm1690'");
}

TEST(LibraryPaths, DefaultsFromTheEnvironment) {
  ScopedEnv root("TPUC_ROOT", "/opt/tpu"), firmware("TPUKERNEL_CUSTOM_FIRMWARE_PATH", nullptr);
  auto paths = tpu_runtime::default_library_paths("bm1688");
  EXPECT_EQ(paths.plugin, "/opt/tpu/lib/libplugin_custom.so");
  EXPECT_EQ(paths.backend, "/opt/tpu/lib/libbackend_custom.so");
  EXPECT_EQ(paths.firmware, "/opt/tpu/lib/libcmodel_custom_bm1688.so");
  {
    // A directory holds the per-chip file; the firmware needs no TPUC_ROOT.
    ScopedEnv no_root("TPUC_ROOT", nullptr), dir("TPUKERNEL_CUSTOM_FIRMWARE_PATH", (kFixtures + "/good").c_str());
    paths = tpu_runtime::default_library_paths("bm1688");
    EXPECT_EQ(paths.firmware, kGoodFirmware1688);
    EXPECT_EQ(paths.plugin, "");
    EXPECT_EQ(Firmware::open(paths.firmware, "bm1688").path(), kGoodFirmware1688);
  }
  ScopedEnv file("TPUKERNEL_CUSTOM_FIRMWARE_PATH", "/somewhere/libmy_firmware.so");
  EXPECT_EQ(tpu_runtime::default_library_paths("bm1684x").firmware, "/somewhere/libmy_firmware.so");
  EXPECT_EQ(tpu_runtime::firmware_file_name("bm1684x"), "libcmodel_custom_bm1684x.so");
}

// A directory filled by the vendor's flow holds libcmodel_custom_1688.so:
// found under that name when ours is absent; ours wins when both exist.
TEST(LibraryPaths, VendorFirmwareNameInADirectory) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::path(testing::TempDir()) / "vendor_firmware_dir";
  fs::remove_all(dir);
  fs::create_directories(dir);
  fs::copy_file(kGoodFirmware1688, dir / "libcmodel_custom_1688.so");
  ScopedEnv no_root("TPUC_ROOT", nullptr), firmware("TPUKERNEL_CUSTOM_FIRMWARE_PATH", dir.c_str());
  const std::string vendor_path = (dir / "libcmodel_custom_1688.so").string();
  EXPECT_EQ(tpu_runtime::default_library_paths("bm1688").firmware, vendor_path);
  EXPECT_EQ(Firmware::open(vendor_path, "bm1688").chip(), "bm1688");
  // No bm1684x file in any name: the expected (our) name is reported.
  EXPECT_EQ(tpu_runtime::default_library_paths("bm1684x").firmware,
            (dir / "libcmodel_custom_bm1684x.so").string());
  fs::copy_file(kGoodFirmware1688, dir / "libcmodel_custom_bm1688.so");
  EXPECT_EQ(tpu_runtime::default_library_paths("bm1688").firmware, (dir / "libcmodel_custom_bm1688.so").string());
  EXPECT_EQ(tpu_runtime::vendor_firmware_file_name("bm1684x"), "libcmodel_custom_1684x.so");
  fs::remove_all(dir);
}

// ---- plugin hooks ---------------------------------------------------------

class PluginTest : public testing::Test {
 protected:
  Plugin plugin = Plugin::open(kGoodPlugin);
  // fx_copy's {add, forbid_axis}, with something in element 0 that the
  // hooks must not see.
  PackedParams copy_params() const {
    PackedParams p = params(R"({"add": 0.5, "forbid_axis": 2})");
    p.set_global_buffer(0xdeadbeefULL);
    return p;
  }
  void expect_hook_saw_params() {
    int64_t *slot0 = fixture_variable<int64_t>(kGoodPlugin, "fx_seen_slot0");
    int *size = fixture_variable<int>(kGoodPlugin, "fx_seen_param_size");
    ASSERT_TRUE(slot0 && size);
    EXPECT_EQ(*slot0, 0);
    EXPECT_EQ(*size, 3 * 64);
    *slot0 = -1;
    *size = -1;
  }
};

TEST_F(PluginTest, HooksGetTheParametersWithElementZeroCleared) {
  int in_idx = 0, in_slice = 0;
  const std::vector<float> in = {1, 2, 3, 4, 5, 6};
  std::vector<float> out(6);
  plugin.inference("fx_copy", copy_params(), {{2, 3}}, {in.data()}, {out.data()});
  expect_hook_saw_params();
  plugin.shape_inference("fx_copy", copy_params(), {{2, 3}}, 1);
  expect_hook_saw_params();
  plugin.force_dynamic_run("fx_copy", copy_params());
  expect_hook_saw_params();
  plugin.local_gen_support("fx_copy", copy_params());
  expect_hook_saw_params();
  plugin.allow_data_split("fx_copy", copy_params(), 0, GROUP_NORMAL);
  expect_hook_saw_params();
  plugin.backward_h("fx_copy", copy_params(), 0, 4, &in_idx, &in_slice);
  expect_hook_saw_params();
  plugin.backward_w("fx_copy", copy_params(), 0, 4, &in_idx, &in_slice);
  expect_hook_saw_params();
}

TEST_F(PluginTest, Inference) {
  const std::vector<float> in = {1, -2, 3.5f, 4, 5, 6};
  std::vector<float> out(6, -100);
  plugin.inference("fx_copy", copy_params(), {{3, 2}}, {in.data()}, {out.data()});
  for (std::size_t i = 0; i < in.size(); ++i) EXPECT_EQ(out[i], in[i] + 0.5f) << i;
}

TEST_F(PluginTest, InferenceIsRequired) {
  const std::vector<float> in(4);
  std::vector<float> out(4);
  const std::string message = error_of([&] { plugin.inference("fx_plain", PackedParams(), {{4}}, {in.data()}, {out.data()}); });
  EXPECT_CONTAINS(message, kGoodPlugin);
  EXPECT_CONTAINS(message, "no inference_fx_plain");
}

TEST_F(PluginTest, InferenceChecksItsArguments) {
  const std::vector<float> in(4);
  std::vector<float> out(4);
  EXPECT_CONTAINS(error_of([&] { plugin.inference("fx_copy", copy_params(), {{4}, {4}}, {in.data()}, {out.data()}); }),
                  "2 input shapes for 1 input buffers");
  EXPECT_CONTAINS(error_of([&] { plugin.inference("fx_copy", copy_params(), {{4}}, {in.data()}, {nullptr}); }),
                  "output buffer 0 is null");
  EXPECT_CONTAINS(error_of([&] {
                    plugin.inference("fx_copy", copy_params(), {{1, 1, 1, 1, 1, 1, 1, 1, 4}}, {in.data()}, {out.data()});
                  }),
                  "input 0 has 9 dims");
}

TEST_F(PluginTest, ShapeInferenceHook) {
  EXPECT_EQ(plugin.shape_inference("fx_copy", copy_params(), {{2, 3, 4}}, 1), (std::vector<Shape>{{4, 3, 2}}));
  EXPECT_EQ(plugin.shape_inference("fx_pair", PackedParams(), {{2, 3, 4}}, 2),
            (std::vector<Shape>{{2, 3, 4}, {24}}));
}

// A hook that calls exit(), abort(), _exit() or fails an assert(), or
// faults, fails its call with a message naming the hook and the line; the
// process goes on (the plugin is linked with the SDK's exit wrappers).
TEST_F(PluginTest, AHookThatEndsTheProcessFailsItsCallInstead) {
  auto dying = [&](int how) {
    return error_of([&] {
      plugin.shape_inference("fx_fault", PackedParams::from_json_text("{\"how\": " + std::to_string(how) + "}"),
                             {{2, 3}}, 1);
    });
  };
  std::string m = dying(1);
  const int line = *fixture_variable<int>(kGoodPlugin, "fx_dying_hook_line");  // set by the hook
  // Each a short first line naming the hook, what it did and where, then
  // the details and the library on their own lines.
  EXPECT_CONTAINS(m, "plugin hook shape_inference_fx_fault: called exit(0) at ");
  EXPECT_CONTAINS(m, "fixture_plugin.c:" + std::to_string(line) + " (shape_inference_fx_fault)\n");
  EXPECT_CONTAINS(m, "good/libplugin_custom.so");
  EXPECT_CONTAINS(dying(2), "plugin hook shape_inference_fx_fault: called abort() at ");
  m = dying(3);
  EXPECT_CONTAINS(m, "plugin hook shape_inference_fx_fault: assert(how == 0) failed at ");
  EXPECT_CONTAINS(m, "fixture_plugin.c:");
  m = dying(4);
  EXPECT_CONTAINS(m, "plugin hook shape_inference_fx_fault: SIGSEGV (address not mapped): kernel fault at ");
  EXPECT_CONTAINS(m, "fixture_plugin.c:");
  EXPECT_CONTAINS(m, " (shape_inference_fx_fault)\n  in plugin hook code at address 0x10\n");
  EXPECT_CONTAINS(dying(5), "called _exit(3)");
  // The hook still works when told not to die.
  EXPECT_EQ(plugin.shape_inference("fx_fault", PackedParams::from_json_text("{\"how\": 0}"), {{2, 3}}, 1),
            (std::vector<Shape>{{2, 3}}));
}

// fx_copy declares no parameter types: its values are packed by their JSON
// kinds, and each integer is named in a warning (its parser might read a
// float there).
TEST_F(PluginTest, IntegersForAnOpWithoutDeclaredTypesAreNamed) {
  EXPECT_FALSE(plugin.param_types("fx_copy").has_value());
  std::vector<std::string> warnings;
  const PackedParams p = plugin.pack_params("fx_copy", nlohmann::ordered_json{{"add", 1}, {"forbid_axis", 2.5}}, warnings);
  EXPECT_EQ(p.data()[1].int_t, 1);
  EXPECT_EQ(p.data()[2].float_t, 2.5f);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_CONTAINS(warnings[0], "op 'fx_copy' parameter 'add': the integer 1 is packed as an int");
  EXPECT_CONTAINS(warnings[0], "param_types_fx_copy");
}

TEST_F(PluginTest, ShapeInferenceDefault) {
  EXPECT_EQ(plugin.shape_inference("fx_plain", PackedParams(), {{2, 3, 4}, {5}}, 1), (std::vector<Shape>{{2, 3, 4}}));
  std::string message = error_of([&] { plugin.shape_inference("fx_plain", PackedParams(), {{2, 3, 4}}, 2); });
  EXPECT_CONTAINS(message, "no shape_inference_fx_plain");
  EXPECT_CONTAINS(message, "2 outputs");
  message = error_of([&] { plugin.shape_inference("fx_plain", PackedParams(), {}, 1); });
  EXPECT_CONTAINS(message, "no inputs");
  EXPECT_CONTAINS(error_of([&] { plugin.shape_inference("fx_plain", PackedParams(), {{1}}, 0); }), "num_outputs = 0");
}

TEST_F(PluginTest, FlagHooksAndTheirDefaults) {
  EXPECT_TRUE(plugin.force_dynamic_run("fx_copy", copy_params()));
  EXPECT_FALSE(plugin.force_dynamic_run("fx_plain", PackedParams()));
  EXPECT_TRUE(plugin.local_gen_support("fx_copy", copy_params()));
  EXPECT_FALSE(plugin.local_gen_support("fx_plain", PackedParams()));
  // fx_copy forbids the axis in its parameter 'forbid_axis' (2) and 3D groups.
  EXPECT_TRUE(plugin.allow_data_split("fx_copy", copy_params(), 0, GROUP_NORMAL));
  EXPECT_FALSE(plugin.allow_data_split("fx_copy", copy_params(), 2, GROUP_NORMAL));
  EXPECT_FALSE(plugin.allow_data_split("fx_copy", copy_params(), 0, GROUP_3D));
  for (int axis = 0; axis < 4; ++axis) {
    EXPECT_TRUE(plugin.allow_data_split("fx_plain", PackedParams(), axis, GROUP_NORMAL));
    EXPECT_TRUE(plugin.allow_data_split("fx_plain", PackedParams(), axis, GROUP_3D));
  }
}

TEST_F(PluginTest, BackwardHooksUnderEitherSpelling) {
  int in_idx = 0, in_slice = 0;
  // backwardh_fx_copy (the documented spelling): one row of halo.
  EXPECT_TRUE(plugin.backward_h("fx_copy", copy_params(), 4, 3, &in_idx, &in_slice));
  EXPECT_EQ(in_idx, 3);
  EXPECT_EQ(in_slice, 5);
  // The hook started from the compiler's pre-filled -1.
  EXPECT_EQ(*fixture_variable<int>(kGoodPlugin, "fx_seen_prefill_idx"), -1);
  EXPECT_EQ(*fixture_variable<int>(kGoodPlugin, "fx_seen_prefill_slice"), -1);
  EXPECT_FALSE(plugin.backward_h("fx_copy", copy_params(), 4, 0, &in_idx, &in_slice));
  // backward_w_fx_copy (the compiler's spelling): stride 2.
  EXPECT_TRUE(plugin.backward_w("fx_copy", copy_params(), 5, 10, &in_idx, &in_slice));
  EXPECT_EQ(in_idx, 10);
  EXPECT_EQ(in_slice, 20);
  EXPECT_FALSE(plugin.backward_w("fx_copy", copy_params(), 0, 101, &in_idx, &in_slice));
  // Both spellings defined: the compiler's wins.
  EXPECT_TRUE(plugin.backward_h("fx_both", PackedParams(), 1, 2, &in_idx, &in_slice));
  EXPECT_EQ(in_idx, 101);
  EXPECT_TRUE(plugin.has_symbol("backwardh_fx_copy"));
  EXPECT_FALSE(plugin.has_symbol("backward_h_fx_copy"));
}

TEST_F(PluginTest, BackwardDefaultsAreIdentity) {
  int in_idx = -5, in_slice = -5;
  EXPECT_TRUE(plugin.backward_h("fx_plain", PackedParams(), 7, 9, &in_idx, &in_slice));
  EXPECT_EQ(in_idx, 7);
  EXPECT_EQ(in_slice, 9);
  EXPECT_TRUE(plugin.backward_w("fx_plain", PackedParams(), 2, 30, &in_idx, &in_slice));
  EXPECT_EQ(in_idx, 2);
  EXPECT_EQ(in_slice, 30);
  EXPECT_CONTAINS(error_of([&] { plugin.backward_h("fx_plain", PackedParams(), 0, 1, nullptr, &in_slice); }),
                  "must not be null");
}

TEST_F(PluginTest, CopiesShareTheLibrary) {
  std::optional<Plugin> first(Plugin::open(kGoodPlugin));
  const Plugin second = *first;
  first.reset();
  EXPECT_EQ(second.path(), kGoodPlugin);
  EXPECT_TRUE(second.local_gen_support("fx_copy", copy_params()));
}

// ---- emulator helpers -------------------------------------------------------

// An fp32 tensor in global memory.
struct DeviceTensor {
  Shape shape;
  uint64_t addr = 0;

  DeviceTensor(Shape s, const std::vector<float> &values) : shape(std::move(s)) {
    addr = cmodel_global_alloc(bytes());
    EXPECT_NE(addr, 0u) << cmodel_last_error();
    EXPECT_EQ(cmodel_global_write(addr, values.data(), bytes()), 0) << cmodel_last_error();
  }
  explicit DeviceTensor(Shape s) : DeviceTensor(s, std::vector<float>(count(s), 0.0f)) {}
  DeviceTensor(const DeviceTensor &) = delete;
  ~DeviceTensor() {
    if (addr) cmodel_global_free(addr);
  }
  static std::size_t count(const Shape &s) {
    std::size_t n = 1;
    for (int d : s) n *= std::size_t(d);
    return n;
  }
  uint64_t bytes() const { return count(shape) * sizeof(float); }
  std::vector<float> read() const {
    std::vector<float> values(count(shape));
    EXPECT_EQ(cmodel_global_read(values.data(), addr, bytes()), 0) << cmodel_last_error();
    return values;
  }
  tensor_spec_t spec() const { return make_spec(addr, shape); }

  static tensor_spec_t make_spec(uint64_t addr, const Shape &shape) {
    tensor_spec_t spec;
    std::memset(&spec, 0, sizeof spec);
    spec.addr = addr;
    spec.dtype = SG_DTYPE_FP32;
    spec.dims = int(shape.size());
    for (std::size_t i = 0; i < shape.size(); ++i) spec.shape[i] = shape[i];
    return spec;
  }
};

std::vector<float> ramp(std::size_t n, float start = 1) {
  std::vector<float> values(n);
  for (std::size_t i = 0; i < n; ++i) values[i] = start + float(i) * 0.25f;
  return values;
}

// Moves rows [h_idx, h_idx + h_slice) of an fp32 (n, c, h, w) global tensor
// between global and local memory, as a layer group does around local layers.
struct SliceMove {
  uint64_t global;
  local_addr_t local;
  dim4 shape;
  dim4 global_stride;
  bool to_local;
  static void kernel(const void *arg) {
    const auto *m = static_cast<const SliceMove *>(arg);
    if (m->to_local)
      tpu_gdma_cpy_S2L(m->local, m->global, &m->shape, nullptr, &m->global_stride, DT_FP32);
    else
      tpu_gdma_cpy_L2S(m->global, m->local, &m->shape, &m->global_stride, nullptr, DT_FP32);
  }
};

void move_slice(const DeviceTensor &t, int h_idx, int h_slice, local_addr_t local, bool to_local) {
  const int n = t.shape[0], c = t.shape[1], h = t.shape[2], w = t.shape[3];
  SliceMove move{t.addr + uint64_t(h_idx) * uint64_t(w) * sizeof(float), local, {n, c, h_slice, w},
                 {c * h * w, h * w, w, 1}, to_local};
  ASSERT_EQ(cmodel_run(&SliceMove::kernel, &move), 0) << cmodel_last_error();
}

local_sec_info_t slice_info(const Shape &shape, int h_idx, int h_slice) {
  local_sec_info_t info;
  std::memset(&info, 0, sizeof info);
  info.group_type = GROUP_NORMAL;
  info.n_slice = info.out_n_slice = shape[0];
  info.d_slice = 1;
  info.is_h_split = 1;
  info.h_idx = info.out_h_idx = h_idx;
  info.h_slice = info.out_h_slice = h_slice;
  info.w_slice = info.out_w_slice = shape[3];
  info.c_slice = shape[1];
  return info;
}

// Checks rows [h_idx, h_idx + h_slice) of `got` equal `want` and the rest is 0.
void expect_rows(const std::vector<float> &got, const std::vector<float> &want, const Shape &shape, int h_idx,
                 int h_slice) {
  const int n = shape[0], c = shape[1], h = shape[2], w = shape[3];
  for (int i = 0; i < n * c * h * w; ++i) {
    const int row = (i / w) % h;
    const bool inside = row >= h_idx && row < h_idx + h_slice;
    ASSERT_EQ(got[std::size_t(i)], inside ? want[std::size_t(i)] : 0.0f) << "element " << i << ", row " << row;
  }
}

class EmulatorTest : public testing::Test {
 protected:
  void SetUp() override { ASSERT_EQ(cmodel_open("bm1684x"), 0) << cmodel_last_error(); }
  void TearDown() override { cmodel_close(); }
};

// ---- backend ----------------------------------------------------------------

class BackendTest : public EmulatorTest {
 protected:
  Backend backend = Backend::open(kGoodBackend);
};

TEST_F(BackendTest, RegisteredOps) {
  EXPECT_EQ(backend.path(), kGoodBackend);
  EXPECT_EQ(backend.registered_ops(),
            (std::vector<std::string>{"fx_copy", "fx_plain", "fx_scratch", "fx_local", "fx_fail", "fx_fault", "fx_cast",
                                      "fx_short"}));
  EXPECT_EQ(backend.registered_local_ops(), (std::vector<std::string>{"fx_copy", "fx_local"}));
  EXPECT_TRUE(backend.has_local("fx_local"));
  EXPECT_TRUE(backend.has_local("fx_copy"));
  EXPECT_FALSE(backend.has_local("fx_plain"));
  EXPECT_FALSE(backend.has_local("fx_nope"));
}

TEST_F(BackendTest, RunGlobalCopies) {
  const std::vector<float> values = ramp(24);
  for (const char *op : {"fx_copy", "fx_plain", "fx_local"}) {
    SCOPED_TRACE(op);
    DeviceTensor in({2, 3, 4}, values), out({2, 3, 4});
    std::vector<tensor_spec_t> outputs = {out.spec()};
    backend.run_global(op, PackedParams(), {in.spec()}, outputs);
    EXPECT_EQ(out.read(), values);
  }
  // The run's statistics are the op's own.
  EXPECT_NE(std::string(cmodel_last_run_stats()).find("tpu_gdma_cpy_S2S"), std::string::npos)
      << cmodel_last_run_stats();
}

TEST_F(BackendTest, UnknownOpListsTheRegisteredOps) {
  DeviceTensor in({4}), out({4});
  std::vector<tensor_spec_t> outputs = {out.spec()};
  const std::string message = error_of([&] { backend.run_global("fx_nope", PackedParams(), {in.spec()}, outputs); });
  EXPECT_CONTAINS(message, kGoodBackend);
  EXPECT_CONTAINS(message, "no custom op named 'fx_nope'");
  EXPECT_CONTAINS(message, "(registered: " + kGoodOps + ")");
  EXPECT_CONTAINS(error_of([&] { backend.global_buffer_size("fx_nope", PackedParams(), {in.spec()}, outputs); }),
                  "no custom op named 'fx_nope'");
}

TEST_F(BackendTest, ScratchBufferAddressArrivesInElementZero) {
  const std::vector<float> values = ramp(24, -3);
  DeviceTensor in({2, 3, 4}, values), out({2, 3, 4});
  std::vector<tensor_spec_t> outputs = {out.spec()};
  PackedParams p = params(R"({"bytes": 4096, "fail": 0})");
  p.set_global_buffer(0x1234);  // run_global owns element 0
  EXPECT_EQ(backend.global_buffer_size("fx_scratch", p, {in.spec()}, outputs), 4096);
  EXPECT_EQ(backend.global_buffer_size("fx_copy", p, {in.spec()}, outputs), 0);  // no _global_bfsz

  backend.run_global("fx_scratch", p, {in.spec()}, outputs);
  EXPECT_EQ(out.read(), values);  // copied through the scratch buffer
  EXPECT_EQ(*fixture_variable<int64_t>(kGoodBackend, "fx_seen_global_bfsz_slot0"), 0);  // bfsz: element 0 is 0
  const uint64_t scratch = *fixture_variable<uint64_t>(kGoodBackend, "fx_seen_scratch_addr");
  EXPECT_NE(scratch, 0u);
  EXPECT_NE(scratch, in.addr);
  EXPECT_NE(scratch, out.addr);
  // The buffer was freed after the run.
  cmodel_global_free(scratch);
  EXPECT_CONTAINS(cmodel_last_error(), "not the start of an allocated global buffer");
}

TEST_F(BackendTest, NoScratchBufferMeansElementZeroIsZero) {
  DeviceTensor in({8}, ramp(8)), out({8});
  std::vector<tensor_spec_t> outputs = {out.spec()};
  PackedParams p = params(R"({"bytes": 0, "fail": 0})");
  p.set_global_buffer(0xabcdef);
  backend.run_global("fx_scratch", p, {in.spec()}, outputs);
  EXPECT_EQ(*fixture_variable<uint64_t>(kGoodBackend, "fx_seen_scratch_addr"), 0u);
  EXPECT_EQ(out.read(), ramp(8));
}

TEST_F(BackendTest, ScratchBufferIsFreedWhenTheKernelFails) {
  DeviceTensor in({8}, ramp(8)), out({8});
  std::vector<tensor_spec_t> outputs = {out.spec()};
  const std::string message = error_of(
      [&] { backend.run_global("fx_scratch", params(R"({"bytes": 1024, "fail": 1})"), {in.spec()}, outputs); });
  EXPECT_CONTAINS(message, "\n  in backend_api_fx_scratch_global of ");
  const uint64_t scratch = *fixture_variable<uint64_t>(kGoodBackend, "fx_seen_scratch_addr");
  EXPECT_NE(scratch, 0u);
  cmodel_global_free(scratch);
  EXPECT_CONTAINS(cmodel_last_error(), "not the start of an allocated global buffer");
}

TEST_F(BackendTest, KernelErrorBecomesAnErrorAndTheProcessGoesOn) {
  DeviceTensor in({2, 8}, ramp(16)), out({2, 8});
  std::vector<tensor_spec_t> outputs = {out.spec()};
  const std::string message = error_of([&] { backend.run_global("fx_fail", PackedParams(), {in.spec()}, outputs); });
  // The emulator's message, readable: the API, the rule broken and the
  // kernel's call site on the first line, the details after it, then the
  // call and the library (relative to the working directory: its prefix
  // depends on where the test runs).
  EXPECT_EQ(message.rfind("tpu_gdma_cpy_S2S: memory fault at ", 0), 0u) << message;
  EXPECT_CONTAINS(message.substr(0, message.find('\n')), "fixture_kernels.c:");
  const std::size_t call = message.find("\n  in backend_api_fx_fail_global of ");
  ASSERT_NE(call, std::string::npos) << message;
  EXPECT_CONTAINS(message.substr(call), "custom_fixtures/good/libbackend_custom.so");
  // The emulator is still usable.
  backend.run_global("fx_copy", PackedParams(), {in.spec()}, outputs);
  EXPECT_EQ(out.read(), ramp(16));
}

// A host fault in kernel code is an error too, naming the kernel's line.
TEST_F(BackendTest, KernelFaultBecomesAnErrorAndTheProcessGoesOn) {
  DeviceTensor in({8}, ramp(8)), out({8});
  std::vector<tensor_spec_t> outputs = {out.spec()};
  const std::string message = error_of([&] { backend.run_global("fx_fault", PackedParams(), {in.spec()}, outputs); });
  const int line = *fixture_variable<int>(kGoodBackend, "fx_fault_line");
  EXPECT_EQ(message.rfind("SIGFPE (integer divide by zero): kernel fault at ", 0), 0u) << message;
  EXPECT_CONTAINS(message, "fixture_kernels.c:" + std::to_string(line) + " (api_fx_fault_global)\n  in kernel code\n"
                           "  in backend_api_fx_fault_global of ");
  backend.run_global("fx_copy", PackedParams(), {in.spec()}, outputs);
  EXPECT_EQ(out.read(), ramp(8));
}

TEST_F(BackendTest, WithoutAnOpenEmulator) {
  cmodel_close();
  tensor_spec_t spec = DeviceTensor::make_spec(0, {4});
  std::vector<tensor_spec_t> outputs = {spec};
  EXPECT_CONTAINS(error_of([&] { backend.run_global("fx_copy", PackedParams(), {spec}, outputs); }),
                  "no emulator is open");
}

TEST_F(BackendTest, OperandsAreChecked) {
  DeviceTensor in({4}), out({4});
  std::vector<tensor_spec_t> none;
  EXPECT_CONTAINS(error_of([&] { backend.run_global("fx_copy", PackedParams(), {in.spec()}, none); }),
                  "at least one of each");
  tensor_spec_t bad = in.spec();
  bad.dims = 9;
  std::vector<tensor_spec_t> outputs = {out.spec()};
  EXPECT_CONTAINS(error_of([&] { backend.run_global("fx_copy", PackedParams(), {bad}, outputs); }),
                  "input 0 has dims = 9");
}

TEST_F(BackendTest, LocalBufferSize) {
  const Shape shape = {1, 2, 8, 8};
  const std::vector<tensor_spec_t> specs = {DeviceTensor::make_spec(0, shape)};
  PackedParams p;
  p.set_local_buffer(77);
  // fx_local asks for h_slice * w * 4 bytes, with element 0 cleared.
  EXPECT_EQ(backend.local_buffer_size("fx_local", p, slice_info(shape, 2, 4), specs, specs), 4 * 8 * 4);
  EXPECT_EQ(*fixture_variable<int64_t>(kGoodBackend, "fx_seen_local_bfsz_slot0"), 0);
  EXPECT_EQ(backend.local_buffer_size("fx_copy", p, slice_info(shape, 2, 4), specs, specs), 0);  // no _local_bfsz
  std::string message = error_of([&] { backend.local_buffer_size("fx_plain", p, slice_info(shape, 0, 8), specs, specs); });
  EXPECT_CONTAINS(message, "op 'fx_plain' has no local layer");
  EXPECT_CONTAINS(message, "(registered local ops: fx_copy, fx_local)");
  message = error_of([&] { backend.local_buffer_size("fx_nope", p, slice_info(shape, 0, 8), specs, specs); });
  EXPECT_CONTAINS(message, "no custom op named 'fx_nope' (registered: " + kGoodOps + ")");
}

TEST_F(BackendTest, RunLocalThroughTheLocalBuffer) {
  const Shape shape = {1, 2, 8, 8};
  const std::vector<float> values = ramp(128);
  DeviceTensor in(shape, values), out(shape), through_buffer(shape);
  const int h_idx = 2, h_slice = 4;
  const local_addr_t in_local = 0, buffer = 8192, out_local = 16384;
  move_slice(in, h_idx, h_slice, in_local, true);
  std::vector<tensor_spec_t> outputs = {DeviceTensor::make_spec(out_local, shape)};
  backend.run_local("fx_local", PackedParams(), int(buffer), slice_info(shape, h_idx, h_slice),
                    {DeviceTensor::make_spec(in_local, shape)}, outputs);
  EXPECT_EQ(*fixture_variable<int>(kGoodBackend, "fx_seen_local_buffer"), int(buffer));
  move_slice(out, h_idx, h_slice, out_local, false);
  move_slice(through_buffer, h_idx, h_slice, buffer, false);
  expect_rows(out.read(), values, shape, h_idx, h_slice);
  expect_rows(through_buffer.read(), values, shape, h_idx, h_slice);
}

TEST_F(BackendTest, RunLocalNeedsALocalOp) {
  const Shape shape = {1, 2, 8, 8};
  std::vector<tensor_spec_t> outputs = {DeviceTensor::make_spec(0, shape)};
  const std::string message = error_of([&] {
    backend.run_local("fx_plain", PackedParams(), 0, slice_info(shape, 0, 8), {DeviceTensor::make_spec(0, shape)},
                      outputs);
  });
  EXPECT_CONTAINS(message, "op 'fx_plain' has no local layer");
  EXPECT_CONTAINS(message, "fx_copy, fx_local");
}

TEST_F(BackendTest, BareSetHasNoLocalOps) {
  const Backend bare = Backend::open(kBareBackend);
  EXPECT_EQ(bare.registered_ops(), std::vector<std::string>{"fx_bare"});
  EXPECT_TRUE(bare.registered_local_ops().empty());
  const Shape shape = {1, 2, 8, 8};
  std::vector<tensor_spec_t> outputs = {DeviceTensor::make_spec(0, shape)};
  EXPECT_CONTAINS(error_of([&] {
                    bare.run_local("fx_bare", PackedParams(), 0, slice_info(shape, 0, 8),
                                   {DeviceTensor::make_spec(0, shape)}, outputs);
                  }),
                  "(registered local ops: none)");
  // Two sets loaded at once keep their own symbols.
  DeviceTensor in({6}, ramp(6)), out({6});
  std::vector<tensor_spec_t> out_specs = {out.spec()};
  bare.run_global("fx_bare", PackedParams(), {in.spec()}, out_specs);
  EXPECT_EQ(out.read(), ramp(6));
}

// A registration whose function no source defines: the library loads, and
// each call of a missing function stops with its name and registration.
TEST_F(BackendTest, RegisteredButUndefinedFunctionsFailWhenCalled) {
  const Backend partial = Backend::open(kPartialBackend);
  EXPECT_TRUE(partial.has_local("fx_partial"));
  DeviceTensor in({6}, ramp(6)), out({6});
  std::vector<tensor_spec_t> outputs = {out.spec()};
  // The global layer asks its scratch size first: api_fx_partial_global_bfsz.
  std::string message = error_of([&] { partial.run_global("fx_partial", PackedParams(), {in.spec()}, outputs); });
  EXPECT_CONTAINS(message, "api_fx_partial_global_bfsz is registered");
  EXPECT_CONTAINS(message, "register_custom_global_bfsz(fx_partial)");
  const Shape shape = {1, 2, 8, 8};
  message = error_of([&] {
    partial.local_buffer_size("fx_partial", PackedParams(), slice_info(shape, 0, 8),
                              {DeviceTensor::make_spec(0, shape)}, {DeviceTensor::make_spec(0, shape)});
  });
  EXPECT_CONTAINS(message, "api_fx_partial_local_bfsz is registered");
  EXPECT_CONTAINS(message, "register_custom_local_bfsz(fx_partial)");
  std::vector<tensor_spec_t> local_outputs = {DeviceTensor::make_spec(0, shape)};
  message = error_of([&] {
    partial.run_local("fx_partial", PackedParams(), 0, slice_info(shape, 0, 8), {DeviceTensor::make_spec(0, shape)},
                      local_outputs);
  });
  EXPECT_CONTAINS(message, "api_fx_partial_local is registered (register_custom_local_op(fx_partial)");
  // The emulator is usable afterwards, and the defined global layer works
  // through the firmware, which asks no scratch size.
  const Firmware firmware = Firmware::open(kPartialFirmware, "bm1684x");
  firmware.run_global("fx_partial", PackedParams(), {in.spec()}, outputs);
  EXPECT_EQ(out.read(), ramp(6));
  message = error_of([&] {
    firmware.run_local("fx_partial", PackedParams(), slice_info(shape, 0, 8), {DeviceTensor::make_spec(0, shape)},
                       local_outputs);
  });
  EXPECT_CONTAINS(message, "api_fx_partial_local is registered");
}

// ---- build identity -----------------------------------------------------------

TEST(BuildIdentity, OneBuildAgreesAndAnotherIsRefused) {
  const Plugin plugin = Plugin::open(kGoodPlugin);
  const Backend backend = Backend::open(kGoodBackend);
  const Firmware firmware = Firmware::open(kGoodFirmware1684x, "bm1684x");
  const std::string id = backend.build_identity().id;
  ASSERT_EQ(id.size(), 16u) << id;
  EXPECT_EQ(id.find_first_not_of("0123456789abcdef"), std::string::npos) << id;
  EXPECT_EQ(plugin.build_identity().id, id);
  EXPECT_EQ(firmware.build_identity().id, id);
  EXPECT_CONTAINS(backend.build_identity().info, "good");  // where its sources are
  EXPECT_NO_THROW(tpu_runtime::check_same_build(&plugin, &backend, &firmware));

  const Backend stale = Backend::open(kStaleBackend);
  EXPECT_NE(stale.build_identity().id, id);
  const std::string message = error_of([&] { tpu_runtime::check_same_build(&plugin, &stale, &firmware); });
  EXPECT_CONTAINS(message, "different builds");
  EXPECT_CONTAINS(message, kGoodPlugin);
  EXPECT_CONTAINS(message, kStaleBackend);
  EXPECT_CONTAINS(message, "build " + id);
  EXPECT_CONTAINS(message, "build " + stale.build_identity().id);
  EXPECT_CONTAINS(message, "rebuild_custom_lib_cmodel");
  // Sets built from other sources differ as well.
  EXPECT_NE(Backend::open(kBareBackend).build_identity().id, id);
}

// ---- firmware ---------------------------------------------------------------

class FirmwareTest : public EmulatorTest {
 protected:
  Firmware firmware = Firmware::open(kGoodFirmware1684x, "bm1684x");
};

TEST_F(FirmwareTest, RegisteredOps) {
  EXPECT_EQ(firmware.path(), kGoodFirmware1684x);
  EXPECT_EQ(firmware.chip(), "bm1684x");
  EXPECT_EQ(firmware.registered_ops(),
            (std::vector<std::string>{"fx_copy", "fx_plain", "fx_scratch", "fx_local", "fx_fail", "fx_fault", "fx_cast",
                                      "fx_short"}));
  EXPECT_EQ(firmware.registered_local_ops(), (std::vector<std::string>{"fx_copy", "fx_local"}));
}

TEST_F(FirmwareTest, ShapeInferCustomAndDefault) {
  tensor_spec_t in = DeviceTensor::make_spec(0, {2, 3, 4});
  in.dtype = SG_DTYPE_FP16;
  in.elem_num = 0;
  std::vector<tensor_spec_t> outputs(1);
  std::memset(outputs.data(), 0, sizeof(tensor_spec_t));
  firmware.shape_infer("fx_copy", PackedParams(), {in}, outputs);  // type_infer_fx_copy counts elements
  EXPECT_EQ(outputs[0].dtype, SG_DTYPE_FP16);
  EXPECT_EQ(outputs[0].dims, 3);
  EXPECT_EQ(outputs[0].shape[2], 4);
  EXPECT_EQ(outputs[0].elem_num, 24);

  in.elem_num = 5;
  std::memset(outputs.data(), 0, sizeof(tensor_spec_t));
  firmware.shape_infer("fx_plain", PackedParams(), {in}, outputs);  // the generated default copies input 0
  EXPECT_EQ(outputs[0].dtype, SG_DTYPE_FP16);
  EXPECT_EQ(outputs[0].dims, 3);
  EXPECT_EQ(outputs[0].shape[0], 2);
  EXPECT_EQ(outputs[0].shape[1], 3);
  EXPECT_EQ(outputs[0].elem_num, 5);
}

TEST_F(FirmwareTest, RunGlobal) {
  DeviceTensor in({3, 5}, ramp(15)), out({3, 5});
  std::vector<tensor_spec_t> outputs = {out.spec()};
  firmware.run_global("fx_copy", PackedParams(), {in.spec()}, outputs);
  EXPECT_EQ(out.read(), ramp(15));
}

TEST_F(FirmwareTest, ElementZeroIsPassedAsGiven) {
  DeviceTensor in({16}, ramp(16)), out({16}), scratch({256});
  std::vector<tensor_spec_t> outputs = {out.spec()};
  PackedParams p = params(R"({"bytes": 1024, "fail": 0})");
  p.set_global_buffer(scratch.addr);
  firmware.run_global("fx_scratch", p, {in.spec()}, outputs);
  EXPECT_EQ(*fixture_variable<uint64_t>(kGoodFirmware1684x, "fx_seen_scratch_addr"), scratch.addr);
  EXPECT_EQ(out.read(), ramp(16));
}

TEST_F(FirmwareTest, UnknownOpIsAnErrorWithTheEntrysMessage) {
  DeviceTensor in({4}), out({4});
  std::vector<tensor_spec_t> outputs = {out.spec()};
  std::string message = error_of([&] { firmware.run_global("fx_nope", PackedParams(), {in.spec()}, outputs); });
  EXPECT_CONTAINS(message, kGoodFirmware1684x);
  EXPECT_CONTAINS(message, "tpu_global_calculate_entry(\"fx_nope\") returned -1");
  EXPECT_CONTAINS(message, "no custom op named 'fx_nope' (registered: " + kGoodOps + ")");
  message = error_of([&] { firmware.shape_infer("fx_nope", PackedParams(), {in.spec()}, outputs); });
  EXPECT_CONTAINS(message, "tpu_shape_infer_entry: no custom op named 'fx_nope'");

  const Shape shape = {1, 2, 8, 8};
  std::vector<tensor_spec_t> local_outputs = {DeviceTensor::make_spec(0, shape)};
  message = error_of([&] {
    firmware.run_local("fx_plain", PackedParams(), slice_info(shape, 0, 8), {DeviceTensor::make_spec(0, shape)},
                       local_outputs);
  });
  EXPECT_CONTAINS(message, "tpu_local_calculate_entry: no custom op named 'fx_plain' (registered: fx_copy, fx_local)");
  std::vector<tensor_slice_t> slices(1);
  message = error_of([&] {
    firmware.slice_infer("fx_plain", PackedParams(), slice_info(shape, 0, 8), {DeviceTensor::make_spec(0, shape)},
                         slices);
  });
  EXPECT_CONTAINS(message, "tpu_slice_infer_entry: no custom op named 'fx_plain' (registered: fx_copy, fx_local)");
}

TEST_F(FirmwareTest, SliceInferCustomAndDefault) {
  const Shape shape = {1, 2, 8, 8};
  local_sec_info_t info = slice_info(shape, 1, 5);
  info.out_h_idx = 2;
  info.out_h_slice = 3;
  std::vector<tensor_slice_t> slices;  // given one element
  firmware.slice_infer("fx_local", PackedParams(), info, {DeviceTensor::make_spec(0, shape)}, slices);
  ASSERT_EQ(slices.size(), 1u);
  EXPECT_EQ(slices[0].h_idx, 1);  // the default copies the input rows
  EXPECT_EQ(slices[0].h_slice, 5);
  firmware.slice_infer("fx_copy", PackedParams(), info, {DeviceTensor::make_spec(0, shape)}, slices);
  EXPECT_EQ(slices[0].h_idx, 2);  // slice_infer_fx_copy takes the output rows
  EXPECT_EQ(slices[0].h_slice, 3);
}

TEST_F(FirmwareTest, RunLocal) {
  const Shape shape = {1, 2, 8, 8};
  const std::vector<float> values = ramp(128, 10);
  DeviceTensor in(shape, values), out(shape);
  const int h_idx = 3, h_slice = 5;
  const local_addr_t in_local = 4096, buffer = 12288, out_local = 20480;
  move_slice(in, h_idx, h_slice, in_local, true);
  PackedParams p;
  p.set_local_buffer(int(buffer));
  std::vector<tensor_spec_t> outputs = {DeviceTensor::make_spec(out_local, shape)};
  firmware.run_local("fx_local", p, slice_info(shape, h_idx, h_slice), {DeviceTensor::make_spec(in_local, shape)},
                     outputs);
  EXPECT_EQ(*fixture_variable<int>(kGoodFirmware1684x, "fx_seen_local_buffer"), int(buffer));
  move_slice(out, h_idx, h_slice, out_local, false);
  expect_rows(out.read(), values, shape, h_idx, h_slice);
}

TEST_F(FirmwareTest, KernelErrorBecomesAnErrorAndTheProcessGoesOn) {
  DeviceTensor in({8}, ramp(8)), out({8});
  std::vector<tensor_spec_t> outputs = {out.spec()};
  const std::string message = error_of([&] { firmware.run_global("fx_fail", PackedParams(), {in.spec()}, outputs); });
  EXPECT_EQ(message.rfind("tpu_gdma_cpy_S2S: memory fault at ", 0), 0u) << message;
  EXPECT_CONTAINS(message, "\n  in tpu_global_calculate_entry(\"fx_fail\") of ");
  firmware.run_global("fx_copy", PackedParams(), {in.spec()}, outputs);
  EXPECT_EQ(out.read(), ramp(8));
}

TEST_F(FirmwareTest, KernelFaultBecomesAnErrorAndTheProcessGoesOn) {
  DeviceTensor in({8}, ramp(8)), out({8});
  std::vector<tensor_spec_t> outputs = {out.spec()};
  const std::string message = error_of([&] { firmware.run_global("fx_fault", PackedParams(), {in.spec()}, outputs); });
  const int line = *fixture_variable<int>(kGoodFirmware1684x, "fx_fault_line");
  EXPECT_EQ(message.rfind("SIGFPE (integer divide by zero): kernel fault at ", 0), 0u) << message;
  EXPECT_CONTAINS(message, "fixture_kernels.c:" + std::to_string(line) + " (api_fx_fault_global)\n  in kernel code\n"
                           "  in tpu_global_calculate_entry(\"fx_fault\") of ");
  firmware.run_global("fx_copy", PackedParams(), {in.spec()}, outputs);
  EXPECT_EQ(out.read(), ramp(8));
}

TEST_F(FirmwareTest, TheOpenEmulatorMustBeTheFirmwaresChip) {
  const Firmware bm1688 = Firmware::open(kGoodFirmware1688, "bm1688");
  {
    DeviceTensor in({8}, ramp(8)), out({8});
    std::vector<tensor_spec_t> outputs = {out.spec()};
    EXPECT_CONTAINS(error_of([&] { bm1688.run_global("fx_copy", PackedParams(), {in.spec()}, outputs); }),
                    "the firmware is for bm1688 but the open emulator is bm1684x");
  }
  ASSERT_EQ(cmodel_open("bm1688"), 0) << cmodel_last_error();
  DeviceTensor in({8}, ramp(8)), out({8});
  std::vector<tensor_spec_t> outputs = {out.spec()};
  bm1688.run_global("fx_copy", PackedParams(), {in.spec()}, outputs);
  EXPECT_EQ(out.read(), ramp(8));
}

TEST_F(FirmwareTest, BareSetHasNoLocalOps) {
  const Firmware bare = Firmware::open(kBareFirmware, "bm1684x");
  EXPECT_TRUE(bare.registered_local_ops().empty());
  const Shape shape = {1, 2, 8, 8};
  std::vector<tensor_slice_t> slices(1);
  EXPECT_CONTAINS(error_of([&] {
                    bare.slice_infer("fx_bare", PackedParams(), slice_info(shape, 0, 8),
                                     {DeviceTensor::make_spec(0, shape)}, slices);
                  }),
                  "no custom op named 'fx_bare' (registered: none)");
}

}  // namespace
