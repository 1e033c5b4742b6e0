/*
 * run_scale_add.c: a host program in C calling the PPL kernel scale_add_f32
 * (scale_add_fp.pl) through its generated header, as a custom op's tiling
 * code does: the block from the header's chip helpers, halved while the
 * kernel answers PplLocalAddrAssignErr; the results checked against a
 * reference computed here.
 *
 *   run_scale_add [bm1684x|bm1688]
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cmodel_host.h"
#include "scale_add_fp.h"

enum { kLength = 100000 };

static float a[kLength], b[kLength], out0[kLength], out1[kLength];

int main(int argc, char **argv) {
  const char *chip = argc > 1 ? argv[1] : "bm1684x";
  if (cmodel_open(chip) != 0) {
    fprintf(stderr, "cmodel_open(%s): %s\n", chip, cmodel_last_error());
    return 1;
  }
  if (strcmp(get_chip(), chip) != 0) {
    fprintf(stderr, "get_chip() is '%s', the emulator runs %s\n", get_chip(), chip);
    return 1;
  }
  for (int i = 0; i < kLength; ++i) {
    a[i] = (float)(i % 97) * 0.25f - 12.0f;
    b[i] = (float)(i % 13) - 6.5f;
  }
  const uint64_t bytes = sizeof a;
  const uint64_t ga = cmodel_global_alloc(bytes), gb = cmodel_global_alloc(bytes);
  const uint64_t g0 = cmodel_global_alloc(bytes), g1 = cmodel_global_alloc(bytes);
  if (!ga || !gb || !g0 || !g1 || cmodel_global_write(ga, a, bytes) || cmodel_global_write(gb, b, bytes)) {
    fprintf(stderr, "global memory: %s\n", cmodel_last_error());
    return 1;
  }
  int block = align_up((kLength + LANE_NUM - 1) / LANE_NUM, EU_NUM) * 8;
  int tries = 1;
  int ret = scale_add_f32(g0, g1, ga, gb, 1.5f, kLength, block);
  while (ret == PplLocalAddrAssignErr && block > 1) {
    block /= 2;
    ++tries;
    ret = scale_add_f32(g0, g1, ga, gb, 1.5f, kLength, block);
  }
  if (ret != 0 || cmodel_global_read(out0, g0, bytes) || cmodel_global_read(out1, g1, bytes)) {
    fprintf(stderr, "scale_add_f32 returned %d: %s\n", ret, cmodel_last_error());
    return 1;
  }
  for (int i = 0; i < kLength; ++i) {
    const float scaled = a[i] * 1.5f;
    if (out0[i] != scaled || fabsf(out1[i] - (scaled + b[i])) > 1e-6f) {
      fprintf(stderr, "element %d: %g %g, expected %g %g\n", i, out0[i], out1[i], scaled, scaled + b[i]);
      return 1;
    }
  }
  printf("scale_add_f32 on %s: %d elements match, block %d after %d tries\n", chip, kLength, block, tries);
  cmodel_close();
  if (tries == 1) {
    /* Four fp32 tensors of the first block, double-buffered, exceed a lane
     * on both chips: the retry must have happened. */
    fprintf(stderr, "the first block (%d) fit: PplLocalAddrAssignErr was never returned\n", block);
    return 1;
  }
  return 0;
}
