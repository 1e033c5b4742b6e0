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
PPL_NOT_IMPLEMENTED(load_transpose_nc)
PPL_NOT_IMPLEMENTED(store_transpose_nc)
PPL_NOT_IMPLEMENTED(load_transpose_cw)
PPL_NOT_IMPLEMENTED(store_transpose_cw)
PPL_NOT_IMPLEMENTED(load_broadcast)
PPL_NOT_IMPLEMENTED(load_compact)
PPL_NOT_IMPLEMENTED(transpose_cw)
PPL_NOT_IMPLEMENTED(transpose_nc)
PPL_NOT_IMPLEMENTED(gather_h)
PPL_NOT_IMPLEMENTED(scatter_h)
PPL_NOT_IMPLEMENTED(reduce)
PPL_NOT_IMPLEMENTED(broadcast)
PPL_NOT_IMPLEMENTED(nonzero)
}  // namespace dma
namespace sdma {
PPL_NOT_IMPLEMENTED(move)
PPL_NOT_IMPLEMENTED(gather_h)
PPL_NOT_IMPLEMENTED(scatter_h)
PPL_NOT_IMPLEMENTED(zero)
}  // namespace sdma
namespace tiu {
PPL_NOT_IMPLEMENTED(fpool_min)
PPL_NOT_IMPLEMENTED(fmm2_nt)
PPL_NOT_IMPLEMENTED(fmm2_nn)
PPL_NOT_IMPLEMENTED(transpose_cw)
PPL_NOT_IMPLEMENTED(transpose_wc)
PPL_NOT_IMPLEMENTED(eq)
PPL_NOT_IMPLEMENTED(lt)
PPL_NOT_IMPLEMENTED(gt)
PPL_NOT_IMPLEMENTED(gt_select)
PPL_NOT_IMPLEMENTED(lt_select)
PPL_NOT_IMPLEMENTED(eq_select)
PPL_NOT_IMPLEMENTED(floor)
PPL_NOT_IMPLEMENTED(round)
PPL_NOT_IMPLEMENTED(fconv)
PPL_NOT_IMPLEMENTED(bitwise_and)
PPL_NOT_IMPLEMENTED(bitwise_or)
PPL_NOT_IMPLEMENTED(bitwise_xor)
PPL_NOT_IMPLEMENTED(shift)
PPL_NOT_IMPLEMENTED(logical_shift)
PPL_NOT_IMPLEMENTED(abs)
PPL_NOT_IMPLEMENTED(pool_max)
PPL_NOT_IMPLEMENTED(pool_avg)
PPL_NOT_IMPLEMENTED(gather_hw)
PPL_NOT_IMPLEMENTED(scatter_w)
PPL_NOT_IMPLEMENTED(arange_broadcast)
PPL_NOT_IMPLEMENTED(move_cross_lane)
PPL_NOT_IMPLEMENTED(fmac)
}  // namespace tiu
}  // namespace ppl

// Wrappers of ppl_wrapper_func.h (global namespace).
PPL_NOT_IMPLEMENTED(quick_pooling)
PPL_NOT_IMPLEMENTED(flog)
PPL_NOT_IMPLEMENTED(sigmoid_fp32)
PPL_NOT_IMPLEMENTED(pow_f32)
PPL_NOT_IMPLEMENTED(farcsin)

#undef PPL_NOT_IMPLEMENTED
