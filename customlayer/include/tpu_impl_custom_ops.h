/*
 * tpu_impl_custom_ops.h: the kernels of the sample custom ops.
 *
 * interface_<op>.c turns the compiler's tensor specs and packed parameters
 * into plain arguments and calls these tpu_impl_<op>_* functions, which
 * issue the GDMA/BDC commands (tpu_impl_<op>.c). Two helpers shared by the
 * ops live in tpu_impl_common.c:
 *
 *   tpu_impl_eltwise_global  tiles an element-wise op over a global tensor of
 *                            any size, double-buffered inside parallel
 *                            regions (absadd, ceiladd);
 *   tpu_impl_copy_S2S        a strided system-to-system copy of any extent
 *                            (swapchannel, crop).
 */
#ifndef CUSTOMLAYER_TPU_IMPL_CUSTOM_OPS_H
#define CUSTOMLAYER_TPU_IMPL_CUSTOM_OPS_H

#include <stdbool.h>
#include <stdint.h>

#include "api_utils.h"
#include "interface_custom_ops.h"
#include "tpu_kernel.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- shared helpers (tpu_impl_common.c) ---------------------------------- */

/* True for DT_FP32, DT_FP16 and DT_BFP16. Otherwise stops the kernel with a
 * message naming `op` (TPUKERNEL_ASSERT_INFO) and returns false, for the
 * case the assert returns (outside a run). */
bool tpu_impl_check_float_dtype(const char *op, data_type_t dtype);

/* The NPU a local tensor starts on (0 for an address outside local
 * memory, as a buffer-size query may pass). */
int tpu_impl_local_start_npu(const local_tensor_spec_t *spec);

/* A local layer's scratch buffer: the offset the compiler put in the
 * reserved parameter (get_local_buffer_addr), on the NPU `input` starts on,
 * since element-wise BDC operands must start on the same NPU. */
local_addr_t tpu_impl_local_buffer(const local_tensor_spec_t *input, const void *param);

/* Computes one tile in local memory: dst = f(src), dst and src in the
 * aligned layout on the same NPU, of shape `shape` and dtype `dtype`;
 * `work` is scratch on the same NPU (see tpu_impl_eltwise_global for its
 * size). The global pipeline calls it in place (dst == src), so a compute
 * function must allow that. */
typedef void (*tpu_impl_tile_compute_t)(local_addr_t dst_addr, local_addr_t src_addr, local_addr_t work_addr,
                                        const dim4 *shape, data_type_t dtype, const void *ctx);

/* output = f(input) element by element for the contiguous global tensor
 * `shape` (n, c, h, w: only the element count matters), however large.
 * The tensor is cut into tiles viewed as (1, c, 1, w) with c up to NPU_NUM;
 * three local buffers rotate: while BDC computes tile i in place, GDMA
 * loads tile i + 1 and stores tile i - 1 (see tpu_impl_common.c).
 * work_elem_bytes > 0 reserves a BDC-only scratch of that many bytes per
 * tile element (aligned layout: room for a tile-shaped tensor of a
 * work_elem_bytes-byte dtype) passed as `work`; with 0, `work` is the
 * tile's own buffer. `output` may equal `input`. */
void tpu_impl_eltwise_global(global_addr_t output_addr, global_addr_t input_addr, const int *shape, data_type_t dtype,
                             int work_elem_bytes, tpu_impl_tile_compute_t compute, const void *ctx);

/* A BDC unary float command: tpu_bdc_abs, tpu_bdc_fp_ceil, ... */
typedef void (*tpu_impl_bdc_unary_t)(local_addr_t dst_addr, local_addr_t src_addr, const dim4 *shape,
                                     const dim4 *dst_stride, const dim4 *src_stride, data_type_t dtype);

/* dst = unary(src) + b for a local tensor of `shape` (aligned layout, dst,
 * src and work on the same NPU). fp32: unary into work, add into dst.
 * fp16/bf16: computed in fp32 in work (src cast exactly to fp32, unary,
 * add b in fp32, one round-to-nearest-even cast into dst), so the result
 * is the fp32 result rounded once, with b not rounded to the dtype first.
 * work holds an fp32 tensor of `shape` (tpu_get_local_size with DT_FP32);
 * for fp32 it may equal dst or src. */
void tpu_impl_unary_add_C(local_addr_t dst_addr, local_addr_t src_addr, local_addr_t work_addr, const dim4 *shape,
                          data_type_t dtype, tpu_impl_bdc_unary_t unary, float b);

/* Bytes per element the work tensor of tpu_impl_unary_add_C needs beyond
 * an in-place fp32 computation: 0 for fp32, 4 (an fp32 copy) otherwise. */
int tpu_impl_unary_add_C_work_bytes(data_type_t dtype);

/* dst(n, c, h, w) = src(n, c, h, w) between system addresses, strides in
 * elements (w strides at most 128 bytes, as GDMA requires). Extents may
 * exceed the GDMA limit of 65535 per dimension: such a copy is split into
 * several commands. */
void tpu_impl_copy_S2S(system_addr_t dst_addr, system_addr_t src_addr, const int64_t shape[4],
                       const int64_t dst_stride[4], const int64_t src_stride[4], data_type_t dtype);

/* ---- absadd: out = |x| + b ----------------------------------------------- */

/* shape: the tensor folded to (n, c, h, w) by parse_NCHW. */
void tpu_impl_absadd_global(global_addr_t output_addr, global_addr_t input_addr, const int *shape, float b,
                            data_type_t dtype);
/* One local slice of shape (n, c, h, w), aligned layout; buffer_addr is
 * scratch for the slice as fp32 (tpu_get_local_size(slice, DT_FP32) bytes
 * per NPU). Output may equal input. */
void tpu_impl_absadd_local(local_addr_t output_addr, local_addr_t input_addr, local_addr_t buffer_addr,
                           const int *shape, float b, data_type_t dtype);

/* ---- ceiladd: out = ceil(x) + b ------------------------------------------ */

void tpu_impl_ceiladd_global(global_addr_t output_addr, global_addr_t input_addr, const int *shape, float b,
                             data_type_t dtype);
void tpu_impl_ceiladd_local(local_addr_t output_addr, local_addr_t input_addr, local_addr_t buffer_addr,
                            const int *shape, float b, data_type_t dtype);

/* ---- scaleinplace: x *= s (in place) ------------------------------------- */

/* The model builder gives output_addr == input_addr (metadata_scaleinplace
 * declares input 0 updated in place); the kernels also work when they
 * differ, as the op tester may run them. fp16/bf16 are multiplied in fp32
 * and rounded once (s is not rounded to the dtype first). */
void tpu_impl_scaleinplace_global(global_addr_t output_addr, global_addr_t input_addr, const int *shape, float s,
                                  data_type_t dtype);
/* One local slice; buffer_addr holds the slice as fp32 (fp16/bf16 only). */
void tpu_impl_scaleinplace_local(local_addr_t output_addr, local_addr_t input_addr, local_addr_t buffer_addr,
                                 const int *shape, float s, data_type_t dtype);

/* ---- swapchannel: out[:, c] = in[:, order[c]], c = 0..2 ------------------ */

/* shape: (n, c, h, w) by parse_NCHW; c must be 3 and every order value in
 * 0..2, else the kernel stops with a message. */
void tpu_impl_swapchannel_global(global_addr_t output_addr, global_addr_t input_addr, const int *shape,
                                 const int *order, data_type_t dtype);

/* ---- crop: out[..., i, j] = in[..., hoffset + i, woffset + j] ------------ */

/* The input is `outer` matrices of h x w (every leading dimension folded
 * into outer); the output `outer` matrices of hnew x wnew. The window must
 * lie inside the input, else the kernel stops with a message. */
void tpu_impl_crop_global(global_addr_t output_addr, global_addr_t input_addr, int64_t outer, int h, int w, int hoffset,
                          int woffset, int hnew, int wnew, data_type_t dtype);

/* ---- linear: y[m, o] = sum_k x[m, k] * W[o, k] + b[o], optional relu ----- */

/* x: M x K rows, W: O x K (PyTorch's layout), bias: O values (read only
 * with has_bias), y: M x O; every tensor contiguous in global memory and of `dtype` (fp32,
 * fp16, bf16). Tiled over M, O and K through local memory with
 * tpu_bdc_fp_mm_R_trans_with_bias; the sum is accumulated in fp32 over k
 * ascending (the cmodel's documented order), the bias added last, then relu,
 * then one round-to-nearest-even into `dtype`. */
void tpu_impl_linear_global(global_addr_t y_addr, global_addr_t x_addr, global_addr_t w_addr, global_addr_t bias_addr,
                            int64_t M, int K, int O, bool has_bias, bool do_relu, data_type_t dtype);

/* ---- leakyrelu: y = x > 0 ? x : alpha * x, and its gradient -------------- */

/* shape: the tensor folded to (n, c, h, w) by parse_NCHW; computed in fp32
 * and rounded once into dtype. */
void tpu_impl_leakyrelu_global(global_addr_t output_addr, global_addr_t input_addr, const int *shape, float alpha,
                               data_type_t dtype);
/* dx = x > 0 ? dy : alpha * dy over `count` contiguous elements of dtype
 * (alpha * dy computed in fp32, rounded once). */
void tpu_impl_leakyrelu_grad_global(global_addr_t dx_addr, global_addr_t dy_addr, global_addr_t x_addr,
                                    uint64_t count, float alpha, data_type_t dtype);

/* ---- linear_grad: the partials of linear --------------------------------- */

/* With dz = do_relu ? (y > 0 ? dy : 0) : dy (dy, y: M x O):
 *   dx = dz W      (M x K)     dW = dz^T x    (O x K)     db = sum_m dz (O)
 * on the matrix unit, tiled over M, O and K as the forward; fp32
 * accumulation with the reduction index ascending, one rounding into dtype.
 * db_addr is written only with has_bias. */
void tpu_impl_linear_grad_global(global_addr_t dx_addr, global_addr_t dw_addr, global_addr_t db_addr,
                                 global_addr_t dy_addr, global_addr_t x_addr, global_addr_t w_addr,
                                 global_addr_t y_addr, int64_t M, int K, int O, bool has_bias, bool do_relu,
                                 data_type_t dtype);

#ifdef __cplusplus
}
#endif

#endif /* CUSTOMLAYER_TPU_IMPL_CUSTOM_OPS_H */
