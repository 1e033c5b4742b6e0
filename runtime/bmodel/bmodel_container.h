// bmodel_container.h (internal): a .bmodel checked against the error-level
// rules of the spec (H1-H3, V1, V2, B1), with every Binary struct of its
// FlatBuffer located. bmodel_info.cc describes it, bmodel_update.cc patches
// it.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "bmodel_generated.h"
#include "tpu_runtime/bmodel.h"

namespace tpu_runtime {
// sha256.cc (also declared in tpu_runtime/model.h, whose dependencies the
// reader's fuzz target does not build).
std::string sha256_hex(std::span<const uint8_t> data);
}  // namespace tpu_runtime

namespace tpu_runtime::bmodel {

// One physical Binary struct in the FlatBuffer. Tables may be shared (the
// compiler points NetParameter.cmd_group and SubNet.cmd_group at the same
// CmdGroup tables), so a location is listed once, under the first path that
// reached it, with the number of paths that did.
struct BinarySlot {
  uint32_t offset = 0;  // of the 16-byte struct, from the FlatBuffer's start
  std::string path;     // e.g. net[0].parameter[1].cmd_group[0].binary_bdc
  uint32_t references = 0;
};

class Container {
 public:
  // Checks `file` (which must outlive the Container); Error naming `name`.
  Container(std::span<const uint8_t> file, std::string name);
  Container(const Container &) = delete;
  Container &operator=(const Container &) = delete;

  const std::string &name() const { return name_; }
  std::span<const uint8_t> file() const { return file_; }
  // The FlatBuffer, copied to 8-aligned storage (the verifier checks
  // alignment relative to the buffer's address).
  const uint8_t *fb() const { return reinterpret_cast<const uint8_t *>(fb_storage_.data()); }
  uint32_t fb_size() const { return fb_size_; }
  const fb::Model *model() const { return model_; }
  uint64_t section_offset() const { return kHeaderSize + uint64_t(fb_size_); }
  uint64_t section_size() const { return section_size_; }
  std::span<const uint8_t> section() const { return file_.subspan(section_offset(), section_size_); }
  // Bytes after the section (vendor tools accept them; updates refuse them).
  uint64_t trailing_bytes() const { return file_.size() - section_offset() - section_size_; }

  const std::vector<BinarySlot> &slots() const { return slots_; }
  // Index in slots() of kernel_module.binary, or -1 when the table is absent.
  int kernel_slot() const { return kernel_slot_; }
  // The same for cpuop_module.binary (the AP ops' host library).
  int cpuop_slot() const { return cpuop_slot_; }
  // Fields beyond our schema ("net[0]: field id 6"), spec 4.4 step 4.
  const std::vector<std::string> &unknown_fields() const { return unknown_fields_; }
  const std::vector<std::string> &warnings() const { return warnings_; }

  BinaryRef binary_at(uint32_t offset) const;
  // Bytes of a payload that passed B1 (empty for size 0).
  std::span<const uint8_t> payload(BinaryRef b) const;

 private:
  void check_header();
  void verify_flatbuffer();
  void locate_binaries();
  void check_binary_bounds();

  std::span<const uint8_t> file_;
  std::string name_;
  uint32_t fb_size_ = 0;
  uint64_t section_size_ = 0;
  std::vector<uint64_t> fb_storage_;
  const fb::Model *model_ = nullptr;
  std::vector<BinarySlot> slots_;
  int kernel_slot_ = -1, cpuop_slot_ = -1;
  std::vector<std::string> unknown_fields_;
  std::vector<std::string> warnings_;
  friend class BinaryWalker;
};

// Little-endian reads and writes at unaligned offsets.
uint32_t load_u32(const uint8_t *p);
uint64_t load_u64(const uint8_t *p);
void store_u32(uint8_t *p, uint32_t v);
void store_u64(uint8_t *p, uint64_t v);

// What the checked file holds, with the warning-level rules applied.
ModelInfo describe(const Container &c);

std::string md5_hex(std::span<const uint8_t> bytes);

}  // namespace tpu_runtime::bmodel
