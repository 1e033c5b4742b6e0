// cpu_layer.h: the base class of an AP op (a custom op that runs on the host
// CPU), the parameter element type and the factory entry the compiler side
// calls. Written for this SDK; the names, member order, virtual-method order
// and data layout are the vendor's interface (both the compiler side and the
// runtime call into the op's library through them), so vendor AP sources
// and libraries built from them work with this SDK.
//
// An op derives from bmcpu::cpu_layer and overrides get_param (parse the
// packed parameters), shepe_infer (sic: output shapes from input shapes) and
// forward (compute). How the SDK calls them:
//   compile time  createLayerInstance("TOPK") -> shepe_infer, then
//                 mlir_inference for the reference (runtime/host, ap_plugin.cc)
//   run time      customcpu_process (ap_src/cpu.cpp): set_common_param,
//                 get_param, forward
#ifndef TPU_SDK_CPU_LAYER_H
#define TPU_SDK_CPU_LAYER_H

#include <cstddef>
#include <memory>

#include "bmcpu_macro.h"

#ifndef MAX_SHAPE_DIMS
#define MAX_SHAPE_DIMS 8
#endif

namespace bmcpu {

// One packed parameter, 64 bytes; element 0 of the array is reserved (all
// zero), element i >= 1 is the op's i-th parameter in the order written.
typedef union {
  int int_t;
  float float_t;
  int int_arr_t[16];
  float float_arr_t[16];
} custom_param_t;

inline int bmcpu_shape_count(vector<int> shape) {
  int count = 1;
  for (int dim : shape) count *= dim;
  return count;
}

class cpu_layer {
 public:
  cpu_layer() {}
  // Not virtual, as the vendor's: a virtual destructor would add vtable
  // entries and move every method below.
  ~cpu_layer() {}

  virtual int forward(void *param, int param_size) {
    (void)param;
    (void)param_size;
    cout << "cpu_layer::forward: not implemented" << endl;
    return 0;
  }
  virtual int get_param(void *param, int param_size) = 0;
  // Appends one shape per output to output_shapes (empty when called).
  virtual int shepe_infer(void *param, int param_size, const vector<vector<int>> &input_shapes,
                          vector<vector<int>> &output_shapes) {
    (void)param;
    (void)param_size;
    (void)input_shapes;
    (void)output_shapes;
    cout << "cpu_layer::shepe_infer: not implemented" << endl;
    return 0;
  }
  virtual int dtype_infer(const void *param, size_t param_size, const vector<int> &input_dtypes,
                          vector<int> &output_dtypes) {
    (void)param;
    (void)param_size;
    (void)input_dtypes;
    (void)output_dtypes;
    cout << "cpu_layer::dtype_infer: not implemented" << endl;
    return -1;
  }

  // Keeps the tensors for forward; output_shapes by address, so forward can
  // change the output shapes its caller sees.
  int set_common_param(const vector<float *> &inputs, const vector<vector<int>> &input_shapes,
                       const vector<float *> &outputs, vector<vector<int>> &output_shapes) {
    CPU_ASSERT_EQ(inputs.size(), input_shapes.size());
    CPU_ASSERT_EQ(outputs.size(), output_shapes.size());
    input_tensors_ = inputs;
    input_shapes_ = input_shapes;
    output_tensors_ = outputs;
    output_shapes_ = &output_shapes;
    return 0;
  }

  // The compiler's reference: parse, keep the tensors, compute. Always 0.
  int mlir_inference(void *param, int param_size, const vector<float *> &inputs, const vector<float *> &outputs,
                     const vector<vector<int>> &input_shapes, vector<vector<int>> &output_shapes) {
    get_param(param, param_size);
    set_common_param(inputs, input_shapes, outputs, output_shapes);
    forward(param, param_size);
    return 0;
  }

 protected:
  vector<float *> input_tensors_;
  vector<vector<int>> input_shapes_;
  vector<float *> output_tensors_;
  vector<vector<int>> *output_shapes_ = nullptr;
  void *layer_param_ = nullptr;  // unused, kept for the layout
};

}  // namespace bmcpu

#define bmap bmcpu
#define ap_layer cpu_layer

// In ap_src/ap_layer.cpp: a new layer for an upper-case op name ("TOPK"),
// nullptr when the project has no such op.
extern "C" bmcpu::cpu_layer *createLayerInstance(const char *name);

#endif  // TPU_SDK_CPU_LAYER_H
