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

/* Only the widths the vendor header defines here: a kernel may typedef
 * u8/u16/i8/... itself (the vendor common.h does), which would clash. */
typedef unsigned long long u64;
typedef long long i64;
typedef unsigned int u32;

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

typedef struct {
  int d, h, w;
} dim3;

/* ---- scalars ------------------------------------------------------------
 * Float formats as bit-fields over their raw bits: vendor code writes
 * s.f16.format.exp. float8e5m2 alone keeps its fields anonymous (e5.exp),
 * as the vendor header has it. */
typedef union {
  unsigned short bits;
  struct {
    unsigned short frac : 10;
    unsigned short exp : 5;
    unsigned short sign : 1;
  } format;
} float16;

typedef union {
  unsigned short bits;
  struct {
    unsigned short frac : 7;
    unsigned short exp : 8;
    unsigned short sign : 1;
  } format;
} bfloat16;

typedef union {
  unsigned short bits;
  struct {
    unsigned short frac : 2;
    unsigned short exp : 5;
    unsigned short sign : 1;
  };
} float8e5m2;

typedef union {
  unsigned short bits;
  struct {
    unsigned short frac : 3;
    unsigned short exp : 4;
    unsigned short sign : 1;
  } format;
} float8e4m3;

/* 20-bit float: the fields span two 16-bit units, so the type is 4 bytes
 * and `bits` covers only the low 16 (the vendor layout). */
typedef union {
  unsigned short bits;
  struct {
    unsigned short frac : 11;
    unsigned short exp : 8;
    unsigned short sign : 1;
  } format;
} float20;

/* One 32-bit slot; the member written must match the dtype passed along.
 * s4/s8 are plain char as in the vendor header (signed on x86-64). The
 * member f8e3m4 holds an e4m3 value: the vendor's spelling. */
typedef union {
  char s4;
  unsigned char u4;
  char s8;
  unsigned char u8;
  float8e5m2 f8e5m2;
  float8e4m3 f8e3m4;
  short s16;
  unsigned short u16;
  float16 f16;
  bfloat16 bf16;
  int s32;
  unsigned int u32;
  float f32;
  float20 f20;
} scalar_t;

/* Descriptor-mode command buffer of one engine (tpu_run_commands). */
typedef struct {
  u32 engine_type;
  u32 command_num;
  u64 command_addr;
  u64 command_bytes;
} tpu_engine_command_info_t;

/* Thread-local storage in cmodel builds, where several emulated cores may
 * share a process; nothing on the device. */
#ifndef THREAD
#ifdef USING_CMODEL
#define THREAD __thread
#else
#define THREAD
#endif
#endif

/* Raw bit patterns of common float constants, per float dtype (FP32, FP16,
 * otherwise BF16; FP_MAX and FP_NEG_MAX know the FP8 formats too). */
#define FP_ONE(dtype) ((dtype) == DT_FP32 ? 0x3f800000 : (dtype) == DT_FP16 ? 0x3c00 : 0x3f80)
#define FP_NEG_ONE(dtype) ((dtype) == DT_FP32 ? 0xbf800000 : (dtype) == DT_FP16 ? 0xbc00 : 0xbf80)
#define FP_MAX(dtype)                                                                      \
  ((dtype) == DT_FP8E4M3   ? 0x7e                                                          \
   : (dtype) == DT_FP8E5M2 ? 0x7b                                                          \
   : (dtype) == DT_FP32    ? 0x7f7fffff                                                    \
   : (dtype) == DT_FP16    ? 0x7bff                                                        \
                           : 0x7f7f)
#define FP_NEG_MAX(dtype)                                                                  \
  ((dtype) == DT_FP8E4M3   ? 0xfe                                                          \
   : (dtype) == DT_FP8E5M2 ? 0xfb                                                          \
   : (dtype) == DT_FP32    ? 0xff7fffff                                                    \
   : (dtype) == DT_FP16    ? 0xfbff                                                        \
                           : 0xff7f)

/* ---- arithmetic helpers used throughout kernels ------------------------- */
#ifndef ALIGN
#define ALIGN(x, a) ((((x) + (a) - 1) / (a)) * (a))
#endif
#ifndef ALIGN_DOWN
#define ALIGN_DOWN(x, a) (((x) / (a)) * (a))
#endif
#ifndef DIV_UP
#define DIV_UP(a, b) (((a) + (b) - 1) / (b))
#endif
/* Power-of-two alignment of the 2023 header (mask = alignment - 1). */
#ifndef ALIGN_MASK
#define ALIGN_MASK(x, mask) (((x) + (mask)) & ~(mask))
#endif
#ifndef ALIGN_MASK_DOWN
#define ALIGN_MASK_DOWN(x, mask) ((x) & ~(mask))
#endif
/* MIN and MAX token for token as the vendor's common.h spells them (the
 * parameter names included): a kernel or header that defines them again the
 * vendor's way is then an identical redefinition, which compilers accept
 * silently even under -Werror. */
#ifndef MIN
#define MIN(x, y) (((x)) < ((y)) ? (x) : (y))
#endif
#ifndef MAX
#define MAX(x, y) (((x)) > ((y)) ? (x) : (y))
#endif
#ifndef UNUSED
#define UNUSED(x) (void)(x)
#endif

#ifdef __cplusplus
}
#endif

#endif /* TPU_SDK_TPU_DEFS_H */
