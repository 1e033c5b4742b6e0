/*
 * A stand-in for the vendor's companion common.h, written for the include
 * isolation test from the facts of the spec (tpu-kernel-api-current.md
 * §4.6), not copied: the names a vendor kernel gets from it, defined the
 * vendor's way. tpu_kernel.h must compile before and after it, so none of
 * these names may come from tpu_kernel.h's own include chain.
 */
#ifndef COMPAT_VENDOR_COMMON_H
#define COMPAT_VENDOR_COMMON_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef unsigned char u8;
typedef unsigned short u16;
typedef unsigned int u32;
typedef unsigned long long u64;
typedef signed char s8;
typedef short s16;
typedef int s32;
typedef long long s64;

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

typedef struct {
  int8_t val : 4;
} int4_t;

#define __ALIGN_MASK(x, mask) (((x) + (mask)) & ~(mask))
#ifndef ALIGN
#define ALIGN(x, a) __ALIGN_MASK(x, (__typeof__(x))(a) - 1)
#endif
#define sg_min(x, y) (((x)) < ((y)) ? (x) : (y))

typedef enum { ENGINE_BD = 0, ENGINE_GDMA = 1, ENGINE_END } ENGINE_ID;

typedef struct inst_profile {
  unsigned long long cycle;
  bool b_gdma_use_l2;
} INST_PROFILE;

typedef struct cmd_id_node {
  unsigned int bd_cmd_id;
  unsigned int gdma_cmd_id;
  INST_PROFILE inst_profile;
} CMD_ID_NODE;

#endif
