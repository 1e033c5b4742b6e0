/* §5 item 10: a kernel that includes only tpu_kernel.h may call printf,
 * exit and malloc: the header brings <stdio.h> and <stdlib.h>, as the
 * vendor's does. */
#include "tpu_kernel.h"

int only_tpu_kernel_check(int n);
int only_tpu_kernel_check(int n) {
  char *buffer = (char *)malloc(16);
  if (!buffer) exit(2);
  printf("%d %s\n", n, buffer ? "ok" : "no");
  free(buffer);
  return n;
}
