// transpose.cc: GDMA moves that permute or reverse dimensions.
#include "cmodel/error.h"
#include "mover.h"

namespace cmodel::gdma {

void nc_transpose(Context &ctx, const char *api, Endpoint dst_end, Endpoint src_end, const dim4 &dst_shape,
                  data_type_t dtype) {
  const dim4 &s = dst_shape;
  const TensorRef dst = operand(ctx, "dst", dst_end, s, dtype);
  const TensorRef src = operand(ctx, "src", src_end, {s.c, s.n, s.h, s.w}, dtype);
  move_rows(dst, [&](int n, int c, int h) { return src.row(c, n, h); }, src.stride.w);
  book(ctx, api, dst, src);
}

void cw_transpose(Context &ctx, const char *api, Endpoint dst_end, Endpoint src_end, const dim4 &dst_shape,
                  data_type_t dtype) {
  const dim4 &s = dst_shape;
  const TensorRef dst = operand(ctx, "dst", dst_end, s, dtype);
  const TensorRef src = operand(ctx, "src", src_end, {s.n, s.w, s.h, s.c}, dtype);
  // Along a dst row the source channel changes at every element, so each
  // element is its own run (a local source changes NPU each time).
  for (int n = 0; n < s.n; ++n)
    for (int c = 0; c < s.c; ++c)
      for (int h = 0; h < s.h; ++h)
        for (int w = 0; w < s.w; ++w) move_run(dst.at(n, c, h, w), 1, src.at(n, w, h, c), 1, 1, dst.esize);
  book(ctx, api, dst, src);
}

void reverse(Context &ctx, const char *api, Endpoint dst_end, Endpoint src_end, const dim4 &shape, int axis,
             data_type_t dtype) {
  if (axis < 0 || axis > 3) fail(Rule::DMA_21, "reverse_axis = {}; it must be 0 (n), 1 (c), 2 (h) or 3 (w)", axis);
  const TensorRef dst = operand(ctx, "dst", dst_end, shape, dtype);
  const TensorRef src = operand(ctx, "src", src_end, shape, dtype);
  // The vendor asserts this in every build, not only in its cmodel.
  if (src.is_local() && axis != 1)
    fail(Rule::DMA_21, "reverse_axis = {} with a local source; from local memory the GDMA reverses only along c (1)",
         axis);
  auto flip = [](int i, int extent) { return extent - 1 - i; };
  switch (axis) {
    case 0: move_rows(dst, [&](int n, int c, int h) { return src.row(flip(n, shape.n), c, h); }, src.stride.w); break;
    case 1: move_rows(dst, [&](int n, int c, int h) { return src.row(n, flip(c, shape.c), h); }, src.stride.w); break;
    case 2: move_rows(dst, [&](int n, int c, int h) { return src.row(n, c, flip(h, shape.h)); }, src.stride.w); break;
    default:
      // Walk the source row backwards from its last element.
      move_rows(dst, [&](int n, int c, int h) { return src.at(n, c, h, shape.w - 1); }, -int64_t(src.stride.w));
      break;
  }
  book(ctx, api, dst, src);
}

}  // namespace cmodel::gdma
