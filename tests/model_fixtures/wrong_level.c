/*
 * wrong_level.c: looks like a bm1684x firmware library of the sample ops,
 * but of another custom-layer API level. kernel_update must refuse it
 * before anything else is looked at. The entries are never called.
 */
#include <stddef.h>

#include "api_common.h"
#include "tpu_custom_abi.h"

const int tpu_custom_api_level = TPU_SDK_CUSTOM_API_LEVEL + 1;
const char tpu_custom_firmware_chip[] = "bm1684x";
const char *const tpu_custom_registered_ops[] = {"absadd", "ceiladd", "swapchannel", "crop", NULL};
const char *const tpu_custom_registered_local_ops[] = {"absadd", "ceiladd", NULL};

static int mf_refuse(void) { return -1; }

int tpu_global_calculate_entry(const char *name, const void *param, const int param_size,
                               const tensor_spec_t *in_tensors, const int in_num, tensor_spec_t *out_tensors,
                               const int out_num) {
  (void)name, (void)param, (void)param_size, (void)in_tensors, (void)in_num, (void)out_tensors, (void)out_num;
  return mf_refuse();
}
int tpu_shape_infer_entry(const char *name, const void *param, const int param_size, const tensor_spec_t *in_tensors,
                          const int in_num, tensor_spec_t *out_tensors, const int out_num) {
  (void)name, (void)param, (void)param_size, (void)in_tensors, (void)in_num, (void)out_tensors, (void)out_num;
  return mf_refuse();
}
int tpu_local_calculate_entry(const char *name, const void *param, const int param_size,
                              const tensor_spec_t *in_tensors, const int in_num, const local_sec_info_t *sec_info,
                              tensor_spec_t *out_tensors, const int out_num) {
  (void)name, (void)param, (void)param_size, (void)in_tensors, (void)in_num, (void)sec_info, (void)out_tensors,
      (void)out_num;
  return mf_refuse();
}
int tpu_slice_infer_entry(const char *name, const void *param, const int param_size, const tensor_spec_t *in_tensors,
                          const int in_num, const local_sec_info_t *sec_info, tensor_slice_t *out_slices,
                          const int out_num) {
  (void)name, (void)param, (void)param_size, (void)in_tensors, (void)in_num, (void)sec_info, (void)out_slices,
      (void)out_num;
  return mf_refuse();
}
