/*
 * tpu_onnx_op.h: the ONNX identity and definition a custom op may declare,
 * through an optional plugin hook looked up like the others:
 *
 *   #include "tpu_onnx_op.h"
 *   const tpu_onnx_op_t *onnx_op_<op>(void);
 *
 * With it, an ONNX model whose node has this domain and op type (and an
 * opset version of that domain in [since_version, until_version]) imports as
 * a layer of <op>: `tpu_model build model.onnx` and tpu_sdk.build_onnx
 * (docs/onnx.md). The SDK registers an ONNX schema for the identity, so the
 * ONNX checker and shape inference accept such models; its shape inference
 * calls the op's own shape_inference_<op> hook (or, for an element-wise
 * op, gives output 0 input 0's shape).
 *
 * The definition is checked against every node: its number of inputs and
 * outputs, the element type of each input and output (one of `dtypes`), and
 * its attributes (each declared name with its type; an attribute the
 * definition does not declare is refused, as is a missing required one).
 * A refusal names the node, the field and what was expected.
 *
 * Attributes become the layer's parameters: attribute i fills the
 * custom_param_t element `param_slot` (1-based: element 0 is the SDK's, as in
 * every plugin hook), so the op's param parser reads it where it always
 * does. The slots of the attributes are 1..num_attrs, each used once. When
 * the op also declares param_types_<op> (params.h), each slot's type there
 * must agree with the attribute's type.
 *
 * An op without the hook is unchanged: it simply has no ONNX identity. The
 * returned pointer must stay valid while the plugin is loaded (a static).
 *
 * This header is C11 and C++ compatible.
 */
#ifndef TPU_SDK_TPU_ONNX_OP_H
#define TPU_SDK_TPU_ONNX_OP_H

#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

/* At most this many attributes. */
#define TPU_ONNX_MAX_ATTRS 16

/* Attribute types: the values of ONNX's AttributeProto.AttributeType. */
typedef enum {
  TPU_ONNX_ATTR_FLOAT = 1,  /* -> custom_param_t.float_t */
  TPU_ONNX_ATTR_INT = 2,    /* -> custom_param_t.int_t (must fit in 32 bits) */
  TPU_ONNX_ATTR_FLOATS = 6, /* -> custom_param_t.float_arr_t (1..16 values) */
  TPU_ONNX_ATTR_INTS = 7    /* -> custom_param_t.int_arr_t (1..16 values) */
} tpu_onnx_attr_type_t;

/* Element types a node's inputs and outputs may have (a bit mask). */
#define TPU_ONNX_FP32 (1u << 0)
#define TPU_ONNX_FP16 (1u << 1)
#define TPU_ONNX_BF16 (1u << 2)

typedef struct {
  const char *name;          /* the ONNX attribute name */
  tpu_onnx_attr_type_t type;
  int param_slot;            /* custom_param_t element, 1..num_attrs */
  bool required;             /* false: `default_value` when the node has none */
  double default_value;      /* scalar attributes only; a list attribute is required */
} tpu_onnx_attr_t;

typedef struct {
  const char *domain;   /* e.g. "com.acme"; not "" or "ai.onnx" (the standard ops' domain) */
  const char *op_type;  /* e.g. "LeakyRelu" */
  int since_version;    /* the domain's opset versions served: since..until */
  int until_version;    /* 0: no upper bound */
  int num_inputs;       /* exactly this many inputs and outputs */
  int num_outputs;
  unsigned dtypes;      /* TPU_ONNX_FP32 | ...: every input and output has one, the same */
  int num_attrs;
  tpu_onnx_attr_t attrs[TPU_ONNX_MAX_ATTRS];
} tpu_onnx_op_t;

#ifdef __cplusplus
}
#endif

#endif /* TPU_SDK_TPU_ONNX_OP_H */
