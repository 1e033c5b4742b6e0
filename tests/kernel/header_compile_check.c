/*
 * header_compile_check.c: tpu_kernel.h must compile as strict C11 and as
 * C++20. Compile only, never linked or run:
 *
 *   gcc -std=c11 -Wall -Wextra -Werror -pedantic -fsyntax-only \
 *       -Ikernel/include tests/kernel/header_compile_check.c
 *   g++ -std=c++20 -Wall -Wextra -Werror -fsyntax-only -x c++ \
 *       -Ikernel/include tests/kernel/header_compile_check.c
 */
#include "tpu_kernel.h"
#include "common.h"

/* A kernel entry point and its registration, as vendor kernels write them. */
void header_check_kernel(const void *args);
void header_check_kernel(const void *args) {
  const int *n = (const int *)args;

  dim4 shape = {1, NPU_NUM, 4, 8};
  dim4 stride;
  tpu_aligned_stride(&stride, 0, &shape, DT_FP32);

  scalar_t one;
  one.u32 = FP_ONE(DT_FP32);
  scalar_t half = tpu_fp_cast(one, DT_FP16, DT_FP32, RM_HALF_TO_EVEN);

  local_addr_t src = 0;
  local_addr_t dst = (local_addr_t)(4 * BANK_SIZE);
  TPUKERNEL_ASSERT(dst + tpu_get_local_size(&shape, DT_FP32, 0, true) <= (unsigned)LOCAL_MEM_SIZE);
  TPUKERNEL_ASSERT_INFO(*n > 0, "n = %d", *n);
  TPUKERNEL_LOG("EU_NUM %d, ALIGN_BYTES %d\n", EU_NUM, (int)ALIGN_BYTES);

  tpu_gdma_cpy_S2L(src, tpu_global_mem_get_start_addr(), &shape, NULL, NULL, DT_FP32);
  tpu_bdc_fp_add_C(dst, src, one, &shape, NULL, &stride, DT_FP32);

  variable_t a = {TENSOR, {.addr = src}};
  variable_t b = {SCALAR, {.scalar = half}};
  tpu_bdc_greater_select(dst, &a, &b, &a, &b, &shape, DT_FP32, DT_FP32);

  optional_info_t zp = OPTIONAL_VALUE(DT_INT8, one);
  optional_info_t in = OPTIONAL_ADDR(DT_FP32, src);
  requant_int_info_t rq = {false, true, RM_HALF_UP, 0, 1, -2, 0};
  CMD_ID_NODE node;
  tpu_get_id_node(&node);
  UNUSED(zp);
  UNUSED(in);
  UNUSED(rq);

  tpu_poll();
}
/* No ";" after the registration: -pedantic rejects an empty declaration. */
TPUKERNEL_FUNC_REGISTER(header_check_kernel)
