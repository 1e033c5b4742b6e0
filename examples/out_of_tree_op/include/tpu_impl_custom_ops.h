/*
 * tpu_impl_custom_ops.h: the kernels of this project. The generated
 * interface_custom_ops.h (api_<op>_* prototypes) includes this header back;
 * the include guard breaks the cycle.
 */
#ifndef SCALESHIFT_TPU_IMPL_CUSTOM_OPS_H
#define SCALESHIFT_TPU_IMPL_CUSTOM_OPS_H

#include "api_common.h"
#include "tpu_kernel.h"
#include "tpu_utils.h"

/* output[i] = input[i] * scale + shift over the whole tensor (dims dims of
 * shape); fp32, fp16 or bf16, any size: tiled through local memory. */
void tpu_impl_scaleshift_global(global_addr_t output_addr, global_addr_t input_addr,
                                const int *shape, int dims, float scale, float shift,
                                data_type_t dtype);

#endif /* SCALESHIFT_TPU_IMPL_CUSTOM_OPS_H */
