/*
 * tpu_defs.h: plain data types of the tpu-kernel API (addresses, dtypes,
 * rounding modes, shapes, scalars).
 *
 * Every enum value and struct layout here matches the vendor header, so a
 * kernel written for the vendor SDK compiles unchanged against this SDK.
 * The types the emulator works with (addresses, dtypes, rounding modes,
 * shapes, scalars) are the emulator's own, defined in
 * cmodel_machine_types.h and included from here; the rest is the API's.
 * This header is C11 and C++ compatible and declares no functions.
 */
#ifndef TPU_SDK_TPU_DEFS_H
#define TPU_SDK_TPU_DEFS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cmodel_machine_types.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Only the widths the vendor header defines here: a kernel may typedef
 * u8/u16/i8/... itself (the vendor common.h does), which would clash. */
typedef unsigned long long u64;
typedef long long i64;
typedef unsigned int u32;

typedef enum {
  REDUCE_MEAN = 0,
  REDUCE_SUM = 1,
  REDUCE_MAX = 2,
  REDUCE_MIN = 3,
  REDUCE_PROD = 4,
  REDUCE_L2 = 5,
  REDUCE_L1 = 6
} reduce_method_t;

#define TENSOR_N_DIM 0
#define TENSOR_C_DIM 1
#define TENSOR_H_DIM 2
#define TENSOR_W_DIM 3
#define NO_USE 0

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
