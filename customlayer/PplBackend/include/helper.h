/*
 * helper.h: host helpers of the sample PPL ops (scaleadd, hardsigmoid), as a vendor
 * customlayer's PplBackend/include/helper.h holds them: the tiling entry
 * points the api_<op>_* functions call, and CHECK_PPL_RET.
 *
 * Plain C (the _api.c files include it too); the generated <stem>.h of
 * each .pl brings the kernels, the PplErrorCode_t values and the chip
 * helpers (LANE_NUM, EU_NUM, align_up, get_chip).
 */
#ifndef CUSTOMLAYER_PPL_HELPER_H
#define CUSTOMLAYER_PPL_HELPER_H

#include <stdio.h>
#include <stdlib.h>

#include "cmodel_host.h"

#ifdef __cplusplus
extern "C" {
#endif

/* out0 = a * scale, out1 = a * scale + b over `length` elements of SG
 * dtype `dtype` (scale_add_fp_slice.cpp). */
void scale_add_tiling(unsigned long long out0, unsigned long long out1, unsigned long long a,
                      unsigned long long b, float scale, int length, int dtype);

/* hardsigmoid (hard_sigmoid_fp_slice.cpp): out = min(max(x * alpha + beta,
 * 0), 1) over `length` elements of SG dtype `dtype` in global memory; or
 * over the layer-group slice of `shape` at local offsets out / in (and the
 * fp32 work buffer of a 16-bit slice) in the lanes from `lane` on. */
void hard_sigmoid_tiling(unsigned long long out, unsigned long long x, float alpha, float beta, int length, int dtype);
void hard_sigmoid_local_slice(int out_offset, int in_offset, int work_offset, int lane, float alpha, float beta,
                              const int shape[4], int dtype);

/* A PPL kernel's return code other than 0 stops the op, naming the code
 * and the emulator's error (which names the .pl line). Inside a custom op
 * exit() stops the kernel run with that message (the SDK turns it into the
 * op's error), as the vendor's macro stops the compiler. */
#define CHECK_PPL_RET(ret)                                                                          \
  do {                                                                                              \
    int ppl_ret_ = (ret);                                                                           \
    if (ppl_ret_ != 0) {                                                                            \
      fprintf(stderr, "%s:%d: PPL kernel returned %d (%#x): %s\n", __FILE__, __LINE__, ppl_ret_,    \
              (unsigned)ppl_ret_, cmodel_last_error());                                             \
      exit(1);                                                                                      \
    }                                                                                               \
  } while (0)

#ifdef __cplusplus
}
#endif

#endif
