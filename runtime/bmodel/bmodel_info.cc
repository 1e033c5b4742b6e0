// bmodel_info.cc: what a checked .bmodel holds (nets, stages, tensors,
// modules), the warning-level rules of spec section 5, and the info text.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <set>

#include "bmodel/bmodel_container.h"
#include "loader/elf_check.h"
#include "tpu_runtime/error.h"

namespace tpu_runtime::bmodel {
namespace {

std::string str(const flatbuffers::String *s) { return s ? s->str() : std::string(); }

ModuleInfo module_info(const Container &c, const flatbuffers::String *name, const fb::Binary *binary) {
  ModuleInfo m;
  m.present = true;
  m.file_name = str(name);
  m.binary = {binary->start(), binary->size()};
  if (m.binary.size > 0) {
    const auto bytes = c.payload(m.binary);
    m.md5 = md5_hex(bytes);
    m.sha256 = sha256_hex(bytes);
  }
  return m;
}

TensorInfo tensor_info(const fb::Tensor *t) {
  TensorInfo info;
  info.name = t->name()->str();
  info.data_type = t->data_type();
  info.scale = t->scale();
  info.zero_point = t->zero_point();
  info.device_addr = t->device_addr();
  info.size = t->size();
  info.mem_type = t->mem_type();
  if (t->shape())
    for (const fb::Shape *s : *t->shape()) {
      // The verifier aligns a vector to its 4-byte length only, so u64
      // elements may sit at 4 mod 8: read them bytewise.
      std::vector<uint64_t> dims;
      if (const auto *d = s->dim())
        for (flatbuffers::uoffset_t i = 0; i < d->size(); ++i) dims.push_back(load_u64(d->Data() + 8 * i));
      info.shapes.push_back(std::move(dims));
    }
  return info;
}

std::vector<TensorInfo> tensors(const flatbuffers::Vector<flatbuffers::Offset<fb::Tensor>> *v) {
  std::vector<TensorInfo> out;
  if (v)
    for (const fb::Tensor *t : *v) out.push_back(tensor_info(t));
  return out;
}

StageInfo stage_info(const fb::NetParameter *p) {
  StageInfo s;
  s.dynamic = p->is_dynamic() != 0;
  s.subnets = p->sub_net() ? p->sub_net()->size() : 0;
  s.core_num = p->core_num();
  s.ctx_addr = p->ctx_addr();
  s.ctx_size = p->ctx_size();
  s.io_size = p->io_size();
  s.cpu_mem_size = p->cpu_mem_size();
  if (const fb::CoeffMem *m = p->coeff_mem()) {
    s.coeff_size = m->binary_coeff() ? m->binary_coeff()->size() : 0;
    s.coeff_encrypted = m->encrypt_mode() != 0;
  }
  s.inputs = tensors(p->input_tensor());
  s.outputs = tensors(p->output_tensor());
  return s;
}

// Warning-level rules (spec section 5): what vendor writers guarantee.
class Warnings {
 public:
  explicit Warnings(std::vector<std::string> &out) : out_(out) {}

  void tensor(const TensorInfo &t, const std::string &where) {
    if (t.shapes.empty()) add("{}: tensor '{}' has no shape (the runtime reads shape 0 unguarded)", where, t.name);
    for (const auto &dims : t.shapes)
      if (dims.size() > 8) add("{}: tensor '{}' has {} dims (at most 8)", where, t.name, dims.size());
    if (t.data_type > 13) add("{}: tensor '{}' has data_type {} (known: 0-13)", where, t.name, t.data_type);
  }

  void stage(const fb::NetParameter *p, const StageInfo &s, const std::string &where) {
    for (const TensorInfo &t : s.inputs) tensor(t, where + ".input_tensor");
    for (const TensorInfo &t : s.outputs) tensor(t, where + ".output_tensor");
    if (const fb::CoeffMem *m = p->coeff_mem()) {
      const auto *code = m->check_code();
      if (!code || code->size() != 32)
        add("{}.coeff_mem: check_code has {} bytes, not 32 (the runtime reads 32)", where, code ? code->size() : 0);
      if (m->encrypt_mode() > 1) add("{}.coeff_mem: encrypt_mode {} (known: 0, 1)", where, m->encrypt_mode());
      if (m->encrypt_mode() == 1 && m->decrypt_size() == 0)
        add("{}.coeff_mem: encrypted with decrypt_size 0", where);
    }
    if (p->sub_net())
      for (flatbuffers::uoffset_t i = 0; i < p->sub_net()->size(); ++i)
        if (p->sub_net()->Get(i)->subnet_mode() > 3)
          add("{}.sub_net[{}]: subnet_mode {} (known: 0-3)", where, i, p->sub_net()->Get(i)->subnet_mode());
  }

  void net(const fb::Net *n, const NetInfo &info, const std::string &where) {
    if (!seen_.insert(info.name).second) add("{}: net name '{}' is not unique", where, info.name);
    if (!info.legacy && info.stages.empty()) add("{}: net '{}' has no stage", where, info.name);
    if (n->cascade() && info.stages.size() > 1)
      add("{}: net '{}' has a cascade and {} stages (vendor writers give it one)", where, info.name,
          info.stages.size());
    for (std::size_t i = 1; i < info.stages.size(); ++i) {
      const StageInfo &a = info.stages[0], &b = info.stages[i];
      if (a.dynamic != b.dynamic) add("{}.parameter[{}]: is_dynamic differs from stage 0", where, i);
      if (a.inputs.size() != b.inputs.size() || a.outputs.size() != b.outputs.size())
        add("{}.parameter[{}]: tensor count differs from stage 0", where, i);
    }
  }

  template <class... Args>
  void add(fmt::format_string<Args...> f, Args &&...args) {
    out_.push_back(fmt::format(f, std::forward<Args>(args)...));
  }

 private:
  std::vector<std::string> &out_;
  std::set<std::string> seen_;
};

NetInfo net_info(const fb::Net *n) {
  NetInfo info;
  info.name = n->name()->str();
  info.addr_mode = n->addr_mode();
  info.legacy = !n->parameter();
  if (const fb::Cascade *c = n->cascade()) {
    info.cascade_device = c->device_id();
    info.cascade_step = c->step();
    info.cascade_main = str(c->main_name());
  }
  if (n->parameter())
    for (const fb::NetParameter *p : *n->parameter()) info.stages.push_back(stage_info(p));
  return info;
}

void payload_coverage(const Container &c, ModelInfo &info) {
  // Distinct non-empty ranges, and how many section bytes they cover.
  std::set<std::pair<uint64_t, uint64_t>> ranges;
  for (const BinarySlot &s : c.slots()) {
    const BinaryRef b = c.binary_at(s.offset);
    if (b.size > 0) ranges.insert({b.start, b.start + b.size});
  }
  info.payloads = ranges.size();
  uint64_t covered = 0, end = 0;
  for (const auto &[from, to] : ranges) {
    const uint64_t begin = std::max(from, end);
    if (to > begin) covered += to - begin;
    end = std::max(end, to);
  }
  info.referenced_bytes = covered;
}

}  // namespace

ModelInfo describe(const Container &c) {
  const fb::Model *m = c.model();
  ModelInfo info;
  info.type = m->type()->str();
  info.version = m->version()->str();
  info.time = m->time()->str();
  info.chip = m->chip()->str();
  info.device_num = m->device_num();
  info.bmodel_type = m->bmodel_type();
  info.neuron_size = m->neuron_size();
  if (const fb::KernelModule *k = m->kernel_module()) info.kernel = module_info(c, k->file_name(), k->binary());
  if (const fb::CpuopModule *k = m->cpuop_module()) info.cpuop = module_info(c, k->file_name(), k->binary());
  if (const fb::Binary *b = m->lib_backend()) info.lib_backend = BinaryRef{b->start(), b->size()};
  info.file_size = c.file().size();
  info.flatbuffers_size = c.fb_size();
  info.section_size = c.section_size();
  payload_coverage(c, info);

  info.warnings = c.warnings();
  Warnings w(info.warnings);
  uint64_t max_ctx = 0;
  for (flatbuffers::uoffset_t i = 0; i < m->net()->size(); ++i) {
    const fb::Net *n = m->net()->Get(i);
    const std::string where = fmt::format("net[{}]", i);
    NetInfo net = net_info(n);
    for (std::size_t s = 0; s < net.stages.size(); ++s) {
      w.stage(n->parameter()->Get(flatbuffers::uoffset_t(s)), net.stages[s], fmt::format("{}.parameter[{}]", where, s));
      max_ctx = std::max(max_ctx, net.stages[s].ctx_size);
    }
    w.net(n, net, where);
    info.nets.push_back(std::move(net));
  }
  if (max_ctx != info.neuron_size)
    w.add("neuron_size {} is not the largest ctx_size {}", info.neuron_size, max_ctx);
  if (info.kernel.present && info.kernel.binary.size > 0 && info.kernel.file_name.empty())
    w.add("kernel_module: {} bytes but an empty file_name", info.kernel.binary.size);
  return info;
}

ModelInfo parse(std::span<const uint8_t> file, const std::string &name) {
  const Container c(file, name);
  return describe(c);
}

bool file_has_bmodel_magic(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  uint8_t head[4] = {};
  if (!in.read(reinterpret_cast<char *>(head), 4)) return false;
  return has_bmodel_magic(head);
}

ModelInfo read(const std::string &path) {
  const std::vector<uint8_t> bytes = read_file(path);
  return parse(bytes, path);
}

std::string dtype_name(uint32_t data_type) {
  static const char *const names[] = {"f32", "f16", "i8",  "u8",  "i16",    "u16",    "i32",
                                      "u32", "bf16", "i4", "u4", "fp20", "f8e5m2", "f8e4m3"};
  if (data_type < std::size(names)) return names[data_type];
  return fmt::format("dtype {}", data_type);
}

namespace {

std::string shape_text(const TensorInfo &t) {
  std::vector<std::string> parts;
  for (const auto &dims : t.shapes) parts.push_back(fmt::format("[{}]", fmt::join(dims, ",")));
  return parts.empty() ? std::string("[]") : fmt::format("{}", fmt::join(parts, " "));
}

std::string module_text(const char *what, const ModuleInfo &m) {
  if (!m.present) return fmt::format("  {}: absent\n", what);
  if (m.binary.size == 0) return fmt::format("  {}: none (empty table{})\n", what, m.file_name.empty() ? "" : ", name '" + m.file_name + "'");
  return fmt::format("  {}: {} ({} bytes at section offset {})\n    md5 {}\n    sha256 {}\n", what, m.file_name,
                     m.binary.size, m.binary.start, m.md5, m.sha256);
}

void tensor_lines(std::string &out, const char *role, const std::vector<TensorInfo> &list) {
  for (const TensorInfo &t : list)
    out += fmt::format("      {} {:<20} {:<6} shape {:<18} scale {:g} zero_point {}\n", role, t.name,
                       dtype_name(t.data_type), shape_text(t), t.scale, t.zero_point);
}

}  // namespace

std::string info_text(const ModelInfo &info, const std::string &path) {
  std::string time = info.time;  // ctime() form ends in a newline
  while (!time.empty() && (time.back() == '\n' || time.back() == '\r')) time.pop_back();
  std::string out = fmt::format("{}: bmodel {}.{}, chip {}, device_num {}, created {}\n", path, info.type,
                                info.version, info.chip, info.device_num == 0 ? 1 : info.device_num, time);
  out += fmt::format("  file {} bytes: header 64, FlatBuffer {}, binary section {} ({} referenced, {} distinct "
                     "payloads)\n",
                     info.file_size, info.flatbuffers_size, info.section_size, info.referenced_bytes, info.payloads);
  out += fmt::format("  neuron_size {}, bmodel_type {}\n", info.neuron_size, info.bmodel_type);
  out += module_text("kernel module", info.kernel);
  out += module_text("cpu op module", info.cpuop);
  if (info.lib_backend && info.lib_backend->size > 0)
    out += fmt::format("  lib_backend: {} bytes\n", info.lib_backend->size);
  for (const NetInfo &n : info.nets) {
    out += fmt::format("  net '{}': {}, addr_mode {}", n.name,
                       n.legacy ? "legacy (net_static/net_dynamic)"
                       : std::any_of(n.stages.begin(), n.stages.end(), [](const StageInfo &s) { return s.dynamic; })
                           ? "dynamic"
                           : "static",
                       n.addr_mode);
    if (n.cascade_device)
      out += fmt::format(", cascade device {} step {} of '{}'", *n.cascade_device, *n.cascade_step, n.cascade_main);
    out += fmt::format(", {} stage{}\n", n.stages.size(), n.stages.size() == 1 ? "" : "s");
    for (std::size_t i = 0; i < n.stages.size(); ++i) {
      const StageInfo &s = n.stages[i];
      out += fmt::format("    stage {}: {} subnet{}, core_num {}, ctx_size {}, io_size {}, coeff {} bytes{}, "
                         "cpu_mem_size {}\n",
                         i, s.subnets, s.subnets == 1 ? "" : "s", s.core_num == 0 ? 1 : s.core_num, s.ctx_size,
                         s.io_size, s.coeff_size, s.coeff_encrypted ? " (encrypted)" : "", s.cpu_mem_size);
      tensor_lines(out, "input ", s.inputs);
      tensor_lines(out, "output", s.outputs);
    }
  }
  for (const std::string &w : info.warnings) out += fmt::format("  warning: {}\n", w);
  return out;
}

}  // namespace tpu_runtime::bmodel
