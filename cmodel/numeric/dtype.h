// dtype.h: facts about data_type_t values, decoded once so nothing else
// switches on raw enum numbers.
//
// "Valid" means a dtype this SDK emulates: the eight integer types (INT4 to
// UINT32) and FP16, BF16, FP32. The newer FP8/FP20/TF32 encodings are named
// (so messages can say what a kernel passed) but are not valid, and every
// predicate below is false for them and for numbers outside the enum.
#pragma once

#include "tpu_defs.h"

namespace cmodel::numeric {

constexpr bool is_valid_dtype(data_type_t dtype) {
  switch (dtype) {
    case DT_INT4: case DT_UINT4:
    case DT_INT8: case DT_UINT8:
    case DT_INT16: case DT_UINT16:
    case DT_INT32: case DT_UINT32:
    case DT_FP16: case DT_BFP16: case DT_FP32:
      return true;
    default:
      return false;
  }
}

// Bits per element: 4, 8, 16 or 32; 0 for a dtype that is not valid.
constexpr int dtype_bits(data_type_t dtype) {
  switch (dtype) {
    case DT_INT4: case DT_UINT4: return 4;
    case DT_INT8: case DT_UINT8: return 8;
    case DT_INT16: case DT_UINT16: case DT_FP16: case DT_BFP16: return 16;
    case DT_INT32: case DT_UINT32: case DT_FP32: return 32;
    default: return 0;
  }
}

constexpr bool dtype_is_float(data_type_t dtype) {
  return dtype == DT_FP32 || dtype == DT_FP16 || dtype == DT_BFP16;
}

constexpr bool dtype_is_int(data_type_t dtype) {
  return is_valid_dtype(dtype) && !dtype_is_float(dtype);
}

// Bit 0 of the encoding is the signed flag; floats carry it too, so they
// count as signed (as the vendor's tpu_is_data_type_signed decodes it).
constexpr bool dtype_is_signed(data_type_t dtype) {
  return is_valid_dtype(dtype) && (static_cast<int>(dtype) & 1) != 0;
}

// Range of an integer dtype (as int64 so every range fits); {0, 0} otherwise.
constexpr long long dtype_int_min(data_type_t dtype) {
  if (!dtype_is_int(dtype) || !dtype_is_signed(dtype)) return 0;
  return -(1LL << (dtype_bits(dtype) - 1));
}

constexpr long long dtype_int_max(data_type_t dtype) {
  if (!dtype_is_int(dtype)) return 0;
  const int bits = dtype_bits(dtype) - (dtype_is_signed(dtype) ? 1 : 0);
  return (1LL << bits) - 1;
}

// "DT_FP32" and so on, for messages; "unknown dtype" for numbers outside the enum.
constexpr const char *dtype_name(data_type_t dtype) {
  switch (dtype) {
    case DT_INT8: return "DT_INT8";
    case DT_UINT8: return "DT_UINT8";
    case DT_INT16: return "DT_INT16";
    case DT_UINT16: return "DT_UINT16";
    case DT_FP16: return "DT_FP16";
    case DT_BFP16: return "DT_BFP16";
    case DT_INT32: return "DT_INT32";
    case DT_UINT32: return "DT_UINT32";
    case DT_FP32: return "DT_FP32";
    case DT_INT4: return "DT_INT4";
    case DT_UINT4: return "DT_UINT4";
    case DT_FP8E5M2: return "DT_FP8E5M2";
    case DT_FP8E4M3: return "DT_FP8E4M3";
    case DT_FP20: return "DT_FP20";
    case DT_TF32: return "DT_TF32";
  }
  return "unknown dtype";
}

}  // namespace cmodel::numeric
