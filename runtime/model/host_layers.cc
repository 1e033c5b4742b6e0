// host_layers.cc: host layers in models (host_layers.h).
#include "model/host_layers.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <filesystem>

#include "io/arrays.h"
#include "io/file_names.h"
#include "loader/elf_check.h"
#include "loader/shared_library.h"
#include "tpu_runtime/error.h"
#include "tpu_runtime/net.h"

namespace tpu_runtime::detail {
namespace {

// The ELF machine's name (the loader's table); check_elf_shared_object
// has checked a 64-bit little-endian header, whose e_machine is at 18.
std::string machine_name(std::span<const uint8_t> elf) {
  return elf_machine_name(uint16_t(elf[18] | elf[19] << 8));
}

// The functions a run resolves in a library of `kind` (what
// HostOpLibrary::open requires), recorded so that info can show them
// without loading the library.
std::vector<std::string> entry_points(HostOpKind kind) {
  if (kind == HostOpKind::vendor_ap) return {"bmcpu_init", "bmcpu_uninit", "customcpu_process", "tpu_sdk_ap_op_type"};
  return {"Callback"};
}

}  // namespace

HostOpKind host_kind_of(const std::string &kind_name) {
  return kind_name == "vendor_ap" ? HostOpKind::vendor_ap : HostOpKind::callback;
}

const char *host_kind_name(HostOpKind kind) { return kind == HostOpKind::vendor_ap ? "vendor_ap" : "callback"; }

HostOpKind host_kind_of_op(const std::string &op) {
  return host_op_prefix(op) == HostOpPrefix::vendor_ap ? HostOpKind::vendor_ap : HostOpKind::callback;
}

HostLibraryInfo inspect_host_library(const std::string &path, HostOpKind kind, std::vector<uint8_t> *bytes_out,
                                     std::shared_ptr<HostOpLibrary> *opened_out) {
  std::vector<uint8_t> bytes = read_file(path);
  check_elf_shared_object(bytes, path);
  HostLibraryInfo info;
  info.kind = host_kind_name(kind);
  info.file_name = std::filesystem::path(path).filename().string();
  if (!detail::is_plain_file_name(info.file_name))
    throw Error(fmt::format("{}: the file name '{}' would be stored in the model; it must be a plain file name", path,
                            info.file_name));
  // Architecture, entry points, API level and (vendor_ap) bmcpu_init.
  const std::shared_ptr<HostOpLibrary> opened = HostOpLibrary::open(path, kind);
  const SharedLibrary lib(path);  // the same loaded object: reads its level
  const char *level_symbol = kind == HostOpKind::vendor_ap ? "tpu_sdk_ap_api_level" : "custom_op_api_level";
  if (const auto *level = static_cast<const int32_t *>(lib.find(level_symbol))) info.api_level = *level;
  info.size = bytes.size();
  info.sha256 = sha256_hex(bytes);
  info.machine = machine_name(bytes);
  info.entry_points = entry_points(kind);
  if (bytes_out) *bytes_out = std::move(bytes);
  if (opened_out) *opened_out = opened;
  return info;
}

int BuildHostLibraries::add(const std::string &path, HostOpKind kind) {
  for (std::size_t i = 0; i < entries_.size(); ++i)
    if (entries_[i].path == path) {
      if (entries_[i].info.kind != host_kind_name(kind))
        throw Error(fmt::format("{}: used as a {} library and as a {} library", path, entries_[i].info.kind,
                                host_kind_name(kind)));
      return int(i);
    }
  Entry e;
  e.path = path;
  e.info = inspect_host_library(path, kind, &e.bytes, &e.library);
  e.info.section = fmt::format("{}{}", kHostLibrarySectionPrefix, entries_.size());
  entries_.push_back(std::move(e));
  return int(entries_.size() - 1);
}

nlohmann::json BuildHostLibraries::metadata() const {
  nlohmann::json j = nlohmann::json::array();
  for (const Entry &e : entries_) j.push_back(e.info.to_json());
  return j;
}

std::vector<Section> BuildHostLibraries::take_sections() {
  std::vector<Section> sections;
  for (Entry &e : entries_) sections.push_back({e.info.section, "host_library", std::move(e.bytes)});
  return sections;
}

std::span<const uint8_t> host_library_bytes(const ModelFile &model, const ModelDescription &d, std::size_t index,
                                            std::string_view where) {
  if (index >= d.host_libraries.size()) throw Error(fmt::format("{}: no host library {}", where, index));
  const HostLibraryInfo &h = d.host_libraries[index];
  const Section *s = model.find_section(h.section);
  if (!s) throw Error(fmt::format("{}: host library section '{}' is missing", where, h.section));
  if (s->data.size() != h.size)
    throw Error(fmt::format("{}: host library section '{}' holds {} bytes, the metadata says {}", where, s->name,
                            s->data.size(), h.size));
  const std::string hash = sha256_hex(s->data);
  if (hash != h.sha256)
    throw Error(fmt::format("{}: host library section '{}' ({}) has SHA-256 {}, the metadata says {}", where, s->name,
                            h.file_name, hash, h.sha256));
  return s->data;
}

EmbeddedHostLibraries::EmbeddedHostLibraries(const ModelFile &model, const ModelDescription &d,
                                             std::string_view where) {
  loaded_.resize(d.host_libraries.size());
  for (const ModelLayer &l : d.layers) {
    if (l.mode != LayerMode::host_mode || loaded_[std::size_t(l.host_library)].library) continue;
    const std::size_t index = std::size_t(l.host_library);
    const HostLibraryInfo &h = d.host_libraries[index];
    const std::string what = fmt::format("{}: host library {} ({})", where, h.file_name, h.kind);
    // How run-time messages name it (they start with the layer, itself
    // after the model's name).
    const std::string shown_as = fmt::format("host library {} ({})", h.file_name, h.kind);
    const std::span<const uint8_t> bytes = host_library_bytes(model, d, index, where);
    check_elf_shared_object(bytes, what);
    Loaded &slot = loaded_[index];
    slot.file = std::make_unique<PrivateLibraryFile>(bytes, h.file_name, what);
    try {
      slot.library = HostOpLibrary::open(slot.file->path(), host_kind_of(h.kind), shown_as);
    } catch (const Error &e) {
      throw Error(fmt::format("{}: cannot load the embedded library: {}", what, e.what()));
    }
    slot.file->loaded();
  }
}

const HostOpLibrary &EmbeddedHostLibraries::at(int index) const {
  if (index < 0 || std::size_t(index) >= loaded_.size() || !loaded_[std::size_t(index)].library)
    throw Error(fmt::format("host library {} is not loaded", index));
  return *loaded_[std::size_t(index)].library;
}

double host_transfer_us(uint64_t bytes, int copies) {
  return copies * kHostCopyLatencyUs + double(bytes) / kHostTransferBytesPerUs;
}

namespace {

// Output `o` of host layer `i` came out as `got`, smaller than planned:
// allowed only for a dynamic host layer, and only when no later layer reads
// the tensor (TPU layers run with the planned shapes, and the build's
// reference of a later layer used them).
void check_smaller_output(const ModelDescription &d, std::size_t i, std::size_t o, const Shape &got) {
  const ModelLayer &l = d.layers[i];
  const ModelTensor &t = d.tensors[l.outputs[o]];
  if (!l.host_dynamic_shapes)
    throw Error(fmt::format("the op gave output '{}' the shape {}, but the model planned {}; the layer is static "
                            "(mark it \"dynamic\": true to let a host op's outputs be smaller than planned)",
                            t.name, shape_text(got), shape_text(t.shape)));
  for (std::size_t k = i + 1; k < d.layers.size(); ++k) {
    const ModelLayer &reader = d.layers[k];
    if (std::find(reader.inputs.begin(), reader.inputs.end(), l.outputs[o]) != reader.inputs.end())
      throw Error(fmt::format("the op gave output '{}' the shape {} (planned {}), but layer {} ('{}', op {}) reads it "
                              "and runs with the planned shape; only a net output that no later layer reads may come "
                              "out smaller",
                              t.name, shape_text(got), shape_text(t.shape), k, reader.name, reader.op));
  }
}

// A host layer's input from global memory; errors start with `label`.
std::vector<uint8_t> read_named(EmulatorSession &emulator, uint64_t addr, uint64_t bytes, const std::string &label,
                                const std::string &tensor) {
  try {
    return emulator.read(addr, bytes, fmt::format("input '{}'", tensor));
  } catch (const Error &e) {
    throw Error(fmt::format("{}: {}", label, e.what()));
  }
}

}  // namespace

HostLayerFigures run_host_layer(EmulatorSession &emulator, const HostOpLibrary &library, const ModelDescription &d,
                                std::size_t i, uint64_t base, std::map<std::size_t, Shape> &actual,
                                const std::string &label) {
  const ModelLayer &l = d.layers[i];
  HostLayerFigures f;
  std::vector<HostTensor> inputs, specs;
  for (std::size_t t : l.inputs) {
    const ModelTensor &mt = d.tensors[t];
    const Shape shape = actual.count(t) ? actual.at(t) : mt.shape;
    const uint64_t bytes = uint64_t(element_count(shape)) * dtype_size(mt.dtype);
    inputs.push_back({mt.dtype, shape, read_named(emulator, base + mt.offset, bytes, label, mt.name)});
    f.bytes_in += bytes;
    ++f.copies;
  }
  for (std::size_t t : l.outputs) specs.push_back({d.tensors[t].dtype, d.tensors[t].shape, {}});
  const std::string op = host_kind_of_op(l.op) == HostOpKind::vendor_ap ? l.op : std::string(host_op_name(l.op));
  const std::vector<uint8_t> params(l.params.bytes().begin(), l.params.bytes().end());
  HostOpRun run = run_host_op(library, op, params, inputs, specs, label);  // its errors start with `label`
  if (run.outputs.size() != l.outputs.size())
    throw Error(fmt::format("{}: the host op returned {} outputs for the layer's {}", label, run.outputs.size(),
                            l.outputs.size()));
  for (std::size_t o = 0; o < l.outputs.size(); ++o) {
    const ModelTensor &mt = d.tensors[l.outputs[o]];
    HostTensor &out = run.outputs[o];
    if (out.shape != mt.shape) {
      try {
        check_smaller_output(d, i, o, out.shape);
      } catch (const Error &e) {
        throw Error(fmt::format("{}: {}", label, e.what()));
      }
      actual[l.outputs[o]] = out.shape;
    }
    try {
      emulator.write(base + mt.offset, out.bytes, fmt::format("output '{}'", mt.name));
    } catch (const Error &e) {
      throw Error(fmt::format("{}: {}", label, e.what()));
    }
    f.bytes_out += out.bytes.size();
    ++f.copies;
  }
  f.host_us = run.host_seconds * 1e6;
  f.transfer_us = host_transfer_us(f.bytes_in + f.bytes_out, f.copies);
  return f;
}

}  // namespace tpu_runtime::detail
