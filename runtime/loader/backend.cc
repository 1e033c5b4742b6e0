// backend.cc: libbackend_custom.so, the static code-generation path.
//
// The backend_api_<op>_* wrappers run on the process's emulator as the
// compiler runs them during code generation: element 0 of the parameters
// carries the scratch buffer (int64 global address for a global layer, int
// local offset for a local one, 0 for the bfsz queries), and a command-id
// node of ours (zeroed) is passed as pid_node.
#include <cstring>

#include "common.h"
#include "loader/loader_internal.h"
#include "tpu_custom_abi.h"
#include "tpu_runtime/custom_libraries.h"

namespace tpu_runtime {
namespace {

using GlobalFn = int (*)(const void *param, int param_size, const tensor_spec_t *inputs, tensor_spec_t *outputs,
                         void *pid_node);
using LocalFn = int (*)(const void *param, int param_size, local_sec_info_t *sec_info, const tensor_spec_t *inputs,
                        tensor_spec_t *outputs, void *pid_node);
using LocalBfszFn = int (*)(const void *param, int param_size, local_sec_info_t *sec_info, tensor_spec_t *inputs,
                            tensor_spec_t *outputs);
using GlobalBfszFn = int64_t (*)(void *param, int param_size, void *inputs, void *outputs);

std::string global_symbol(const std::string &op) { return "backend_api_" + op + "_global"; }
std::string local_symbol(const std::string &op) { return "backend_api_" + op + "_local"; }
std::string global_bfsz_symbol(const std::string &op) { return "backend_api_" + op + "_global_bfsz"; }
std::string local_bfsz_symbol(const std::string &op) { return "backend_api_" + op + "_local_bfsz"; }

// The calls made inside cmodel_run (see loader::run_on_cmodel).
struct GlobalCall {
  GlobalFn fn;
  const void *param;
  int param_size;
  const tensor_spec_t *inputs;
  tensor_spec_t *outputs;
  void *node;
  int status;
  static void invoke(const void *arg) {
    auto *c = static_cast<GlobalCall *>(const_cast<void *>(arg));
    // Every core of a multi-core run returns here: a core's failure stays.
    if (const int status = c->fn(c->param, c->param_size, c->inputs, c->outputs, c->node); status != 0)
      c->status = status;
  }
};

struct LocalCall {
  LocalFn fn;
  const void *param;
  int param_size;
  local_sec_info_t *sec_info;
  const tensor_spec_t *inputs;
  tensor_spec_t *outputs;
  void *node;
  int status;
  static void invoke(const void *arg) {
    auto *c = static_cast<LocalCall *>(const_cast<void *>(arg));
    c->status = c->fn(c->param, c->param_size, c->sec_info, c->inputs, c->outputs, c->node);
  }
};

struct GlobalBfszCall {
  GlobalBfszFn fn;
  void *param;
  int param_size;
  void *inputs;
  void *outputs;
  int64_t bytes;
  static void invoke(const void *arg) {
    auto *c = static_cast<GlobalBfszCall *>(const_cast<void *>(arg));
    c->bytes = c->fn(c->param, c->param_size, c->inputs, c->outputs);
  }
};

struct LocalBfszCall {
  LocalBfszFn fn;
  const void *param;
  int param_size;
  local_sec_info_t *sec_info;
  tensor_spec_t *inputs;
  tensor_spec_t *outputs;
  int bytes;
  static void invoke(const void *arg) {
    auto *c = static_cast<LocalBfszCall *>(const_cast<void *>(arg));
    c->bytes = c->fn(c->param, c->param_size, c->sec_info, c->inputs, c->outputs);
  }
};

// A global buffer freed when the call ends, also when it throws.
class ScratchBuffer {
 public:
  ScratchBuffer() = default;
  ScratchBuffer(const ScratchBuffer &) = delete;
  ScratchBuffer &operator=(const ScratchBuffer &) = delete;
  ~ScratchBuffer() {
    if (address_) cmodel_global_free(address_);
  }
  void allocate(const SharedLibrary &lib, const std::string &op, int64_t bytes) {
    address_ = cmodel_global_alloc(uint64_t(bytes));
    if (!address_)
      throw Error(fmt::format("{}: cannot allocate the {}-byte scratch buffer {} asked for: {}", lib.path(), bytes,
                              global_bfsz_symbol(op), cmodel_last_error()));
  }
  uint64_t address() const { return address_; }

 private:
  uint64_t address_ = 0;
};

CMD_ID_NODE fresh_node() {
  CMD_ID_NODE node;
  std::memset(&node, 0, sizeof node);
  return node;
}

// Inputs and outputs of one op call: at least one of each, ranks in range.
void check_operands(const SharedLibrary &lib, const std::string &op, const std::vector<tensor_spec_t> &inputs,
                    const std::vector<tensor_spec_t> &outputs) {
  if (inputs.empty() || outputs.empty())
    throw Error(fmt::format("{}: op '{}' called with {} inputs and {} outputs; a custom op takes at least one of "
                            "each",
                            lib.path(), op, inputs.size(), outputs.size()));
  loader::check_specs(lib, op, "input", inputs);
  loader::check_specs(lib, op, "output", outputs);
}

void require_op(const SharedLibrary &lib, const std::string &op) {
  const std::vector<std::string> ops = loader::read_name_list(lib, "tpu_custom_registered_ops");
  if (!loader::contains(ops, op))
    throw Error(fmt::format("{}: no custom op named '{}' (registered: {}){}", lib.path(), op, loader::join_names(ops),
                            unknown_op_hint(op, ops)));
}

void require_local_op(const SharedLibrary &lib, const std::string &op) {
  require_op(lib, op);
  const std::vector<std::string> ops = loader::read_name_list(lib, "tpu_custom_registered_local_ops");
  if (!loader::contains(ops, op))
    throw Error(fmt::format("{}: op '{}' has no local layer: it is not registered with register_custom_local_op "
                            "(registered local ops: {})",
                            lib.path(), op, loader::join_names(ops)));
}

}  // namespace

Backend Backend::none() {
  Backend backend;
  backend.lib_ = loader::no_library("libbackend_custom.so");
  return backend;
}

Backend Backend::open(const std::string &path) {
  Backend backend;
  backend.lib_ = loader::open_library(path, "libbackend_custom.so", false);
  const SharedLibrary &lib = *backend.lib_;
  loader::check_api_level(lib);
  if (lib.find("tpu_custom_firmware_chip"))
    throw Error(fmt::format("{}: this is a firmware library (libcmodel_custom_<chip>.so), not libbackend_custom.so; "
                            "open it as Firmware",
                            lib.path()));
  // RTLD_NOW already refused unresolved references; this catches a library
  // whose tables and wrappers disagree.
  for (const std::string &op : backend.registered_ops())
    lib.require(global_symbol(op), fmt::format("the global layer of registered op '{}'", op));
  for (const std::string &op : backend.registered_local_ops())
    lib.require(local_symbol(op), fmt::format("the local layer of registered local op '{}'", op));
  return backend;
}






bool Backend::has_local(const std::string &op) const {
  return loader::contains(registered_local_ops(), op) && lib_->find(local_symbol(op));
}

int64_t Backend::global_buffer_size(const std::string &op, const PackedParams &params,
                                    std::vector<tensor_spec_t> inputs, std::vector<tensor_spec_t> outputs) const {
  require_op(*lib_, op);
  check_operands(*lib_, op, inputs, outputs);
  const std::string symbol = global_bfsz_symbol(op);
  auto fn = lib_->find_function<GlobalBfszFn>(symbol);
  if (!fn) return 0;
  PackedParams query = params;
  query.clear_reserved();  // the compiler asks before any buffer exists
  GlobalBfszCall call{fn, query.data(), query.size_bytes(), inputs.data(), outputs.data(), 0};
  loader::run_on_cmodel(*lib_, symbol, call);
  if (call.bytes < 0) throw Error(fmt::format("{}: {} returned {} bytes", path(), symbol, call.bytes));
  return call.bytes;
}

void Backend::run_global(const std::string &op, const PackedParams &params, const std::vector<tensor_spec_t> &inputs,
                         std::vector<tensor_spec_t> &outputs, int cores) const {
  const int64_t bytes = global_buffer_size(op, params, inputs, outputs);
  ScratchBuffer scratch;
  if (bytes > 0) scratch.allocate(*lib_, op, bytes);
  PackedParams call_params = params;
  call_params.set_global_buffer(scratch.address());  // 0 without a buffer, as the compiler writes
  run_global_planned(op, call_params, inputs, outputs, cores);
}

void Backend::run_global_planned(const std::string &op, const PackedParams &params,
                                 const std::vector<tensor_spec_t> &inputs, std::vector<tensor_spec_t> &outputs,
                                 int cores) const {
  require_op(*lib_, op);
  check_operands(*lib_, op, inputs, outputs);
  const std::string symbol = global_symbol(op);
  auto fn = lib_->require_function<GlobalFn>(symbol, fmt::format("the global layer of op '{}'", op));
  CMD_ID_NODE node = fresh_node();
  GlobalCall call{fn, params.data(), params.size_bytes(), inputs.data(), outputs.data(), &node, 0};
  loader::run_on_cmodel(*lib_, symbol, call, cores);
  if (call.status != 0) throw Error(fmt::format("{}: {} returned {}", path(), symbol, call.status));
}

int Backend::local_buffer_size(const std::string &op, const PackedParams &params, local_sec_info_t sec_info,
                               std::vector<tensor_spec_t> inputs, std::vector<tensor_spec_t> outputs) const {
  require_local_op(*lib_, op);
  check_operands(*lib_, op, inputs, outputs);
  const std::string symbol = local_bfsz_symbol(op);
  auto fn = lib_->find_function<LocalBfszFn>(symbol);
  if (!fn) return 0;
  PackedParams query = params;
  query.clear_reserved();
  LocalBfszCall call{fn, query.data(), query.size_bytes(), &sec_info, inputs.data(), outputs.data(), 0};
  loader::run_on_cmodel(*lib_, symbol, call);
  if (call.bytes < 0) throw Error(fmt::format("{}: {} returned {} bytes", path(), symbol, call.bytes));
  return call.bytes;
}

void Backend::run_local(const std::string &op, const PackedParams &params, int local_buffer,
                        local_sec_info_t sec_info, const std::vector<tensor_spec_t> &inputs,
                        std::vector<tensor_spec_t> &outputs) const {
  require_local_op(*lib_, op);
  check_operands(*lib_, op, inputs, outputs);
  const std::string symbol = local_symbol(op);
  auto fn = lib_->require_function<LocalFn>(symbol, fmt::format("the local layer of op '{}'", op));
  PackedParams call_params = params;
  call_params.set_local_buffer(local_buffer);
  CMD_ID_NODE node = fresh_node();
  LocalCall call{fn, call_params.data(), call_params.size_bytes(), &sec_info, inputs.data(), outputs.data(), &node, 0};
  const loader::LocalEntryScope local_entry;
  loader::run_on_cmodel(*lib_, symbol, call);
  if (call.status != 0) throw Error(fmt::format("{}: {} returned {}", path(), symbol, call.status));
}

}  // namespace tpu_runtime
