/*
 * mf_plugin.c: host hooks of the tpu_model_test fixture ops (the sample
 * ops' hooks come from plugin/).
 */
#include <stdbool.h>
#include <string.h>

#include "api_common.h"

static size_t mf_count(const int *shape, int dims) {
  size_t count = 1;
  for (int i = 0; i < dims; ++i) count *= (size_t)shape[i];
  return count;
}

void inference_mf_scratch(void *param, int param_size, const int (*input_shapes)[MAX_SHAPE_DIMS],
                          const int *input_dims, const float **inputs, float **outputs) {
  (void)param;
  (void)param_size;
  memcpy(outputs[0], inputs[0], mf_count(input_shapes[0], input_dims[0]) * sizeof(float));
}

void inference_mf_forced(void *param, int param_size, const int (*input_shapes)[MAX_SHAPE_DIMS],
                         const int *input_dims, const float **inputs, float **outputs) {
  (void)param;
  (void)param_size;
  memcpy(outputs[0], inputs[0], mf_count(input_shapes[0], input_dims[0]) * sizeof(float));
}

bool force_dynamic_run_mf_forced(void *param, int param_size) {
  (void)param;
  (void)param_size;
  return true;
}

void inference_mf_pick(void *param, int param_size, const int (*input_shapes)[MAX_SHAPE_DIMS],
                       const int *input_dims, const float **inputs, float **outputs) {
  (void)param;
  (void)param_size;
  memcpy(outputs[0], inputs[1], mf_count(input_shapes[1], input_dims[1]) * sizeof(float));
}

void shape_inference_mf_split(void *param, int param_size, const int (*input_shapes)[MAX_SHAPE_DIMS],
                              const int *input_dims, int (*output_shapes)[MAX_SHAPE_DIMS], int *output_dims) {
  (void)param;
  (void)param_size;
  for (int o = 0; o < 2; ++o) {
    output_dims[o] = input_dims[0];
    for (int i = 0; i < input_dims[0]; ++i) output_shapes[o][i] = input_shapes[0][i];
  }
}

void inference_mf_split(void *param, int param_size, const int (*input_shapes)[MAX_SHAPE_DIMS],
                        const int *input_dims, const float **inputs, float **outputs) {
  (void)param;
  (void)param_size;
  const size_t bytes = mf_count(input_shapes[0], input_dims[0]) * sizeof(float);
  memcpy(outputs[0], inputs[0], bytes);
  memcpy(outputs[1], inputs[0], bytes);
}

void inference_mf_hostcopy(void *param, int param_size, const int (*input_shapes)[MAX_SHAPE_DIMS],
                           const int *input_dims, const float **inputs, float **outputs) {
  (void)param;
  (void)param_size;
  memcpy(outputs[0], inputs[0], mf_count(input_shapes[0], input_dims[0]) * sizeof(float));
}
