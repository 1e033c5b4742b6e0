// ppl_ops_common.h: what the PPL operation families (ppl_ops_*.cc) share:
// the mapping of PPL types to tpu-kernel's, the checks every operation
// makes, and broadcasting (spec §2.6). Internal to the runtime.
#pragma once

#include <string>

#include <fmt/format.h>

#include "ppl_state.h"
#include "tpu_kernel.h"

namespace ppl::rt {

::data_type_t kernel_dtype(ppl::data_type_t d);
inline ::dim4 kernel_dim4(const ppl::dim4 &d) { return ::dim4{d.n, d.c, d.h, d.w}; }
std::string text(const ppl::dim4 &d);
bool same(const ppl::dim4 &a, const ppl::dim4 &b);
bool is_float(ppl::data_type_t d);
// `value` as a scalar of `d` (16-bit floats rounded half to even).
scalar_t scalar_of(double value, ppl::data_type_t d);

void require_local(const char *name, const char *role, const desc &d, const site &where);
void require_same_shape(const char *name, const desc &a, const desc &b, const site &where);
// Commands without stride arguments read the aligned layout.
void require_aligned(const char *name, const char *role, const desc &d, const site &where);
// Every operand local, on one lane, from lane 0 (matrix operands).
void require_lane0_aligned(const char *name, std::initializer_list<std::pair<const char *, const desc *>> operands,
                           const site &where);
// PPL's integer shift is a left shift in [-32, 31]; tpu-kernel's integer
// arithmetic shifts right only. A left shift without saturation is the
// operation unshifted, then dst shifted left in place: exact, as both wrap
// in dst's width. With saturation the operation goes, saturated to 32
// bits, into the mode's work tensor (the target, checked here; otherwise
// dst), then an arithmetic shift, which saturates, moves it into dst:
// exact, since a value past 32 bits shifted left saturates dst anyway.
void check_shift(const char *name, const int_mode &mode, const site &where);
desc shift_target(const char *name, const desc &dst, const int_mode &mode, const site &where);
// After the operation wrote `target`: dst shifted left as above.
void finish_left_shift(const desc &dst, const desc &target, const int_mode &mode);
// The output's H and W of `window` over an input of `shape`; refuses a
// kernel, stride or dilation below 1, a negative padding, or a window
// larger than the padded input.
dim2 window_output(const char *name, const dim4 &shape, const pool_window &window, const site &where);
// Local aligned dst and src, dst of the output shape of a pooling (or
// depthwise) window over src (a dst declared without a shape takes it);
// refuses a bad window. The dst to write.
desc check_window_output(const char *name, const desc &dst_in, const desc &src, const pool_window &window,
                         const site &where);
// src [n, 1, h, w] copied to `num` (0: dst's C) channels of dst [n, num, h,
// w], within the lanes from dst's start; the channel count.
int check_channel_broadcast(const char *name, const desc &dst, const desc &src, int num, const site &where);

// `src` read with the shape of `dst`: an extent 1 in N, H or W becomes a
// zero stride (spec §2.6). An extent 1 in C is copied from its lane to the
// others first (lane_broadcast), then read with a zero C stride: PPL does
// the same in place, which is safe only for a tensor that owns all lanes
// of its bytes (a one-channel allocation from lane 0).
struct operand {
  desc d;
  bool lane_broadcast = false;
  dim4 source_shape;  // before broadcasting
};
operand broadcast_to(const char *name, const desc &src, const desc &dst, const char *role, const site &where);
// Copies lane 0 of a one-channel operand to the lanes `channels` reaches.
void lane_broadcast(const operand &o, int channels);

}  // namespace ppl::rt
