// bdc_pool_api.cc: tpu-kernel family I, float pooling (tpu_bdc_fp_max_pool2d,
// tpu_bdc_fp_avg_pool2d), over cmodel/bdc/pool (see pool.h for the geometry,
// numerics and checks).
#include "api_guard.h"
#include "record.h"
#include "cmodel/bdc/pool.h"
#include "tpu_kernel.h"

using namespace cmodel;
using bdc::Pool;

extern "C" {

#define TPU_BDC_FP_POOL2D(NAME, OP, VALUE)                                                                      \
  void NAME(local_addr_t output_addr, local_addr_t input_addr, const dim4 *input_shape, const dim2 *kernel,      \
            const padding_t *padding, const dim2 *stride, const dim2 *dilation, data_type_t dtype,               \
            scalar_t VALUE) {                                                                                   \
    return api::run(__func__, TPU_CALLER(),                                                                        \
                    TPU_ARGS(NAME, output_addr, input_addr, input_shape, kernel, padding, stride, dilation, dtype, \
                             VALUE),                                                                               \
                    [&, name = __func__] {                                                                         \
      bdc::fp_pool2d(api::context(), name, OP, output_addr, input_addr, api::deref("input_shape", input_shape), \
                     api::deref("kernel", kernel), api::deref("padding", padding), api::deref("stride", stride), \
                     api::deref("dilation", dilation), dtype, VALUE);                                           \
    });                                                                                                         \
  }
TPU_BDC_FP_POOL2D(tpu_bdc_fp_max_pool2d, Pool::max, pad_val)
TPU_BDC_FP_POOL2D(tpu_bdc_fp_avg_pool2d, Pool::avg, scale)
#undef TPU_BDC_FP_POOL2D

}  // extern "C"
