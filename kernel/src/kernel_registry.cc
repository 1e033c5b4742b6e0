// kernel_registry.cc: kernels registered by name (TPUKERNEL_FUNC_REGISTER,
// TPUKERNEL_FUNC2_REGISTER) and run by name from the host
// (cmodel_run_registered), as a device runtime looks a kernel up in a
// loaded module.
//
// Registration runs from the static constructors of a kernel library,
// possibly before any emulator is open, so it needs no context. A library
// that is unloaded leaves its entries behind; lookup checks with dladdr that
// the function still belongs to a loaded object instead of calling into
// unmapped code.
#include <dlfcn.h>

#include <climits>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "api_guard.h"
#include "cmodel_host.h"
#include "host_call.h"
#include "tpu_kernel.h"

using namespace cmodel;

namespace {

struct RegisteredKernel {
  void *func;
  func_type_t type;
};

std::map<std::string, RegisteredKernel> &registered_kernels() {
  static std::map<std::string, RegisteredKernel> kernels;
  return kernels;
}

std::string registered_names() {
  std::string names;
  for (const auto &entry : registered_kernels()) names += (names.empty() ? "" : ", ") + entry.first;
  return names.empty() ? "none" : names;
}

const RegisteredKernel &find_kernel(const char *name) {
  if (!name) fail(ErrorKind::config, "kernel name is null");
  const auto it = registered_kernels().find(name);
  if (it == registered_kernels().end())
    fail(ErrorKind::config, "no kernel is registered under the name \"{}\" (registered: {})", name,
         registered_names());
  Dl_info info;
  if (!dladdr(it->second.func, &info))
    fail(ErrorKind::config, "kernel \"{}\" was registered by a library that has since been unloaded", name);
  return it->second;
}

// A FUNC_TYPE_2 kernel gets its own copy of the blob (it may write to it)
// and the size, through cmodel_run's one-pointer interface.
struct SizedCall {
  tpu_kernel_func_2_t func;
  void *args;
  int size;
};

// Where the calling thread's registrations go while a device runtime loads
// a kernel module (cmodel_capture_registrations); constructors run on the
// thread that calls dlopen.
struct RegistrationSink {
  cmodel_registration_sink sink = nullptr;
  void *context = nullptr;
};
thread_local RegistrationSink t_registration_sink;

void call_sized(const void *arg) {
  const auto *call = static_cast<const SizedCall *>(arg);
  call->func(call->args, call->size);
}

}  // namespace

extern "C" {

void tpu_register_kernel_func(const char *name, void *func, func_type_t type) {
  return api::run(__func__, TPU_CALLER(), [&] {
    if (!name || !func) fail(ErrorKind::illegal_command, "name and func must not be null");
    if (type != FUNC_TYPE_1 && type != FUNC_TYPE_2)
      fail(ErrorKind::illegal_command, "type {} of kernel \"{}\" is neither FUNC_TYPE_1 (0) nor FUNC_TYPE_2 (1)",
           int(type), name);
    if (t_registration_sink.sink)
      t_registration_sink.sink(t_registration_sink.context, name, func, int(type));
    else
      registered_kernels()[name] = {func, type};
  });
}

void cmodel_capture_registrations(cmodel_registration_sink sink, void *context) {
  if (host::refused_in_kernel(__func__)) return;
  t_registration_sink = {sink, context};
}

int cmodel_find_registered(const char *name, void **func, int *type) {
  return host::host_call(__func__, [&] {
    if (!func || !type) fail(ErrorKind::config, "func and type must not be null");
    const RegisteredKernel &kernel = find_kernel(name);
    *func = kernel.func;
    *type = int(kernel.type);
  });
}

void tpu_dump_registered_kernel_funcs(void) {
  for (const auto &[name, kernel] : registered_kernels())
    std::printf("%s\t%p\t%s\n", name.c_str(), kernel.func, kernel.type == FUNC_TYPE_1 ? "FUNC_TYPE_1" : "FUNC_TYPE_2");
}

int cmodel_run_registered(const char *name, const void *args, uint64_t size) {
  RegisteredKernel kernel{};
  const int found = host::host_only_call(__func__, [&] {
    kernel = find_kernel(name);
    if (kernel.type == FUNC_TYPE_2 && size > uint64_t(INT_MAX))
      fail(ErrorKind::config, "argument blob of {} bytes is larger than a FUNC_TYPE_2 kernel's int size", size);
    if (size && !args) fail(ErrorKind::config, "args is null but size is {}", size);
  });
  if (found != 0) return found;
  if (kernel.type == FUNC_TYPE_1)
    return cmodel_run(reinterpret_cast<tpu_kernel_func_1_t>(kernel.func), args);
  std::vector<unsigned char> blob(static_cast<const unsigned char *>(args),
                                  static_cast<const unsigned char *>(args) + size);
  const SizedCall call{reinterpret_cast<tpu_kernel_func_2_t>(kernel.func), blob.data(), int(size)};
  return cmodel_run(call_sized, &call);
}

const char *cmodel_registered_kernels(void) {
  static std::string names;
  names.clear();
  for (const auto &entry : registered_kernels()) names += (names.empty() ? "" : "\n") + entry.first;
  return names.c_str();
}

}  // extern "C"
