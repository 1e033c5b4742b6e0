// model_update.cc: the embedded kernel module: inspect a library, replace
// the module of a model file (tpu_model kernel_update), write it out
// (tpu_model kernel_dump).
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "io/atomic_file.h"
#include "loader/elf_check.h"
#include "io/file_names.h"
#include "loader/loader_internal.h"
#include "emulator/emulator.h"
#include "io/arrays.h"
#include "loader/shared_library.h"
#include "tpu_custom_abi.h"
#include "tpu_runtime/error.h"
#include "tpu_runtime/model.h"
#include "io/update_lock.h"
#include "model/host_layers.h"

namespace tpu_runtime {
namespace {

std::string list(const std::vector<std::string> &names) {
  return names.empty() ? std::string("none") : fmt::format("{}", fmt::join(names, ", "));
}

// Each applied update appends {file_name, sha256, replaced_sha256} to the
// model's "kernel_module_history": where its module came from, and a chain
// in which each entry replaces the one before (a lost update would break it).
void note_in_history(ModelFile &model, const KernelModuleInfo &m, const std::string &replaced_sha256) {
  auto &history = model.metadata["kernel_module_history"];
  if (!history.is_array()) history = decltype(model.metadata)::array();
  history.push_back({{"file_name", m.file_name}, {"sha256", m.sha256}, {"replaced_sha256", replaced_sha256}});
}

}  // namespace

KernelModuleInfo inspect_kernel_library(const std::string &path, std::vector<uint8_t> *bytes_out) {
  std::vector<uint8_t> bytes = read_file(path);
  check_elf_shared_object(bytes, path);
  KernelModuleInfo info;
  info.file_name = std::filesystem::path(path).filename().string();
  if (!detail::is_plain_file_name(info.file_name))
    throw Error(fmt::format("{}: the file name '{}' would be stored in the model and written back by kernel_dump; it "
                            "must be a plain file name (no '\\', NUL, '.' or '..')",
                            path, info.file_name));
  const SharedLibrary lib(path);  // dlopen: throws with the loader's reason
  info.size = bytes.size();
  info.sha256 = sha256_hex(bytes);
  const auto *chip = static_cast<const char *>(lib.find("tpu_custom_firmware_chip"));
  if (!chip)
    throw Error(fmt::format("{}: not a firmware library: no tpu_custom_firmware_chip symbol (a kernel module is "
                            "libcmodel_custom_<chip>.so, built by TpuCustomLayer.cmake in cmodel mode)",
                            path));
  info.chip.assign(chip, strnlen(chip, 64));
  const auto *level = static_cast<const int *>(lib.find("tpu_custom_api_level"));
  if (!level)
    throw Error(fmt::format("{}: no tpu_custom_api_level symbol: not built by this SDK's TpuCustomLayer.cmake", path));
  info.api_level = *level;
  info.ops = loader::read_name_list(lib, "tpu_custom_registered_ops");
  info.local_ops = loader::read_name_list(lib, "tpu_custom_registered_local_ops");
  for (const char *entry :
       {"tpu_shape_infer_entry", "tpu_global_calculate_entry", "tpu_slice_infer_entry", "tpu_local_calculate_entry"})
    lib.require(entry, "a firmware entry function the generated entry.c defines");
  if (bytes_out) *bytes_out = std::move(bytes);
  return info;
}

namespace {

// The file is replaced by rename, which a read-only file would not stop:
// an update of a read-only model is refused here instead.
void refuse_read_only(const std::string &model_path, const std::string &unchanged) {
  struct stat st {};
  if (::access(model_path.c_str(), W_OK) != 0 ||
      (::stat(model_path.c_str(), &st) == 0 && (st.st_mode & (S_IWUSR | S_IWGRP | S_IWOTH)) == 0))
    throw Error(fmt::format("{}: the model file is read-only (make it writable to update it); {}", model_path,
                            unchanged));
}

}  // namespace

KernelUpdateResult update_kernel_module(const std::string &model_path, const std::string &library) {
  const std::string unchanged = fmt::format("{} was not changed", model_path);
  // Held from the read to the rename: a concurrent update waits, then reads
  // this one's result (update_lock.h).
  const detail::UpdateLock lock(model_path);
  ModelFile model = read_model_file(lock.path());
  refuse_read_only(model_path, unchanged);
  const ModelDescription d = describe_model(model, model_path);
  KernelUpdateResult result;
  std::vector<uint8_t> bytes;
  try {
    result.new_module = inspect_kernel_library(library, &bytes);
  } catch (const Error &e) {
    throw Error(fmt::format("{}; {}", e.what(), unchanged));
  }
  KernelModuleInfo &m = result.new_module;
  if (m.chip != d.chip)
    throw Error(fmt::format("{}: built for {}, but {} is a {} model; {}", library, m.chip, model_path, d.chip,
                            unchanged));
  const int model_level = d.kernel_module ? d.kernel_module->api_level : TPU_SDK_CUSTOM_API_LEVEL;
  if (m.api_level != model_level)
    throw Error(fmt::format("{}: custom-layer API level {}, but the kernel module of {} is at level {}; rebuild the "
                            "library with the SDK that built the model; {}",
                            library, m.api_level, model_path, model_level, unchanged));
  std::vector<std::string> missing;
  for (const std::string &op : d.firmware_ops())
    if (std::find(m.ops.begin(), m.ops.end(), op) == m.ops.end()) missing.push_back(op);
  if (!missing.empty())
    throw Error(fmt::format("{}: does not register {} '{}' that the layers of {} use (it registers: {}); {}", library,
                            missing.size() == 1 ? "op" : "ops", fmt::join(missing, "', '"), model_path, list(m.ops),
                            unchanged));

  m.section = d.kernel_module ? d.kernel_module->section : std::string(kKernelModuleSection);
  if (d.kernel_module) result.old_module = *d.kernel_module;
  if (d.kernel_module && d.kernel_module->sha256 == m.sha256 && d.kernel_module->file_name == m.file_name)
    return result;  // the same bytes under the same name: nothing to write

  if (Section *s = model.find_section(m.section)) s->data = std::move(bytes);
  else model.sections.push_back({m.section, "kernel_module", std::move(bytes)});
  model.metadata["kernel_module"] = m.to_json();
  note_in_history(model, m, d.kernel_module ? d.kernel_module->sha256 : std::string());
  describe_model(model, model_path);  // the result must read back
  write_model_file(lock.path(), model);
  result.changed = true;
  return result;
}

std::string dump_kernel_module(const std::string &model_path, const std::string &output) {
  const ModelFile model = read_model_file(model_path);
  const ModelDescription d = describe_model(model, model_path);
  const std::span<const uint8_t> bytes = kernel_module_bytes(model, d, model_path);
  std::string path = output;
  std::error_code error;
  if (path.empty()) path = d.kernel_module->file_name;
  else if (path.back() == '/' || std::filesystem::is_directory(path, error))
    path = (std::filesystem::path(path) / d.kernel_module->file_name).string();
  detail::AtomicFile file(path);
  file.write(bytes);
  file.commit();
  return path;
}

namespace {

// The host library an update replaces: the one stored as `which`, else the
// AP library (what the vendor's --custom_ap_update replaces), else the only
// one.
std::size_t host_library_to_replace(const ModelDescription &d, const std::string &which, const std::string &model_path,
                                    const std::string &unchanged) {
  std::vector<std::string> names;
  for (const HostLibraryInfo &h : d.host_libraries) names.push_back(fmt::format("{} ({})", h.file_name, h.kind));
  if (d.host_libraries.empty())
    throw Error(fmt::format("{}: the model has no host library (no ap.<name> or callback.<name> layer); {}", model_path,
                            unchanged));
  for (std::size_t i = 0; i < d.host_libraries.size(); ++i) {
    const HostLibraryInfo &h = d.host_libraries[i];
    if (which.empty() ? h.kind == "vendor_ap" : h.file_name == which) return i;
  }
  if (which.empty() && d.host_libraries.size() == 1) return 0;
  throw Error(fmt::format("{}: {}; name the library to replace with --replace (the model's host libraries: {}); {}",
                          model_path,
                          which.empty() ? std::string("the model has no AP library and several host libraries")
                                        : fmt::format("no host library is stored as '{}'", which),
                          list(names), unchanged));
}

// Every AP op of the model's layers is in the new library's table.
void check_ap_ops(const ModelDescription &d, std::size_t index, const std::string &library,
                  const std::string &unchanged) {
  std::vector<std::string> ops;
  for (const ModelLayer &l : d.layers)
    if (l.mode == LayerMode::host_mode && std::size_t(l.host_library) == index &&
        std::find(ops.begin(), ops.end(), l.op) == ops.end())
      ops.push_back(l.op);
  if (ops.empty()) return;
  std::shared_ptr<HostOpLibrary> opened = HostOpLibrary::open(library, HostOpKind::vendor_ap);
  for (const std::string &op : ops) {
    try {
      opened->ap_op_type(op);
    } catch (const Error &e) {
      throw Error(fmt::format("{}: the model's layers use op '{}': {}; {}", library, op, e.what(), unchanged));
    }
  }
}

}  // namespace

HostLibraryUpdateResult update_host_library(const std::string &model_path, const std::string &library,
                                            const std::string &which) {
  const std::string unchanged = fmt::format("{} was not changed", model_path);
  const detail::UpdateLock lock(model_path);
  ModelFile model = read_model_file(lock.path());
  refuse_read_only(model_path, unchanged);
  const ModelDescription d = describe_model(model, model_path);
  const std::size_t index = host_library_to_replace(d, which, model_path, unchanged);
  HostLibraryUpdateResult result;
  result.old_library = d.host_libraries[index];
  std::vector<uint8_t> bytes;
  try {
    const HostOpKind kind = detail::host_kind_of(result.old_library.kind);
    result.new_library = detail::inspect_host_library(library, kind, &bytes);
    if (kind == HostOpKind::vendor_ap) check_ap_ops(d, index, library, unchanged);
  } catch (const Error &e) {
    const std::string text = e.what();
    throw Error(text.ends_with(unchanged) ? text : fmt::format("{}; {}", text, unchanged));
  }
  HostLibraryInfo &h = result.new_library;
  h.section = result.old_library.section;
  if (h.sha256 == result.old_library.sha256 && h.file_name == result.old_library.file_name)
    return result;  // the same bytes under the same name: nothing to write
  model.find_section(h.section)->data = std::move(bytes);
  model.metadata["host_libraries"][index] = h.to_json();
  auto &history = model.metadata["host_library_history"];
  if (!history.is_array()) history = decltype(model.metadata)::array();
  history.push_back({{"section", h.section},
                     {"file_name", h.file_name},
                     {"sha256", h.sha256},
                     {"replaced_sha256", result.old_library.sha256}});
  describe_model(model, model_path);  // the result must read back
  write_model_file(lock.path(), model);
  result.changed = true;
  return result;
}

}  // namespace tpu_runtime
