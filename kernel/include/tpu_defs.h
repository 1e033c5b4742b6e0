/*
 * tpu_defs.h: plain data types of the tpu-kernel API (addresses, dtypes,
 * rounding modes, shapes, scalars).
 *
 * Every enum value and struct layout here matches the vendor header, so a
 * kernel written for the vendor SDK compiles unchanged against this SDK.
 * This header is C11 and C++ compatible and declares no functions.
 */
#ifndef TPU_SDK_TPU_DEFS_H
#define TPU_SDK_TPU_DEFS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- addresses ---------------------------------------------------------
 * A local address is NPU index * LOCAL_MEM_SIZE + offset inside that NPU.
 * A system address is a 64-bit address of global memory (DDR) or L2 SRAM;
 * which one is decided by its range. */
typedef unsigned int local_addr_t;
typedef unsigned int static_addr_t;
typedef unsigned long long l2_sram_addr_t;
typedef unsigned long long system_addr_t;
typedef unsigned long long global_addr_t;
typedef unsigned long long addr_t;

typedef unsigned long long u64;
typedef long long i64;
typedef unsigned int u32;
typedef int i32;
typedef unsigned short u16;
typedef short i16;
typedef unsigned char u8;
typedef signed char i8;

/* ---- data types --------------------------------------------------------
 * Bit 0 is the signed/float flag, bits 1..4 the precision code:
 * 0 8-bit, 1 FP16, 2 FP32, 3 16-bit, 4 32-bit, 5 BF16, 6 4-bit. */
typedef enum {
  DT_INT8 = (0 << 1) | 1,
  DT_UINT8 = (0 << 1) | 0,
  DT_INT16 = (3 << 1) | 1,
  DT_UINT16 = (3 << 1) | 0,
  DT_FP16 = (1 << 1) | 1,
  DT_BFP16 = (5 << 1) | 1,
  DT_INT32 = (4 << 1) | 1,
  DT_UINT32 = (4 << 1) | 0,
  DT_FP32 = (2 << 1) | 1,
  DT_INT4 = (6 << 1) | 1,
  DT_UINT4 = (6 << 1) | 0,
  /* newer generations; declared so such kernels compile, rejected at run time */
  DT_FP8E5M2 = (7 << 1) | 1,
  DT_FP8E4M3 = (1 << 5) | (7 << 1) | 1,
  DT_FP20 = (8 << 1) | 1,
  DT_TF32 = (9 << 1) | 1
} data_type_t;

/* Ties: HALF_UP goes toward +inf (1.5 -> 2, -1.5 -> -1), HALF_DOWN toward
 * -inf (1.5 -> 1, -1.5 -> -2). */
typedef enum {
  RM_HALF_TO_EVEN = 0,
  RM_HALF_AWAY_FROM_ZERO = 1,
  RM_TOWARDS_ZERO = 2,
  RM_DOWN = 3,
  RM_UP = 4,
  RM_HALF_UP = 5,
  RM_HALF_DOWN = 6
} rounding_mode_t;

typedef enum {
  REDUCE_MEAN = 0,
  REDUCE_SUM = 1,
  REDUCE_MAX = 2,
  REDUCE_MIN = 3,
  REDUCE_PROD = 4,
  REDUCE_L2 = 5,
  REDUCE_L1 = 6
} reduce_method_t;

/* ---- shapes ------------------------------------------------------------ */
typedef struct {
  int n, c, h, w;
} dim4;

typedef struct {
  int n, c, d, h, w;
} dim5;

typedef struct {
  int h, w;
} dim2;

typedef struct {
  int top, bottom, left, right;
} padding_t;

typedef struct {
  int start, end;
} range_t;

#define TENSOR_N_DIM 0
#define TENSOR_C_DIM 1
#define TENSOR_H_DIM 2
#define TENSOR_W_DIM 3
#define NO_USE 0

/* ---- scalars ------------------------------------------------------------ */
typedef union {
  unsigned short bits;
  struct {
    unsigned short frac : 10;
    unsigned short exp : 5;
    unsigned short sign : 1;
  };
} float16;

typedef union {
  unsigned short bits;
  struct {
    unsigned short frac : 7;
    unsigned short exp : 8;
    unsigned short sign : 1;
  };
} bfloat16;

/* One 32-bit slot; the member written must match the dtype passed along. */
typedef union {
  signed char s4;
  unsigned char u4;
  signed char s8;
  unsigned char u8;
  short s16;
  unsigned short u16;
  float16 f16;
  bfloat16 bf16;
  int s32;
  unsigned int u32;
  float f32;
} scalar_t;

/* Raw bit patterns of common float constants, per float dtype. */
#define FP_ONE(dtype) \
  ((dtype) == DT_FP32 ? 0x3f800000u : (dtype) == DT_FP16 ? 0x3c00u : 0x3f80u)
#define FP_NEG_ONE(dtype) \
  ((dtype) == DT_FP32 ? 0xbf800000u : (dtype) == DT_FP16 ? 0xbc00u : 0xbf80u)
#define FP_MAX(dtype) \
  ((dtype) == DT_FP32 ? 0x7f7fffffu : (dtype) == DT_FP16 ? 0x7bffu : 0x7f7fu)
#define FP_NEG_MAX(dtype) \
  ((dtype) == DT_FP32 ? 0xff7fffffu : (dtype) == DT_FP16 ? 0xfbffu : 0xff7fu)

/* ---- arithmetic helpers used throughout kernels ------------------------- */
#ifndef ALIGN
#define ALIGN(x, a) ((((x) + (a) - 1) / (a)) * (a))
#endif
#ifndef ALIGN_DOWN
#define ALIGN_DOWN(x, a) (((x) / (a)) * (a))
#endif
#ifndef DIV_UP
#define DIV_UP(a, b) (((a) - 1) / (b) + 1)
#endif
#ifndef MIN
#define MIN(a, b) ((a) < (b) ? (a) : (b))
#endif
#ifndef MAX
#define MAX(a, b) ((a) > (b) ? (a) : (b))
#endif
#ifndef UNUSED
#define UNUSED(x) (void)(x)
#endif

#ifdef __cplusplus
}
#endif

#endif /* TPU_SDK_TPU_DEFS_H */
