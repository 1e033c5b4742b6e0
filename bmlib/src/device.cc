// device.cc: handles, the emulated device behind them, device information
// and the syncs.
//
// Launches run eagerly on the calling thread (module.cc); what a sync
// "waits for" is therefore only the failures of the launches it covers,
// each reported once by the first covering sync.
#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include "bmlib_internal.h"
#include "cmodel_host.h"

namespace bmlib {

namespace {

// One emulated device; the SDK cannot hold two emulators at once.
constexpr int device_count = 1;

struct ChipInfo {
  const char *name;
  unsigned int chipid;
  int core_num;
};
constexpr ChipInfo known_chips[] = {{"bm1684x", 0x1686, 1}, {"bm1688", 0x1686a200, 2}};

// Heap objects that are never destroyed: close_at_exit may run after
// static destructors of this library would have.
std::set<bm_context *> &live_handles() {
  static auto *handles = new std::set<bm_context *>;
  return *handles;
}
Device *&open_device() {
  static Device *device = nullptr;
  return device;
}

// The chip TPU_SDK_CHIP names (default bm1684x), or null after logging why not.
const ChipInfo *configured_chip() {
  const char *env = std::getenv("TPU_SDK_CHIP");
  const std::string_view name = env && *env ? env : "bm1684x";
  for (const ChipInfo &chip : known_chips)
    if (name == chip.name) return &chip;
  log_error("bm_dev_request", "TPU_SDK_CHIP=\"{}\" is not a chip this SDK emulates; set it to bm1684x or bm1688",
            name);
  return nullptr;
}

// Kernels a program ships in a library named by TPUKERNEL_FIRMWARE_PATH
// (as the vendor's cmodel loads its firmware) join the process-wide table.
bm_status_t load_firmware(Device &device) {
  const char *path = std::getenv("TPUKERNEL_FIRMWARE_PATH");
  if (!path || !*path) return BM_SUCCESS;
  const std::string file = checked_library_path(path, "bm_dev_request");
  if (file.empty()) {
    log_error("bm_dev_request", "TPUKERNEL_FIRMWARE_PATH=\"{}\" cannot be loaded (see above)", path);
    return BM_ERR_FAILURE;
  }
  device.firmware = dlopen(file.c_str(), RTLD_NOW | RTLD_GLOBAL);
  if (device.firmware) return BM_SUCCESS;
  log_error("bm_dev_request", "TPUKERNEL_FIRMWARE_PATH=\"{}\" cannot be loaded: {}", path, dlerror());
  return BM_ERR_FAILURE;
}

// The last handle is gone: nothing is queued (launches ran eagerly), so
// unload the modules and close the emulator; device memory goes with it.
void close_emulator(Device *&device) {
  release_modules(*device);
  if (device->firmware) dlclose(device->firmware);
  cmodel_set_owner(nullptr);
  cmodel_close();
  delete device;
  device = nullptr;
}

// A program that exits with handles still open: unload its modules and
// close the emulator before the emulator's own static objects go. Exit
// handlers run last-registered first, so one registered after the emulator
// has been opened runs before the destructors of the statics that opening
// constructed; a library destructor would run after them.
void close_at_exit() {
  Guard guard(lock());
  if (open_device()) close_emulator(open_device());
  for (bm_context *handle : live_handles()) delete handle;
  live_handles().clear();
}

void close_at_exit_once() {
  static const bool registered = std::atexit(close_at_exit) == 0;
  (void)registered;
}

bm_status_t open_emulator(Device *&device) {
  if (*cmodel_chip()) {
    log_error("bm_dev_request", "the emulator is already open through cmodel_open(\"{}\"); close it first",
              cmodel_chip());
    return BM_ERR_BUSY;
  }
  const ChipInfo *chip = configured_chip();
  if (!chip) return BM_ERR_PARAM;
  if (cmodel_open(chip->name) != 0) {
    log_error("bm_dev_request", "cannot open the {} emulator: {}", chip->name, cmodel_last_error());
    return BM_ERR_FAILURE;
  }
  auto fresh = std::make_unique<Device>();
  fresh->chip = chip->name;
  fresh->chipid = chip->chipid;
  fresh->core_num = chip->core_num;
  if (const bm_status_t status = load_firmware(*fresh); status != BM_SUCCESS) {
    cmodel_close();
    return status;
  }
  cmodel_set_owner("bmlib (a device handle from bm_dev_request is open)");
  device = fresh.release();
  close_at_exit_once();
  return BM_SUCCESS;
}

// Reports (and forgets) the first of the failures `covered` selects.
template <typename Covered>
bm_status_t sync_failures(Device &device, Covered covered) {
  auto &failures = device.failures;
  const auto first = std::find_if(failures.begin(), failures.end(), covered);
  if (first == failures.end()) return BM_SUCCESS;
  failures.erase(std::remove_if(failures.begin(), failures.end(), covered), failures.end());
  return BM_ERR_FAILURE;
}

bm_status_t sync_thread(bm_handle_t handle, int core_id, const char *tag) {
  Guard guard(lock());
  Device *device = device_of(handle, tag);
  if (!device) return BM_ERR_DEVNOTREADY;
  const int core = resolve_core(*device, core_id, tag);
  if (core < 0) return BM_ERR_PARAM;
  const std::thread::id self = std::this_thread::get_id();
  return sync_failures(*device, [&](const Failure &f) { return f.thread == self && f.core == core; });
}

bm_status_t sync_handle(bm_handle_t handle, const char *tag) {
  Guard guard(lock());
  Device *device = device_of(handle, tag);
  if (!device) return BM_ERR_DEVNOTREADY;
  return sync_failures(*device, [&](const Failure &f) { return f.handle == handle && f.core == 0; });
}

}  // namespace

std::recursive_mutex &lock() {
  static auto *mutex = new std::recursive_mutex;
  return *mutex;
}

Device *device_of(bm_handle_t handle, const char *tag) {
  if (!handle) {
    log_error(tag, "the device handle is null");
    return nullptr;
  }
  if (!live_handles().count(handle)) {
    log_error(tag, "{} is not an open device handle (freed already, or never returned by bm_dev_request)",
              static_cast<const void *>(handle));
    return nullptr;
  }
  return open_device();
}

int resolve_core(const Device &device, int core_id, const char *tag) {
  if (device.core_num == 1) return 0;  // bm1684x: the vendor library ignores core ids
  if (core_id >= 0 && core_id < device.core_num) return core_id;
  log_error(tag, "core {} does not exist on {} (cores 0..{})", core_id, device.chip, device.core_num - 1);
  return -1;
}

void remember_failure(Device &device, bm_context *handle, int core) {
  device.failures.push_back({std::this_thread::get_id(), handle, core});
}

}  // namespace bmlib

using namespace bmlib;

extern "C" {

bm_status_t bm_dev_getcount(int *count) {
  if (!count) {
    log_error(__func__, "count is a null pointer");
    return BM_ERR_PARAM;
  }
  *count = device_count;
  return BM_SUCCESS;
}

bm_status_t bm_dev_query(int devid) { return devid >= 0 && devid < device_count ? BM_SUCCESS : BM_ERR_BUSY; }

bm_status_t bm_dev_request(bm_handle_t *handle, int devid) {
  if (!handle) {
    log_error(__func__, "handle is a null pointer");
    return BM_ERR_DEVNOTREADY;
  }
  if (devid < 0 || devid >= device_count) {
    log_error(__func__, "device {} does not exist (the emulator provides device 0 only)", devid);
    return BM_ERR_FAILURE;
  }
  Guard guard(lock());
  if (!open_device())
    if (const bm_status_t status = open_emulator(open_device()); status != BM_SUCCESS) return status;
  ++open_device()->references;
  *handle = new bm_context{devid};
  live_handles().insert(*handle);
  return BM_SUCCESS;
}

void bm_dev_free(bm_handle_t handle) {
  Guard guard(lock());
  Device *device = device_of(handle, __func__);
  if (!device) return;
  // Failures nobody synced for die with the handle that queued them.
  auto &failures = device->failures;
  failures.erase(std::remove_if(failures.begin(), failures.end(), [&](const Failure &f) { return f.handle == handle; }),
                 failures.end());
  live_handles().erase(handle);
  delete handle;
  if (--device->references == 0) close_emulator(open_device());
}

int bm_get_devid(bm_handle_t handle) {
  Guard guard(lock());
  return device_of(handle, __func__) ? handle->devid : -1;
}

bm_status_t bm_get_chipid(bm_handle_t handle, unsigned int *p_chipid) {
  Guard guard(lock());
  const Device *device = device_of(handle, __func__);
  if (!device) return BM_ERR_DEVNOTREADY;
  if (!p_chipid) {
    log_error(__func__, "p_chipid is a null pointer");
    return BM_ERR_PARAM;
  }
  *p_chipid = device->chipid;
  return BM_SUCCESS;
}

bm_status_t bm_get_misc_info(bm_handle_t handle, struct bm_misc_info *pmisc_info) {
  Guard guard(lock());
  const Device *device = device_of(handle, __func__);
  if (!device) return BM_ERR_DEVNOTREADY;
  if (!pmisc_info) {
    log_error(__func__, "pmisc_info is a null pointer");
    return BM_ERR_PARAM;
  }
  std::memset(pmisc_info, 0, sizeof *pmisc_info);
  pmisc_info->pcie_soc_mode = 0;  // copies; mapping works as well
  pmisc_info->chipid = device->chipid;
  pmisc_info->tpu_core_num = device->core_num;
  return BM_SUCCESS;
}

bm_status_t bm_get_tpu_scalar_num(bm_handle_t handle, unsigned int *core_num) {
  Guard guard(lock());
  const Device *device = device_of(handle, __func__);
  if (!device) return BM_ERR_DEVNOTREADY;
  if (!core_num) {
    log_error(__func__, "core_num is a null pointer");
    return BM_ERR_PARAM;
  }
  *core_num = unsigned(device->core_num);
  return BM_SUCCESS;
}

bm_status_t bm_thread_sync(bm_handle_t handle) { return sync_thread(handle, 0, __func__); }
bm_status_t bm_thread_sync_from_core(bm_handle_t handle, int core_id) { return sync_thread(handle, core_id, __func__); }
bm_status_t tpu_kernel_sync(bm_handle_t handle) { return sync_thread(handle, 0, __func__); }
bm_status_t tpu_kernel_sync_from_core(bm_handle_t handle, int core_id) { return sync_thread(handle, core_id, __func__); }
bm_status_t bm_handle_sync(bm_handle_t handle) { return sync_handle(handle, __func__); }
void bm_flush(bm_handle_t handle) { (void)sync_handle(handle, __func__); }

bm_status_t bm_device_sync(bm_handle_t handle) {
  Guard guard(lock());
  Device *device = device_of(handle, __func__);
  if (!device) return BM_ERR_DEVNOTREADY;
  return sync_failures(*device, [](const Failure &) { return true; });
}

bm_status_t bm_emu_set_global_mem_size(unsigned long long bytes) {
  Guard guard(lock());
  if (cmodel_set_global_mem_size(bytes) == 0) return BM_SUCCESS;
  log_error(__func__, "{}", cmodel_last_error());
  // A size that is no size is BM_ERR_PARAM; a valid one refused means the open memory is in use.
  const bool valid = bytes == 0 || (bytes % 512 == 0 && bytes <= (32ull << 30));
  return valid ? BM_ERR_BUSY : BM_ERR_PARAM;
}

bm_status_t bm_emu_set_unallocated_copies(int allow) {
  Guard guard(lock());
  const char *value = allow < 0 ? "" : allow ? "allow" : "error";
  if (cmodel_set_option("unallocated_copies", value) == 0) return BM_SUCCESS;
  log_error(__func__, "{}", cmodel_last_error());
  return BM_ERR_PARAM;
}

// Launches finish before they return, so the timeout bounds the kernel's
// run itself: the emulator's run time limit (milliseconds here; <= 0 keeps
// the default).
bm_status_t bm_set_sync_timeout(bm_handle_t handle, int timeout) {
  Guard guard(lock());
  if (!device_of(handle, __func__)) return BM_ERR_DEVNOTREADY;
  if (timeout <= 0) return BM_SUCCESS;
  const std::string seconds = std::to_string(double(timeout) / 1000);
  return cmodel_set_option("run_timeout", seconds.c_str()) == 0 ? BM_SUCCESS : BM_ERR_PARAM;
}

}  // extern "C"
