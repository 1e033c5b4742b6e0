// loader_internal.h (private): what Plugin, Backend and Firmware share.
#pragma once

#include <fmt/format.h>

#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "api_common.h"
#include "cmodel_host.h"
#include "loader/shared_library.h"
#include "tpu_runtime/custom_libraries.h"
#include "tpu_runtime/error.h"

namespace tpu_runtime::loader {

// Opens `path`; an empty path is an Error explaining where the default for
// `file_name` would have come from (TPUC_ROOT, TPUKERNEL_CUSTOM_FIRMWARE_PATH).
std::shared_ptr<SharedLibrary> open_library(const std::string &path, const std::string &file_name,
                                            bool firmware);

// Refuses a library without tpu_custom_api_level or with another level.
void check_api_level(const SharedLibrary &lib);

// tpu_custom_build_id / _info, empty when the library has none.
BuildIdentity read_build_identity(const SharedLibrary &lib);

// The stand-in for `file_name` when a model needs no custom-layer library
// (Plugin::none() and its siblings).
std::shared_ptr<SharedLibrary> no_library(const std::string &file_name);

// A NULL-terminated `const char *const []` the library exports (tpu_custom_abi.h);
// empty for no library.
std::vector<std::string> read_name_list(const SharedLibrary &lib, const char *symbol);

// The same list, empty when the library does not export it.
std::vector<std::string> read_optional_name_list(const SharedLibrary &lib, const char *symbol);

// "a, b, c", or "none".
std::string join_names(const std::vector<std::string> &names);

bool contains(const std::vector<std::string> &names, const std::string &name);

// Refuses specs the C side would misread (rank outside 0..MAX_SHAPE_DIMS).
void check_specs(const SharedLibrary &lib, const std::string &op, const char *role,
                 const tensor_spec_t *specs, std::size_t count);

template <typename Vector>
void check_specs(const SharedLibrary &lib, const std::string &op, const char *role, const Vector &specs) {
  check_specs(lib, op, role, specs.data(), specs.size());
}

// `count` as the int the C interfaces take.
int checked_count(const SharedLibrary &lib, const std::string &op, const char *role, std::size_t count);

// Pointer to the first element, or nullptr for an empty vector.
template <typename T>
auto data_or_null(T &vector) -> decltype(vector.data()) {
  return vector.empty() ? nullptr : vector.data();
}

// A library's path as a person reads it: relative to the working directory
// when inside it, else "$TPUC_ROOT/lib/..." when inside the SDK's prefix,
// else as it is.
std::string shown_path(const std::string &path);

// The message of `lib`'s code that failed on the emulator while running
// `what` (a function; "" for the library as a whole): the emulator's
// readable error (what failed and where, then the details; cmodel_host.h),
// then a line naming the call and the library.
std::string kernel_failure(const SharedLibrary &lib, std::string_view what);

// Runs Call::invoke(&call) inside cmodel_run, so a kernel error stops the
// kernel and comes back as an Error with the emulator's message. With
// `cores` > 1 every core of a multi-core run (cmodel_run_cores) invokes it
// on the same `call`, one core at a time: invoke() must only record a
// failure, never overwrite one with a later core's success.
//
// A failing tpu_* call leaves the kernel by longjmp, skipping every frame up
// to cmodel_run: Call and its invoke() must hold no object with a destructor.
template <typename Call>
void run_on_cmodel(const SharedLibrary &lib, std::string_view what, Call &call, int cores = 1) {
  static_assert(std::is_trivially_destructible_v<Call>);
  const int status = cores > 1 ? cmodel_run_cores(&Call::invoke, &call, cores) : cmodel_run(&Call::invoke, &call);
  if (status != 0) throw Error(kernel_failure(lib, what));
}

// While it lives, the kernels run are an op's local entry (a layer-group
// slice): a PPL kernel they call may make no automatic local tensor, which
// would be planned over the group's tensors (cmodel_set_local_entry).
class LocalEntryScope {
 public:
  LocalEntryScope() {
    if (cmodel_set_local_entry(1) != 0) throw Error(cmodel_last_error());
  }
  ~LocalEntryScope() { cmodel_set_local_entry(0); }
  LocalEntryScope(const LocalEntryScope &) = delete;
  LocalEntryScope &operator=(const LocalEntryScope &) = delete;
};

}  // namespace tpu_runtime::loader
