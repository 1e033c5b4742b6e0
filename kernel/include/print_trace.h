/*
 * print_trace.h: the backtrace printer vendor kernel code calls from its
 * assertion macros (macros.h) on x86 hosts.
 *
 * _print_trace() writes the calling thread's stack, one frame a line, to
 * standard error. Frames inside shared objects show as "lib.so(symbol+0x1c)";
 * a file:line view needs a debugger or addr2line. This SDK's own errors
 * already name the kernel's file and line.
 *
 * This header is C11 and C++ compatible.
 */
#ifndef TPU_SDK_PRINT_TRACE_H
#define TPU_SDK_PRINT_TRACE_H

#include <stdio.h>

#if defined(__GLIBC__) || defined(__linux__)
#include <execinfo.h>
#include <unistd.h>
#define TPU_SDK_HAVE_BACKTRACE 1
#endif

static inline void _print_trace(void) {
#ifdef TPU_SDK_HAVE_BACKTRACE
  void *frames[64];
  const int count = backtrace(frames, (int)(sizeof(frames) / sizeof(frames[0])));
  fprintf(stderr, "backtrace (%d frames):\n", count);
  fflush(stderr);
  backtrace_symbols_fd(frames, count, STDERR_FILENO);
#else
  fprintf(stderr, "backtrace: not available on this host\n");
#endif
}

#endif /* TPU_SDK_PRINT_TRACE_H */
