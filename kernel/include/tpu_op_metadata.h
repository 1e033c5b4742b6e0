/*
 * tpu_op_metadata.h: facts a custom op may declare about itself, through an
 * optional plugin hook the SDK looks up like the others:
 *
 *   #include "tpu_op_metadata.h"
 *   void metadata_<op>(void *param, int param_size, int num_inputs,
 *                      tpu_op_metadata_t *metadata);
 *
 * The SDK zeroes *metadata before the call, so a hook sets only what it
 * declares; an op without the hook is treated exactly as before the hook
 * existed. The answer may depend on the parameters and on the number of
 * inputs of the layer. The SDK refuses an answer that cannot hold (more
 * in-place inputs than inputs, an input index out of range or given twice,
 * an alignment that is not a power of two, ...) with a message naming the
 * op, the field and the value.
 *
 * What each field does, and which ones the model builder acts on today, is
 * in docs/custom-layer-build.md ("Op metadata").
 *
 * This header is C11 and C++ compatible.
 */
#ifndef TPU_SDK_TPU_OP_METADATA_H
#define TPU_SDK_TPU_OP_METADATA_H

#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

/* At most this many entries in input_layouts. */
#define TPU_OP_METADATA_MAX_LAYOUTS 8

/* The global layout an op wants for one of its inputs. */
typedef struct {
  int input;              /* index of the input, 0..num_inputs-1 */
  int alignment;          /* bytes the address is a multiple of: 0 (none) or a power of two up to 4096 */
  int innermost_multiple; /* the innermost dimension is padded to a multiple of this many
                             elements: 0 (none) or 1..65536 */
} tpu_op_input_layout_t;

typedef struct {
  /* The first num_inplace_inputs inputs are updated in place: output i is
   * input i. 0..num_inputs. */
  int num_inplace_inputs;
  /* Every output has input 0's shape (and its dtype unless the layer's out
   * dtypes say otherwise), every input has input 0's shape, and each output
   * element depends only on the input elements at the same index. */
  bool is_elementwise;
  /* The outputs depend only on the inputs and parameters: no state is kept
   * between runs. Default false (stateful), as the safe assumption. */
  bool is_stateless;
  /* Inputs whose global layout the op chooses: entries 0..num_input_layouts-1. */
  int num_input_layouts;
  tpu_op_input_layout_t input_layouts[TPU_OP_METADATA_MAX_LAYOUTS];
  /* The global kernel splits its work across the cores of a multi-core
   * launch by tpu_core_index() / tpu_core_num() (and synchronises them as
   * it needs), giving the outputs of one core bit for bit on any number of
   * cores. The op tester then runs it on 1 and on N cores and requires
   * identical outputs; a model runs its layers on every core of the chip.
   * Default false: the op runs on one core. Last in the struct, so a hook
   * compiled before the field existed leaves it zero. */
  bool is_multi_core;
} tpu_op_metadata_t;

/* The row pitch, in elements, of an input whose layout asks for
 * innermost_multiple: the innermost extent rounded up to a multiple of it
 * (the extent itself for 0 or 1). The input's tensor spec keeps its
 * logical shape; its rows lie this many elements apart. */
static inline int tpu_op_padded_extent(int extent, int innermost_multiple) {
  if (innermost_multiple <= 1) return extent;
  return (extent + innermost_multiple - 1) / innermost_multiple * innermost_multiple;
}

#ifdef __cplusplus
}
#endif

#endif /* TPU_SDK_TPU_OP_METADATA_H */
