// bmodel.h: the vendor's .bmodel files (bm1684x, bm1688): read and check
// them, describe them, dump and replace their embedded kernel module.
//
// A .bmodel is a 64-byte header, a FlatBuffer (root table Model) and a
// binary section that every payload points into through Binary {start, size}
// structs (shared/spec/bmodel-format.md, docs/tpu-model.md). The reader
// refuses, with an Error naming the file, the rule and the location, every
// file that is not a plain (unencrypted) bmodel laid out as the spec says.
// kernel_update checks the new module against the model's chip and writes
// the result through a temporary file, fsync and rename: on any failure the
// original is byte-identical.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace tpu_runtime::bmodel {

inline constexpr uint32_t kMagic = 0xFF55AAEE;     // file bytes EE AA 55 FF
inline constexpr uint32_t kOldMagic = 0xFF55AAFF;  // the older bmtap2 format: refused
inline constexpr uint32_t kHeaderSize = 64;

// True when `bytes` start with either magic: the file is handled (or refused)
// as a bmodel, whatever its extension.
bool has_bmodel_magic(std::span<const uint8_t> bytes);
bool file_has_bmodel_magic(const std::string &path);

struct BinaryRef {
  uint64_t start = 0, size = 0;
  bool operator==(const BinaryRef &) const = default;
};

struct TensorInfo {
  std::string name;
  uint32_t data_type = 0;
  std::vector<std::vector<uint64_t>> shapes;  // normally one
  float scale = 1.0f;
  int32_t zero_point = 0;
  uint64_t device_addr = 0, size = 0;
  uint32_t mem_type = 0;
};

struct StageInfo {
  bool dynamic = false;
  std::size_t subnets = 0;
  uint32_t core_num = 0;  // 0 when not written (one core)
  uint64_t ctx_addr = 0, ctx_size = 0, io_size = 0, coeff_size = 0;
  uint32_t cpu_mem_size = 0;
  bool coeff_encrypted = false;
  std::vector<TensorInfo> inputs, outputs;
};

struct NetInfo {
  std::string name;
  int32_t addr_mode = 0;
  bool legacy = false;  // net_static / net_dynamic only, no parameter
  std::optional<uint32_t> cascade_device, cascade_step;
  std::string cascade_main;
  std::vector<StageInfo> stages;
};

struct ModuleInfo {
  bool present = false;  // the table exists
  std::string file_name;
  BinaryRef binary;
  std::string md5, sha256;  // hex, of the bytes (empty for size 0)
};

struct ModelInfo {
  std::string type, version, time, chip;
  uint32_t device_num = 0, bmodel_type = 0;
  uint64_t neuron_size = 0;
  ModuleInfo kernel, cpuop;
  std::optional<BinaryRef> lib_backend;
  uint64_t file_size = 0, flatbuffers_size = 0, section_size = 0;
  uint64_t referenced_bytes = 0, payloads = 0;  // distinct non-empty payload ranges
  std::vector<NetInfo> nets;
  std::vector<std::string> warnings;  // warning-level rules of the spec, with locations
};

// Reads and checks a bmodel; Error naming `name` and the broken rule.
ModelInfo parse(std::span<const uint8_t> file, const std::string &name);
ModelInfo read(const std::string &path);

// The text `tpu_model info` prints.
std::string info_text(const ModelInfo &info, const std::string &path);

// Names for the value sets (numbers for unknown values).
std::string dtype_name(uint32_t data_type);

struct DumpResult {
  std::string path;
  uint64_t size = 0;
  std::string md5, sha256;
};

// Writes the embedded kernel module to `output` (a file; a directory or a
// path ending in '/' gets the stored name; empty: the stored name here).
DumpResult dump_kernel(const std::string &model, const std::string &output);

struct UpdateOptions {
  std::string output;  // write the result here instead of over `model`
  std::string name;    // stored file name (default: the library's basename)
};

struct UpdateResult {
  bool changed = false;  // false: same bytes and name, nothing written
  ModuleInfo old_module, new_module;
  std::string mode;         // "replace" or "append"
  std::string append_reason;
  std::string written;      // the file written
  std::vector<std::string> entries_present, entries_absent;  // device entry symbols
  std::string machine;  // update_cpuop: the library's machine (x86-64 or AArch64)
};

// The checked, atomic kernel_update of docs/tpu-model.md.
UpdateResult update_kernel(const std::string &model, const std::string &library, const UpdateOptions &options = {});

// tpu_model custom_ap_update on a .bmodel (the vendor's --custom_ap_update):
// the same checked, atomic patch of the cpuop_module table, with the
// library checked as a host library (x86-64 or AArch64 ELF shared object
// defining bmcpu_init, bmcpu_uninit and customcpu_process; not loaded).
UpdateResult update_cpuop(const std::string &model, const std::string &library, const UpdateOptions &options = {});

// The device entry points the runtime resolves by name; the first two are
// resolved on every load and so are required.
inline constexpr const char *kRequiredEntries[] = {"sg_api_multi_fullnet", "sg_api_dynamic_fullnet"};
inline constexpr const char *kOptionalEntries[] = {"sg_api_set_profile", "sg_api_get_profile_data",
                                                   "sg_api_set_engine_profile_param"};

}  // namespace tpu_runtime::bmodel
