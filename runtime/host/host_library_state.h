// host_library_state.h (private): what an opened host library holds.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "loader/shared_library.h"
#include "tpu_runtime/host_op.h"

namespace tpu_runtime {

// The vendor's entry points (bmcpu.h) and the Graphcore callback.
using BmcpuInitFn = void *(*)();
using BmcpuUninitFn = void (*)(void *);
using CustomcpuProcessFn = int (*)(void *handle, int op_type, void *param, int param_size,
                                   const std::vector<float *> &inputs, const std::vector<std::vector<int>> &input_shapes,
                                   const std::vector<float *> &outputs, std::vector<std::vector<int>> &output_shapes);
using ApOpTypeFn = int (*)(const char *upper_name);
using CallbackFn = void (*)(const std::vector<void *> &data, const std::vector<std::uint32_t> &number_of_elements,
                            std::vector<void *> &outputs, const std::string &name);

struct HostOpLibrary::State {
  std::string path;
  std::string shown;  // the path as messages show it
  HostOpKind kind = HostOpKind::vendor_ap;
  std::shared_ptr<SharedLibrary> lib;
  // vendor_ap
  void *handle = nullptr;
  BmcpuUninitFn uninit = nullptr;
  CustomcpuProcessFn process = nullptr;
  ApOpTypeFn op_type = nullptr;
  int unknown_type = -1;  // AP_CUSTOM_LAYER_UNKNOW of the library's table
  // callback
  CallbackFn callback = nullptr;
  // The vendor keeps one layer object per op type: calls take turns.
  std::mutex mutex;
};

}  // namespace tpu_runtime
