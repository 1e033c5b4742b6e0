// custom_libraries.h: the three custom-layer libraries, opened by explicit
// path and checked before use.
//
//   Plugin    libplugin_custom.so         host hooks; a missing hook gets the
//                                         vendor default (see each method)
//   Backend   libbackend_custom.so        backend_api_<op>_* over api_<op>_*
//   Firmware  libcmodel_custom_<chip>.so  tpu_*_entry dispatch by op name
//
// Opening checks what can be checked up front: the file loads (RTLD_NOW, so
// an unresolved symbol is reported at once), the generated libraries carry
// this SDK's API level (tpu_custom_abi.h), the firmware was built for the
// expected chip. Resolving an op checks its symbols and names any missing
// one together with the ops the library does register. Every failure throws
// Error with the library path in the message.
//
// Kernels run on the process's one emulator (cmodel_host.h): run_* methods
// call cmodel_run, so a kernel error becomes an Error carrying the
// emulator's message (API, values, rule, call site), never a crash.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "api_common.h"
#include "tpu_runtime/params.h"

namespace tpu_runtime {

using Shape = std::vector<int>;

// A loaded shared object; closes it when the last owner goes.
class SharedLibrary;

class Plugin {
 public:
  static Plugin open(const std::string &path);
  const std::string &path() const;

  // inference_<op>: fp32 host buffers, one per input / output, outputs sized
  // by the caller from the inferred shapes. Required: throws when absent.
  void inference(const std::string &op, const PackedParams &params, const std::vector<Shape> &input_shapes,
                 const std::vector<const float *> &inputs, const std::vector<float *> &outputs) const;
  // shape_inference_<op>; absent: output 0 gets input 0's shape and any
  // other output is left empty (the vendor default), which is an Error when
  // num_outputs > 1, since nobody would define those shapes.
  std::vector<Shape> shape_inference(const std::string &op, const PackedParams &params,
                                     const std::vector<Shape> &input_shapes, int num_outputs) const;
  bool force_dynamic_run(const std::string &op, const PackedParams &params) const;  // absent: false
  bool local_gen_support(const std::string &op, const PackedParams &params) const;  // absent: false
  // axis: the dimension index the layer group wants to split.
  bool allow_data_split(const std::string &op, const PackedParams &params, int axis,
                        group_type_t group_type) const;  // absent: true
  // The input slice [in_idx, in_idx + in_slice) that output slice
  // [out_idx, out_idx + out_slice) needs; false when the op refuses the split.
  // Looks up backward_h_<op>, then backwardh_<op> (the documented spelling);
  // absent: identity. Same for w.
  bool backward_h(const std::string &op, const PackedParams &params, int out_idx, int out_slice, int *in_idx,
                  int *in_slice) const;
  bool backward_w(const std::string &op, const PackedParams &params, int out_idx, int out_slice, int *in_idx,
                  int *in_slice) const;
  bool has_symbol(const std::string &name) const;

 private:
  std::shared_ptr<SharedLibrary> lib_;
};

class Backend {
 public:
  static Backend open(const std::string &path);
  const std::string &path() const;
  std::vector<std::string> registered_ops() const;        // register_custom_op
  std::vector<std::string> registered_local_ops() const;  // register_custom_local_op
  bool has_local(const std::string &op) const;

  // Global layer: asks backend_api_<op>_global_bfsz (when present) for a
  // scratch buffer, allocates it in global memory and passes its address in
  // element 0, runs backend_api_<op>_global on the open emulator, frees the
  // buffer. Throws for an unknown op (listing the registered ones) or when
  // the kernel fails.
  void run_global(const std::string &op, const PackedParams &params, const std::vector<tensor_spec_t> &inputs,
                  std::vector<tensor_spec_t> &outputs) const;
  // Bytes per NPU of local scratch this slice needs (0 without _local_bfsz).
  int local_buffer_size(const std::string &op, const PackedParams &params, local_sec_info_t sec_info,
                        std::vector<tensor_spec_t> inputs, std::vector<tensor_spec_t> outputs) const;
  // One local step: the caller has placed the slices in local memory (the
  // specs' addr are local offsets) and passes the buffer's local offset.
  void run_local(const std::string &op, const PackedParams &params, int local_buffer, local_sec_info_t sec_info,
                 const std::vector<tensor_spec_t> &inputs, std::vector<tensor_spec_t> &outputs) const;

 private:
  std::shared_ptr<SharedLibrary> lib_;
};

class Firmware {
 public:
  // Refuses a library built for another chip than `chip`.
  static Firmware open(const std::string &path, const std::string &chip);
  const std::string &path() const;
  const std::string &chip() const;
  std::vector<std::string> registered_ops() const;
  std::vector<std::string> registered_local_ops() const;

  // The entry functions, each run on the open emulator; a non-zero status
  // (an unknown op) or a kernel failure throws with the message.
  void shape_infer(const std::string &op, const PackedParams &params, const std::vector<tensor_spec_t> &inputs,
                   std::vector<tensor_spec_t> &outputs) const;
  void run_global(const std::string &op, const PackedParams &params, const std::vector<tensor_spec_t> &inputs,
                  std::vector<tensor_spec_t> &outputs) const;
  void slice_infer(const std::string &op, const PackedParams &params, const local_sec_info_t &sec_info,
                   const std::vector<tensor_spec_t> &inputs, std::vector<tensor_slice_t> &output_slices) const;
  void run_local(const std::string &op, const PackedParams &params, const local_sec_info_t &sec_info,
                 const std::vector<tensor_spec_t> &inputs, std::vector<tensor_spec_t> &outputs) const;

 private:
  std::shared_ptr<SharedLibrary> lib_;
  std::string chip_;
};

}  // namespace tpu_runtime
