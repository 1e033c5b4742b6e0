/*
 * customlayer_headers_c.c: the C half of customlayer_headers_test.
 *
 * Built into the test as C (gnu11) with the compatibility-test flags of the
 * tpu-kernel reference (-DUSING_CMODEL, GCC 14's default hard errors spelt
 * out, -Wall -Wextra -Werror), and syntax-checked as C++ (gnu++17) by the
 * customlayer_headers_cxx test; see tests/CMakeLists.txt. Compiling is the
 * first half of the checks: the vendor signatures of api_common.h and
 * api_utils.h, the struct tags, PARSE_PARAM without a trailing semicolon.
 * The functions below are what a custom layer written in C would do; the
 * C++ test runs them and checks their results.
 */
#include <stdint.h>

#include "api_common.h"
#include "api_utils.h"
#include "common_def.h"
#include "tpu_kernel.h"
#include "tpu_utils.h"

#ifdef __cplusplus
#include <type_traits>
#define SAME_TYPE(a, b) static_assert(std::is_same<a, b>::value, #a " is " #b)
#define SAME_EXPR_TYPE(e, t) static_assert(std::is_same<decltype(e), t>::value, #e " has type " #t)
extern "C" {
#else
#define SAME_TYPE(a, b) _Static_assert(_Generic((a *)0, b *: 1, default: 0), #a " is " #b)
#define SAME_EXPR_TYPE(e, t) _Static_assert(_Generic((e), t: 1, default: 0), #e " has type " #t)
#endif

/* ---- api_common.h: types and helpers ------------------------------------- */

SAME_TYPE(struct local_tensor_spec, tensor_spec_t);
SAME_TYPE(local_tensor_spec_t, tensor_spec_t);
SAME_TYPE(global_tensor_spec_t, tensor_spec_t);
SAME_TYPE(struct local_sec_info, local_sec_info_t);
SAME_EXPR_TYPE(get_real_param_ptr((const void *)0), void *);
SAME_EXPR_TYPE(get_global_buffer_addr((const void *)0), int64_t);
SAME_EXPR_TYPE(get_local_buffer_addr((const void *)0), int);

/* Each helper assigned to a pointer of the vendor prototype's exact type. */
void *(*const check_get_real_param_ptr)(const void *) = get_real_param_ptr;
int64_t (*const check_get_global_buffer_addr)(const void *) = get_global_buffer_addr;
void (*const check_parse_NCDHW)(int, const int *, int, dim5 *) = parse_NCDHW;
void (*const check_parse_NCHW)(const int *, int, dim4 *) = parse_NCHW;
void (*const check_parse_input_slice_shape_with_d)(const local_sec_info_t *, const local_tensor_spec_t *,
                                                   int *) = parse_input_slice_shape_with_d;
void (*const check_parse_output_slice_shape_with_d)(const local_sec_info_t *, const local_tensor_spec_t *,
                                                    int *) = parse_output_slice_shape_with_d;
void (*const check_parse_input_slice_shape)(const local_sec_info_t *, const local_tensor_spec_t *,
                                            int *) = parse_input_slice_shape;
void (*const check_parse_output_slice_shape)(const local_sec_info_t *, const local_tensor_spec_t *,
                                             int *) = parse_output_slice_shape;
bool (*const check_get_is_true3d)(int, int) = get_is_true3d;

/* ---- PARSE_PARAM, both forms ----------------------------------------------- */

/* A user parameter struct and parser as a custom layer writes them: the
 * parser gets the array past element 0. */
typedef struct {
  int round_mode; /* an sg_round_mode_t, as the compiler writes it */
  float scale;
} hdr_round_param_t;

static hdr_round_param_t hdr_round_parse_param(const void *param) {
  const custom_param_t *p = (const custom_param_t *)param;
  hdr_round_param_t out;
  out.round_mode = p[0].int_t;
  out.scale = p[1].float_t;
  return out;
}

/* The PPL-generated form: no semicolon after the macro. */
int hdr_parse_without_semicolon(const void *param) {
  PARSE_PARAM(hdr_round, p, param)
  return p.round_mode;
}

/* The hand-written form: the extra ';' is an empty statement. */
float hdr_parse_with_semicolon(const void *param) {
  PARSE_PARAM(hdr_round, p, param);
  return p.scale;
}

/* ---- a custom layer that rounds with the mode its parameter carries ------ */

/* The C++ test fills these and runs hdr_round_kernel with a pointer to the
 * parameter array (element 0 reserved, element 1 the round mode, element
 * 2 a scale that is not used). */
typedef struct {
  const void *param;
  global_addr_t input;  /* `count` fp32 values, also in values[] */
  global_addr_t output; /* `count` int32: the values rounded by the tensor path */
  int count;            /* at most 16 */
  float values[16];
  int32_t scalar_out[16]; /* values[] rounded one at a time by the scalar cast */
} hdr_round_call_t;

/* Both ways a kernel converts with a compiler-written round mode: a tensor
 * cast on the vector engine (tpu_bdc_cast) and the host-side scalar cast
 * (tpu_fp_to_int_cast), each with tpu_round_mode_convert of the
 * parameter's sg_round_mode_t. */
void hdr_round_kernel(const void *args) {
  hdr_round_call_t *call = (hdr_round_call_t *)args;
  PARSE_PARAM(hdr_round, p, call->param)
  const rounding_mode_t mode = tpu_round_mode_convert((sg_round_mode_t)p.round_mode);

  const dim4 shape = {1, 1, 1, call->count};
  const local_addr_t src = 0, dst = (local_addr_t)BANK_SIZE;
  tpu_gdma_cpy_S2L(src, call->input, &shape, NULL, NULL, DT_FP32);
  tpu_bdc_cast(dst, src, &shape, NULL, NULL, DT_INT32, DT_FP32, mode);
  tpu_gdma_cpy_L2S(call->output, dst, &shape, NULL, NULL, DT_INT32);

  for (int i = 0; i < call->count && i < 16; ++i) {
    scalar_t in;
    in.f32 = call->values[i];
    call->scalar_out[i] = tpu_fp_to_int_cast(in, DT_INT32, DT_FP32, mode).s32;
  }
}

/* tpu_round_mode_convert with a plain int, as C code reading a parameter
 * calls it (C converts int to the enum implicitly). */
int hdr_convert_round_mode(int sg_mode) { return (int)tpu_round_mode_convert((sg_round_mode_t)sg_mode); }

#ifndef __cplusplus
int hdr_convert_round_mode_8_implicitly(void) { return (int)tpu_round_mode_convert(8); }

/* ---- api_utils.h, written exactly as the reference's examples ------------- */

void hdr_parse_example(dim4 *nchw, dim5 *normal, dim5 *group3d) {
  parse_NCHW((int[]){2, 3, 4, 5, 6}, 5, nchw);
  parse_NCDHW(GROUP_NORMAL, (int[]){2, 3, 4, 5, 6}, 5, normal);
  parse_NCDHW(GROUP_3D, (int[]){2, 3, 4, 5, 6}, 5, group3d);
}
#endif

#ifdef __cplusplus
}
#endif
