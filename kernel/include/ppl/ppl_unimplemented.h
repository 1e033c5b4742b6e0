// ppl_unimplemented.h: the PPL operations public kernels use (spec §5.3)
// that this library does not implement yet. Each is a deleted function, so
// a kernel calling one fails to compile with an error naming it ("use of
// deleted function 'ppl::tiu::fconv'") instead of running as a no-op.
#pragma once

#define PPL_NOT_IMPLEMENTED(NAME) \
  template <typename... Args>     \
  void NAME(Args &&...) = delete;

namespace ppl {
namespace dma {
PPL_NOT_IMPLEMENTED(nonzero)
}  // namespace dma
namespace tiu {
PPL_NOT_IMPLEMENTED(fconv)
PPL_NOT_IMPLEMENTED(pool_max)
PPL_NOT_IMPLEMENTED(pool_avg)
PPL_NOT_IMPLEMENTED(gather_hw)
PPL_NOT_IMPLEMENTED(scatter_w)
}  // namespace tiu
}  // namespace ppl

// Wrappers of ppl_wrapper_func.h (global namespace).

#undef PPL_NOT_IMPLEMENTED
