// ppl_unimplemented.h: operations of the vendor's catalogue (spec §3.8)
// that no public bm1684x/bm1688 kernel uses and this library does not
// implement. Each is a deleted function, so a kernel calling one fails to
// compile with an error naming it ("use of deleted function
// 'ppl::tiu::fdeconv'") instead of running as a no-op. Every operation of
// the spec's build order (§5.3, 74) is implemented; other names of the
// catalogue fail to compile as unknown names.
#pragma once

#define PPL_NOT_IMPLEMENTED(NAME) \
  template <typename... Args>     \
  void NAME(Args &&...) = delete;

namespace ppl {
namespace tiu {
// The weight gradient (tpu_bdc_fp_conv_bw is not emulated).
PPL_NOT_IMPLEMENTED(fconv_bw)
// The packed selection (tpu_bdc_batch_bcast_w_mask_select is not emulated).
PPL_NOT_IMPLEMENTED(mask_select)
}  // namespace tiu
}  // namespace ppl

#undef PPL_NOT_IMPLEMENTED
