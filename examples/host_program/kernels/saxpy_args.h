/* saxpy_args.h: the argument blob shared by the host program and its
 * kernel, packed and a whole number of 4-byte words as the device needs. */
#ifndef SAXPY_ARGS_H
#define SAXPY_ARGS_H

#include <stdint.h>

#pragma pack(push, 1)
typedef struct {
  uint64_t x_addr;  /* n floats in device memory */
  uint64_t y_addr;  /* n floats, overwritten with a * x + y */
  float a;
  int32_t n;
} saxpy_args_t;
#pragma pack(pop)

#endif
