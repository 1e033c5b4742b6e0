// ppl_unimplemented.h: the PPL operations public kernels use (spec §5.3)
// that this library does not implement yet. Each is a deleted function, so
// a kernel calling one fails to compile with an error naming it ("use of
// deleted function 'ppl::tiu::fconv'") instead of running as a no-op.
#pragma once

#define PPL_NOT_IMPLEMENTED(NAME) \
  template <typename... Args>     \
  void NAME(Args &&...) = delete;

namespace ppl {
namespace tiu {
// Convolution: the weight layouts and the deprecated pointer forms'
// parameter order are not settled (docs/ppl.md).
PPL_NOT_IMPLEMENTED(fconv)
// The emulator has no tpu_bdc_hw_gather yet.
PPL_NOT_IMPLEMENTED(gather_hw)
}  // namespace tiu
}  // namespace ppl

#undef PPL_NOT_IMPLEMENTED
