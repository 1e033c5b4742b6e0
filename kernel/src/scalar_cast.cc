// scalar_cast.cc: tpu_int_cast, tpu_fp_cast, tpu_fp_to_int_cast,
// tpu_int_to_fp_cast and tpu_cast (host-side scalar conversions, family C).
//
// All five convert one scalar_t slot with numeric::convert_scalar_bits; the
// four specific ones first check that their dtypes are of the class their
// name promises: DT_INT8 passed to tpu_fp_cast is a kernel bug, and
// converting anyway would hand back a plausible but wrong value.
#include <cstring>

#include "api_guard.h"
#include "cmodel/dtype.h"
#include "cmodel/error.h"
#include "cmodel/numeric/float_convert.h"
#include "tpu_kernel.h"

namespace cmodel {
namespace {

static_assert(sizeof(scalar_t) == 4, "scalar_t is one 32-bit slot");

enum class DtypeClass { integer, floating };

void require(DtypeClass wanted, data_type_t dtype, const char *param) {
  if (!dtype_is_known(dtype))
    fail(ErrorKind::illegal_command, "{} {} ({}) is not a dtype scalar casts support", param, int(dtype),
         dtype_name(dtype));
  if (wanted == DtypeClass::floating && !dtype_is_float(dtype))
    fail(ErrorKind::illegal_command, "{} is {} ({}), not a float dtype (DT_FP32, DT_FP16 or DT_BFP16)", param,
         dtype_name(dtype), int(dtype));
  if (wanted == DtypeClass::integer && !dtype_is_int(dtype))
    fail(ErrorKind::illegal_command,
         "{} is {} ({}), not an integer dtype (DT_INT4, DT_UINT4, DT_INT8, DT_UINT8, DT_INT16, DT_UINT16, "
         "DT_INT32 or DT_UINT32)",
         param, dtype_name(dtype), int(dtype));
}

scalar_t cast(scalar_t src, data_type_t dst_dtype, data_type_t src_dtype, rounding_mode_t mode) {
  uint32_t bits;
  std::memcpy(&bits, &src, sizeof bits);
  bits = numeric::convert_scalar_bits(bits, dst_dtype, src_dtype, mode);
  scalar_t dst;
  std::memcpy(&dst, &bits, sizeof bits);
  return dst;
}

}  // namespace
}  // namespace cmodel

using cmodel::DtypeClass;

extern "C" scalar_t tpu_int_cast(scalar_t src, data_type_t dst_dtype, data_type_t src_dtype) {
  return cmodel::api::run(__func__, TPU_CALLER(), [&] {
    cmodel::require(DtypeClass::integer, dst_dtype, "dst_dtype");
    cmodel::require(DtypeClass::integer, src_dtype, "src_dtype");
    return cmodel::cast(src, dst_dtype, src_dtype, RM_HALF_TO_EVEN);  // int -> int never rounds
  });
}

extern "C" scalar_t tpu_fp_cast(scalar_t src, data_type_t dst_dtype, data_type_t src_dtype, rounding_mode_t mode) {
  return cmodel::api::run(__func__, TPU_CALLER(), [&] {
    cmodel::require(DtypeClass::floating, dst_dtype, "dst_dtype");
    cmodel::require(DtypeClass::floating, src_dtype, "src_dtype");
    return cmodel::cast(src, dst_dtype, src_dtype, mode);
  });
}

extern "C" scalar_t tpu_fp_to_int_cast(scalar_t src, data_type_t dst_dtype, data_type_t src_dtype,
                                       rounding_mode_t mode) {
  return cmodel::api::run(__func__, TPU_CALLER(), [&] {
    cmodel::require(DtypeClass::integer, dst_dtype, "dst_dtype");
    cmodel::require(DtypeClass::floating, src_dtype, "src_dtype");
    return cmodel::cast(src, dst_dtype, src_dtype, mode);
  });
}

extern "C" scalar_t tpu_int_to_fp_cast(scalar_t src, data_type_t dst_dtype, data_type_t src_dtype,
                                       rounding_mode_t mode) {
  return cmodel::api::run(__func__, TPU_CALLER(), [&] {
    cmodel::require(DtypeClass::floating, dst_dtype, "dst_dtype");
    cmodel::require(DtypeClass::integer, src_dtype, "src_dtype");
    return cmodel::cast(src, dst_dtype, src_dtype, mode);
  });
}

// Any pair of dtypes; convert_scalar_bits picks the kind of conversion.
extern "C" scalar_t tpu_cast(scalar_t src, data_type_t dst_dtype, data_type_t src_dtype, rounding_mode_t mode) {
  return cmodel::api::run(__func__, TPU_CALLER(), [&] { return cmodel::cast(src, dst_dtype, src_dtype, mode); });
}
