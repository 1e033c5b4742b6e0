// ppl_wrapper_func.h: the vendor's composite functions (global namespace),
// built from the operations of ppl.h. Their temporaries are local tensors
// declared here, so they count against the calling kernel's local memory
// (spec §3.9). Those not written yet are deleted in ppl_unimplemented.h.
#pragma once

#include "ppl.h"

// e^x of `in` into `out` (fp32, fp16, bf16), `in` first clamped from above
// to the largest x whose e^x the type holds (88 for fp32 and bf16, 11 for
// fp16): no infinity. `block` is the tensors' allocation shape, `real`
// their shape.
template <typename T>
void exp_no_overflow(const ppl::tensor<T> &out, const ppl::tensor<T> &in, const ppl::dim4 *block,
                     const ppl::dim4 *real, const ppl::rt::site &where = ppl::rt::site::current()) {
  const float upper = std::is_same_v<T, ppl::fp16> ? 11.0f : 88.0f;
  auto clamped = ppl::make_tensor<T>(*block, *real);
  ppl::tiu::fmin(clamped, in, upper, false, where);
  auto work0 = ppl::make_tensor<T>(*block, *real);
  auto work1 = ppl::make_tensor<T>(*block, *real);
  const ppl::dim4 table = {1, ppl::lane_num(), 1, 10};
  auto coeff = ppl::make_tensor<T>(table, table);
  ppl::rt::tiu_exp("exp_no_overflow", out.describe(), clamped.describe(), work0.describe(), work1.describe(),
                   coeff.describe(), where);
}
template <typename T>
void exp_no_overflow(const ppl::tensor<T> &out, const ppl::tensor<T> &in, const ppl::dim4 *shape,
                     const ppl::rt::site &where = ppl::rt::site::current()) {
  exp_no_overflow(out, in, shape, shape, where);
}
