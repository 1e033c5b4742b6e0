/* wrong_level.c: looks like a generated library of a future API level. */
#include <stddef.h>

const int tpu_custom_api_level = 999;
const char *const tpu_custom_registered_ops[] = {NULL};
const char *const tpu_custom_registered_local_ops[] = {NULL};
