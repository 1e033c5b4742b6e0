// float_convert.cc: the scalar-slot conversion behind the tpu_*_cast API.
#include "cmodel/numeric/float_convert.h"

#include "cmodel/dtype.h"
#include "cmodel/error.h"

namespace cmodel::numeric {
namespace {

void check_dtype(data_type_t dtype, const char *param) {
  if (!dtype_is_known(dtype))
    fail(ErrorKind::illegal_command,
         "{} {} ({}) is not supported by scalar casts (supported: DT_INT4, DT_UINT4, DT_INT8, DT_UINT8, "
         "DT_INT16, DT_UINT16, DT_INT32, DT_UINT32, DT_FP16, DT_BFP16, DT_FP32)",
         param, int(dtype), dtype_name(dtype));
}

// The integer a slot holds: only the member's own bits count, because a
// kernel that writes scalar.s8 leaves the other three bytes undefined.
int64_t read_int(uint32_t bits, data_type_t dtype) {
  switch (dtype) {
    case DT_INT4: return int64_t((bits & 0xf) ^ 0x8) - 8;  // sign-extend the nibble
    case DT_UINT4: return bits & 0xf;
    case DT_INT8: return int8_t(bits);
    case DT_UINT8: return uint8_t(bits);
    case DT_INT16: return int16_t(bits);
    case DT_UINT16: return uint16_t(bits);
    case DT_INT32: return int32_t(bits);
    case DT_UINT32: return bits;
    default: break;
  }
  fail(ErrorKind::illegal_command, "internal: {} ({}) is not an integer dtype", int(dtype), dtype_name(dtype));
}

// Range of an integer dtype.
int64_t int_min(data_type_t dtype) { return dtype_is_signed(dtype) ? -(int64_t{1} << (dtype_bits(dtype) - 1)) : 0; }
int64_t int_max(data_type_t dtype) {
  return (int64_t{1} << (dtype_bits(dtype) - (dtype_is_signed(dtype) ? 1 : 0))) - 1;
}

// The slot holding `value` (already in range) as the dtype's member would:
// two's complement in the member's width, the rest of the slot zero. The
// s4 member is a signed char, so INT4 is sign-extended to 8 bits.
uint32_t write_int(int64_t value, data_type_t dtype) {
  const int member_bits = dtype == DT_INT4 || dtype == DT_UINT4 ? 8 : dtype_bits(dtype);
  const uint32_t mask = member_bits == 32 ? 0xffffffffu : (1u << member_bits) - 1;
  return uint32_t(value) & mask;
}

float read_float(uint32_t bits, data_type_t dtype) {
  switch (dtype) {
    case DT_FP32: return std::bit_cast<float>(bits);
    case DT_FP16: return fp16_to_fp32(uint16_t(bits));
    default: return bf16_to_fp32(uint16_t(bits));
  }
}

uint32_t int_to_float(int64_t value, data_type_t dtype, rounding_mode_t mode) {
  switch (dtype) {
    case DT_FP32: return int_to_float_bits<Fp32Format>(value, mode);
    case DT_FP16: return int_to_float_bits<Fp16Format>(value, mode);
    default: return int_to_float_bits<Bf16Format>(value, mode);
  }
}

uint32_t narrow(float value, data_type_t dtype, rounding_mode_t mode) {
  switch (dtype) {
    case DT_FP32: return std::bit_cast<uint32_t>(value);
    case DT_FP16: return fp32_to_fp16(value, mode);
    default: return fp32_to_bf16(value, mode);
  }
}

}  // namespace

uint32_t convert_scalar_bits(uint32_t src_bits, data_type_t dst, data_type_t src, rounding_mode_t mode) {
  check_dtype(dst, "dst_dtype");
  check_dtype(src, "src_dtype");
  const bool src_float = dtype_is_float(src), dst_float = dtype_is_float(dst);
  // Integer-to-integer casts never round, so their mode is not looked at
  // (tpu_int_cast has none to pass).
  if ((src_float || dst_float) && !is_valid_rounding_mode(mode))
    fail(ErrorKind::illegal_command, "rounding mode {} is not a rounding_mode_t (RM_HALF_TO_EVEN 0 .. RM_HALF_DOWN 6)",
         int(mode));

  if (!src_float) {
    const int64_t value = read_int(src_bits, src);
    if (dst_float) return int_to_float(value, dst, mode);
    return write_int(saturate(value, int_min(dst), int_max(dst)), dst);
  }
  if (src == dst) return src == DT_FP32 ? src_bits : src_bits & 0xffff;
  const float value = read_float(src_bits, src);
  if (!dst_float) return write_int(fp_to_int(value, mode, int_min(dst), int_max(dst)), dst);
  return narrow(value, dst, mode);
}

}  // namespace cmodel::numeric
