// host_library.cc: HostOpLibrary, a host library opened and checked.
//
// The checks before any op runs: the ELF file is a shared object for this
// host's architecture (SharedLibrary checks it before dlopen), the entry
// points of its kind are exported, its API level matches, and for an AP
// library bmcpu_init succeeds (it makes every op's layer object, so an op
// type without a registration shows here, not in the middle of a run).
#include <fmt/format.h>

#include "host/host_call.h"
#include "host/host_library_state.h"
#include "loader/loader_internal.h"
#include "tpu_runtime/error.h"
#include "tpu_runtime/host_op.h"

namespace tpu_runtime {
namespace {

// What a user does about an AP library that lacks our additions.
constexpr const char *kRebuildAp =
    "rebuild it with this SDK: source envsetup.sh in the customlayer directory, then rebuild_custom_apop_x86";

void open_vendor_ap(HostOpLibrary::State &s) {
  const char *why = "an AP op run-time library exports bmcpu_init, bmcpu_uninit and customcpu_process (ap_src/cpu.cpp)";
  auto init = s.lib->require_function<BmcpuInitFn>("bmcpu_init", why);
  s.uninit = s.lib->require_function<BmcpuUninitFn>("bmcpu_uninit", why);
  s.process = s.lib->require_function<CustomcpuProcessFn>("customcpu_process", why);
  s.op_type = s.lib->find_function<ApOpTypeFn>("tpu_sdk_ap_op_type");
  const auto *level = static_cast<const int *>(s.lib->find("tpu_sdk_ap_api_level"));
  const auto *unknown = static_cast<const int *>(s.lib->find("tpu_sdk_ap_op_unknown"));
  if (!s.op_type || !level || !unknown)
    throw Error(fmt::format("{}: no tpu_sdk_ap_op_type: the AP library was not built by this SDK (the vendor's "
                            "build does not export the op-name table the runtime maps op names with); {}",
                            s.shown, kRebuildAp));
  if (*level != kApApiLevel)
    throw Error(fmt::format("{}: built for AP API level {}, but this SDK is at level {}; {}", s.shown, *level,
                            kApApiLevel, kRebuildAp));
  s.unknown_type = *unknown;
  void *handle = nullptr;
  auto call = [&] { handle = init(); };
  if (const std::string failure = host::call_host_code("host library init", call); !failure.empty())
    throw Error(fmt::format("{}: bmcpu_init failed: {}", s.shown, failure));
  if (!handle) throw Error(fmt::format("{}: bmcpu_init returned a null handle", s.shown));
  s.handle = handle;
}

void open_callback(HostOpLibrary::State &s) {
  s.callback = s.lib->require_function<CallbackFn>(
      "Callback", "a callback host library exports extern \"C\" void Callback(const std::vector<void*>&, "
                  "const std::vector<std::uint32_t>&, std::vector<void*>&, const std::string&)");
  if (const auto *level = static_cast<const std::int32_t *>(s.lib->find("custom_op_api_level")))
    if (*level != kCallbackApiLevel)
      throw Error(fmt::format("{}: custom_op_api_level is {}, but this SDK loads callback libraries of API level "
                              "{}; rebuild the library for level {}",
                              s.shown, *level, kCallbackApiLevel, kCallbackApiLevel));
}

}  // namespace

HostOpLibrary::HostOpLibrary(std::unique_ptr<State> state) : state_(std::move(state)) {}

HostOpLibrary::~HostOpLibrary() {
  if (!state_ || !state_->handle || !state_->uninit) return;
  // A fault in bmcpu_uninit is reported, not thrown, from a destructor.
  auto call = [&] { state_->uninit(state_->handle); };
  if (const std::string failure = host::call_host_code("host library uninit", call); !failure.empty())
    fmt::print(stderr, "tpu-sdk: {}: bmcpu_uninit failed: {}\n", state_->shown, failure);
}

std::shared_ptr<HostOpLibrary> HostOpLibrary::open(const std::string &path, HostOpKind kind) {
  return open(path, kind, loader::shown_path(path));
}

std::shared_ptr<HostOpLibrary> HostOpLibrary::open(const std::string &path, HostOpKind kind,
                                                   const std::string &shown_as) {
  auto state = std::make_unique<State>();
  state->path = path;
  state->shown = shown_as;
  state->kind = kind;
  try {
    state->lib = std::make_shared<SharedLibrary>(path);
  } catch (const Error &e) {
    // SharedLibrary's messages start with the path.
    std::string message = e.what();
    if (message.rfind(path, 0) == 0) message.replace(0, path.size(), shown_as);
    throw Error(message);
  }
  if (kind == HostOpKind::vendor_ap)
    open_vendor_ap(*state);
  else
    open_callback(*state);
  return std::shared_ptr<HostOpLibrary>(new HostOpLibrary(std::move(state)));
}

const std::string &HostOpLibrary::path() const { return state_->path; }

HostOpKind HostOpLibrary::kind() const { return state_->kind; }

int HostOpLibrary::ap_op_type(const std::string &op) const {
  if (state_->kind != HostOpKind::vendor_ap)
    throw Error(fmt::format("{}: op '{}': a callback library has no AP op types", state_->shown, op));
  const std::string name = ap_upper_name(op);
  int type = state_->unknown_type;
  auto call = [&] { type = state_->op_type(name.c_str()); };
  if (const std::string failure = host::call_host_code("host op " + op, call); !failure.empty())
    throw Error(fmt::format("{}: tpu_sdk_ap_op_type(\"{}\") failed: {}", state_->shown, name, failure));
  if (type == state_->unknown_type)
    throw Error(fmt::format("{}: no AP op named '{}' in the library's table (customap_common.h: an "
                            "AP_CUSTOM_{} entry and its line in the name table)",
                            state_->shown, name, name));
  return type;
}

}  // namespace tpu_runtime
