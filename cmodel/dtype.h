// dtype.h: facts about data_type_t values (size, class, name).
#pragma once

#include "cmodel/include/cmodel_machine_types.h"

namespace cmodel {

// True for the dtypes of the customlayer header (8/16/32-bit ints, fp16,
// bf16, fp32, 4-bit ints); the newer FP8/FP20/TF32 codes are not emulated.
constexpr bool dtype_is_known(data_type_t t) {
  switch (t) {
    case DT_INT8: case DT_UINT8: case DT_INT16: case DT_UINT16: case DT_INT32: case DT_UINT32:
    case DT_FP16: case DT_BFP16: case DT_FP32: case DT_INT4: case DT_UINT4:
      return true;
    default:
      return false;
  }
}

constexpr int dtype_bits(data_type_t t) {
  switch ((t >> 1) & 0xf) {
    case 0: return 8;
    case 1: return 16;  // fp16
    case 2: return 32;  // fp32
    case 3: return 16;
    case 4: return 32;
    case 5: return 16;  // bf16
    case 6: return 4;
    default: return 0;
  }
}

// Bytes per element; 4-bit types count as 1 here (callers that support them
// pack two per byte themselves).
constexpr int dtype_bytes(data_type_t t) { return dtype_bits(t) <= 8 ? 1 : dtype_bits(t) / 8; }

constexpr bool dtype_is_float(data_type_t t) { return t == DT_FP32 || t == DT_FP16 || t == DT_BFP16; }
constexpr bool dtype_is_int(data_type_t t) { return dtype_is_known(t) && !dtype_is_float(t); }
constexpr bool dtype_is_signed(data_type_t t) { return (t & 1) != 0; }

const char *dtype_name(data_type_t t);

}  // namespace cmodel
