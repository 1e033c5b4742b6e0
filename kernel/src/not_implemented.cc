// not_implemented.cc: a weak stub for every tpu-kernel API function.
//
// Each function listed in api_functions.def (families A..U) gets a weak
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
// Family X (tpu_kernel_assert_failed, tpu_kernel_log) is the SDK's own
// support code, always implemented, and gets no stub.
#include "api_guard.h"

#define TPU_DEFINE_NOT_IMPLEMENTED(name)               \
  extern "C" __attribute__((weak)) void name() {       \
    cmodel::api::not_implemented(#name, TPU_CALLER()); \
  }

// Dispatch on the family letter: every API family gets a stub, X none.
#define TPU_STUB_A TPU_DEFINE_NOT_IMPLEMENTED
#define TPU_STUB_B TPU_DEFINE_NOT_IMPLEMENTED
#define TPU_STUB_C TPU_DEFINE_NOT_IMPLEMENTED
#define TPU_STUB_D TPU_DEFINE_NOT_IMPLEMENTED
#define TPU_STUB_E TPU_DEFINE_NOT_IMPLEMENTED
#define TPU_STUB_F TPU_DEFINE_NOT_IMPLEMENTED
#define TPU_STUB_G TPU_DEFINE_NOT_IMPLEMENTED
#define TPU_STUB_H TPU_DEFINE_NOT_IMPLEMENTED
#define TPU_STUB_I TPU_DEFINE_NOT_IMPLEMENTED
#define TPU_STUB_J TPU_DEFINE_NOT_IMPLEMENTED
#define TPU_STUB_K TPU_DEFINE_NOT_IMPLEMENTED
#define TPU_STUB_L TPU_DEFINE_NOT_IMPLEMENTED
#define TPU_STUB_M TPU_DEFINE_NOT_IMPLEMENTED
#define TPU_STUB_N TPU_DEFINE_NOT_IMPLEMENTED
#define TPU_STUB_O TPU_DEFINE_NOT_IMPLEMENTED
#define TPU_STUB_P TPU_DEFINE_NOT_IMPLEMENTED
#define TPU_STUB_Q1 TPU_DEFINE_NOT_IMPLEMENTED
#define TPU_STUB_Q2 TPU_DEFINE_NOT_IMPLEMENTED
#define TPU_STUB_R TPU_DEFINE_NOT_IMPLEMENTED
#define TPU_STUB_S TPU_DEFINE_NOT_IMPLEMENTED
#define TPU_STUB_T TPU_DEFINE_NOT_IMPLEMENTED
#define TPU_STUB_U TPU_DEFINE_NOT_IMPLEMENTED
#define TPU_STUB_X(name)

#define TPU_API_FUNCTION(family, name) TPU_STUB_##family(name)
#include "api_functions.def"
#undef TPU_API_FUNCTION
