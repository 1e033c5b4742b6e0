// module.cc: tpu-kernel modules, function ids and launches.
//
// A module here is a host shared library of kernels registered with
// TPUKERNEL_FUNC_REGISTER / TPUKERNEL_FUNC2_REGISTER. Loading it dlopens the
// library while cmodel_capture_registrations diverts the registrations of
// its constructors into the module's own table. Bytes that cannot run on
// this machine (a real-device module, or no ELF at all) give a module bound
// to the process-wide table, as the vendor's cmodel does, so programs that
// ship a device module still find kernels linked into the process.
//
// A launch copies the argument blob and runs the kernel at once through the
// emulator's run boundary (cmodel_run), on the calling thread; a failure is
// kept for the sync that covers the launch (device.cc).
#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <optional>
#include <span>
#include <string_view>

#include "bmlib_internal.h"
#include "cmodel_host.h"
#include "elf_structure.h"
#include "tpu_kernel.h"

namespace bmlib {

namespace {

// Registry limits of the device runtime: names travel in 64-byte fields.
constexpr size_t max_kernels_per_module = 2048;
constexpr size_t max_registered_name = 64;    // at registration and launch by name
constexpr size_t max_lookup_name = 63;        // get_function: NUL-terminated in 64 bytes
constexpr size_t max_module_basename = 63;
// Launch messages of the vendor's cmodel stop fitting its ring beyond this.
constexpr size_t large_blob_warning = 4076;

// Libraries already open, by dlopen handle: a second dlopen of the same
// file returns the same handle and does not run its constructors again, so
// the table captured the first time is reused.
std::map<void *, std::weak_ptr<Library>> &open_libraries() {
  static auto *libraries = new std::map<void *, std::weak_ptr<Library>>;
  return *libraries;
}

}  // namespace

Library::~Library() {
  if (!dl) return;
  open_libraries().erase(dl);
  dlclose(dl);
}

namespace {

Md5 md5_of(const void *data, size_t size) {
  Md5 digest{};
  unsigned int length = 0;
  EVP_Digest(data, size, digest.data(), &length, EVP_md5(), nullptr);
  return digest;
}

// The name the vendor gives a module loaded from memory: bytes 0-5 and
// 10-15 of its MD5, each in %x, then ".so".
std::string in_memory_name(const Md5 &md5) {
  std::string name;
  for (int i : {0, 1, 2, 3, 4, 5, 10, 11, 12, 13, 14, 15}) name += fmt::format("{:x}", md5[size_t(i)]);
  return name + ".so";
}

enum class Binary { host_library, device_module, other };

// The machine of the chip's device modules: AArch64 (BM1684X's A53) or
// RISC-V (BM1688's controller).
uint16_t device_machine(const std::string &chip) { return chip == "bm1688" ? EM_RISCV : EM_AARCH64; }

// A host shared library; a device module for `chip` (or bytes that are no
// ELF at all, which the vendor's cmodel accepts as well): bound to the
// process-wide table; an ELF for any other machine, class or byte order:
// refused (`why` says what it is).
Binary classify(const std::string &bytes, const std::string &chip, std::string &why) {
  if (bytes.size() < SELFMAG || std::memcmp(bytes.data(), ELFMAG, SELFMAG) != 0) return Binary::device_module;
  if (bytes.size() < sizeof(Elf64_Ehdr)) {
    why = fmt::format("a truncated ELF file ({} bytes, less than an ELF header)", bytes.size());
    return Binary::other;
  }
  const auto *b = reinterpret_cast<const unsigned char *>(bytes.data());
  uint16_t machine;
  std::memcpy(&machine, b + 18, sizeof machine);  // e_machine, same place in ELF32 and ELF64
  if (b[EI_DATA] == ELFDATA2LSB && b[EI_CLASS] == ELFCLASS64) {
    if (machine == tpu_elf::host_machine()) return Binary::host_library;
    if (machine == device_machine(chip)) return Binary::device_module;
  }
  why = fmt::format("an ELF file for {}{}{}; a {} device takes kernel libraries built for this host ({}, 64-bit) or "
                    "{} device modules ({}, 64-bit)",
                    b[EI_DATA] == ELFDATA2LSB ? "" : "a big-endian ", b[EI_CLASS] == ELFCLASS32 ? "32-bit " : "",
                    tpu_elf::machine_name(b[EI_DATA] == ELFDATA2LSB ? machine : uint16_t((machine >> 8) | (machine << 8))),
                    chip, tpu_elf::machine_name(tpu_elf::host_machine()), chip,
                    tpu_elf::machine_name(device_machine(chip)));
  return Binary::other;
}

// The module file a program names, resolved once: its absolute path (a
// name without '/' is a file in the current directory, as the vendor's
// bmlib reads it to send it to the device; dlopen's LD_LIBRARY_PATH search
// is never used) and its bytes. The bytes hashed and the file loaded are
// the same file. Nothing, after logging why, for a missing, unreadable or
// irregular file (a directory, a device, a FIFO).
struct ModuleFile {
  std::string path;
  std::string bytes;
};

std::optional<ModuleFile> read_module_file(const char *name, const char *tag) {
  char resolved[PATH_MAX];
  if (!realpath(name, resolved)) {
    log_error(tag, "cannot read module file {}: {}", name, std::strerror(errno));
    return std::nullopt;
  }
  const int fd = open(resolved, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    log_error(tag, "cannot read module file {}: {}", name, std::strerror(errno));
    return std::nullopt;
  }
  struct stat info {};
  if (fstat(fd, &info) != 0 || !S_ISREG(info.st_mode)) {
    log_error(tag, "module file {} ({}) is {}, not a regular file", name, resolved,
              S_ISDIR(info.st_mode) ? "a directory" : "a device, FIFO or socket");
    close(fd);
    return std::nullopt;
  }
  ModuleFile file{resolved, {}};
  file.bytes.reserve(size_t(info.st_size));
  char buffer[1 << 16];
  for (;;) {
    const ssize_t n = read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      log_error(tag, "cannot read module file {}: {}", name, std::strerror(errno));
      close(fd);
      return std::nullopt;
    }
    if (n == 0) break;
    file.bytes.append(buffer, size_t(n));
  }
  close(fd);
  return file;
}

std::string basename_of(std::string_view path) {
  const size_t slash = path.rfind('/');
  return std::string(slash == std::string_view::npos ? path : path.substr(slash + 1));
}

// Receives the registrations of the library being opened.
struct Capture {
  KernelTable kernels;
  std::vector<std::string> problems;
};

void capture_registration(void *context, const char *name, void *func, int type) {
  auto &capture = *static_cast<Capture *>(context);
  if (std::strlen(name) > max_registered_name)
    capture.problems.push_back(fmt::format("kernel name \"{}\" is longer than {} characters", name,
                                           max_registered_name));
  capture.kernels.emplace(name, KernelEntry{func, type});  // the first registration of a name wins
}

// dlopens `path` and returns the library with the kernels it registered,
// or null after logging why not.
std::shared_ptr<Library> open_library(const std::string &path, const char *tag) {
  Capture capture;
  cmodel_capture_registrations(capture_registration, &capture);
  void *dl = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  cmodel_capture_registrations(nullptr, nullptr);
  if (!dl) {
    log_error(tag, "cannot load kernel module {}: {}", path, dlerror());
    return nullptr;
  }
  if (auto known = open_libraries()[dl].lock()) {
    dlclose(dl);  // the library keeps its own reference
    return known;
  }
  if (capture.kernels.size() > max_kernels_per_module)
    capture.problems.push_back(fmt::format("{} kernels registered, at most {} are allowed", capture.kernels.size(),
                                           max_kernels_per_module));
  if (!capture.problems.empty()) {
    log_error(tag, "kernel module {} is refused: {}", path, fmt::join(capture.problems, "; "));
    dlclose(dl);
    open_libraries().erase(dl);
    return nullptr;
  }
  auto library = std::make_shared<Library>();
  library->dl = dl;
  library->path = path;
  library->kernels = std::move(capture.kernels);
  open_libraries()[dl] = library;
  return library;
}

// Bytes of a module loaded from memory go through a private file, which
// is removed as soon as the library is mapped.
std::shared_ptr<Library> open_library_bytes(const std::string &bytes, const char *tag) {
  const char *tmp = std::getenv("TMPDIR");
  std::string path = fmt::format("{}/bmlib_module_XXXXXX.so", tmp && *tmp ? tmp : "/tmp");
  const int fd = mkstemps(path.data(), 3);
  if (fd < 0) {
    log_error(tag, "cannot create a temporary file for the module in {}: {}", path, std::strerror(errno));
    return nullptr;
  }
  const bool written = write(fd, bytes.data(), bytes.size()) == ssize_t(bytes.size());
  close(fd);
  std::shared_ptr<Library> library;
  if (written)
    library = open_library(path, tag);
  else
    log_error(tag, "cannot write the module to {}", path);
  unlink(path.c_str());
  return library;
}

// Device modules cannot run here: tell the program what it will get.
void warn_foreign_module(const std::string &what, const char *tag) {
  std::string kernels = cmodel_registered_kernels();
  std::replace(kernels.begin(), kernels.end(), '\n', ' ');
  log_warning(tag,
              "{} is not a kernel library for this machine (a device module?); its kernels cannot run on the "
              "emulator. Names resolve among the kernels linked into the process or loaded from "
              "TPUKERNEL_FIRMWARE_PATH: {}",
              what, kernels.empty() ? "none" : kernels);
}

// What a load asks for; `bytes` are the module's contents.
struct LoadRequest {
  const char *tag;
  std::string display;   // the file or "module in memory" for messages
  std::string lib_name;  // bm_module.lib_name
  std::string bytes;
  std::string path;      // the file to dlopen; empty for bytes in memory
  Md5 identity;
  int core_id;
};

tpu_kernel_module_t new_handle(Device &device, LoadedModule &loaded, const std::string &lib_name) {
  auto *handle = new ModuleHandle{};
  std::snprintf(handle->pub.lib_name, sizeof handle->pub.lib_name, "%s", lib_name.c_str());
  std::memcpy(handle->pub.md5, loaded.identity.data(), MD5SUM_LEN);
  handle->loaded = &loaded;
  ++loaded.references;
  device.module_handles.insert(handle);
  return &handle->pub;
}

LoadedModule *find_loaded(Device &device, const Md5 &identity, int core) {
  for (auto &module : device.modules)
    if (module->identity == identity && module->core == core) return module.get();
  return nullptr;
}

tpu_kernel_module_t load(bm_handle_t handle, LoadRequest request) {
  Guard guard(lock());
  Device *device = device_of(handle, request.tag);
  if (!device) return nullptr;
  const int core = resolve_core(*device, request.core_id, request.tag);
  if (core < 0) return nullptr;
  // Already on this core with the same identity: a new handle to it.
  if (LoadedModule *loaded = find_loaded(*device, request.identity, core))
    return new_handle(*device, *loaded, request.lib_name);
  auto loaded = std::make_unique<LoadedModule>();
  loaded->identity = request.identity;
  loaded->core = core;
  std::string why;
  switch (classify(request.bytes, device->chip, why)) {
    case Binary::host_library: {
      // dlopen trusts the file's structure: a truncated or damaged library
      // would crash the program inside it (SIGBUS, SIGSEGV).
      const std::string problem = tpu_elf::shared_object_problem(
          std::span(reinterpret_cast<const uint8_t *>(request.bytes.data()), request.bytes.size()),
          tpu_elf::host_machine());
      if (!problem.empty()) {
        log_error(request.tag, "cannot load kernel module {}: {}", request.display, problem);
        return nullptr;
      }
      loaded->library = request.path.empty() ? open_library_bytes(request.bytes, request.tag)
                                             : open_library(request.path, request.tag);
      if (!loaded->library) return nullptr;
      break;
    }
    case Binary::device_module: warn_foreign_module(request.display, request.tag); break;
    case Binary::other:
      log_error(request.tag, "cannot load kernel module {}: {}", request.display, why);
      return nullptr;
  }
  device->modules.push_back(std::move(loaded));
  return new_handle(*device, *device->modules.back(), request.lib_name);
}

// A module file's request, or nothing (logged) if it cannot be read or
// its name is too long for the device.
std::optional<LoadRequest> file_request(const char *module_file, int core_id, const char *tag) {
  if (!module_file) {
    log_error(tag, "module_file is a null pointer");
    return std::nullopt;
  }
  std::string lib_name = basename_of(module_file);
  if (lib_name.size() > max_module_basename) {
    log_error(tag, "module file name \"{}\" is longer than {} characters", lib_name, max_module_basename);
    return std::nullopt;
  }
  std::optional<ModuleFile> file = read_module_file(module_file, tag);
  if (!file) return std::nullopt;
  const Md5 identity = md5_of(file->bytes.data(), file->bytes.size());
  std::string display = file->path == module_file ? file->path : fmt::format("{} ({})", module_file, file->path);
  return LoadRequest{tag, std::move(display), std::move(lib_name), std::move(file->bytes), std::move(file->path),
                     identity, core_id};
}

tpu_kernel_module_t load_file(bm_handle_t handle, const char *module_file, int core_id, const char *tag) {
  std::optional<LoadRequest> request = file_request(module_file, core_id, tag);
  return request ? load(handle, std::move(*request)) : nullptr;
}

tpu_kernel_module_t load_file_key(bm_handle_t handle, const char *module_file, const char *key, int size, int core_id,
                                  const char *tag) {
  if (!key || size <= 0) {
    log_error(tag, "the key must be at least one byte (key {}, size {})", static_cast<const void *>(key), size);
    return nullptr;
  }
  const Md5 identity = md5_of(key, size_t(size));
  {
    // A module with this key is on the core already: nothing is read.
    Guard guard(lock());
    Device *device = device_of(handle, tag);
    if (!device) return nullptr;
    const int core = resolve_core(*device, core_id, tag);
    if (core < 0) return nullptr;
    if (LoadedModule *loaded = find_loaded(*device, identity, core))
      return new_handle(*device, *loaded, module_file ? basename_of(module_file) : "");
  }
  std::optional<LoadRequest> request = file_request(module_file, core_id, tag);
  if (!request) return nullptr;
  request->identity = identity;
  return load(handle, std::move(*request));
}

tpu_kernel_module_t load_bytes(bm_handle_t handle, const char *data, size_t length, int core_id, const char *tag) {
  if (!data || length == 0) {
    log_error(tag, "the module data is empty (data {}, length {})", static_cast<const void *>(data), length);
    return nullptr;
  }
  const Md5 identity = md5_of(data, length);
  return load(handle, LoadRequest{tag, "the module in memory", in_memory_name(identity), std::string(data, length), "",
                                  identity, core_id});
}

// The live module handle behind `module`, or null (logged).
ModuleHandle *module_handle(Device &device, tpu_kernel_module_t module, const char *tag) {
  auto *handle = reinterpret_cast<ModuleHandle *>(module);  // pub is the first member
  if (module && device.module_handles.count(handle)) return handle;
  log_error(tag, "{} is not a loaded module of this device (null, freed, or from another program)",
            static_cast<const void *>(module));
  return nullptr;
}

// Drops one load of `loaded`; with the last one its ids die and its
// library may close.
void drop_load(Device &device, LoadedModule *loaded) {
  if (--loaded->references > 0) return;
  for (Function &function : device.functions)
    if (function.module == loaded) function.valid = false;
  std::erase_if(device.modules, [&](const std::unique_ptr<LoadedModule> &m) { return m.get() == loaded; });
}

void free_handle(Device &device, ModuleHandle *handle) {
  device.module_handles.erase(handle);
  delete handle;
}

bm_status_t unload(bm_handle_t handle, tpu_kernel_module_t module, int core_id, const char *tag) {
  Guard guard(lock());
  Device *device = device_of(handle, tag);
  if (!device) return BM_ERR_DEVNOTREADY;
  ModuleHandle *module_object = module_handle(*device, module, tag);
  if (!module_object) return BM_ERR_FAILURE;
  const int core = resolve_core(*device, core_id, tag);
  LoadedModule *loaded = module_object->loaded;
  free_handle(*device, module_object);  // freed even when the unload fails, as the vendor does
  if (core < 0) return BM_ERR_PARAM;
  if (loaded->core != core) {
    log_error(tag, "the module was loaded on core {}, not core {}", loaded->core, core);
    return BM_ERR_PARAM;
  }
  drop_load(*device, loaded);
  return BM_SUCCESS;
}

// The kernel `name` resolves to for `module`: its own table first, then
// the process-wide one.
std::optional<KernelEntry> resolve_kernel(const LoadedModule &module, const char *name) {
  if (module.library) {
    const auto it = module.library->kernels.find(name);
    if (it != module.library->kernels.end()) return it->second;
  }
  KernelEntry entry;
  if (cmodel_find_registered(name, &entry.func, &entry.type) == 0) return entry;
  return std::nullopt;
}

std::string module_kernel_names(const LoadedModule &module) {
  std::vector<std::string> names;
  if (module.library)
    for (const auto &entry : module.library->kernels) names.push_back(entry.first);
  return names.empty() ? "none" : fmt::format("{}", fmt::join(names, ", "));
}

tpu_kernel_function_t get_function(bm_handle_t handle, tpu_kernel_module_t module, const char *name, int core_id,
                                   const char *tag) {
  Guard guard(lock());
  Device *device = device_of(handle, tag);
  if (!device) return -1;
  ModuleHandle *module_object = module_handle(*device, module, tag);
  if (!module_object) return -1;
  const int core = resolve_core(*device, core_id, tag);
  if (core < 0) return -1;
  LoadedModule &loaded = *module_object->loaded;
  if (loaded.core != core) {
    log_error(tag, "module {} was loaded on core {}, not core {}", module->lib_name, loaded.core, core);
    return -1;
  }
  if (!name || std::strlen(name) > max_lookup_name) {
    log_error(tag, "the kernel name must be 1 to {} characters (got {})", max_lookup_name,
              name ? fmt::format("\"{}\"", name) : "null");
    return -1;
  }
  // Same (module, name, core), same id: programs ask before every launch.
  for (size_t i = 0; i < device->functions.size(); ++i) {
    const Function &f = device->functions[i];
    if (f.valid && f.module == &loaded && f.name == name) return tpu_kernel_function_t(i + 1);
  }
  const std::optional<KernelEntry> entry = resolve_kernel(loaded, name);
  if (!entry) {
    std::string global = cmodel_registered_kernels();
    std::replace(global.begin(), global.end(), '\n', ' ');
    log_error(tag, "no kernel \"{}\" in module {} (its kernels: {}; process-wide: {})", name, module->lib_name,
              module_kernel_names(loaded), global.empty() ? "none" : global);
    return -1;
  }
  device->functions.push_back({&loaded, name, *entry, core, true});
  return tpu_kernel_function_t(device->functions.size());
}

// ---- running kernels -------------------------------------------------------------

// A FUNC_TYPE_2 kernel gets the blob and its size through cmodel_run's
// one-pointer interface.
struct SizedCall {
  void *func;
  void *args;
  int size;
};

void call_sized(const void *arg) {
  const auto *call = static_cast<const SizedCall *>(arg);
  reinterpret_cast<void (*)(void *, int)>(call->func)(call->args, call->size);
}

// Checks the blob as the device's launch message does.
bool valid_blob(const void *args, size_t size, const char *tag) {
  if (size % 4 != 0) {
    log_error(tag, "the argument size {} is not a multiple of 4 bytes", size);
    return false;
  }
  if (size > 0 && !args) {
    log_error(tag, "args is a null pointer but size is {}", size);
    return false;
  }
  if (size > size_t(INT32_MAX)) {
    log_error(tag, "an argument blob of {} bytes is larger than a kernel can be told", size);
    return false;
  }
  if (size > large_blob_warning)
    log_warning(tag, "an argument blob of {} bytes does not fit a device's launch message", size);
  return true;
}

// Runs one kernel on `core` of a group of `group` cores with its own copy
// of the blob (8-byte aligned); false (logged, remembered) if it faulted.
// What the kernel returns is ignored, as on the device.
bool run_kernel(Device &device, bm_context *handle, const std::string &name, const KernelEntry &entry,
                const void *args, size_t size, int core, int group, const char *tag) {
  std::vector<uint64_t> blob((size + 7) / 8);
  if (size) std::memcpy(blob.data(), args, size);
  int status = cmodel_set_core(core, group);
  if (status == 0) {
    if (entry.type == FUNC_TYPE_2) {
      const SizedCall call{entry.func, blob.data(), int(size)};
      status = cmodel_run(call_sized, &call);
    } else {
      status = cmodel_run(reinterpret_cast<void (*)(const void *)>(entry.func), blob.data());
    }
    count_run(device, core, status == 0);
  }
  if (status == 0) return true;
  // The message stays in cmodel_last_error() for the program to read.
  log_error(tag, "kernel \"{}\" failed on core {} of {}: {}", name, core, device.chip, cmodel_last_error());
  remember_failure(device, handle, core);
  return false;
}

// The function behind `id` for a launch on `core`, or null (logged).
const Function *launchable(const Device &device, tpu_kernel_function_t id, int core, const char *tag) {
  if (id < 1 || size_t(id) > device.functions.size() || !device.functions[size_t(id) - 1].valid) {
    log_error(tag, "function id {} was not returned by tpu_kernel_get_function, or its module was unloaded", id);
    return nullptr;
  }
  const Function &function = device.functions[size_t(id) - 1];
  if (function.core != core) {
    log_error(tag, "function id {} (\"{}\") belongs to core {}, not core {}", id, function.name, function.core, core);
    return nullptr;
  }
  return &function;
}

bm_status_t sync_after_launch(bm_handle_t handle, int core) { return bm_thread_sync_from_core(handle, core); }

bm_status_t launch(bm_handle_t handle, tpu_kernel_function_t id, const void *args, size_t size, int core_id, bool wait,
                   const char *tag) {
  Guard guard(lock());
  Device *device = device_of(handle, tag);
  if (!device) return BM_ERR_DEVNOTREADY;
  const int core = resolve_core(*device, core_id, tag);
  if (core < 0) return BM_ERR_PARAM;
  const Function *function = launchable(*device, id, core, tag);
  if (!function || !valid_blob(args, size, tag)) return BM_ERR_PARAM;
  run_kernel(*device, handle, function->name, function->entry, args, size, core, 1, tag);
  return wait ? sync_after_launch(handle, core) : BM_SUCCESS;
}

bm_status_t launch_by_name(bm_handle_t handle, const char *name, const void *args, unsigned int size, int core_id,
                           const char *tag) {
  Guard guard(lock());
  Device *device = device_of(handle, tag);
  if (!device) return BM_ERR_DEVNOTREADY;
  if (core_id < 0 || core_id >= 2) {
    log_error(tag, "core {} does not exist (cores 0 and 1 at most)", core_id);
    return BM_ERR_PARAM;
  }
  const int core = resolve_core(*device, core_id, tag);
  if (core < 0) return BM_ERR_PARAM;
  if (!name || !*name || std::strlen(name) > max_registered_name) {
    log_error(tag, "the kernel name must be 1 to {} characters (got {})", max_registered_name,
              name ? fmt::format("\"{}\"", name) : "null");
    return BM_ERR_PARAM;
  }
  if (!valid_blob(args, size, tag)) return BM_ERR_PARAM;
  KernelEntry entry;
  if (cmodel_find_registered(name, &entry.func, &entry.type) != 0) {
    log_error(tag, "{}", cmodel_last_error());
    return BM_ERR_PARAM;
  }
  run_kernel(*device, handle, name, entry, args, size, core, 1, tag);
  // Waits as bm_handle_sync does, on the launch's core.
  return std::erase_if(device->failures, [&](const Failure &f) { return f.handle == handle && f.core == core; }) > 0
             ? BM_ERR_FAILURE
             : BM_SUCCESS;
}

// The entries of a group launch, one per core 0 .. count-1, run together
// (cmodel_run_group): each kernel sees tpu_core_index() = its core and
// tpu_core_num() = count, and the cores synchronise as on the device. A
// failure of the group is remembered on each of its cores.
struct GroupEntry {
  const Function *function = nullptr;
  std::vector<uint64_t> blob;
  SizedCall sized{};
};

void run_group(Device &device, bm_context *handle, std::vector<GroupEntry> &entries, const char *tag) {
  std::vector<void (*)(const void *)> kernels;
  std::vector<const void *> args;
  for (GroupEntry &e : entries) {
    if (e.function->entry.type == FUNC_TYPE_2) {
      e.sized.func = e.function->entry.func;
      kernels.push_back(call_sized);
      args.push_back(&e.sized);
    } else {
      kernels.push_back(reinterpret_cast<void (*)(const void *)>(e.function->entry.func));
      args.push_back(e.blob.data());
    }
  }
  if (cmodel_run_group(kernels.data(), args.data(), int(entries.size())) == 0) return;
  log_error(tag, "the group of {} kernels (\"{}\" first) failed on {}: {}", entries.size(),
            entries.front().function->name, device.chip, cmodel_last_error());
  for (int core = 0; core < int(entries.size()); ++core) remember_failure(device, handle, core);
}

// A list with one entry for each core 0 .. count-1 of a multi-core chip
// runs as one group (run_group); BM_ERR_PARAM (logged) if an entry cannot
// be launched, before anything runs.
bm_status_t launch_group(Device &device, bm_context *handle, const tpu_launch_param_t *params, int count,
                         const char *tag) {
  std::vector<GroupEntry> entries(static_cast<size_t>(count));
  for (int i = 0; i < count; ++i) {
    const tpu_launch_param_t &param = params[i];
    const int core = resolve_core(device, param.core_id, tag);
    if (core < 0) return BM_ERR_PARAM;
    if (core >= count) {
      log_error(tag, "a launch list of {} entries runs on cores 0..{}, but entry {} names core {}", count, count - 1,
                i, core);
      return BM_ERR_PARAM;
    }
    GroupEntry &e = entries[size_t(core)];
    if (e.function) {
      log_error(tag, "two entries of the launch list run on core {}", core);
      return BM_ERR_PARAM;
    }
    e.function = launchable(device, param.func_id, core, tag);
    if (!e.function || !valid_blob(param.param_data, param.param_size, tag)) return BM_ERR_PARAM;
    e.blob.assign((param.param_size + 7) / 8, 0);
    if (param.param_size) std::memcpy(e.blob.data(), param.param_data, param.param_size);
    e.sized.args = e.blob.data();
    e.sized.size = int(param.param_size);
  }
  run_group(device, handle, entries, tag);
  return BM_SUCCESS;
}

// A group of every core of a multi-core chip runs together (launch_group);
// otherwise one launch per entry, in list order, each on its core of a
// group as large as the list (bm1684x: one core, every entry runs alone).
// Stops at the first entry that cannot be launched; earlier ones have run.
bm_status_t launch_multicores(bm_handle_t handle, const tpu_launch_param_t *params, int count, const char *tag) {
  Guard guard(lock());
  Device *device = device_of(handle, tag);
  if (!device) return BM_ERR_DEVNOTREADY;
  if (!params || count < 1) {
    log_error(tag, "the launch list is empty (param_list {}, param_num {})", static_cast<const void *>(params), count);
    return BM_ERR_PARAM;
  }
  if (count > device->core_num && device->core_num > 1) {
    log_error(tag, "{} launches in one group, {} has {} cores", count, device->chip, device->core_num);
    return BM_ERR_PARAM;
  }
  if (device->core_num > 1 && count > 1) return launch_group(*device, handle, params, count, tag);
  const int group = device->core_num > 1 ? count : 1;
  for (int i = 0; i < count; ++i) {
    const tpu_launch_param_t &param = params[i];
    const int core = resolve_core(*device, param.core_id, tag);
    if (core < 0) return BM_ERR_PARAM;
    const Function *function = launchable(*device, param.func_id, core, tag);
    if (!function || !valid_blob(param.param_data, param.param_size, tag)) return BM_ERR_PARAM;
    run_kernel(*device, handle, function->name, function->entry, param.param_data, param.param_size, core, group,
               tag);
  }
  return BM_SUCCESS;
}

}  // namespace

std::string checked_library_path(const char *name, const char *tag) {
  std::optional<ModuleFile> file = read_module_file(name, tag);
  if (!file) return "";
  const std::string problem = tpu_elf::shared_object_problem(
      std::span(reinterpret_cast<const uint8_t *>(file->bytes.data()), file->bytes.size()), tpu_elf::host_machine());
  if (!problem.empty()) {
    log_error(tag, "cannot load {}: {}", name, problem);
    return "";
  }
  return file->path;
}

void release_modules(Device &device) {
  for (ModuleHandle *handle : device.module_handles) delete handle;
  device.module_handles.clear();
  device.functions.clear();
  device.modules.clear();  // closes libraries no other device holds
}

}  // namespace bmlib

using namespace bmlib;

extern "C" {

tpu_kernel_module_t tpu_kernel_load_module_file(bm_handle_t handle, const char *module_file) {
  return load_file(handle, module_file, 0, __func__);
}
tpu_kernel_module_t tpu_kernel_load_module_file_to_core(bm_handle_t handle, const char *module_file, int core_id) {
  return load_file(handle, module_file, core_id, __func__);
}
tpu_kernel_module_t tpu_kernel_load_module_file_key(bm_handle_t handle, const char *module_file, const char *key,
                                                    int size) {
  return load_file_key(handle, module_file, key, size, 0, __func__);
}
tpu_kernel_module_t tpu_kernel_load_module_file_key_to_core(bm_handle_t handle, const char *module_file,
                                                            const char *key, int size, int core_id) {
  return load_file_key(handle, module_file, key, size, core_id, __func__);
}
tpu_kernel_module_t tpu_kernel_load_module(bm_handle_t handle, const char *data, size_t length) {
  return load_bytes(handle, data, length, 0, __func__);
}
tpu_kernel_module_t tpu_kernel_load_module_to_core(bm_handle_t handle, const char *data, size_t length, int core_id) {
  return load_bytes(handle, data, length, core_id, __func__);
}

bm_status_t tpu_kernel_unload_module(bm_handle_t handle, tpu_kernel_module_t p_module) {
  return unload(handle, p_module, 0, __func__);
}
bm_status_t tpu_kernel_unload_module_from_core(bm_handle_t handle, tpu_kernel_module_t p_module, int core_id) {
  return unload(handle, p_module, core_id, __func__);
}

bm_status_t tpu_kernel_free_module(bm_handle_t handle, tpu_kernel_module_t p_module) {
  Guard guard(lock());
  Device *device = device_of(handle, __func__);
  if (!device) return BM_ERR_DEVNOTREADY;
  ModuleHandle *module_object = module_handle(*device, p_module, __func__);
  if (!module_object) return BM_ERR_FAILURE;
  free_handle(*device, module_object);  // the module stays loaded on the device
  return BM_SUCCESS;
}

tpu_kernel_function_t tpu_kernel_get_function(bm_handle_t handle, tpu_kernel_module_t module, const char *function) {
  return get_function(handle, module, function, 0, __func__);
}
tpu_kernel_function_t tpu_kernel_get_function_from_core(bm_handle_t handle, tpu_kernel_module_t module,
                                                        const char *function, int core_id) {
  return get_function(handle, module, function, core_id, __func__);
}

bm_status_t tpu_kernel_launch(bm_handle_t handle, tpu_kernel_function_t function, void *args, size_t size) {
  return launch(handle, function, args, size, 0, true, __func__);
}
bm_status_t tpu_kernel_launch_from_core(bm_handle_t handle, tpu_kernel_function_t function, void *args, size_t size,
                                        int core_id) {
  return launch(handle, function, args, size, core_id, true, __func__);
}
bm_status_t tpu_kernel_launch_async(bm_handle_t handle, tpu_kernel_function_t function, void *args, size_t size) {
  return launch(handle, function, args, size, 0, false, __func__);
}
bm_status_t tpu_kernel_launch_async_from_core(bm_handle_t handle, tpu_kernel_function_t function, void *args,
                                              size_t size, int core_id) {
  return launch(handle, function, args, size, core_id, false, __func__);
}
bm_status_t tpu_kernel_launch_async_multicores(bm_handle_t handle, tpu_launch_param_t *param_list, int param_num) {
  return launch_multicores(handle, param_list, param_num, __func__);
}

bm_status_t tpu_kernel_launch_sync(bm_handle_t handle, const char *func_name, const void *args, unsigned int size) {
  return launch_by_name(handle, func_name, args, size, 0, __func__);
}
bm_status_t tpu_kernel_launch_sync_by_core(bm_handle_t handle, const char *func_name, const void *args,
                                           unsigned int size, int core_id) {
  return launch_by_name(handle, func_name, args, size, core_id, __func__);
}

bm_status_t tpu_kernel_launch_sync_multi_cores(bm_handle_t handle, const char *func_name, const void *api_param,
                                               size_t api_size, const int *core_list, const int core_num) {
  (void)handle;
  (void)func_name;
  (void)api_param;
  (void)api_size;
  (void)core_list;
  (void)core_num;
  log_error(__func__, "tpu_kernel_launch_sync_multi_cores is not supported (as in the vendor library); use "
                      "tpu_kernel_launch_async_multicores");
  return BM_ERR_FAILURE;
}

}  // extern "C"
