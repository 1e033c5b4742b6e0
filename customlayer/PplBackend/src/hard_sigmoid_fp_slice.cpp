// hard_sigmoid_fp_slice.cpp: the tiling of the hardsigmoid op: picks the
// kernel of the dtype (hard_sigmoid_fp.pl, through its generated
// hard_sigmoid_fp.h). Global: the largest block its local memory holds,
// halved while the kernel answers PplLocalAddrAssignErr (nothing issued).
// Local: the group's slice as it is, at the offsets and lane given.
#include "common_def.h"
#include "hard_sigmoid_fp.h"
#include "helper.h"

typedef int (*hard_sigmoid_kernel)(unsigned long long, unsigned long long, float, float, int, int);

static hard_sigmoid_kernel global_kernel_of(int dtype) {
  switch (dtype) {
    case SG_DTYPE_FP32: return hard_sigmoid_f32;
    case SG_DTYPE_FP16: return hard_sigmoid_f16;
    case SG_DTYPE_BFP16: return hard_sigmoid_bf16;
    default: return nullptr;
  }
}

static void refuse_dtype(int dtype) {
  fprintf(stderr, "hardsigmoid: SG dtype %d is not a float type (fp32, fp16 or bf16)\n", dtype);
  exit(1);
}

extern "C" void hard_sigmoid_tiling(unsigned long long out, unsigned long long x, float alpha, float beta, int length,
                                    int dtype) {
  const hard_sigmoid_kernel kernel = global_kernel_of(dtype);
  if (kernel == nullptr) refuse_dtype(dtype);
  if (length <= 0) return;
  int block = align_up((length + LANE_NUM - 1) / LANE_NUM, EU_NUM);
  int ret = kernel(out, x, alpha, beta, length, block);
  while (ret == PplLocalAddrAssignErr && block > 1) {
    block /= 2;
    ret = kernel(out, x, alpha, beta, length, block);
  }
  CHECK_PPL_RET(ret);
}

extern "C" void hard_sigmoid_local_slice(int out_offset, int in_offset, int work_offset, int lane, float alpha,
                                         float beta, const int shape[4], int dtype) {
  const int n = shape[0], c = shape[1], h = shape[2], w = shape[3];
  switch (dtype) {
    case SG_DTYPE_FP32:
      CHECK_PPL_RET(hard_sigmoid_local_f32(out_offset, in_offset, lane, alpha, beta, n, c, h, w));
      return;
    case SG_DTYPE_FP16:
      CHECK_PPL_RET(hard_sigmoid_local_f16(out_offset, in_offset, work_offset, lane, alpha, beta, n, c, h, w));
      return;
    case SG_DTYPE_BFP16:
      CHECK_PPL_RET(hard_sigmoid_local_bf16(out_offset, in_offset, work_offset, lane, alpha, beta, n, c, h, w));
      return;
    default: refuse_dtype(dtype);
  }
}
