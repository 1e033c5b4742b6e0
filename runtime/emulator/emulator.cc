// emulator.cc: the emulator session, run figures and tensor specs; see emulator.h.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include <algorithm>

#include "emulator/emulator.h"
#include "io/arrays.h"

namespace tpu_runtime::detail {

tensor_spec_t make_spec(uint64_t addr, Dtype dtype, const Shape &shape) {
  tensor_spec_t spec{};
  spec.addr = addr;
  spec.dtype = dtype_info(dtype).sg_dtype;
  spec.dims = int(shape.size());
  for (std::size_t i = 0; i < shape.size() && i < MAX_SHAPE_DIMS; ++i) spec.shape[i] = shape[i];
  spec.elem_num = int(element_count(shape));
  return spec;
}

namespace {

RunFigures figures_of(const char *report) {
  RunFigures f;
  f.json = report;
  const auto stats = nlohmann::json::parse(f.json, nullptr, false);
  if (stats.is_discarded() || !stats.is_object()) return f;
  if (stats.contains("total_us") && stats["total_us"].is_number()) f.total_us = stats["total_us"].get<double>();
  if (stats.contains("bytes") && stats["bytes"].is_object())
    for (const auto &[direction, bytes] : stats["bytes"].items())
      if (bytes.is_number_unsigned()) f.gdma_bytes += bytes.get<uint64_t>();
  if (stats.contains("engines") && stats["engines"].is_object())
    for (const auto &[engine, figures] : stats["engines"].items()) {
      if (!figures.is_object() || !figures.contains("busy_us") || !figures["busy_us"].is_number()) continue;
      std::string name = engine;
      for (char &c : name) c = char(std::tolower(static_cast<unsigned char>(c)));
      if (name == "gdma") f.gdma_us = figures["busy_us"].get<double>();
      if (name == "bdc") f.bdc_us = figures["busy_us"].get<double>();
    }
  return f;
}

}  // namespace

RunFigures last_run_figures() { return figures_of(cmodel_last_run_stats()); }
RunFigures total_run_figures() { return figures_of(cmodel_total_stats()); }

int raise_cores(int cores) {
  const int in_force = cmodel_core_count();
  if (in_force >= cores) return in_force;
  if (cmodel_cores_option() < 0)
    throw Error("TPU_SDK_CORES or TPU_SDK_CORE_SCHEDULE is malformed: see cmodel_core_count");
  if (cmodel_set_option("cores", std::to_string(cores).c_str()) != 0)
    throw Error(fmt::format("cannot emulate {} cores: {}", cores, cmodel_last_error()));
  return cores;
}

AtLeastCores::AtLeastCores(int cores) : restore_(cmodel_cores_option()) {
  cores_ = raise_cores(cores);
}

AtLeastCores::~AtLeastCores() {
  if (restore_ >= 0) cmodel_set_option("cores", std::to_string(restore_).c_str());
}

EmulatorSession::EmulatorSession(const std::string &chip) {
  if (cmodel_open(chip.c_str()) != 0)
    throw Error(fmt::format("cannot open the {} emulator: {}", chip, cmodel_last_error()));
}

EmulatorSession::~EmulatorSession() { cmodel_close(); }

uint64_t EmulatorSession::alloc(uint64_t bytes, std::string_view what) {
  const uint64_t addr = cmodel_global_alloc(std::max<uint64_t>(bytes, 1));
  if (addr == 0)
    throw Error(fmt::format("cannot allocate {} bytes of global memory for {}: {}", bytes, what, cmodel_last_error()));
  return addr;
}

void EmulatorSession::alloc_at(uint64_t addr, uint64_t bytes, std::string_view what) {
  if (cmodel_global_alloc_at(addr, std::max<uint64_t>(bytes, 1)) == 0)
    throw Error(fmt::format("cannot allocate {} bytes of global memory at {:#x} for {}: {}", bytes, addr, what,
                            cmodel_last_error()));
}

void EmulatorSession::write(uint64_t addr, std::span<const uint8_t> bytes, std::string_view what) {
  if (!bytes.empty() && cmodel_global_write(addr, bytes.data(), bytes.size()) != 0)
    throw Error(fmt::format("cannot write {}: {}", what, cmodel_last_error()));
}

std::vector<uint8_t> EmulatorSession::read(uint64_t addr, uint64_t bytes, std::string_view what) {
  std::vector<uint8_t> data(bytes);
  if (bytes && cmodel_global_read(data.data(), addr, bytes) != 0)
    throw Error(fmt::format("cannot read {}: {}", what, cmodel_last_error()));
  return data;
}

int64_t first_changed_byte(std::span<const uint8_t> a, std::span<const uint8_t> b) {
  const std::size_t n = std::min(a.size(), b.size());
  const auto [ia, ib] = std::mismatch(a.begin(), a.begin() + std::ptrdiff_t(n), b.begin());
  if (ia != a.begin() + std::ptrdiff_t(n)) return ia - a.begin();
  return a.size() == b.size() ? -1 : int64_t(n);
}

void UnchangedWatch::add(std::string what, uint64_t addr, uint64_t bytes) {
  Entry e{std::move(what), addr, std::vector<uint8_t>(bytes)};
  if (bytes && cmodel_global_read(e.before.data(), addr, bytes) != 0)
    throw Error(fmt::format("cannot read {} to watch it: {}", e.what, cmodel_last_error()));
  entries_.push_back(std::move(e));
}

std::string UnchangedWatch::changed() const {
  for (const Entry &e : entries_) {
    std::vector<uint8_t> after(e.before.size());
    if (!after.empty() && cmodel_global_read(after.data(), e.addr, after.size()) != 0)
      throw Error(fmt::format("cannot read {} back: {}", e.what, cmodel_last_error()));
    const int64_t at = first_changed_byte(e.before, after);
    if (at < 0) continue;
    return fmt::format("{} changed although the op does not declare it in place (metadata num_inplace_inputs): "
                       "first changed byte at offset {} of {} ({:#04x} -> {:#04x})",
                       e.what, at, e.before.size(), e.before[std::size_t(at)], after[std::size_t(at)]);
  }
  return "";
}

}  // namespace tpu_runtime::detail
