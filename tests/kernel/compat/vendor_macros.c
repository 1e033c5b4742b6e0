/* Header details vendor kernels rely on, compiled with the kit's strict
 * flags (every warning an error), as C and as C++:
 *   - the kernel repeats the vendor common.h's MIN / MAX definitions after
 *     tpu_kernel.h: a redefinition is silent only when it is identical
 *     token for token (parameter names included), so the SDK must spell
 *     them as the vendor does;
 *   - a non-void function ends in TPUKERNEL_ASSERT(0) after a switch that
 *     returns in every case it expects: the assertion handler is noreturn,
 *     as the vendor's, so -Wreturn-type (in -Wall) has nothing to say;
 *   - the same after TPUKERNEL_ERR, and a variable assigned in every
 *     expected case and left alone after a failed assertion. */
#include "tpu_kernel.h"

#define MIN(x, y) (((x)) < ((y)) ? (x) : (y))
#define MAX(x, y) (((x)) > ((y)) ? (x) : (y))

int vendor_macros_tile(int kind, int n);
int vendor_macros_tile(int kind, int n) {
  switch (kind) {
    case 0: return MIN(n, NPU_NUM);
    case 1: return MAX(n, 1);
    default: break;
  }
  TPUKERNEL_ASSERT(0);
}

int vendor_macros_bytes(data_type_t dtype, int n);
int vendor_macros_bytes(data_type_t dtype, int n) {
  int size;
  switch (dtype) {
    case DT_FP32: size = 4; break;
    case DT_FP16:
    case DT_BFP16: size = 2; break;
    default: TPUKERNEL_ASSERT_INFO(0, "dtype %d", (int)dtype);
  }
  return MIN(size * n, LOCAL_MEM_SIZE);
}

int vendor_macros_error(int n);
int vendor_macros_error(int n) {
  if (n > 0) return n;
  TPUKERNEL_ERR("n = %d\n", n);
}
