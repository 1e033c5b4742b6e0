/*
 * common.h: the companion header vendor kernels include next to
 * tpu_kernel.h (`#include <common.h>`): integer shorthands, float-format
 * unions, rounding names, small helper macros and the command-id
 * bookkeeping node that compiler glue hands to tpu_set_id_node and
 * friends.
 *
 * tpu_kernel.h does not include this file, as the vendor's does not, so a
 * kernel may include it before or after tpu_kernel.h. The names and field
 * sets follow the current vendor companion; the node layouts are this SDK's
 * own (kernels only pass nodes around as void * and never look inside).
 *
 * C11 (typedefs repeated from tpu_defs.h are allowed there) and C++.
 */
#ifndef TPU_SDK_COMMON_H
#define TPU_SDK_COMMON_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <fp16.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- integer shorthands ------------------------------------------------- */
typedef unsigned char u8;
typedef unsigned short u16;
typedef unsigned int u32;
typedef unsigned long long u64;
typedef signed char s8;
typedef short s16;
typedef int s32;
typedef long long s64;
typedef u32 stride_type;
typedef u32 size_type;
typedef void *P_COMMAND;

/* ---- float formats over their raw bits ----------------------------------- */
typedef union {
  uint16_t bits;
  struct {
    uint16_t frac : 10;
    uint16_t exp : 5;
    uint16_t sign : 1;
  } format;
} fp16;

typedef union {
  uint16_t bits;
  struct {
    uint16_t frac : 7;
    uint16_t exp : 8;
    uint16_t sign : 1;
  } format;
} bf16;

typedef union {
  float fval;
  uint32_t bits;
  struct {
    uint32_t frac : 23;
    uint32_t exp : 8;
    uint32_t sign : 1;
  } format;
} fp32;

typedef union {
  uint32_t bits;
  struct {
    uint32_t frac : 10;
    uint32_t exp : 8;
    uint32_t sign : 1;
  } format;
} tf32;

typedef union {
  uint32_t bits;
  struct {
    uint32_t frac : 11;
    uint32_t exp : 8;
    uint32_t sign : 1;
  } format;
} fp20;

typedef union {
  double double_val;
  uint64_t bits;
} Double;

typedef union {
  uint8_t bits;
  struct {
    uint8_t frac : 2;
    uint8_t exp : 5;
    uint8_t sign : 1;
  };
} fp8e5m2;

typedef union {
  uint8_t bits;
  struct {
    uint8_t frac : 3;
    uint8_t exp : 4;
    uint8_t sign : 1;
  };
} fp8e4m3;

typedef union {
  uint8_t bits;
  struct {
    uint8_t frac : 1;
    uint8_t exp : 2;
    uint8_t sign : 1;
  };
} fp4;

/* 4-bit integers, one per byte. */
typedef struct {
  int8_t val : 4;
} int4_t;
typedef struct {
  uint8_t val : 4;
} uint4_t;
typedef int4_t s4;
typedef uint4_t u4;

/* One value of any element type. */
typedef union {
  u64 u64val;
  s64 i64val;
  float f32val;
  s32 i32val;
  u32 u32val;
  s16 i16val;
  u16 u16val;
  s8 i8val;
  u8 u8val;
  s4 i4val;
  u4 u4val;
  fp16 f16val;
  bf16 bf16val;
  fp20 fp20val;
  fp8e4m3 f8e4m3val;
  fp8e5m2 f8e5m2val;
  fp4 fp4val;
  fp32 fp32val;
} DataUnion;

/* The same numbering as rounding_mode_t (tpu_defs.h). */
typedef enum {
  ROUND_HALF_TO_EVEN = 0,
  ROUND_HALF_AWAY_FROM_ZERO = 1,
  ROUND_TOWARDS_ZERO = 2,
  ROUND_DOWN = 3,
  ROUND_UP = 4,
  ROUND_HALF_UP = 5,
  ROUND_HALF_DOWN = 6
} ROUND_MODE;

/* ---- helper macros ------------------------------------------------------- */
#define FLOAT_SIZE 4
#define __ALIGN_MASK(x, mask) (((x) + (mask)) & ~(mask))
/* Power-of-two alignment. tpu_defs.h defines a division-based ALIGN under
 * the same guard: whichever header comes first wins, and both agree for
 * powers of two. */
#ifndef ALIGN
#define ALIGN(x, a) __ALIGN_MASK(x, (__typeof__(x))(a) - 1)
#endif
#ifndef sg_min
#define sg_min(x, y) (((x)) < ((y)) ? (x) : (y))
#endif
#ifndef sg_max
#define sg_max(x, y) (((x)) > ((y)) ? (x) : (y))
#endif
/* Swaps two integer lvalues (three statements, as vendor code expects). */
#define SWAP_VAL(a, b) \
  a ^= b;              \
  b ^= a;              \
  a ^= b
/* x is the bit pattern of an fp32 value. */
#define SG_IS_NAN(x) ((((x) & 0x7f800000u) == 0x7f800000u) && (((x) & 0x7fffffu) != 0))

/* Where a system address points, and host pointers into the emulator's
 * memories (through tpu_kernel.h, which must be included to use these). */
#define IN_L2_SRAM(addr) \
  ((u64)(addr) >= L2_SRAM_START_ADDR && (u64)(addr) < (u64)L2_SRAM_START_ADDR + (u64)L2_SRAM_SIZE)
#define IN_GLOBAL_MEM(addr) ((u64)(addr) >= tpu_global_mem_get_start_addr())
#define GET_GLOBAL_ADDR(addr) ((u8 *)tpu_global_mem_addr((global_addr_t)(addr)))
#define GET_LOCAL_ADDR(npu_idx, offset) ((u8 *)tpu_local_mem_addr((npu_idx), (local_addr_t)(offset)))
#define GET_L2_SRAM_ADDR(addr) ((u8 *)tpu_l2_sram_addr((l2_sram_addr_t)(addr)))

/* ---- command-id bookkeeping ---------------------------------------------- */
#ifndef CONFIG_MAX_CDMA_NUM
#define CONFIG_MAX_CDMA_NUM 1
#endif
#ifndef CONFIG_MAX_TPU_CORE_NUM
#define CONFIG_MAX_TPU_CORE_NUM 1
#endif

typedef enum {
  ENGINE_BD = 0,
  ENGINE_GDMA = 1,
  ENGINE_GDE = 2,
  ENGINE_SORT = 3,
  ENGINE_NMS = 4,
  ENGINE_CDMA = 5,
  ENGINE_END
} ENGINE_ID;

/* How a tensor is stored in local memory on the older generations: n
 * samples and input channels packed per element group. */
typedef enum {
  STORAGE_MODE_1N_FP32 = 0,
  STORAGE_MODE_1N_INT8 = 1,
  STORAGE_MODE_1N_INT16 = 2,
  STORAGE_MODE_2N_INT16 = 3,
  STORAGE_MODE_4N_INT8 = 4,
  STORAGE_MODE_2IC_FP32 = 5,
  STORAGE_MODE_4N_4IC_4OC = 6,
  STORAGE_MODE_4N_INT16 = 7,
  STORAGE_MODE_UNINITILIZED,
  STORAGE_MODE_END
} TENSOR_STORAGE_MODE;

/* Shape and formats of the last GDMA command, kept for profiling. */
typedef struct gdma_cmd_node_info_s {
  int n, c, h, w;
  int direction;   /* 0 S2L, 1 L2S, 2 S2S, 3 L2L */
  int src_format;  /* GDMA data format of the source */
  int dest_format; /* GDMA data format of the destination */
  bool setted;     /* the fields above describe a command */
} gdma_cmd_node_info_t;

/* Profile of the last issued command. */
typedef struct inst_profile {
  unsigned long long cycle;     /* engine cycles the command took */
  unsigned long long gdma_size; /* bytes moved (GDMA / SDMA) */
  int gdma_direction;           /* 0 S2L, 1 L2S, 2 S2S, 3 L2L */
  int src_format;
  int dst_format;
  double op_dyn_energy;   /* estimated energy of the operation */
  double sram_rw_energy;  /* estimated energy of the memory traffic */
  double compute_ability; /* peak operations per cycle */
  bool b_gdma_use_l2;     /* the system side is L2 SRAM, not DDR */
} INST_PROFILE;

typedef struct cmd_id_node {
  unsigned int bd_cmd_id;   /* TIU (BDC) commands issued */
  unsigned int gdma_cmd_id; /* GDMA commands issued */
  unsigned int hau_cmd_id;  /* HAU commands issued */
  unsigned int sdma_cmd_id; /* SDMA commands issued */
  unsigned int cdma_cmd_id[CONFIG_MAX_CDMA_NUM];
  int in_parallel_state;           /* inside tpu_parallel_start / tpu_parallel_end */
  unsigned long long cycle_count;  /* accumulated cycles */
  unsigned long long cur_op_cycle; /* cycles of the current operation */
  char cmd_name[16];
  char name_prefix[64];
  gdma_cmd_node_info_t gdma_cmd_info;
  INST_PROFILE inst_profile;
} CMD_ID_NODE;

/* Records the last GDMA command's shape in a node; only statistics builds
 * of the vendor firmware fill it, here it does nothing. */
#define set_gdma_cmd_info(...) ((void)0)

#ifdef __cplusplus
}
#endif

#endif /* TPU_SDK_COMMON_H */
