// not_implemented.cc: a weak stub for every tpu-kernel API function.
//
// Each function listed in api_functions.def (generated from
// kernel/api/tpu_kernel.api) gets a weak
// definition here that fails with "<name> is not implemented in this SDK",
// naming the kernel's call site. This lets any kernel written against
// tpu_kernel.h link against libcmodel.so even if it calls a function the
// emulator does not provide yet; the failure happens only if the call is
// actually reached.
//
// Why this works:
//   - C symbols carry no parameter types, so a stub defined as `void name()`
//     satisfies every call to `name` whatever its declared signature. That
//     is also why this file must NOT include tpu_kernel.h: the differing
//     declarations would clash at compile time.
//   - The stubs are weak. A real implementation anywhere else in
//     libcmodel.so is a strong definition of the same symbol and silently
//     replaces the stub at link time (the library links its sources as
//     objects, not through a static archive, so the strong one is always
//     seen).
//   - A stub never returns into the kernel inside a run: not_implemented()
//     records the error and jumps back to the run boundary, so the kernel
//     never continues with a missing result. Outside a run (a host program
//     calling the API directly) it returns; the error stays readable via
//     cmodel_last_error() and any return value the caller reads is garbage.
//
// Support functions (policy `support`: the targets of the assertion and log
// macros) are the SDK's own code, always implemented, and get no stub.
#include "api_guard.h"

#define TPU_DEFINE_NOT_IMPLEMENTED(name)               \
  extern "C" __attribute__((weak)) void name() {       \
    cmodel::api::not_implemented(#name, TPU_CALLER()); \
  }

#define TPU_STUB_recorded TPU_DEFINE_NOT_IMPLEMENTED
#define TPU_STUB_ignored TPU_DEFINE_NOT_IMPLEMENTED
#define TPU_STUB_refused TPU_DEFINE_NOT_IMPLEMENTED
#define TPU_STUB_support(name)

#define TPU_API_FUNCTION(family, name, policy) TPU_STUB_##policy(name)
#include "api_functions.def"
#undef TPU_API_FUNCTION
