/* §5 items 6, 7, 9 and 15: the types, enum values and macros of the
 * current vendor header, compiled as C and as C++ with the strict flags and
 * run against libcmodel.so (a few macros call the emulator). Exits non-zero
 * and names every failed check. */
#include <stddef.h>

#include "cmodel_host.h"
#include "tpu_kernel.h"

#ifdef __cplusplus
#define COMPAT_STATIC_ASSERT(c) static_assert(c, #c)
#else
#define COMPAT_STATIC_ASSERT(c) _Static_assert(c, #c)
#endif

/* Item 6: layouts and values. */
COMPAT_STATIC_ASSERT(sizeof(float20) == 4);
COMPAT_STATIC_ASSERT(sizeof(scalar_t) == 4);
COMPAT_STATIC_ASSERT(sizeof(dim3) == 12);
COMPAT_STATIC_ASSERT(sizeof(tpu_engine_command_info_t) == 24);
COMPAT_STATIC_ASSERT(offsetof(tpu_engine_command_info_t, command_addr) == 8);
COMPAT_STATIC_ASSERT(offsetof(tpu_engine_command_info_t, command_bytes) == 16);
COMPAT_STATIC_ASSERT(sizeof(bw_info_t) == 16);
COMPAT_STATIC_ASSERT(sizeof(float16) == 2 && sizeof(bfloat16) == 2);
COMPAT_STATIC_ASSERT(sizeof(float8e5m2) == 2 && sizeof(float8e4m3) == 2);
COMPAT_STATIC_ASSERT(FUNC_TYPE_1 == 0 && FUNC_TYPE_2 == 1);
COMPAT_STATIC_ASSERT(ALL_REDUCE_NOP == 0 && ALL_REDUCE_MUL == 1 && ALL_REDUCE_MAX == 2 && ALL_REDUCE_MIN == 3);
COMPAT_STATIC_ASSERT(ALL_REDUCE_ADD == 4);
COMPAT_STATIC_ASSERT(ALL_REDUCE_PSUM_WO == 0 && ALL_REDUCE_PSUM_WR == 1);
#ifndef __cplusplus
COMPAT_STATIC_ASSERT(_Generic(((scalar_t){0}).s8, char: 1, default: 0) == 1);
COMPAT_STATIC_ASSERT(_Generic(((scalar_t){0}).s4, char: 1, default: 0) == 1);
#endif

/* Item 7: macros that need no emulator. */
COMPAT_STATIC_ASSERT(DIV_UP(0, 4) == 0);
COMPAT_STATIC_ASSERT(DIV_UP(5, 4) == 2);
COMPAT_STATIC_ASSERT(DIV_UP(8, 4) == 2);
COMPAT_STATIC_ASSERT(ALIGN(5, 3) == 6);
COMPAT_STATIC_ASSERT(ALIGN_DOWN(7, 3) == 6);
COMPAT_STATIC_ASSERT(ALIGN_MASK(5, 3) == 8);
COMPAT_STATIC_ASSERT(ALIGN_MASK_DOWN(7, 3) == 4);
COMPAT_STATIC_ASSERT(FP_MAX(DT_FP8E4M3) == 0x7e && FP_NEG_MAX(DT_FP8E4M3) == 0xfe);
COMPAT_STATIC_ASSERT(FP_MAX(DT_FP8E5M2) == 0x7b && FP_NEG_MAX(DT_FP8E5M2) == 0xfb);
COMPAT_STATIC_ASSERT(FP_ONE(DT_BFP16) == 0x3f80 && FP_ONE(DT_FP16) == 0x3c00 && FP_ONE(DT_FP32) == 0x3f800000);
COMPAT_STATIC_ASSERT(FP_MAX(DT_FP32) == 0x7f7fffff && FP_MAX(DT_FP16) == 0x7bff && FP_MAX(DT_BFP16) == 0x7f7f);
#ifndef THREAD
#error THREAD is not defined
#endif
#ifndef ASSERT_LOG
#error ASSERT_LOG is not defined
#endif
#ifndef STATIC_MEM_START_ADDR
#error STATIC_MEM_START_ADDR is not defined
#endif

/* Item 15: return types. */
COMPAT_STATIC_ASSERT(sizeof(tpu_local_mem_get_start_addr()) == 8);
COMPAT_STATIC_ASSERT(sizeof(tpu_aligned_feature_size(1, 1, DT_FP32)) == 8);

static int failures = 0;
#define CHECK(cond)                                                 \
  do {                                                              \
    if (!(cond)) {                                                  \
      fprintf(stderr, "FAILED %s:%d: %s\n", __FILE__, __LINE__, #cond); \
      failures++;                                                   \
    }                                                               \
  } while (0)

static THREAD int per_thread_counter;

/* Item 6: the named and anonymous float fields. */
static void check_scalar_fields(void) {
  scalar_t s;
  s.u32 = 0;
  s.f16.format.exp = 15;
  CHECK(s.f16.bits == 0x3c00);
  s.u32 = 0;
  s.bf16.format.frac = 1;
  s.bf16.format.sign = 1;
  CHECK(s.bf16.bits == 0x8001);
  float8e4m3 f8;
  f8.bits = 0;
  f8.format.sign = 1;
  CHECK(f8.bits == 0x80);
  float8e5m2 e5;
  e5.bits = 0;
  e5.exp = 3;
  CHECK(e5.bits == (3 << 2));
  s.u32 = 0;
  s.f8e5m2.bits = 1;
  s.f8e3m4.bits = 2;
  s.f20.format.exp = 1;
  CHECK(s.f8e3m4.bits == 2);
}

/* Item 9: the optional_info_t initialisers. */
static void check_optional_values(void) {
  optional_info_t v = OPTIONAL_VALUE(DT_FP32, {.f32 = 1.25f});
  CHECK(v.is_const == 1 && v.dtype == DT_FP32 && v.value.f32 == 1.25f);
  scalar_t s;
  s.u32 = 0;
  s.s8 = -3;
  optional_info_t w = OPTIONAL_VALUE(DT_INT8, s);
  CHECK(w.is_const == 1 && w.dtype == DT_INT8 && w.value.s8 == -3);
  optional_info_t a = OPTIONAL_ADDR(DT_FP32, 0x10000);
  CHECK(a.is_const == 0 && a.dtype == DT_FP32 && a.addr == 0x10000);
}

#ifndef __cplusplus
/* Item 9, C only: the compound-literal argument form kernels write. Never
 * called (tests/cmodel/bdc/bdc_quant_matmul_test.cc runs tpu_bdc_quant_mm); it only has
 * to compile. */
void quant_mm_call_compiles(local_addr_t out, local_addr_t left, local_addr_t right);
void quant_mm_call_compiles(local_addr_t out, local_addr_t left, local_addr_t right) {
  requant_int_info_t requant = {false, true, RM_HALF_UP, 0, 1, -2, 0};
  tpu_bdc_quant_mm(out, DT_INT8, &(optional_info_t)OPTIONAL_ADDR(DT_INT8, left),
                   &(optional_info_t)OPTIONAL_ADDR(DT_INT8, right), 4, 8, 16, false, false, false, false,
                   &(optional_info_t)OPTIONAL_VALUE(DT_INT8, {.s8 = 3}), NULL, &requant);
}
#endif

/* Items 7 and 15 on an open emulator. */
static void check_on_chip(const char *chip) {
  CHECK(cmodel_open(chip) == 0);
  CHECK(STATIC_MEM_START_ADDR == tpu_static_mem_get_start_addr());
  unsigned long long local_start = tpu_local_mem_get_start_addr();
  CHECK(local_start != 0);
  const int c = 70, w = 9;
  const data_type_t dtype = DT_FP16;
  const int sz = DIV_UP(c, NPU_NUM) * tpu_aligned_feature_size(1, w, dtype);
  /* One row of w fp16 values aligned to the EU count, for every channel a lane holds. */
  CHECK(sz == DIV_UP(c, NPU_NUM) * ALIGN(w, EU_NUM_16BIT) * 2);
  per_thread_counter++;
  cmodel_close();
}

int main(void) {
  check_scalar_fields();
  check_optional_values();
  check_on_chip("bm1684x");
  check_on_chip("bm1688");
  if (failures) fprintf(stderr, "%d check(s) failed\n", failures);
  else printf("types and macros: all checks passed\n");
  return failures != 0;
}
