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
// (and the bfsz queries, which may call tpu_* functions too) call
// cmodel_run, so a kernel error becomes an Error carrying the emulator's
// message (API, values, rule, call site), never a crash; the emulator stays
// usable afterwards. Each call replaces cmodel_last_run_stats(); run_global
// and run_local leave the statistics of the op's own run.
//
// An empty path (what default_library_paths() gives when TPUC_ROOT is
// unset) is refused with an Error saying which variable is missing.
//
// Backend and Firmware op calls need at least one input and one output
// spec, each with dims in 0..MAX_SHAPE_DIMS (the C side would read out of
// bounds otherwise); path() is the path as given to open().
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "api_common.h"
#include "tpu_runtime/dtype.h"
#include "tpu_runtime/gradients.h"
#include "tpu_runtime/onnx_op.h"
#include "tpu_runtime/op_metadata.h"
#include "tpu_runtime/params.h"

namespace tpu_runtime {

// A loaded shared object; closes it when the last owner goes.
class SharedLibrary;

// The build identity TpuCustomLayer.cmake puts into each library
// (tpu_custom_abi.h): a hash of the op project's registry, sources and
// headers, and where and when they were built. Empty for a library that
// carries none (a plugin built outside this SDK's flow).
struct BuildIdentity {
  std::string id;
  std::string info;
};

// What the three libraries share: the loaded object, its path as given to
// open() and the build identity it carries.
class CustomLibrary {
 public:
  const std::string &path() const;
  BuildIdentity build_identity() const;

 protected:
  std::shared_ptr<SharedLibrary> lib_;  // set by each library's open()
};

// The two libraries that hold kernels (backend, firmware) list the ops
// their build registered.
class KernelLibrary : public CustomLibrary {
 public:
  std::vector<std::string> registered_ops() const;        // register_custom_op
  std::vector<std::string> registered_local_ops() const;  // register_custom_local_op
  // register_custom_grad declarations (gradients.h), in registry order;
  // empty for libraries of older builds. A malformed entry throws Error.
  std::vector<GradientDeclaration> gradients() const;
  // The declaration whose forward op is `op`, or nothing.
  std::optional<GradientDeclaration> gradient_of(const std::string &op) const;
};

// Every hook receives a copy of the parameters with element 0 zeroed (the
// compiler's plugin calls) and their byte size.
class Plugin : public CustomLibrary {
 public:
  static Plugin open(const std::string &path);
  // No plugin: every optional hook is absent (its default applies), every
  // required one throws saying no library was given. For a model of
  // built-in layers only, which needs no custom-layer library.
  static Plugin none();

  // inference_<op>: fp32 host buffers, one per input / output, outputs sized
  // by the caller from the inferred shapes. Required: throws when absent.
  void inference(const std::string &op, const PackedParams &params, const std::vector<Shape> &input_shapes,
                 const std::vector<const float *> &inputs, const std::vector<float *> &outputs) const;
  // metadata_<op> (tpu_op_metadata.h) for a layer of `num_inputs` inputs,
  // checked (check_op_metadata); absent: declared = false, every field at
  // its default. A negative num_inputs skips the checks that need it.
  OpMetadata metadata(const std::string &op, const PackedParams &params, int num_inputs) const;
  // shape_inference_<op>; absent: output 0 gets input 0's shape and any
  // other output is left empty (the vendor default), which is an Error when
  // num_outputs > 1, since nobody would define those shapes. A hook that
  // reports dims outside 0..MAX_SHAPE_DIMS is an Error.
  // An element-wise op (metadata) needs no hook: every output gets input
  // 0's shape; its inputs must all have input 0's shape, and a hook it has
  // anyway must agree, or the call throws naming the op and the shapes.
  std::vector<Shape> shape_inference(const std::string &op, const PackedParams &params,
                                     const std::vector<Shape> &input_shapes, int num_outputs) const;
  bool force_dynamic_run(const std::string &op, const PackedParams &params) const;  // absent: false
  // absent: false, or true for an element-wise op (metadata), which can run
  // on any slice without further hooks.
  bool local_gen_support(const std::string &op, const PackedParams &params) const;
  // axis: the dimension index the layer group wants to split.
  bool allow_data_split(const std::string &op, const PackedParams &params, int axis,
                        group_type_t group_type) const;  // absent: true
  // The input slice [in_idx, in_idx + in_slice) that output slice
  // [out_idx, out_idx + out_slice) needs; false when the op refuses the split.
  // Looks up backward_h_<op>, then backwardh_<op> (the documented spelling);
  // absent: identity and true. A present hook starts from in_idx = in_slice
  // = -1, as the compiler pre-fills them. Same for w. An element-wise op's
  // hook, if it has one, must answer the identity (else Error).
  bool backward_h(const std::string &op, const PackedParams &params, int out_idx, int out_slice, int *in_idx,
                  int *in_slice) const;
  bool backward_w(const std::string &op, const PackedParams &params, int out_idx, int out_slice, int *in_idx,
                  int *in_slice) const;
  bool has_symbol(const std::string &name) const;
  // The op's declared parameter types (`const char *param_types_<op>(void)`,
  // tpu_runtime/params.h), or nothing when it declares none.
  std::optional<ParamTypes> param_types(const std::string &op) const;
  // The op's ONNX identity and definition (`const tpu_onnx_op_t
  // *onnx_op_<op>(void)`, tpu_onnx_op.h), checked
  // (check_onnx_op_definition), or nothing when it declares none.
  std::optional<OnnxOpDefinition> onnx_op(const std::string &op) const;
  // `params` packed by the op's declared types when it declares them
  // (conversions reported in `warnings`), else by the JSON kinds.
  PackedParams pack_params(const std::string &op, const nlohmann::ordered_json &params,
                           std::vector<std::string> &warnings) const;
};

// Refuses at open a library without this SDK's API level, a firmware
// library, and a registered op without its backend_api_<op>_global (or a
// registered local op without _local). Ops not registered are refused by
// every call with the list of registered ones.
class Backend : public KernelLibrary {
 public:
  static Backend open(const std::string &path);
  // No backend: no op is registered (see Plugin::none()).
  static Backend none();
  bool has_local(const std::string &op) const;

  // Bytes of global scratch backend_api_<op>_global_bfsz asks for (called
  // with element 0 zeroed; 0 without the symbol). Throws when negative.
  int64_t global_buffer_size(const std::string &op, const PackedParams &params, std::vector<tensor_spec_t> inputs,
                             std::vector<tensor_spec_t> outputs) const;
  // Global layer: asks backend_api_<op>_global_bfsz (when present) for a
  // scratch buffer, allocates it in global memory and passes its address in
  // element 0 (element 0 is 0 when no buffer is needed, whatever params
  // held), runs backend_api_<op>_global on the open emulator, frees the
  // buffer, also when the kernel fails. Throws for an unknown op (listing
  // the registered ones) or when the kernel fails.
  // `cores` > 1 runs it on that many cores at once (cmodel_run_cores; at
  // most cmodel_core_count()), for an op that declares itself multi-core.
  void run_global(const std::string &op, const PackedParams &params, const std::vector<tensor_spec_t> &inputs,
                  std::vector<tensor_spec_t> &outputs, int cores = 1) const;
  // The same with the scratch buffer already planned by the caller: element
  // 0 of `params` is passed as it is (a model's static layer, whose buffer
  // is part of the model's memory plan). No global memory is allocated.
  void run_global_planned(const std::string &op, const PackedParams &params, const std::vector<tensor_spec_t> &inputs,
                          std::vector<tensor_spec_t> &outputs, int cores = 1) const;
  // Bytes per NPU of local scratch this slice needs (0 without _local_bfsz;
  // called with element 0 zeroed). Throws for an op that is not a local op.
  int local_buffer_size(const std::string &op, const PackedParams &params, local_sec_info_t sec_info,
                        std::vector<tensor_spec_t> inputs, std::vector<tensor_spec_t> outputs) const;
  // One local step: the caller has placed the slices in local memory (the
  // specs' addr are local offsets) and passes the buffer's local offset,
  // which becomes element 0's int_t (the rest of element 0 is zeroed).
  void run_local(const std::string &op, const PackedParams &params, int local_buffer, local_sec_info_t sec_info,
                 const std::vector<tensor_spec_t> &inputs, std::vector<tensor_spec_t> &outputs) const;
};

// The parameters go to the entries as given, element 0 included (in a model
// it is the record's reserved element: the caller sets the buffer address
// or offset with PackedParams::set_global_buffer / set_local_buffer).
class Firmware : public KernelLibrary {
 public:
  // Refuses an unknown chip, a library built for another chip than `chip`
  // or without this SDK's API level, and a library missing an entry.
  static Firmware open(const std::string &path, const std::string &chip);
  // No firmware for `chip`: no op is registered (see Plugin::none()).
  static Firmware none(const std::string &chip);
  const std::string &chip() const;

  // The entry functions, each run on the open emulator, which must be the
  // firmware's chip; a non-zero status (an unknown op: the message lists the
  // registered ones) or a kernel failure throws with the message.
  // slice_infer writes one tensor_slice_t per element of output_slices (an
  // empty vector is given one element first).
  void shape_infer(const std::string &op, const PackedParams &params, const std::vector<tensor_spec_t> &inputs,
                   std::vector<tensor_spec_t> &outputs) const;
  // run_global with `cores` > 1 runs the global entry on that many cores at
  // once (cmodel_run_cores), as Backend::run_global does.
  void run_global(const std::string &op, const PackedParams &params, const std::vector<tensor_spec_t> &inputs,
                  std::vector<tensor_spec_t> &outputs, int cores = 1) const;
  void slice_infer(const std::string &op, const PackedParams &params, const local_sec_info_t &sec_info,
                   const std::vector<tensor_spec_t> &inputs, std::vector<tensor_slice_t> &output_slices) const;
  void run_local(const std::string &op, const PackedParams &params, const local_sec_info_t &sec_info,
                 const std::vector<tensor_spec_t> &inputs, std::vector<tensor_spec_t> &outputs) const;

 private:
  std::string chip_;
};

// Refuses libraries that come from different builds of the op project (a
// failed rebuild that left an old library beside new ones, a library copied
// from elsewhere): the identities of the given libraries must agree, and the
// Error names two that differ with their builds. A backend or firmware
// without an identity (built by an earlier SDK) beside one with an identity
// is refused too; a plugin without one is accepted. Null pointers are
// skipped.
void check_same_build(const Plugin *plugin, const Backend *backend, const Firmware *firmware);

// What to add to an "unknown op" error about `op`: the registered names
// closest to it by edit distance, ignoring case ("; did you mean
// 'absadd'?"). Empty when there is nothing to add.
std::string unknown_op_hint(const std::string &op, const std::vector<std::string> &registered);

// Levenshtein distance between `a` and `b` (insertions, deletions and
// substitutions cost 1), letters compared without case.
std::size_t edit_distance(const std::string &a, const std::string &b);

}  // namespace tpu_runtime
