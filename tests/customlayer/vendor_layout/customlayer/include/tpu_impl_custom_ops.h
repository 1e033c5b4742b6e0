/* tpu_impl_custom_ops.h: the kernels of this project's ops. */
#ifndef VENDOR_LAYOUT_TPU_IMPL_CUSTOM_OPS_H
#define VENDOR_LAYOUT_TPU_IMPL_CUSTOM_OPS_H

#include "api_common.h"
#include "api_utils.h"
#include "common.h"
#include "interface_custom_ops.h"
#include "tpu_kernel.h"

/* out = x + b over a whole (n, c, h, w) tensor that fits local memory. */
void tpu_impl_addrow_global(global_addr_t output_addr, global_addr_t input_addr, const dim4 *shape, float b,
                            data_type_t dtype);
/* The same on a slice already in local memory, through an fp32 buffer. */
void tpu_impl_addrow_local(local_addr_t output_addr, local_addr_t input_addr, local_addr_t buffer_addr,
                           const dim4 *shape, float b, data_type_t dtype);
/* out = min(max(x * scale, lo), hi), fp32 only. */
void tpu_impl_scaleclip_global(global_addr_t output_addr, global_addr_t input_addr, const dim4 *shape,
                               float scale, float lo, float hi);

#endif
