// hw_gather.h: BDC gather and scatter by (h, w) index pairs inside local
// memory (family S: tpu_bdc_hw_gather, tpu_bdc_hw_gather_exception,
// tpu_bdc_hw_scatter; the vendor's SG instruction "PL d2", rule SG-5).
//
// The vendor documents the functions' parameters (no index dtype) and the
// rule SG-5: the gather's result and the scatter's param have H = 1, every
// operand starts at a multiple of ALIGN_BYTES, the index starts on NPU 0,
// param and result on one NPU, dims in [1, 65535], a scatter has no fill.
// An index on NPU 0 is one vector every lane reads. Our layout, decided
// from that (docs/bdc.md, "hw gather"):
//
//   index:  [N, 1, 1, 2 W] UINT16 in the aligned layout on NPU 0: element
//           2 w is the row h, element 2 w + 1 the column w of the pair for
//           position w of batch n, shared by every channel.
//   gather: output [N, C, 1, W], param [N, C, param_h, param_w]:
//           output(n, c, 0, w) = param(n, c, index_h(n, w), index_w(n, w))
//   scatter: param [N, C, 1, W], output [N, C, output_h, output_w]:
//           output(n, c, index_h(n, w), index_w(n, w)) = param(n, c, 0, w)
//
// Out-of-range pairs (a row >= param_h or a column >= param_w) stop the
// plain gather (the hardware reads some other element); the exception form
// writes C (fill_const) or clamps the row and the column each to its range.
// A scatter skips them and warns once per command; several pairs naming one
// position: the last in (n, w) order wins, for every channel.
//
// Every index and param element is read before anything is written.
#pragma once

#include "bdc.h"
#include "gather.h"

namespace cmodel::bdc {

struct HwGather {
  int param_h, param_w;
  data_type_t dtype;
  OutOfRange out_of_range = OutOfRange::fail;
  scalar_t fill{};  // OutOfRange::fill's value, in dtype
};

// `shape` is the output's ([N, C, 1, W]).
void hw_gather(Context &ctx, const char *api, local_addr_t output, local_addr_t param, local_addr_t index,
               const dim4 &shape, const HwGather &g);
// `shape` is param's ([N, C, 1, W]).
void hw_scatter(Context &ctx, const char *api, local_addr_t output, local_addr_t param, local_addr_t index,
                const dim4 &shape, int output_h, int output_w, data_type_t dtype);

}  // namespace cmodel::bdc
