// scale_add_fp_slice.cpp: the tiling of the scaleadd op: picks the kernel
// of the input's dtype (scale_add_fp.pl, through its generated
// scale_add_fp.h) and the largest block its local memory holds. The first
// block spreads the elements over every lane; while the kernel answers
// PplLocalAddrAssignErr (its tensors do not fit, nothing issued) the block
// is halved, as the vendor's tiling functions do.
#include "common_def.h"
#include "helper.h"
#include "scale_add_fp.h"

typedef int (*scale_add_kernel)(unsigned long long, unsigned long long, unsigned long long, unsigned long long,
                                float, int, int);

static scale_add_kernel kernel_of(int dtype) {
  switch (dtype) {
    case SG_DTYPE_FP32: return scale_add_f32;
    case SG_DTYPE_FP16: return scale_add_f16;
    case SG_DTYPE_BFP16: return scale_add_bf16;
    default: return nullptr;
  }
}

extern "C" void scale_add_tiling(unsigned long long out0, unsigned long long out1, unsigned long long a,
                                 unsigned long long b, float scale, int length, int dtype) {
  const scale_add_kernel kernel = kernel_of(dtype);
  if (kernel == nullptr) {
    fprintf(stderr, "scaleadd: SG dtype %d is not a float type (fp32, fp16 or bf16)\n", dtype);
    exit(1);
  }
  if (length <= 0) return;
  int block = align_up((length + LANE_NUM - 1) / LANE_NUM, EU_NUM);
  int ret = kernel(out0, out1, a, b, scale, length, block);
  while (ret == PplLocalAddrAssignErr && block > 1) {
    block /= 2;
    ret = kernel(out0, out1, a, b, scale, length, block);
  }
  CHECK_PPL_RET(ret);
}
