// bmcpu.h: the C entry points of an AP op run-time library
// (libcustomapop.so / libcustomcpuop.so), with the vendor's names and
// signatures; ap_src/cpu.cpp defines the three the runtime calls.
// Written for this SDK.
//
//   bmcpu_init         once per library: a handle holding one layer per op type
//   customcpu_process  runs one op (op_type from customap_common.h); 0 = success
//   bmcpu_uninit       frees the handle
#ifndef TPU_SDK_BMCPU_H
#define TPU_SDK_BMCPU_H

#include <cstddef>
#include <vector>

extern "C" {

void *bmcpu_init();
void bmcpu_uninit(void *bmcpu_handle);
int customcpu_process(void *bmcpu_handle, int op_type, void *param, int param_size,
                      const std::vector<float *> &input_tensors, const std::vector<std::vector<int>> &input_shapes,
                      const std::vector<float *> &output_tensors, std::vector<std::vector<int>> &output_shapes);

// The stock CPU library's entry (op types below 10000); custom libraries do
// not define it, and neither do bmcpu_reshape and bmcpu_dtype, which no
// caller uses for custom ops.
int bmcpu_process(void *bmcpu_handle, int op_type, void *param, int param_size,
                  const std::vector<float *> &input_tensors, const std::vector<std::vector<int>> &input_shapes,
                  const std::vector<float *> &output_tensors, std::vector<std::vector<int>> &output_shapes);
int bmcpu_reshape(void *bmcpu_handle, int op_type, void *param, int param_size,
                  const std::vector<std::vector<int>> &input_shapes, std::vector<std::vector<int>> &output_shapes);
int bmcpu_dtype(void *bmcpu_handle, int op_type, const void *param, size_t param_size,
                const std::vector<int> &input_dtypes, std::vector<int> &output_dtypes);
}

#endif  // TPU_SDK_BMCPU_H
