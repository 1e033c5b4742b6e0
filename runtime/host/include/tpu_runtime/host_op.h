// host_op.h: operators that run on the host CPU between TPU layers (room
// runtime/host: host libraries opened and checked, host ops called with their
// faults caught and their time measured, and the compile-time side of the
// vendor's AP ops).
//
// Two kinds of host library:
//
//   vendor_ap  the vendor's AP-op run-time library (libcustomapop.so /
//              libcustomcpuop.so) built from a customlayer directory's
//              ap_src/ by envsetup.sh's rebuild_custom_apop_x86. It exports
//              bmcpu_init, bmcpu_uninit and customcpu_process (the vendor's
//              names and signatures), and two symbols our build adds:
//              tpu_sdk_ap_op_type (the op name -> op_type of the user's own
//              customap_common.h table; the vendor's compiler writes op_type
//              into the model, we only have the name) and
//              tpu_sdk_ap_api_level (kApApiLevel). A library without them
//              (built by the vendor's own scripts) is refused, naming the fix.
//   callback   a shared object exporting the Graphcore-style
//                extern "C" void Callback(const std::vector<void*>& data,
//                                         const std::vector<std::uint32_t>& number_of_elements,
//                                         std::vector<void*>& outputs, const std::string& name);
//              and optionally `int32_t custom_op_api_level`, which must then
//              equal kCallbackApiLevel.
//
// Faults. A host op runs inside the emulator's user-code trap
// (cmodel_call_user_code): a C++ exception, SIGSEGV/SIGBUS/SIGFPE/SIGILL,
// abort(), a failed assert(), and exit() (libraries linked with the SDK's
// exit wrappers, which envsetup.sh's AP build and tpu_host_op_library() do;
// CPU_ASSERT calls exit(-1)) end the call, not the process. So do a nonzero
// return code and a write past an output buffer (guard bytes behind every
// output, checked after the call), and a call that outlasts the run's time
// limit (cmodel_set_option("run_timeout"), TPU_SDK_RUN_TIMEOUT; 600 s by
// default). Each becomes a tpu_runtime::Error naming the layer (`where`),
// the op, the library and the fault.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tpu_runtime/dtype.h"

namespace tpu_runtime {

// A tensor in host memory: its bytes are shape-product x dtype-size long.
struct HostTensor {
  Dtype dtype;
  Shape shape;
  std::vector<std::uint8_t> bytes;
};

enum class HostOpKind { vendor_ap, callback };

// The level tpu_sdk_ap_api_level must carry (raised when what our build adds
// to an AP library, or how we call it, changes).
inline constexpr int kApApiLevel = 1;
// The level an optional custom_op_api_level of a callback library must
// carry: the Graphcore level whose Callback signature we implement, so the
// seed's snippet (`int32_t custom_op_api_level = 2;`) loads as written.
inline constexpr int kCallbackApiLevel = 2;

class HostOpLibrary {  // one host library, checked when opened
 public:
  // Throws tpu_runtime::Error naming the path and what is wrong: not an ELF
  // for this host's architecture, missing entry points
  // (bmcpu_init/bmcpu_uninit/customcpu_process + tpu_sdk_ap_op_type for
  // vendor_ap; Callback for callback), an API level that does not match,
  // bmcpu_init failing (it instantiates every op of the user's enum).
  static std::shared_ptr<HostOpLibrary> open(const std::string &path, HostOpKind kind);
  // The same, with messages naming `shown_as` instead of the path (a library
  // embedded in a model and loaded from /proc/self/fd/N: "model.tpum: host
  // library libcustomapop.so").
  static std::shared_ptr<HostOpLibrary> open(const std::string &path, HostOpKind kind, const std::string &shown_as);
  ~HostOpLibrary();
  HostOpLibrary(const HostOpLibrary &) = delete;
  HostOpLibrary &operator=(const HostOpLibrary &) = delete;

  const std::string &path() const;
  HostOpKind kind() const;
  // vendor_ap: the op_type the library's own table gives `op` ("ap.topk",
  // "topk" or "TOPK"); throws Error naming the op and the library when the
  // table does not know it. Throws for a callback library.
  int ap_op_type(const std::string &op) const;

  struct State;  // private to runtime/host
  State &state() const { return *state_; }

 private:
  explicit HostOpLibrary(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

struct HostOpRun {
  std::vector<HostTensor> outputs;
  double host_seconds = 0;  // the op's call alone (steady clock)
};

// Runs one host op. vendor_ap: op "ap.topk" or "topk"; params = the packed
// custom_param_t array (64 bytes x (1 + n), element 0 all zero). callback:
// op = the name passed to Callback; params unused.
// output_specs: each output's dtype and static (maximum) shape; their bytes
// are ignored. `where` names the layer in messages.
// Dynamic output shapes: a vendor op's forward may change output_shapes; a
// shape of the same rank no larger in any dimension than the static one is
// accepted (the returned tensor has that shape and only its bytes, taken
// from the start of the buffer as the op wrote them); a larger one is
// refused by name. Callback outputs keep their declared shapes.
HostOpRun run_host_op(const HostOpLibrary &lib, const std::string &op, const std::vector<std::uint8_t> &params,
                      const std::vector<HostTensor> &inputs, const std::vector<HostTensor> &output_specs,
                      const std::string &where);

// Compile-time side, through the plugin library's createLayerInstance
// (shepe_infer; mlir_inference for a reference). The plugin library is opened
// by path (and kept open for the process). The same fault handling applies.
// infer_ap_output_shapes returns every shape the op appended (top-k appends
// two, values and indices, whatever the layer uses): a layer with fewer
// outputs takes the first ones. A nonzero return, no shape at all or a
// negative dimension is an Error.
std::vector<Shape> infer_ap_output_shapes(const std::string &plugin_library, const std::string &op,
                                          const std::vector<std::uint8_t> &params, const std::vector<Shape> &inputs);
// Inputs must be fp32 (the compiler's interpreter hands float buffers);
// outputs come back in the shapes the op reports, with the dtypes its
// dtype_infer gives (fp32 when it defines none or fails; the vendor's
// compiler never calls it).
std::vector<HostTensor> ap_reference(const std::string &plugin_library, const std::string &op,
                                     const std::vector<std::uint8_t> &params, const std::vector<HostTensor> &inputs);

// Packs ordered (name, value) params as the compiler does (spec section 4):
// element 0 zero, then one 64-byte custom_param_t per param: an integer or a
// bool -> int_t, a float -> float_t, a list of integers -> int_arr_t, a list
// with any float -> float_arr_t. Accepted forms (JSON objects lose their key
// order, so the order comes from an array): [{"axis": 1}, {"K": 10}] (what
// TpuLang writes), [["axis", 1], ["K", 10]], or an object with at most one
// key. Refused, naming the param: strings, null, nested lists, empty lists or
// lists longer than 16 (the vendor writes past the element), integers outside
// int32 (the vendor truncates them silently), floats that do not fit a float.
std::vector<std::uint8_t> pack_ap_params(const nlohmann::json &params_in_order);

// "ap.topk" -> "TOPK", "topk" -> "TOPK": the name the vendor's factory and
// table are keyed by (upper case, the first "AP." removed).
std::string ap_upper_name(const std::string &op);

}  // namespace tpu_runtime
