/*
 * cmodel_machine_types.h: the machine's own vocabulary, as the emulator
 * (cmodel/) speaks it: addresses, dtype codes, rounding modes, shapes and
 * scalars.
 *
 * The emulator is the bottom floor: it defines these itself, and the
 * tpu-kernel API above it takes them from here (tpu_defs.h includes this
 * header), so that nothing under cmodel/ includes a header of kernel/.
 * Kernels see them through tpu_defs.h exactly as the vendor header defines
 * them: every name, enum value and struct layout matches it. Installed
 * beside tpu_defs.h. C11 and C++ compatible; declares no functions.
 */
#ifndef CMODEL_MACHINE_TYPES_H
#define CMODEL_MACHINE_TYPES_H

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

#ifdef __cplusplus
}
#endif

#endif /* CMODEL_MACHINE_TYPES_H */
