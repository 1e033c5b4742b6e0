// gather.h: BDC gather and scatter inside local memory (family S), along W
// or along H of each channel.
//
// Layouts (every operand in the aligned layout, all starting on one NPU):
//   W gather:  output [N, C, H, W], index [N, C, H, W] of index_dtype,
//              param [N, C, H, param_w]:   output(n,c,h,w) = param(n,c,h,index(n,c,h,w))
//   H gather:  output [N, C, H, W], index [N, C, H, 1],
//              param [N, C, param_h, W]:   output(n,c,h,w) = param(n,c,index(n,c,h),w)
//   W scatter: param and index [N, C, H, W], output [N, C, H, output_w]:
//              output(n,c,h,index(n,c,h,w)) = param(n,c,h,w)
//   H scatter: param [N, C, H, W], index [N, C, H, 1], output [N, C, output_h, W]:
//              output(n,c,index(n,c,h),w) = param(n,c,h,w)
// With `param_repeated` (the vendor's is_param_repeated) param holds one
// channel, [N, 1, H, param_w] (or [N, 1, param_h, W], or for a scatter
// [N, 1, H, W]) in the aligned layout, present at the same offset of every
// NPU (the kernel has broadcast it there): channel c reads the copy in its
// own NPU, as the hardware's lanes do.
//
// Index values: unsigned or signed integers of 8 or 16 bits (the vendor's
// SG-2, SG-7, SGL-2); a negative value is out of range. Out-of-range indices of a gather stop the command
// (OutOfRange::fail, the plain gathers: the hardware reads some other
// element), or give C (fill) or the nearest valid position (clamp): the
// *_exception forms with fill_const true / false. A scatter skips them and
// warns once per command. Several indices naming one position of a
// scatter: the last in (n, c, h, w) order wins; positions no index names
// keep their values.
//
// Every index and every param element is read before anything is written,
// so overlapping operands give the in-order result.
#pragma once

#include <cstdint>

#include "bdc.h"

namespace cmodel::bdc {

enum class GatherAxis { w, h };
enum class OutOfRange { fail, fill, clamp };

struct Gather {
  GatherAxis axis;
  int param_len;  // param_w or param_h
  data_type_t dtype;
  data_type_t index_dtype;
  bool param_repeated = false;
  // A batch_bcast_* or 4bank_* form: along W it issues another instruction
  // than tpu_bdc_w_gather / w_scatter, which the vendor checks by other
  // rules (SG-6..8 instead of SG-1..3; the H forms: SGL-1..3).
  bool batch = false;
  OutOfRange out_of_range = OutOfRange::fail;
  scalar_t fill{};  // OutOfRange::fill's value, in dtype
};

struct Scatter {
  GatherAxis axis;
  int output_len;  // output_w or output_h
  data_type_t dtype;
  data_type_t index_dtype;
  bool param_repeated = false;
  bool batch = false;  // as Gather::batch
};

void gather(Context &ctx, const char *api, local_addr_t output, local_addr_t param, local_addr_t index,
            const dim4 &shape, const Gather &g);
void scatter(Context &ctx, const char *api, local_addr_t output, local_addr_t param, local_addr_t index,
             const dim4 &shape, const Scatter &s);

}  // namespace cmodel::bdc
