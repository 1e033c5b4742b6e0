// cpu.cpp: the run-time entry points of this project's AP ops (bmcpu.h):
// one layer per op type of customap_common.h, made when the library is
// initialised, and customcpu_process dispatching a call to it.
#include "bmcpu.h"

#include <memory>

#include "cpu_layer.h"
#include "cpu_layer_factory.h"
#include "customap_common.h"

namespace {

struct ApHandle {
  map<int, std::shared_ptr<bmcpu::cpu_layer>> layers;
};

}  // namespace

extern "C" {

// Every op type must be registered (REGISTER_APLAYER_CLASS): createlayer
// ends the process for one that is not, as the vendor's does.
void *bmcpu_init() {
  ApHandle *handle = new ApHandle();
  for (int type = AP_CUSTOM; type < AP_CUSTOM_LAYER_NUM; ++type)
    handle->layers[type] = bmcpu::CpuLayerRegistry::createlayer(type);
  return handle;
}

void bmcpu_uninit(void *bmcpu_handle) { delete static_cast<ApHandle *>(bmcpu_handle); }

// Parameters are parsed after the tensors are set, as the vendor's runtime
// does (the compiler side parses first).
int customcpu_process(void *bmcpu_handle, int op_type, void *param, int param_size,
                      const vector<float *> &input_tensors, const vector<vector<int>> &input_shapes,
                      const vector<float *> &output_tensors, vector<vector<int>> &output_shapes) {
  ApHandle *handle = static_cast<ApHandle *>(bmcpu_handle);
  auto it = handle ? handle->layers.find(op_type) : map<int, std::shared_ptr<bmcpu::cpu_layer>>::iterator();
  if (!handle || it == handle->layers.end()) {
    std::cerr << "customcpu_process: no AP op of type " << op_type << endl;
    return -1;
  }
  bmcpu::cpu_layer &layer = *it->second;
  layer.set_common_param(input_tensors, input_shapes, output_tensors, output_shapes);
  layer.get_param(param, param_size);
  return layer.forward(param, param_size);
}

}  // extern "C"
