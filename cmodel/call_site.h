// call_site.h: where in the kernel an API call came from.
#pragma once

#include <cstdint>
#include <string>

namespace cmodel {

// The API call being executed, as set by api::run: messages that concern
// more than one command (races) name each one's call site.
struct CallInfo {
  const char *api = nullptr;
  const void *caller = nullptr;
  // While cmodel_replay runs a command stream: where it was recorded and
  // which of its commands this is (from 1); the caller is then replay code.
  const char *replay_origin = nullptr;
  uint64_t replay_command = 0;
};
CallInfo &current_call();

// The file name of a source path ("kernel.c" for "/src/ops/kernel.c"): the
// form every message uses for a call site's file.
std::string base_name(const char *path);

// "my_kernel (kernel.c:42)", "my_kernel+0x1c in libfoo.so" without debug
// information, or "an unknown location". `return_address` is what
// __builtin_return_address(0) gave inside the called API function.
std::string describe_call_site(const void *return_address);
// The call site of `call`, or "replayed command 17 (tpu_bdc_fp_add) of the
// stream recorded from <origin>" during a replay.
std::string describe_call(const CallInfo &call);

}  // namespace cmodel
