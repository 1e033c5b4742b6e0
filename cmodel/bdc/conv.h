// conv.h: convolution and depthwise convolution (family I:
// tpu_bdc_fp_conv2d*, tpu_bdc_fp_depthwise*, tpu_bdc_int8_*_conv2d*,
// tpu_bdc_int8_*depthwise*, tpu_bdc_conv2d_requant_*,
// tpu_bdc_depthwise2d_requant_*; shared spec tpu-kernel-tier3.md §1, §3).
//
// Geometry (window.h, §3.1): input [n, ic, ih, iw], output [n, oc, oh, ow];
// `insert` zeros (or the insert value) between input elements, padding,
// stride, dilation. The *_for_deconv2d forms have stride 1 and rotate the
// kernel: tap (p, q) reads kernel index (kh - 1 - p, kw - 1 - q).
//
// Operands (§3.2, §3.5):
//  - conv input: the aligned layout or the caller's strides; FP32 may start
//    on any NPU, every other dtype on NPU 0. Depthwise input: aligned.
//  - output: aligned; conv: any NPU; depthwise: the input's NPU. A float
//    depthwise output may start at any multiple of its element size (the
//    vendor checker aligns only its input, DW-2).
//  - conv weight: the "P-IC" layout (§1.2), one compact block of
//    ALIGN(ic, P) kh kw elements per output channel (the compact tensor
//    (1, oc, ic, kh kw) for P = 1, (1, oc, ceil(ic / P) kh kw, P)
//    otherwise) on the output's NPU, P =
//    tpu_get_ic_parallel(weight dtype): w[o][i][p][q] at element
//    i kh kw + p kw + q (P = 1) or (i / P) kh kw P + (p kw + q) P + i % P of
//    output channel o's row. Filler slots (i >= ic) are never read. Offset a
//    multiple of 4 bytes (FP32) or EU bytes (other dtypes).
//    Depthwise weight: compact (1, C, kh, kw) on the input's NPU.
//  - bias: compact (1, oc, 1, 1) on the output's NPU; kernel zero point:
//    compact (1, oc, 1, 1) in kzp_dtype on the output's NPU; per-channel
//    (pad, insert) values: compact (1, ic, 1, 2) in the input dtype on the
//    input's NPU; per-channel requant: compact (1, oc, 1, 2) INT32 on the
//    output's NPU (word 0 multiplier, word 1 bits 0-7 the signed shift,
//    bits 16-31 the zero point).
//
// Float numerics (§1.6): acc = result_add ? old output : +0; for each input
// channel i, then p, then q: acc = fl32(acc + fl32(x w)) where padding and
// inserted positions are x = 0 terms; then + bias, relu (acc > 0 ? acc :
// +0), one rounding to nearest-even into the output dtype.
//
// Integer numerics (§1.5, §3.4): acc = Σ x (w - kzp[o]) exactly (padding
// reads the pad value, inserted positions the insert value), + bias[o],
// + old output with result_add; then v = S(acc m, σ, mode) (σ < 0 shifts
// right with rounding, σ >= 0 left), v = max(v, 0) with relu, out =
// saturate(v + zp) into the output dtype (symmetric range with `sym`).
// Commands without requant use m = 1, σ = -rshift, zp = 0.
//
// Every input is read before the output is written. Checks (§5): n, ic,
// ih, iw, oc, kh, kw, oh, ow and the padded extents in [1, 65535]; stride
// and dilation in [1, 15]; padding in [0, 15]; insert in [0, 14] (conv) or
// [0, 7] (depthwise). Cost (§6): conv ceil(MACs / peak) + issue latency;
// depthwise the `pool` factor x kh x kw per EU pass of the output.
#pragma once

#include <cstdint>

#include "bdc.h"

namespace cmodel::bdc {

enum class ConvKind { full, depthwise };

// The window of one command.
struct ConvWindow {
  dim4 input_shape{};
  const dim4 *input_stride = nullptr;  // elements; null: aligned
  int output_c = 0;                    // depthwise: ignored (= input c)
  dim2 kernel{}, stride{1, 1}, dilation{1, 1}, insert{0, 0};
  padding_t padding{};
  bool rotate = false;  // *_for_deconv2d
};

// A local tensor or a constant (the constant's bits in `value`).
struct ConvSource {
  bool is_const = false;
  local_addr_t addr = 0;
  scalar_t value{};
};
inline ConvSource conv_tensor(local_addr_t addr) { return {false, addr, {}}; }
inline ConvSource conv_constant(scalar_t value) { return {true, 0, value}; }

struct FpConv {
  ConvKind kind = ConvKind::full;
  ConvWindow window;
  local_addr_t input = 0;
  ConvSource weight;
  data_type_t input_dtype = DT_FP32, output_dtype = DT_FP32;
  bool has_bias = false;
  local_addr_t bias = 0;
  data_type_t bias_dtype = DT_FP32;
  bool result_add = false, relu = false;
};

void fp_conv(Context &ctx, const char *api, local_addr_t output, const FpConv &conv);

// Post-processing of an integer accumulator.
struct ConvRequant {
  bool per_channel = false;  // the (1, oc, 1, 2) tensor at `addr`
  local_addr_t addr = 0;
  int multiplier = 1, shift = 0, zero_point = 0;  // shift: σ, negative = right
  rounding_mode_t mode = RM_HALF_UP;
  bool relu = false, sym = false;
};

struct IntConv {
  ConvKind kind = ConvKind::full;
  ConvWindow window;
  local_addr_t input = 0;
  data_type_t input_dtype = DT_INT8, weight_dtype = DT_INT8;
  ConvSource weight;
  // Kernel zero point: none, a constant (low byte, kzp_dtype) or a tensor.
  bool has_kzp = false;
  ConvSource kzp;
  data_type_t kzp_dtype = DT_INT8;
  // Pad and insert values: constants (low byte, input dtype) or the
  // per-channel (pad, insert) tensor at pad_insert.addr.
  ConvSource pad, insert;
  bool pad_insert_tensor = false;
  local_addr_t pad_insert_addr = 0;
  bool has_bias = false;
  local_addr_t bias = 0;
  data_type_t bias_dtype = DT_INT32;
  bool result_add = false;
  // The dtype written: the caller has applied the command's sign rule.
  data_type_t output_dtype = DT_INT32;
  ConvRequant requant;
};

void int_conv(Context &ctx, const char *api, local_addr_t output, const IntConv &conv);

}  // namespace cmodel::bdc
