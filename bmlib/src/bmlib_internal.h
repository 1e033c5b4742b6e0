// bmlib_internal.h: the state behind bmlib_runtime.h.
//
// One emulated device (device 0) stands for the chip: cmodel_open creates
// it at the first bm_dev_request and cmodel_close ends it with the last
// bm_dev_free. Every entry point takes the one library lock, so handles may
// be shared between threads and kernel runs on the device are serialised
// (the emulator itself has one global state).
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "bmlib_runtime.h"

// The public handle is a pointer to this; the registry in device.cc tells a
// live handle from a freed or invented one.
struct bm_context {
  int devid = 0;
};

namespace bmlib {

// ---- logging (log.cc) -------------------------------------------------------
// Formats with fmt and hands the line to bmlib_log (level, tag = the public
// function that reports it).
void log_line(int level, const char *tag, const std::string &message);
template <typename... Args>
void log_error(const char *tag, fmt::format_string<Args...> format, Args &&...args) {
  log_line(BMLIB_LOG_ERROR, tag, fmt::format(format, std::forward<Args>(args)...));
}
template <typename... Args>
void log_warning(const char *tag, fmt::format_string<Args...> format, Args &&...args) {
  log_line(BMLIB_LOG_WARNING, tag, fmt::format(format, std::forward<Args>(args)...));
}

// ---- kernels and modules -----------------------------------------------------
struct KernelEntry {
  void *func = nullptr;
  int type = 0;  // FUNC_TYPE_1 = 0, FUNC_TYPE_2 = 1
};
using KernelTable = std::map<std::string, KernelEntry>;

// A kernel library opened with dlopen, with the kernels its constructors
// registered. Shared by the modules that load the same file (on several
// cores or devices' handles); dlclose'd when the last one goes.
struct Library {
  void *dl = nullptr;
  std::string path;
  KernelTable kernels;
  ~Library();
};

using Md5 = std::array<unsigned char, MD5SUM_LEN>;

// A module as the device holds it: one per (identity, core). `library` is
// null for a module whose bytes cannot run here (a real-device module or
// not an ELF); it resolves names in the process-wide table only.
struct LoadedModule {
  Md5 identity{};
  int core = 0;
  std::shared_ptr<Library> library;
  int references = 0;  // loads not yet unloaded
};

// The object behind tpu_kernel_module_t: the public part first, so the
// pointer the program holds is a bm_module *.
struct ModuleHandle {
  bm_module pub;
  LoadedModule *loaded;
};

// What tpu_kernel_get_function hands out: id = index + 1 in Device::functions.
struct Function {
  LoadedModule *module;  // null for launch-by-name lookups; never dereferenced once invalid
  std::string name;
  KernelEntry entry;
  int core;
  bool valid;
};

// A failed launch not yet reported by a sync that covers it.
struct Failure {
  std::thread::id thread;
  bm_context *handle;
  int core;
};

struct Allocation {
  uint64_t raw;    // what cmodel_global_alloc_aligned returned (the descriptor address)
  uint64_t bytes;  // as requested
};

// The figures bm_get_profile and bm_get_stat report, since the device opened.
struct Profile {
  uint64_t copies_in = 0;   // successful host -> device copies
  uint64_t copies_out = 0;  // successful device -> host copies
  double core_us[2] = {0, 0};  // emulated run time of the kernels per core
  double bdc_busy_us = 0;      // of those runs, the time BDC was busy
  uint64_t launches_sent = 0;
  uint64_t launches_completed = 0;  // ran to the end without a fault
};

struct Device {
  std::string chip;
  int core_num = 1;
  unsigned int chipid = 0;
  int references = 0;
  void *firmware = nullptr;  // TPUKERNEL_FIRMWARE_PATH, when set
  std::vector<std::unique_ptr<LoadedModule>> modules;
  std::set<ModuleHandle *> module_handles;
  std::vector<Function> functions;
  std::map<uint64_t, Allocation> allocations;  // by the 4 KiB aligned address
  std::vector<Failure> failures;
  Profile profile;
};

// The library lock (recursive: a log callback may call back into bmlib).
std::recursive_mutex &lock();
using Guard = std::lock_guard<std::recursive_mutex>;

// The device behind a live handle, or null (logged under `tag`) for a null,
// freed or unknown handle.
Device *device_of(bm_handle_t handle, const char *tag);

// Maps a core id of the public API onto the device: bm1684x ignores it
// (core 0), bm1688 accepts 0 and 1. -1 (logged) if out of range.
int resolve_core(const Device &device, int core_id, const char *tag);

// Keeps a failed launch for the syncs that cover it.
void remember_failure(Device &device, bm_context *handle, int core);

// Adds the kernel run that just ended on `core` (its figures from the
// emulator's statistics of the last run) to the device's profile (stats.cc).
void count_run(Device &device, int core, bool completed);

// Closes the device's modules (device teardown).
void release_modules(Device &device);

// The absolute path of the library file `name` (a path; a name without '/'
// is a file in the current directory), once it has been read and found to
// be a well-formed shared object for this host (runtime/loader/elf_structure.h); "" after
// logging under `tag` why not. What is dlopen'ed is that path, never a
// search of LD_LIBRARY_PATH.
std::string checked_library_path(const char *name, const char *tag);

}  // namespace bmlib
