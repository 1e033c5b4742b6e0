/*
 * macros.h: the generic macros of the vendor's kernel include directory:
 * alignment, min / max, hang and the ASSERT family.
 *
 * On a device a failed ASSERT prints the condition, traces and hangs the
 * core. On this emulator it stops the kernel with an error naming the
 * condition, the kernel's file and line (as TPUKERNEL_ASSERT does), and the
 * host program carries on. hang(v) stops the kernel the same way, naming v.
 * Every macro is #ifndef-guarded: tpu_kernel.h, common.h and tpu_defs.h
 * define some of the same names, and whichever header comes first wins.
 *
 * This header is C11 and C++ compatible.
 */
#ifndef TPU_SDK_MACROS_H
#define TPU_SDK_MACROS_H

#include <print_trace.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Implemented by libcmodel.so; declared in tpu_kernel.h as well. */
void tpu_kernel_assert_failed(const char *expr, const char *file, int line, const char *func, const char *fmt, ...)
    __attribute__((noreturn, format(printf, 5, 6)));
void tpu_kernel_error(const char *file, int line, const char *func, const char *fmt, ...)
    __attribute__((noreturn, format(printf, 4, 5)));

#ifdef __cplusplus
}
#endif

#ifndef ALIGN
#define ALIGN(x, a) ((((x) + (a) - 1) / (a)) * (a))
#endif
#ifndef sg_min
#define sg_min(x, y) (((x)) < ((y)) ? (x) : (y))
#endif
#ifndef sg_max
#define sg_max(x, y) (((x)) > ((y)) ? (x) : (y))
#endif

#ifndef hang
#define hang(value) tpu_kernel_error(__FILE__, __LINE__, __func__, "hang(%lld)", (long long)(value))
#endif

#ifndef ASSERT
#define ASSERT(cond)                                                                  \
  do {                                                                                \
    if (!(cond)) tpu_kernel_assert_failed(#cond, __FILE__, __LINE__, __func__, NULL); \
  } while (0)
#endif
#ifndef ASSERT_INFO
#define ASSERT_INFO(cond, ...)                                                               \
  do {                                                                                       \
    if (!(cond)) tpu_kernel_assert_failed(#cond, __FILE__, __LINE__, __func__, __VA_ARGS__); \
  } while (0)
#endif
/* low <= value <= high, all three integers. */
#ifndef ASSERT_RANGE
#define ASSERT_RANGE(value, low, high)                                                          \
  ASSERT_INFO((value) >= (low) && (value) <= (high), "%lld is outside [%lld, %lld]", (long long)(value), \
              (long long)(low), (long long)(high))
#endif

#endif /* TPU_SDK_MACROS_H */
