// bmodel_update.cc: kernel_dump and the checked, atomic kernel_update of a
// .bmodel (spec 4.3 and 4.4).
//
// The update patches the FlatBuffer in place instead of rebuilding it: every
// byte but the Binary structs it must move, the kernel's Binary and (on a
// rename) the file_name offset stays as it was, so fields unknown to our
// schema, empty-versus-absent vectors and shared tables all survive. Going
// through flatbuffers' object API (UnPack/Pack), as the vendor tool does,
// would drop empty vectors and unshare the shared CmdGroup tables.
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <optional>

#include "io/atomic_file.h"
#include "bmodel/bmodel_container.h"
#include "bmodel/bmodel_elf.h"
#include "loader/elf_check.h"
#include "io/file_names.h"
#include "tpu_runtime/error.h"
#include "tpu_runtime/model.h"
#include "io/update_lock.h"

namespace tpu_runtime::bmodel {
namespace {

namespace fs = std::filesystem;

// A stored module name is a plain basename (spec 4.3): it becomes a file
// name when dumped.
bool safe_stored_name(const std::string &name) { return detail::is_plain_file_name(name); }

// Which module an update replaces: the device kernel module, or the host
// CPU-op (AP) library.
enum class Which { kernel, cpuop };

int slot_of(const Container &c, Which w) { return w == Which::kernel ? c.kernel_slot() : c.cpuop_slot(); }

// The KernelModule or CpuopModule table (identical layouts: file_name,
// binary).
const uint8_t *module_table(const Container &c, Which w) {
  return w == Which::kernel ? reinterpret_cast<const uint8_t *>(c.model()->kernel_module())
                            : reinterpret_cast<const uint8_t *>(c.model()->cpuop_module());
}

std::string stored_name(const Container &c, Which w) {
  const flatbuffers::String *name =
      w == Which::kernel ? c.model()->kernel_module()->file_name() : c.model()->cpuop_module()->file_name();
  return name ? name->str() : std::string();
}

// Where the new module goes and which Binary structs move (spec 4.4 steps 2-8).
struct Plan {
  bool append = false;
  std::string reason;                                  // why append mode
  std::vector<std::pair<uint32_t, BinaryRef>> moved;  // FlatBuffer offset -> new value
  BinaryRef kernel;                                    // the module's new Binary
  uint64_t old_start = 0, old_size = 0;
};

std::string append_reason(const Container &c, Which w, uint64_t s, uint64_t n) {
  if (n == 0) return "the model held no module bytes";
  if (!c.unknown_fields().empty())
    return fmt::format("fields unknown to our schema ({}) may hold payloads that would not be moved",
                       fmt::join(c.unknown_fields(), "; "));
  for (std::size_t i = 0; i < c.slots().size(); ++i) {
    if (int(i) == slot_of(c, w)) continue;
    const BinaryRef b = c.binary_at(c.slots()[i].offset);
    if (b.size > 0 && b.start < s + n && s < b.start + b.size)
      return fmt::format("the old module's bytes are shared with {}", c.slots()[i].path);
  }
  return "";
}

Plan plan_update(const Container &c, Which w, uint64_t new_size) {
  Plan plan;
  const BinaryRef old = c.binary_at(c.slots()[std::size_t(slot_of(c, w))].offset);
  plan.old_start = old.start;
  plan.old_size = old.size;
  plan.reason = append_reason(c, w, old.start, old.size);
  plan.append = !plan.reason.empty();
  if (plan.append) {
    plan.kernel = {c.section_size(), new_size};
    return plan;
  }
  const uint64_t s = old.start, end = old.start + old.size, section = c.section_size();
  for (std::size_t i = 0; i < c.slots().size(); ++i) {
    if (int(i) == slot_of(c, w)) continue;
    const uint32_t at = c.slots()[i].offset;
    BinaryRef b = c.binary_at(at);
    // A size-0 start means nothing; one past the section is left alone
    // rather than shifted into a wrap-around.
    if (b.start >= end && b.start <= section) b.start = b.start - old.size + new_size;
    else if (b.size == 0 && b.start > s && b.start < end) b.start = s;
    if (!(b == c.binary_at(at))) plan.moved.push_back({at, b});
  }
  plan.kernel = {s, new_size};
  return plan;
}

// Offset of the uoffset field KernelModule.file_name (CpuopModule's: the
// same field id 0).
uint32_t file_name_field(const Container &c, Which w) {
  const uint8_t *table = module_table(c, w);
  const uint8_t *vtable = table - flatbuffers::ReadScalar<flatbuffers::soffset_t>(table);
  return uint32_t(table - c.fb()) + flatbuffers::ReadScalar<flatbuffers::voffset_t>(vtable + 4);
}

void pad_to(std::vector<uint8_t> &v, std::size_t multiple) {
  while (v.size() % multiple != 0) v.push_back(0);
}

// The new FlatBuffer: the old bytes with the Binary structs patched and, on
// a rename, a new string appended and file_name pointed at it (offsets point
// forward, so a string after the table is valid).
std::vector<uint8_t> patched_flatbuffer(const Container &c, Which w, const Plan &plan, const std::string &old_name,
                                        const std::string &name) {
  std::vector<uint8_t> out(c.fb(), c.fb() + c.fb_size());
  for (const auto &[at, b] : plan.moved) {
    store_u64(out.data() + at, b.start);
    store_u64(out.data() + at + 8, b.size);
  }
  const uint32_t kernel_at = c.slots()[std::size_t(slot_of(c, w))].offset;
  store_u64(out.data() + kernel_at, plan.kernel.start);
  store_u64(out.data() + kernel_at + 8, plan.kernel.size);
  if (name != old_name) {
    pad_to(out, 4);
    const auto string_at = uint32_t(out.size());
    out.resize(out.size() + 4);
    store_u32(out.data() + string_at, uint32_t(name.size()));
    out.insert(out.end(), name.begin(), name.end());
    out.push_back(0);
    const uint32_t field = file_name_field(c, w);
    store_u32(out.data() + field, string_at - field);
  }
  pad_to(out, 8);
  return out;
}

std::vector<uint8_t> assemble(const Container &c, const Plan &plan, const std::vector<uint8_t> &flatbuffer,
                              std::span<const uint8_t> module) {
  const std::span<const uint8_t> section = c.section();
  std::vector<uint8_t> out(kHeaderSize, 0);
  out.reserve(kHeaderSize + flatbuffer.size() + section.size() + module.size());
  store_u32(out.data(), kMagic);
  store_u32(out.data() + 4, kHeaderSize);
  store_u32(out.data() + 8, uint32_t(flatbuffer.size()));
  out.insert(out.end(), flatbuffer.begin(), flatbuffer.end());
  if (plan.append) {
    out.insert(out.end(), section.begin(), section.end());
    out.insert(out.end(), module.begin(), module.end());
  } else {
    out.insert(out.end(), section.begin(), section.begin() + std::ptrdiff_t(plan.old_start));
    out.insert(out.end(), module.begin(), module.end());
    out.insert(out.end(), section.begin() + std::ptrdiff_t(plan.old_start + plan.old_size), section.end());
  }
  store_u64(out.data() + 12, out.size() - kHeaderSize - flatbuffer.size());
  return out;
}

// Spec 4.4 "Commit" step 2: the written file read back must pass every
// rule, hold the new module under its name, every other payload with its
// old content, and the old FlatBuffer outside the patched bytes.
void check_result(const Container &old, Which w, const Plan &plan, std::span<const uint8_t> written,
                  const std::string &where, std::span<const uint8_t> module, const std::string &name) {
  const Container now(written, where);
  auto fail = [&](const std::string &what) {
    throw Error(fmt::format("{}: the rewritten model does not read back as intended: {}", where, what));
  };
  if (slot_of(now, w) != slot_of(old, w) || now.slots().size() != old.slots().size())
    fail("its Binary structs differ");
  const BinaryRef kb = now.binary_at(now.slots()[std::size_t(slot_of(now, w))].offset);
  if (stored_name(now, w) != name) fail(w == Which::kernel ? "kernel_module.file_name" : "cpuop_module.file_name");
  const auto kernel_bytes = now.payload(kb);
  if (!std::equal(kernel_bytes.begin(), kernel_bytes.end(), module.begin(), module.end())) fail("the module's bytes");
  for (std::size_t i = 0; i < old.slots().size(); ++i) {
    if (int(i) == slot_of(old, w)) continue;
    if (now.slots()[i].offset != old.slots()[i].offset) fail("the Binary structs moved");
    const auto a = old.payload(old.binary_at(old.slots()[i].offset));
    const auto b = now.payload(now.binary_at(now.slots()[i].offset));
    if (!std::equal(a.begin(), a.end(), b.begin(), b.end())) fail(fmt::format("the content of {}", old.slots()[i].path));
  }
  // Put the old values back at the patched places: the rest must be equal.
  std::vector<uint8_t> restored(now.fb(), now.fb() + std::min(now.fb_size(), old.fb_size()));
  if (restored.size() != old.fb_size()) fail("the FlatBuffer shrank");
  auto restore = [&](uint32_t at, uint32_t length) { std::memcpy(restored.data() + at, old.fb() + at, length); };
  for (const auto &[at, b] : plan.moved) restore(at, 16);
  restore(old.slots()[std::size_t(slot_of(old, w))].offset, 16);
  restore(file_name_field(old, w), 4);
  if (std::memcmp(restored.data(), old.fb(), old.fb_size()) != 0) fail("FlatBuffer bytes outside the patched fields");
}

std::vector<uint8_t> read_module(const std::string &library, const std::string &unchanged) {
  struct stat st {};
  if (::stat(library.c_str(), &st) != 0)
    throw Error(fmt::format("{}: no such file: {} (rule K4); {}", library, std::strerror(errno), unchanged));
  if (!S_ISREG(st.st_mode))
    throw Error(fmt::format("{}: not a regular file (rule K4); {}", library, unchanged));
  if (st.st_size <= 0 || st.st_size >= (off_t(1) << 31))
    throw Error(fmt::format("{}: {} bytes; a kernel module has between 1 byte and 2 GiB (rule K4); {}", library,
                            st.st_size, unchanged));
  return read_file(library);
}

void check_model_for_update(const Container &c, Which w, const std::string &unchanged) {
  if (c.trailing_bytes() > 0)
    throw Error(fmt::format("{}: {} bytes after the binary section, of unknown meaning; not rewritten (rule H3); {}",
                            c.name(), c.trailing_bytes(), unchanged));
  const auto *nets = c.model()->net();
  for (flatbuffers::uoffset_t i = 0; i < nets->size(); ++i)
    if (!nets->Get(i)->parameter())
      throw Error(fmt::format("{}: net[{}] '{}' is in the legacy form (net_static/net_dynamic, no parameter); update "
                              "it with the vendor tools first (rule K2); {}",
                              c.name(), i, nets->Get(i)->name()->str(), unchanged));
  const std::string chip = c.model()->chip()->str();
  // The CPU-op library runs on the host, whatever the chip.
  if (w == Which::kernel && module_machine_for_chip(chip) == 0)
    throw Error(fmt::format("{}: chip '{}' loads no embedded kernel module (only BM1684X/BM1686 and BM1688/CV186X "
                            "do) (rule K3); {}",
                            c.name(), chip, unchanged));
  const char *table = w == Which::kernel ? "kernel_module" : "cpuop_module";
  if (slot_of(c, w) < 0)
    throw Error(fmt::format("{}: the model has no {} table{}; adding one needs a rebuild of the FlatBuffer, which this "
                            "tool does not do; {}",
                            c.name(), table, w == Which::cpuop ? " (files from before the 2024-07 schema)" : "",
                            unchanged));
  if (c.slots()[std::size_t(slot_of(c, w))].references > 1)
    throw Error(fmt::format("{}: {}.binary is shared with another field, so it cannot be changed alone; {}", c.name(),
                            table, unchanged));
}

void check_writable(const std::string &model, const std::string &unchanged) {
  // The file is replaced by rename, which a read-only file would not stop.
  struct stat st {};
  if (::access(model.c_str(), W_OK) != 0 ||
      (::stat(model.c_str(), &st) == 0 && (st.st_mode & (S_IWUSR | S_IWGRP | S_IWOTH)) == 0))
    throw Error(fmt::format("{}: the model file is read-only; make it writable or give --output (rule K8); {}", model,
                            unchanged));
}

ModuleInfo new_module_info(const std::string &name, BinaryRef binary, std::span<const uint8_t> bytes) {
  ModuleInfo m;
  m.present = true;
  m.file_name = name;
  m.binary = binary;
  m.md5 = md5_hex(bytes);
  m.sha256 = sha256_hex(bytes);
  return m;
}

}  // namespace

namespace {

// The new module's bytes after K4-K6 for `w`; the device entry points found
// go to `result`.
std::vector<uint8_t> checked_module(const Container &c, Which w, const std::string &library,
                                    const std::string &unchanged, UpdateResult &result) {
  const std::vector<uint8_t> module = read_module(library, unchanged);  // K4
  try {
    if (w == Which::cpuop) {
      result.entries_present = {"bmcpu_init", "bmcpu_uninit", "customcpu_process"};
      result.machine = check_cpuop_module(module, library);
    } else {
      const std::string chip = c.model()->chip()->str();
      const DeviceModuleCheck entries = check_device_module(module, library, module_machine_for_chip(chip), chip);
      result.entries_present = entries.present;
      result.entries_absent = entries.absent;
    }
  } catch (const Error &e) {
    throw Error(fmt::format("{}; {}", e.what(), unchanged));  // K5, K6
  }
  return module;
}

// The checked, atomic update of module `w` (kernel_update and
// custom_ap_update share every step but the library's checks).
UpdateResult update_module(const std::string &model, const std::string &library, const UpdateOptions &options,
                           Which w) {
  const std::string target = options.output.empty() ? model : options.output;
  const std::string unchanged = fmt::format("{} was not changed", target);
  // An update in place holds the file's lock from the read to the rename
  // (update_lock.h); AtomicFile checks the file is still the one read.
  std::optional<detail::UpdateLock> lock;
  if (options.output.empty()) lock.emplace(model);
  const std::vector<uint8_t> file = read_file(lock ? lock->path() : model);
  std::optional<Container> source;
  try {
    source.emplace(file, model);  // K1
  } catch (const Error &e) {
    throw Error(fmt::format("{}; {}", e.what(), unchanged));
  }
  const Container &c = *source;
  check_model_for_update(c, w, unchanged);  // K2, K3, H3's trailing bytes
  UpdateResult result;
  const std::vector<uint8_t> module = checked_module(c, w, library, unchanged, result);
  const std::string name = options.name.empty() ? fs::path(library).filename().string() : options.name;
  if (!safe_stored_name(name))
    throw Error(fmt::format("stored module name '{}' is not a plain file name (empty, '.', '..', or holds '/', '\\' or "
                            "NUL) (rule K7); {}",
                            name, unchanged));
  if (options.output.empty()) check_writable(model, unchanged);  // K8

  const ModelInfo info = describe(c);
  const ModuleInfo &old_module = w == Which::kernel ? info.kernel : info.cpuop;
  result.old_module = old_module;
  const auto old_bytes = c.payload(old_module.binary);
  if (name == old_module.file_name && std::equal(old_bytes.begin(), old_bytes.end(), module.begin(), module.end())) {
    result.new_module = old_module;  // K9: nothing to write
    return result;
  }
  const Plan plan = plan_update(c, w, module.size());
  result.mode = plan.append ? "append" : "replace";
  result.append_reason = plan.reason;
  result.new_module = new_module_info(name, plan.kernel, module);
  const std::vector<uint8_t> out =
      assemble(c, plan, patched_flatbuffer(c, w, plan, old_module.file_name, name), module);
  try {
    detail::AtomicFile temp(lock ? lock->path() : target);
    temp.write(out);
    const std::vector<uint8_t> back = read_file(temp.temp_path());
    check_result(c, w, plan, back, temp.temp_path(), module, name);
    temp.commit();
  } catch (const Error &e) {
    throw Error(fmt::format("{}; {}", e.what(), unchanged));
  }
  result.changed = true;
  result.written = target;
  return result;
}

}  // namespace

UpdateResult update_kernel(const std::string &model, const std::string &library, const UpdateOptions &options) {
  return update_module(model, library, options, Which::kernel);
}

UpdateResult update_cpuop(const std::string &model, const std::string &library, const UpdateOptions &options) {
  return update_module(model, library, options, Which::cpuop);
}

DumpResult dump_kernel(const std::string &model, const std::string &output) {
  const std::vector<uint8_t> file = read_file(model);
  const Container c(file, model);
  const ModelInfo info = describe(c);
  if (!info.kernel.present || info.kernel.binary.size == 0)
    throw Error(fmt::format("{}: no kernel module ({})", model,
                            info.kernel.present ? "the kernel_module table is empty" : "no kernel_module table"));
  const std::string &stored = info.kernel.file_name;
  std::error_code error;
  const bool into_directory = output.empty() || output.back() == '/' || fs::is_directory(output, error);
  if (into_directory && !safe_stored_name(stored))
    throw Error(fmt::format("{}: the stored module name '{}' is not a plain file name; give an output file with -o",
                            model, stored));
  DumpResult result;
  result.path = output.empty() ? stored : into_directory ? (fs::path(output) / stored).string() : output;
  const auto bytes = c.payload(info.kernel.binary);
  detail::AtomicFile out(result.path);
  out.write(bytes);
  out.commit();
  result.size = bytes.size();
  result.md5 = info.kernel.md5;
  result.sha256 = info.kernel.sha256;
  return result;
}

}  // namespace tpu_runtime::bmodel
