/*
 * tpu_utils.h: conversions from the compiler's SG enums (common_def.h) to the
 * tpu-kernel enums. A value with no tpu-kernel equivalent stops the kernel
 * with an error naming it, as a failed TPUKERNEL_ASSERT does.
 *
 * This header is C11 and C++ compatible.
 */
#ifndef TPU_SDK_TPU_UTILS_H
#define TPU_SDK_TPU_UTILS_H

#include <common_def.h>
#include <tpu_kernel.h>

static inline data_type_t tpu_type_convert(sg_data_type_t sg_dtype) {
  switch (sg_dtype) {
    case SG_DTYPE_FP32: return DT_FP32;
    case SG_DTYPE_FP16: return DT_FP16;
    case SG_DTYPE_BFP16: return DT_BFP16;
    case SG_DTYPE_INT8: return DT_INT8;
    case SG_DTYPE_UINT8: return DT_UINT8;
    case SG_DTYPE_INT16: return DT_INT16;
    case SG_DTYPE_UINT16: return DT_UINT16;
    case SG_DTYPE_INT32: return DT_INT32;
    case SG_DTYPE_UINT32: return DT_UINT32;
    case SG_DTYPE_INT4: return DT_INT4;
    case SG_DTYPE_UINT4: return DT_UINT4;
    default: break;
  }
  TPUKERNEL_ASSERT_INFO(0, "tpu_type_convert: %d is not an sg_data_type_t value", (int)sg_dtype);
  return DT_FP32;
}

static inline rounding_mode_t tpu_round_mode_convert(sg_round_mode_t sg_mode) {
  switch (sg_mode) {
    case SG_ROUND_INF: return RM_HALF_AWAY_FROM_ZERO;
    case SG_ROUND_UP: return RM_HALF_UP;
    case SG_ROUND_DOWN: return RM_HALF_DOWN;
    case SG_ROUND_EVEN: return RM_HALF_TO_EVEN;
    case SG_TRIM_ZERO: return RM_TOWARDS_ZERO;
    case SG_TRIM_DOWN: return RM_DOWN;
    case SG_TRIM_UP: return RM_UP;
    default: break;
  }
  TPUKERNEL_ASSERT_INFO(0, "tpu_round_mode_convert: sg_round_mode_t %d has no tpu-kernel rounding mode",
                        (int)sg_mode);
  return RM_HALF_TO_EVEN;
}

#endif /* TPU_SDK_TPU_UTILS_H */
