/*
 * api_common.h: the data the compiler, the runtime and a custom layer
 * exchange. Layouts, field order and values follow the vendor custom-layer
 * SDK exactly, so ops written for it port by recompiling:
 *
 *   tensor_spec_t     one operand: address, SG dtype, rank, shape
 *   local_sec_info_t  the slice a local layer computes (never reorder: the
 *                     compiler copies a longer struct with this as prefix)
 *   tensor_slice_t    the output H slice a dynamic local layer produces
 *   custom_param_t    one 64-byte parameter; an op's parameters are an array
 *                     whose element 0 is reserved (scratch-buffer address)
 *
 * The SDK's headers include one another as <name.h>: when a user's copy of
 * one of them (a vendor api_common.h, say) comes earlier on the include
 * path, that copy is the one every header uses, and nothing is declared
 * twice.
 *
 * This header is C11 and C++ compatible.
 */
#ifndef TPU_SDK_API_COMMON_H
#define TPU_SDK_API_COMMON_H

#include <stdbool.h>
#include <stdint.h>

#include <common_def.h>
#include <tpu_defs.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MAX_SHAPE_DIMS 8

/* How a layer group stores its tensors in local memory: NORMAL as
 * (n, c, h, w); 3D groups fold depth into n as (d * n, c, h, w). Global
 * memory always holds (n, c, d, h, w). Declared here, where the vendor
 * declares it, so a vendor copy of this header replaces it without a
 * clash. */
typedef enum {
  GROUP_NORMAL = 0,
  GROUP_3D = 1
} group_type_t;

typedef struct local_tensor_spec {
  uint64_t addr;        /* global address (global layers) or local-memory offset (local layers) */
  int32_t dtype;        /* sg_data_type_t; tpu_type_convert() gives the data_type_t */
  int32_t dims;         /* rank, at most MAX_SHAPE_DIMS */
  int32_t shape[MAX_SHAPE_DIMS]; /* the full shape, also for local layers */
  uint8_t consume_num;  /* runtime bookkeeping; 0 in static code generation */
  int *host_data;       /* host copy of shape data in dynamic runs; NULL otherwise */
  int elem_num;         /* element count in dynamic runs; 0 in static code generation */
} tensor_spec_t;

typedef tensor_spec_t local_tensor_spec_t;
typedef tensor_spec_t global_tensor_spec_t;

typedef struct local_sec_info {
  int32_t group_type;  /* group_type_t */
  int32_t n_slice;     /* input n extent of this step (a 3D group's depth is d_slice; its
                          local tensors hold d_slice * n_slice rows) */
  int32_t out_n_slice;
  int32_t d_slice;
  int32_t is_h_split;  /* 1 unless this step covers the whole height */
  int32_t h_idx;       /* input h start (may be negative: top padding) */
  int32_t h_slice;
  int32_t out_h_idx;
  int32_t out_h_slice;
  int32_t is_w_split;
  int32_t w_idx;
  int32_t w_slice;
  int32_t out_w_idx;
  int32_t out_w_slice;
  int32_t is_c_split;
  int32_t c_idx;
  int32_t c_slice;
} local_sec_info_t;

typedef struct {
  int h_idx;
  int h_slice;
} tensor_slice_t;

typedef union {
  int int_t;
  float float_t;
  int int_arr_t[16];
  float float_arr_t[16];
} custom_param_t;

/* The record a dynamic layer carries in a model: its op name, then
 * param_size bytes of custom_param_t. */
#define CUSTOM_LAYER_NAME_LEN 20
typedef struct {
  char name[CUSTOM_LAYER_NAME_LEN + 1];
  int param_size;
} tpu_param_t;

/* The user's parameters: element 1 of the custom_param_t array, past the
 * reserved element 0. Returned as void * (the vendor signature), so a
 * caller indexing it writes ((const custom_param_t *)get_real_param_ptr(p))[i]. */
static inline void *get_real_param_ptr(const void *param) {
  return (void *)((const custom_param_t *)param + 1);
}

/* Declares `op_param_t var` filled by the user's op_parse_param(). The
 * expansion ends with its own ';', so both `PARSE_PARAM(op, p, param);`
 * (an empty statement follows) and `PARSE_PARAM(op, p, param)` compile. */
#define PARSE_PARAM(op, var, param) op##_param_t var = op##_parse_param(get_real_param_ptr(param));

/* Element 0 as a local layer sees it: the local-memory offset of its buffer. */
static inline int get_local_buffer_addr(const void *param) {
  return ((const custom_param_t *)param)->int_t;
}

/* Element 0 as a global layer sees it: the first 8 bytes, the global
 * address of its scratch buffer (0 when the op asked for none through
 * _global_bfsz). int64_t, as in the vendor header. */
static inline int64_t get_global_buffer_addr(const void *param) {
  int64_t addr;
  __builtin_memcpy(&addr, param, sizeof(addr));
  return addr;
}

#ifdef __cplusplus
}
#endif

#endif /* TPU_SDK_API_COMMON_H */
