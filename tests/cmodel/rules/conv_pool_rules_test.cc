// conv_pool_rules_test.cc: the convolution rules (CONV-*) and the pooling /
// depthwise rules (POOL-*, DW-*) of cmodel/vendor_rules.def.
//
// Every command reads a [1, 2, 4, 4] input with a 2 x 2 window (output
// [1, 2, 3, 3]); its operands sit at fixed, aligned offsets of NPU 0 unless
// a test moves one.
#include "rule_test.h"

namespace {

using rule_test::g;

constexpr uint32_t I = 0x0000, O = 0x1000, W = 0x2000, B = 0x3000, K = 0x4000, P = 0x5000;

// NPU `npu`'s local memory at `offset`.
local_addr_t at(int npu, uint32_t offset) { return uint32_t(npu) * uint32_t(g.local_mem) + offset; }

const dim4 shape{1, 2, 4, 4};
const padding_t no_pad{0, 0, 0, 0};
const dim2 one{1, 1};

// ---- CONV ---------------------------------------------------------------------------------

// One tpu_bdc_fp_conv2d (or _for_deconv2d with `insert`), legal as built.
struct FpConv {
  local_addr_t output = at(0, O), input = at(0, I), weight = at(0, W), bias = at(0, B);
  const dim4 *input_stride = nullptr;
  int output_c = 2;
  dim2 kernel{2, 2}, stride{1, 1}, insert{0, 0};
  data_type_t output_dtype = DT_FP32, input_dtype = DT_FP32;

  void run() const {
    tpu_bdc_fp_conv2d(output, input, weight, bias, &shape, input_stride, output_c, &kernel, &no_pad, &stride, &one,
                      output_dtype, input_dtype, true, false);
  }
  void run_deconv() const {
    tpu_bdc_fp_conv2d_for_deconv2d(output, input, weight, bias, &shape, input_stride, output_c, &kernel, &insert,
                                   &no_pad, &one, output_dtype, input_dtype, true, false);
  }
};

FpConv fp16_conv() {
  FpConv c;
  c.output_dtype = c.input_dtype = DT_FP16;
  return c;
}

// One tpu_bdc_int8_sym_quant_conv2d: INT8 input and weight, INT16 output.
struct SymConv {
  local_addr_t output = at(0, O), input = at(0, I), bias = at(0, B);
  data_type_t input_dtype = DT_INT8, bias_dtype = DT_INT32;

  void run() const {
    const dim2 kernel{2, 2};
    tpu_bdc_int8_sym_quant_conv2d(output, input, at(0, W), bias, &shape, nullptr, 2, &kernel, &no_pad, &one, &one,
                                  DT_INT16, input_dtype, DT_INT8, bias_dtype, 0, true, false);
  }
};

// tpu_bdc_int8_asym_pc_quant_conv2d with its per-channel kernel zero points
// and (pad, insert) pairs.
void asym_pc_conv(local_addr_t pad) {
  const dim2 kernel{2, 2};
  tpu_bdc_int8_asym_pc_quant_conv2d(at(0, O), at(0, I), at(0, W), at(0, K), pad, &shape, nullptr, 2, &kernel, &no_pad,
                                    &one, &one, DT_INT32, DT_INT8, DT_INT8, DT_INT8, false);
}

// tpu_bdc_fp_conv2d_with_rescale without rescaling: FP16 with a bias dtype.
void fp16_conv_with_bias_dtype(data_type_t bias_dtype) {
  const dim2 kernel{2, 2};
  tpu_bdc_fp_conv2d_with_rescale(at(0, O), at(0, I), at(0, W), at(0, B), 0, &shape, nullptr, 2, &kernel, &no_pad, &one,
                                 &one, DT_FP16, DT_FP16, DT_FP16, bias_dtype, true, false, false, false, false);
}

// A float input other than FP32 starts on NPU 0.
RULE_TEST(CONV_1) {
  expect_refused([](const void *) {
    FpConv c = fp16_conv();
    c.input = at(1, I);
    c.run();
  });
  expect_legal([](const void *) { fp16_conv().run(); });
}

RULE_TEST(CONV_2) {
  expect_refused([](const void *) {
    SymConv c;
    c.input = at(1, I);
    c.run();
  });
  expect_legal([](const void *) { SymConv().run(); });
}

RULE_TEST(CONV_3) {
  expect_refused([](const void *) {
    FpConv c;
    c.output = uint32_t(g.npu_num) * uint32_t(g.local_mem);
    c.run();
  });
  expect_legal([](const void *) { FpConv().run(); });
}

// Weight and bias start on the output's NPU.
RULE_TEST(CONV_4) {
  expect_refused([](const void *) {
    FpConv c;
    c.weight = at(1, W);
    c.run();
  });
  expect_refused([](const void *) {
    FpConv c;
    c.output = at(1, O);
    c.run();
  });
  expect_legal([](const void *) {
    FpConv c;
    c.output = at(1, O);
    c.weight = at(1, W);
    c.bias = at(1, B);
    c.run();
  });
}

// The (pad, insert) pairs start on the input's NPU at a multiple of two
// elements.
RULE_TEST(CONV_5) {
  expect_refused([](const void *) { asym_pc_conv(at(1, P)); });
  expect_refused([](const void *) { asym_pc_conv(at(0, P + 1)); });
  expect_legal([](const void *) { asym_pc_conv(at(0, P)); });
}

// An aligned input at ALIGN_BYTES, a strided one at its element size.
RULE_TEST(CONV_6) {
  expect_refused([](const void *) {
    FpConv c;
    c.input = at(0, I + 4);
    c.run();
  });
  expect_refused([](const void *) {
    static const dim4 strides{32, 16, 4, 1};
    FpConv c;
    c.input_stride = &strides;
    c.input = at(0, I + 2);
    c.run();
  });
  expect_legal([](const void *) {
    static const dim4 strides{32, 16, 4, 1};
    FpConv c;
    c.input_stride = &strides;
    c.input = at(0, I + 4);
    c.run();
  });
}

// FP32 in, FP32 out; FP16 in, FP16 or FP32 out.
RULE_TEST(CONV_7) {
  expect_refused([](const void *) {
    FpConv c;
    c.output_dtype = DT_FP16;
    c.run();
  });
  expect_legal([](const void *) {
    FpConv c = fp16_conv();
    c.output_dtype = DT_FP32;
    c.run();
  });
}

// An FP16 input takes an FP16 or FP32 bias.
RULE_TEST(CONV_8) {
  expect_refused([](const void *) { fp16_conv_with_bias_dtype(DT_BFP16); });
  expect_legal([](const void *) { fp16_conv_with_bias_dtype(DT_FP16); });
}

// The weight of a non-FP32 conv starts at ALIGN_BYTES, an FP32 one at 4 bytes.
RULE_TEST(CONV_9) {
  expect_refused([](const void *) {
    FpConv c = fp16_conv();
    c.weight = at(0, W + 4);
    c.run();
  });
  expect_legal([](const void *) { fp16_conv().run(); });
  expect_legal([](const void *) {
    FpConv c;
    c.weight = at(0, W + 4);
    c.run();
  });
}

// The bias starts at a multiple of 4 bytes, whatever its dtype.
RULE_TEST(CONV_10) {
  expect_refused([](const void *) {
    SymConv c;
    c.bias_dtype = DT_INT16;
    c.bias = at(0, B + 2);
    c.run();
  });
  expect_legal([](const void *) {
    SymConv c;
    c.bias_dtype = DT_INT16;
    c.bias = at(0, B + 4);
    c.run();
  });
}

RULE_TEST(CONV_11) {
  expect_refused([](const void *) {
    FpConv c;
    c.output = at(0, O + 4);
    c.run();
  });
  expect_legal([](const void *) { FpConv().run(); });
}

RULE_TEST(CONV_12) {
  expect_refused([](const void *) {
    SymConv c;
    c.input_dtype = DT_INT16;
    c.run();
  });
  expect_legal([](const void *) { SymConv().run(); });
}

RULE_TEST(CONV_13) {
  expect_refused([](const void *) {
    FpConv c;
    c.output_c = 0;
    c.run();
  });
  expect_legal([](const void *) { FpConv().run(); });
}

RULE_TEST(CONV_14) {
  expect_refused([](const void *) {
    FpConv c;
    c.stride = {16, 1};
    c.run();
  });
  expect_legal([](const void *) {
    FpConv c;
    c.stride = {15, 1};
    c.run();
  });
}

RULE_TEST(CONV_15) {
  expect_refused([](const void *) {
    FpConv c;
    c.insert = {15, 0};
    c.run_deconv();
  });
  expect_legal([](const void *) {
    FpConv c;
    c.insert = {14, 0};
    c.run_deconv();
  });
}

RULE_TEST(CONV_16) {
  expect_refused([](const void *) {
    FpConv c;
    c.kernel = {0, 2};
    c.run();
  });
  expect_legal([](const void *) { FpConv().run(); });
}

// Each input stride the command reads fits its 16-bit field.
RULE_TEST(CONV_18) {
  expect_refused([](const void *) {
    static const dim4 strides{32, 16, 65536, 1};
    FpConv c;
    c.input_stride = &strides;
    c.run();
  });
  expect_legal([](const void *) {
    static const dim4 strides{32, 16, 4, 1};
    FpConv c;
    c.input_stride = &strides;
    c.run();
  });
}

// ---- POOL ---------------------------------------------------------------------------------

void fp_max_pool(local_addr_t output, local_addr_t input, dim2 stride, data_type_t dtype) {
  const dim2 kernel{2, 2};
  tpu_bdc_fp_max_pool2d(output, input, &shape, &kernel, &no_pad, &stride, &one, dtype, scalar_t{});
}

void fp_avg_pool(local_addr_t output, local_addr_t input) {
  const dim2 kernel{2, 2};
  scalar_t scale{};
  scale.f32 = 0.25f;
  tpu_bdc_fp_avg_pool2d(output, input, &shape, &kernel, &no_pad, &one, &one, DT_FP32, scale);
}

void int8_avg_pool(local_addr_t output, local_addr_t input, data_type_t input_dtype) {
  const dim2 kernel{2, 2};
  tpu_bdc_int8_avg_pool2d(output, input, &shape, &kernel, &no_pad, &one, &one, DT_INT16, input_dtype, 1, 2);
}

// Max / min pooling: the output on the input's NPU.
RULE_TEST(POOL_1) {
  expect_refused([](const void *) { fp_max_pool(at(1, O), at(0, I), one, DT_FP32); });
  expect_legal([](const void *) { fp_max_pool(at(1, O), at(1, I), one, DT_FP32); });
}

RULE_TEST(POOL_2) {
  expect_refused([](const void *) { fp_max_pool(at(0, O), at(0, I + 4), one, DT_FP32); });
  expect_refused([](const void *) { fp_max_pool(at(0, O + 4), at(0, I), one, DT_FP32); });
  expect_legal([](const void *) { fp_max_pool(at(0, O), at(0, I), one, DT_FP32); });
}

// Max / min pool 8-bit integers or floats, not 16- or 32-bit integers.
RULE_TEST(POOL_3) {
  expect_refused([](const void *) {
    const dim2 kernel{2, 2};
    tpu_bdc_int_max_pool2d(at(0, O), at(0, I), &shape, &kernel, &no_pad, &one, &one, DT_INT16, scalar_t{});
  });
  expect_refused([](const void *) { fp_max_pool(at(0, O), at(0, I), one, DT_INT8); });
  expect_legal([](const void *) {
    const dim2 kernel{2, 2};
    tpu_bdc_int_max_pool2d(at(0, O), at(0, I), &shape, &kernel, &no_pad, &one, &one, DT_INT8, scalar_t{});
  });
}

RULE_TEST(POOL_4) {
  expect_refused([](const void *) { fp_max_pool(at(0, O), at(0, I), {0, 1}, DT_FP32); });
  expect_legal([](const void *) { fp_max_pool(at(0, O), at(0, I), {1, 1}, DT_FP32); });
}

// Float average pooling: the output on the input's NPU, both at ALIGN_BYTES.
RULE_TEST(POOL_6) {
  expect_refused([](const void *) { fp_avg_pool(at(1, O), at(0, I)); });
  expect_refused([](const void *) { fp_avg_pool(at(0, O), at(0, I + 4)); });
  expect_legal([](const void *) { fp_avg_pool(at(0, O), at(0, I)); });
}

// Float average pooling writes the input dtype or FP32.
RULE_TEST(POOL_7) {
  expect_refused([](const void *) {
    const dim2 kernel{2, 2};
    tpu_bdc_fp_avg_pool2d_ex(at(0, O), at(0, I), &shape, &kernel, &no_pad, &one, &one, &one, DT_FP16, DT_BFP16,
                             scalar_t{});
  });
  expect_legal([](const void *) {
    const dim2 kernel{2, 2};
    tpu_bdc_fp_avg_pool2d_ex(at(0, O), at(0, I), &shape, &kernel, &no_pad, &one, &one, &one, DT_FP16, DT_FP32,
                             scalar_t{});
  });
}

// Integer average pooling: the output on the input's NPU, both at
// ALIGN_BYTES.
RULE_TEST(POOL_10) {
  expect_refused([](const void *) { int8_avg_pool(at(1, O), at(0, I), DT_INT8); });
  expect_refused([](const void *) { int8_avg_pool(at(0, O + 4), at(0, I), DT_INT8); });
  expect_legal([](const void *) { int8_avg_pool(at(0, O), at(0, I), DT_INT8); });
}

RULE_TEST(POOL_11) {
  expect_refused([](const void *) { int8_avg_pool(at(0, O), at(0, I), DT_INT16); });
  expect_legal([](const void *) { int8_avg_pool(at(0, O), at(0, I), DT_UINT8); });
}

// ---- DW -----------------------------------------------------------------------------------

// One tpu_bdc_fp_depthwise2d (or fp_ins_depthwise with `insert`).
struct FpDepthwise {
  local_addr_t output = at(0, O), input = at(0, I), weight = at(0, W), bias = at(0, B);
  dim2 insert{0, 0};
  data_type_t dtype = DT_FP32;

  void run() const {
    const dim2 kernel{2, 2};
    tpu_bdc_fp_ins_depthwise(output, input, weight, bias, &shape, &kernel, &no_pad, &one, &insert, &one, dtype, true);
  }
};

// One tpu_bdc_int8_depthwise2d: INT8 in, INT16 out.
struct Int8Depthwise {
  local_addr_t output = at(0, O), input = at(0, I), bias = at(0, B);
  dim2 dilation{1, 1};
  data_type_t input_dtype = DT_INT8, bias_dtype = DT_INT32;

  void run() const {
    const dim2 kernel{2, 2};
    tpu_bdc_int8_depthwise2d(output, input, at(0, W), bias, scalar_t{}, &shape, &kernel, &no_pad, &one, &dilation,
                             DT_INT16, input_dtype, DT_INT8, bias_dtype, 0, true, false, RM_HALF_UP);
  }
};

// Weight, bias and output on the input's NPU.
RULE_TEST(DW_1) {
  expect_refused([](const void *) {
    FpDepthwise d;
    d.weight = at(1, W);
    d.run();
  });
  expect_refused([](const void *) {
    FpDepthwise d;
    d.output = at(1, O);
    d.run();
  });
  expect_legal([](const void *) {
    FpDepthwise d;
    d.input = at(1, I);
    d.output = at(1, O);
    d.weight = at(1, W);
    d.bias = at(1, B);
    d.run();
  });
}

// The input at ALIGN_BYTES; weight and bias at their element size (the
// output too: the checker does not align it).
RULE_TEST(DW_2) {
  expect_refused([](const void *) {
    FpDepthwise d;
    d.input = at(0, I + 4);
    d.run();
  });
  expect_refused([](const void *) {
    FpDepthwise d;
    d.weight = at(0, W + 2);
    d.run();
  });
  expect_legal([](const void *) {
    FpDepthwise d;
    d.weight = at(0, W + 4);
    d.bias = at(0, B + 4);
    d.output = at(0, O + 4);
    d.run();
  });
}

RULE_TEST(DW_3) {
  expect_refused([](const void *) {
    FpDepthwise d;
    d.dtype = DT_INT8;
    d.run();
  });
  expect_legal([](const void *) {
    FpDepthwise d;
    d.dtype = DT_BFP16;
    d.run();
  });
}

// Geometry as pooling: the insert field holds at most 7.
RULE_TEST(DW_4) {
  expect_refused([](const void *) {
    FpDepthwise d;
    d.insert = {8, 0};
    d.run();
  });
  expect_legal([](const void *) {
    FpDepthwise d;
    d.insert = {7, 0};
    d.run();
  });
}

RULE_TEST(DW_6) {
  expect_refused([](const void *) {
    Int8Depthwise d;
    d.bias = at(1, B);
    d.run();
  });
  expect_legal([](const void *) { Int8Depthwise().run(); });
}

// The bias at a multiple of 4 bytes, whatever its dtype.
RULE_TEST(DW_7) {
  expect_refused([](const void *) {
    Int8Depthwise d;
    d.bias_dtype = DT_INT16;
    d.bias = at(0, B + 2);
    d.run();
  });
  expect_refused([](const void *) {
    Int8Depthwise d;
    d.output = at(0, O + 4);
    d.run();
  });
  expect_legal([](const void *) {
    Int8Depthwise d;
    d.bias_dtype = DT_INT16;
    d.bias = at(0, B + 4);
    d.run();
  });
}

RULE_TEST(DW_8) {
  expect_refused([](const void *) {
    Int8Depthwise d;
    d.input_dtype = DT_INT16;
    d.run();
  });
  expect_legal([](const void *) {
    Int8Depthwise d;
    d.input_dtype = DT_UINT8;
    d.run();
  });
}

RULE_TEST(DW_9) {
  expect_refused([](const void *) {
    Int8Depthwise d;
    d.dilation = {16, 1};
    d.run();
  });
  expect_legal([](const void *) {
    Int8Depthwise d;
    d.dilation = {2, 1};
    d.run();
  });
}

}  // namespace
