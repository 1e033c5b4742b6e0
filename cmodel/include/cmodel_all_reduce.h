/*
 * cmodel_all_reduce.h: how a reducing copy (GDMA / SDMA / CDMA into L2
 * SRAM) combines its source with its destination, as the emulator
 * implements it.
 *
 * The emulator's own definitions, which tpu_kernel.h takes from here (it
 * includes this header), so that nothing under cmodel/ includes a header
 * of kernel/. Apart from tpu_defs.h: a kernel that includes only
 * tpu_defs.h sees no more names than before, and one that puts a copy of
 * the vendor's tpu_kernel.h first on its include path (which defines these
 * itself) still gets tpu_defs.h without them. Names, values and layouts
 * are the vendor's. Installed beside tpu_kernel.h. C11 and C++ compatible;
 * declares no functions.
 */
#ifndef CMODEL_ALL_REDUCE_H
#define CMODEL_ALL_REDUCE_H

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
  ALL_REDUCE_PSUM_WO = 0, /* write the source over the destination */
  ALL_REDUCE_PSUM_WR = 1  /* read the destination, combine, write back */
} all_reduce_psum_t;

typedef enum {
  ALL_REDUCE_NOP = 0,
  ALL_REDUCE_MUL = 1,
  ALL_REDUCE_MAX = 2,
  ALL_REDUCE_MIN = 3,
  ALL_REDUCE_ADD = 4
} all_reduce_opcode_t;

#ifdef __cplusplus
}
#endif

#endif /* CMODEL_ALL_REDUCE_H */
