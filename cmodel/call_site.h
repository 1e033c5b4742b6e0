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
// form the one-line messages (cmodel_last_error) use for a call site's file.
std::string base_name(const char *path);

// A source path as a person finds it from where they work: relative to the
// working directory or, failing that, to the op project ($CUSTOM_LAYER_PATH)
// when it lies inside one of them ("customlayer/src/kernel.c"); otherwise
// as it is. The form of the readable messages (cmodel_last_error_readable).
std::string display_path(const std::string &path);

// Where a call came from, as far as debug information tells.
struct CallSite {
  // The one-line form: "my_kernel (kernel.c:42)", "my_kernel+0x1c in
  // libfoo.so" without line information, "address 0x...", "an unknown
  // location", or a replayed command (describe_call).
  std::string text;
  std::string function;  // empty when unknown
  std::string file;      // the full source path; empty without line information
  int line = 0;
};

// The call site of `return_address`, what __builtin_return_address(0) gave
// inside the called API function.
CallSite resolve_call_site(const void *return_address);
// "customlayer/src/kernel.c:42 (my_kernel)" when the line is known (the
// path by display_path), else the one-line text.
std::string readable_call_site(const CallSite &site);

// resolve_call_site(return_address).text.
std::string describe_call_site(const void *return_address);
// The call site of `call`; during a replay "replayed command 17
// (tpu_bdc_fp_add) of the stream recorded from <origin>".
CallSite resolve_call(const CallInfo &call);
// resolve_call(call).text.
std::string describe_call(const CallInfo &call);

}  // namespace cmodel
