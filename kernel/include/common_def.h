/*
 * common_def.h: the data-type and rounding-mode numbering the compiler
 * writes into tensor_spec_t and custom-layer parameters (the "SG" enums).
 * tpu_utils.h turns them into the tpu-kernel data_type_t / rounding_mode_t.
 *
 * This header is C11 and C++ compatible.
 */
#ifndef TPU_SDK_COMMON_DEF_H
#define TPU_SDK_COMMON_DEF_H

typedef enum {
  SG_DTYPE_FP32 = 0,
  SG_DTYPE_FP16 = 1,
  SG_DTYPE_INT8 = 2,
  SG_DTYPE_UINT8 = 3,
  SG_DTYPE_INT16 = 4,
  SG_DTYPE_UINT16 = 5,
  SG_DTYPE_INT32 = 6,
  SG_DTYPE_UINT32 = 7,
  SG_DTYPE_BFP16 = 8,
  SG_DTYPE_INT4 = 9,
  SG_DTYPE_UINT4 = 10,
  SG_DTYPE_UNKNOWN = -1
} sg_data_type_t;

/* Tie behaviour in the comments: what 1.5 and -1.5 become. TRIM modes do
 * not look at ties at all (directed rounding). The numbers are the ones the
 * compiler writes (TRIM_UP = 8, TRIM_DOWN = 9 in its own enum as in the
 * vendor header): never renumber. */
typedef enum {
  SG_ROUND_INF = 0,   /* ties away from zero: 2, -2 */
  SG_ROUND_UP = 1,    /* ties toward +inf: 2, -1 */
  SG_ROUND_DOWN = 2,  /* ties toward -inf: 1, -2 */
  SG_ROUND_EVEN = 3,  /* ties to even: 2, -2 (2.5 -> 2) */
  SG_ROUND_ODD = 4,   /* ties to odd (no tpu-kernel equivalent) */
  SG_ROUND_ZERO = 5,  /* ties toward zero (no tpu-kernel equivalent) */
  SG_TRIM_ZERO = 6,   /* truncate toward zero */
  SG_TRIM_INF = 7,    /* away from zero (no tpu-kernel equivalent) */
  SG_TRIM_UP = 8,     /* ceil */
  SG_TRIM_DOWN = 9    /* floor */
} sg_round_mode_t;

#endif /* TPU_SDK_COMMON_DEF_H */
