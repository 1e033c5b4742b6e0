/*
 * plugin_swapchannel.c: host hooks of the swapchannel op.
 *
 * out[:, c] = in[:, order[c]] for c = 0, 1, 2 (the same direction as the
 * kernel; the vendor's sample plugin wrote out[:, order[c]] = in[:, c],
 * which agrees only for self-inverse orders). The input is read as
 * (n, c, inner) with c = dim 1 and inner = the product of the dims after
 * it; c must be 3. The default shape inference (output = input shape)
 * applies.
 *
 * The hooks return nothing, so invalid input (rank < 2, c != 3, an order
 * value outside 0..2, missing parameter) is reported on stderr and the
 * output is filled with NaN: any comparison against it fails.
 */
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "api_common.h"
#include "param_parser.h"

void inference_swapchannel(void *param, int param_size, const int (*input_shapes)[MAX_SHAPE_DIMS],
                           const int *input_dims, const float **inputs, float **outputs) {
  const int *shape = input_shapes[0];
  const int dims = input_dims[0];
  size_t count = 1;
  for (int i = 0; i < dims && i < MAX_SHAPE_DIMS; ++i) count *= shape[i] > 0 ? (size_t)shape[i] : 0;

  bool valid = true;
  if (param_size < (int)(2 * sizeof(custom_param_t))) {
    fprintf(stderr,
            "swapchannel: expects 1 parameter (order, int[3]) after the reserved element, but param_size is "
            "%d bytes\n",
            param_size);
    valid = false;
  } else if (dims < 2 || dims > MAX_SHAPE_DIMS) {
    fprintf(stderr, "swapchannel: needs an input of rank 2..%d with 3 channels in dim 1; the input has rank %d\n",
            MAX_SHAPE_DIMS, dims);
    valid = false;
  } else if (shape[1] != 3) {
    fprintf(stderr, "swapchannel: needs exactly 3 channels (dim 1); the input has %d\n", shape[1]);
    valid = false;
  }
  swapchannel_param_t p = {{0, 1, 2}};
  if (valid) {
    p = swapchannel_parse_param(get_real_param_ptr(param));
    for (int c = 0; c < 3; ++c) {
      if (p.order[c] < 0 || p.order[c] > 2) {
        fprintf(stderr, "swapchannel: order[%d] = %d, but every order value must be 0, 1 or 2 (order = [%d, %d, %d])\n",
                c, p.order[c], p.order[0], p.order[1], p.order[2]);
        valid = false;
        break;
      }
    }
  }
  if (!valid) {
    for (size_t i = 0; i < count; ++i) outputs[0][i] = NAN;
    return;
  }

  if (count == 0) return;
  const size_t n = (size_t)shape[0];
  const size_t inner = count / (n * 3);
  for (size_t b = 0; b < n; ++b)
    for (int c = 0; c < 3; ++c)
      memcpy(outputs[0] + (b * 3 + (size_t)c) * inner, inputs[0] + (b * 3 + (size_t)p.order[c]) * inner,
             inner * sizeof(float));
}

/* The parameters, by name and kind: the SDK packs the JSON / TpuLang
 * parameters in this order and converts or refuses a value of the wrong kind
 * (a float for an int is refused unless it is a whole number). */
const char *param_types_swapchannel(void) { return "order:int[]"; }
