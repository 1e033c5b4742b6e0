// bmodel_container.cc: the container rules of a .bmodel (spec section 2 and
// the error-level rules of section 5) and the walk that finds every Binary.
#include "bmodel/bmodel_container.h"

#include <fmt/format.h>
#include <openssl/evp.h>

#include <cstring>
#include <set>
#include <typeindex>
#include <unordered_map>
#include <utility>

#include "tpu_runtime/error.h"

namespace tpu_runtime::bmodel {

uint32_t load_u32(const uint8_t *p) {
  return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
}
uint64_t load_u64(const uint8_t *p) { return uint64_t(load_u32(p)) | uint64_t(load_u32(p + 4)) << 32; }
void store_u32(uint8_t *p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = uint8_t(v >> (8 * i));
}
void store_u64(uint8_t *p, uint64_t v) {
  store_u32(p, uint32_t(v));
  store_u32(p + 4, uint32_t(v >> 32));
}

std::string md5_hex(std::span<const uint8_t> bytes) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  if (EVP_Digest(bytes.data(), bytes.size(), digest, &length, EVP_md5(), nullptr) != 1)
    throw Error("MD5: OpenSSL's EVP_Digest failed");
  std::string hex;
  for (unsigned int i = 0; i < length; ++i) hex += fmt::format("{:02x}", digest[i]);
  return hex;
}

bool has_bmodel_magic(std::span<const uint8_t> bytes) {
  if (bytes.size() < 4) return false;
  const uint32_t magic = load_u32(bytes.data());
  return magic == kMagic || magic == kOldMagic;
}

// ---- the walk --------------------------------------------------------------

// Visits every table reachable from the root once per (address, type): a
// revisit of a shared table would find the same Binary locations again.
// Records each Binary location once, and every vtable slot beyond the
// fields our schema knows (a newer writer's field may hold a Binary we would
// not shift, so updates fall back to append mode).
class BinaryWalker {
 public:
  explicit BinaryWalker(Container &c) : c_(c) {}

  void model(const fb::Model *m) {
    table(m, 11, "model");
    if (const fb::KernelModule *k = m->kernel_module(); k && table(k, 2, "kernel_module")) {
      c_.kernel_slot_ = int(slot(k->binary(), "kernel_module.binary"));
    }
    if (const fb::CpuopModule *k = m->cpuop_module(); k && table(k, 2, "cpuop_module"))
      c_.cpuop_slot_ = int(slot(k->binary(), "cpuop_module.binary"));
    slot(m->lib_backend(), "lib_backend");
    each(m->net(), "net", [&](const fb::Net *n, const std::string &p) { net(n, p); });
  }

 private:
  template <class T, class F>
  void each(const flatbuffers::Vector<flatbuffers::Offset<T>> *v, const std::string &path, F f) {
    if (!v) return;
    for (flatbuffers::uoffset_t i = 0; i < v->size(); ++i) f(v->Get(i), fmt::format("{}[{}]", path, i));
  }

  // False when this table was already walked as this type.
  template <class T>
  bool table(const T *t, int known_fields, const std::string &path) {
    if (!t || !visited_.insert({t, std::type_index(typeid(T))}).second) return false;
    const auto *bytes = reinterpret_cast<const uint8_t *>(t);
    const uint8_t *vtable = bytes - flatbuffers::ReadScalar<flatbuffers::soffset_t>(bytes);
    const int slots = (int(flatbuffers::ReadScalar<flatbuffers::voffset_t>(vtable)) - 4) / 2;
    for (int id = known_fields; id < slots; ++id)
      if (flatbuffers::ReadScalar<flatbuffers::voffset_t>(vtable + 4 + 2 * id) != 0)
        c_.unknown_fields_.push_back(fmt::format("{}: field id {}", path, id));
    return true;
  }

  // Index of the location in c_.slots_ (-1 for an absent struct).
  long slot(const fb::Binary *b, const std::string &path) {
    if (!b) return -1;
    const auto offset = uint32_t(reinterpret_cast<const uint8_t *>(b) - c_.fb());
    auto [it, added] = index_.try_emplace(offset, c_.slots_.size());
    if (added) c_.slots_.push_back({offset, path, 0});
    ++c_.slots_[it->second].references;
    return long(it->second);
  }

  void binaries(const flatbuffers::Vector<const fb::Binary *> *v, const std::string &path) {
    if (!v) return;
    for (flatbuffers::uoffset_t i = 0; i < v->size(); ++i) slot(v->Get(i), fmt::format("{}[{}]", path, i));
  }

  void net(const fb::Net *n, const std::string &p) {
    if (!table(n, 6, p)) return;
    each(n->net_static(), p + ".net_static", [&](const fb::NetStatic *s, const std::string &q) { net_static(s, q); });
    each(n->net_dynamic(), p + ".net_dynamic",
         [&](const fb::NetDynamic *s, const std::string &q) { net_dynamic(s, q); });
    each(n->parameter(), p + ".parameter", [&](const fb::NetParameter *s, const std::string &q) { stage(s, q); });
    table(n->cascade(), 3, p + ".cascade");
  }

  void tensors(const flatbuffers::Vector<flatbuffers::Offset<fb::Tensor>> *v, const std::string &path) {
    each(v, path, [&](const fb::Tensor *t, const std::string &q) {
      if (table(t, 13, q)) each(t->shape(), q + ".shape", [&](const fb::Shape *s, const std::string &r) { table(s, 1, r); });
    });
  }

  void cmd_groups(const flatbuffers::Vector<flatbuffers::Offset<fb::CmdGroup>> *v, const std::string &path) {
    each(v, path, [&](const fb::CmdGroup *g, const std::string &q) {
      if (!table(g, 6, q)) return;
      slot(g->binary_bdc(), q + ".binary_bdc");
      slot(g->binary_gdma(), q + ".binary_gdma");
    });
  }

  void coeff(const fb::CoeffMem *m, const std::string &p) {
    if (!table(m, 6, p)) return;
    slot(m->binary_coeff(), p + ".binary_coeff");
    each(m->location(), p + ".location", [&](const fb::Location *l, const std::string &q) { table(l, 3, q); });
  }

  void stage_irs(const flatbuffers::Vector<flatbuffers::Offset<fb::StageIR>> *v, const std::string &path) {
    each(v, path, [&](const fb::StageIR *s, const std::string &q) { table(s, 5, q); });
  }

  void stage(const fb::NetParameter *s, const std::string &p) {
    if (!table(s, 23, p)) return;
    tensors(s->input_tensor(), p + ".input_tensor");
    tensors(s->output_tensor(), p + ".output_tensor");
    coeff(s->coeff_mem(), p + ".coeff_mem");
    cmd_groups(s->cmd_group(), p + ".cmd_group");
    slot(s->net_profile(), p + ".net_profile");
    stage_irs(s->stage_ir(), p + ".stage_ir");
    slot(s->binary_ir(), p + ".binary_ir");
    subnets(s->sub_net(), p + ".sub_net");
    slot(s->net_stat(), p + ".net_stat");
    slot(s->tensor_loc(), p + ".tensor_loc");
  }

  void net_static(const fb::NetStatic *s, const std::string &p) {
    if (!table(s, 8, p)) return;
    tensors(s->input_tensor(), p + ".input_tensor");
    tensors(s->output_tensor(), p + ".output_tensor");
    cmd_groups(s->cmd_group(), p + ".cmd_group");
    coeff(s->coeff_mem(), p + ".coeff_mem");
    subnets(s->sub_net(), p + ".sub_net");
    slot(s->net_profile(), p + ".net_profile");
  }

  void net_dynamic(const fb::NetDynamic *s, const std::string &p) {
    if (!table(s, 10, p)) return;
    tensors(s->input_tensor(), p + ".input_tensor");
    tensors(s->output_tensor(), p + ".output_tensor");
    stage_irs(s->stage_ir(), p + ".stage_ir");
    slot(s->binary_ir(), p + ".binary_ir");
    coeff(s->coeff_mem(), p + ".coeff_mem");
    subnets(s->sub_net(), p + ".sub_net");
  }

  void subnets(const flatbuffers::Vector<flatbuffers::Offset<fb::SubNet>> *v, const std::string &path) {
    each(v, path, [&](const fb::SubNet *s, const std::string &q) { subnet(s, q); });
  }

  void subnet(const fb::SubNet *s, const std::string &p) {
    if (!table(s, 15, p)) return;
    cmd_groups(s->cmd_group(), p + ".cmd_group");
    each(s->cpu_param(), p + ".cpu_param", [&](const fb::CpuParam *c, const std::string &q) {
      if (!table(c, 4, q)) return;
      slot(c->binary_param(), q + ".binary_param");
      each(c->cpu_const(), q + ".cpu_const", [&](const fb::CpuConst *k, const std::string &r) {
        if (table(k, 3, r)) slot(k->const_data(), r + ".const_data");
      });
    });
    tensors(s->input_tensor(), p + ".input_tensor");
    tensors(s->output_tensor(), p + ".output_tensor");
    if (const fb::MergeParam *m = s->merge_param(); m && table(m, 1, p + ".merge_param"))
      each(m->output_from(), p + ".merge_param.output_from",
           [&](const fb::OutputFrom *o, const std::string &q) { table(o, 1, q); });
    table(s->switch_param(), 2, p + ".switch_param");
    each(s->core_commands(), p + ".core_commands", [&](const fb::CoreCommands *c, const std::string &q) {
      if (!table(c, 4, q)) return;
      cmd_groups(c->gdma_tiu_commands(), q + ".gdma_tiu_commands");
      binaries(c->sdma_commands(), q + ".sdma_commands");
      binaries(c->hau_commands(), q + ".hau_commands");
      binaries(c->cdma_commands(), q + ".cdma_commands");
    });
  }

  Container &c_;
  std::set<std::pair<const void *, std::type_index>> visited_;
  std::unordered_map<uint32_t, std::size_t> index_;
};

// ---- the checks ------------------------------------------------------------

Container::Container(std::span<const uint8_t> file, std::string name) : file_(file), name_(std::move(name)) {
  check_header();
  verify_flatbuffer();
  locate_binaries();
  check_binary_bounds();
}

void Container::check_header() {
  const uint64_t length = file_.size();
  if (length < kHeaderSize)
    throw Error(fmt::format("{}: {} bytes, shorter than the 64-byte bmodel header (rule H1)", name_, length));
  const uint8_t *h = file_.data();
  const uint32_t magic = load_u32(h);
  if (magic == kOldMagic)
    throw Error(fmt::format("{}: magic 0x{:08X} at offset 0 is the older bmtap2 model format, which is not supported "
                            "(rule H1)",
                            name_, magic));
  if (magic != kMagic)
    throw Error(fmt::format("{}: not a bmodel: magic 0x{:08X} at offset 0, expected 0x{:08X} (rule H1)", name_, magic,
                            kMagic));
  const uint32_t header_size = load_u32(h + 4);
  if (header_size != kHeaderSize)
    throw Error(fmt::format("{}: header_size {} at offset 4 is not 64: the file is encrypted or has an unknown header "
                            "(magic 0x{:08X}, header_size {}, file length {}); encrypted: decrypt with the vendor tool "
                            "first (rule H2)",
                            name_, header_size, magic, header_size, length));
  for (uint32_t i = 20; i < kHeaderSize; ++i)
    if (h[i] != 0)
      throw Error(fmt::format("{}: header byte {} (reserved, bytes 20-63) is 0x{:02x}, not 0: the header is damaged, "
                              "or encrypted with a length-preserving cipher (rule H2)",
                              name_, i, h[i]));
  const uint32_t f = load_u32(h + 8);
  if (f == 0 || f >= (uint32_t(1) << 31))
    throw Error(fmt::format("{}: flatbuffers_size {} at offset 8 is not in (0, 2^31) (rule H3)", name_, f));
  if (kHeaderSize + uint64_t(f) > length)
    throw Error(fmt::format("{}: the FlatBuffer [64, {}) ends past the end of the file ({} bytes): truncated (rule H3)",
                            name_, kHeaderSize + uint64_t(f), length));
  fb_size_ = f;
  const uint64_t available = length - kHeaderSize - f;
  const uint64_t b = load_u64(h + 12);
  if (b > available)
    throw Error(fmt::format("{}: binary_size {} at offset 12: the binary section [{}, {}) ends past the end of the file "
                            "({} bytes): truncated (rule H3)",
                            name_, b, kHeaderSize + uint64_t(f), kHeaderSize + uint64_t(f) + b, length));
  section_size_ = b;
  if (b < available && (available - b) % (uint64_t(1) << 32) == 0) {
    section_size_ = available;
    warnings_.push_back(fmt::format("binary_size {} is the section's length {} truncated to 32 bits (an older "
                                    "writer); using {} (rule H3)",
                                    b, available, available));
  } else if (b < available) {
    warnings_.push_back(fmt::format("{} bytes after the binary section (at offset {}); vendor tools ignore them, "
                                    "updates refuse them (rule H3)",
                                    available - b, kHeaderSize + uint64_t(f) + b));
  }
  if (f % 8 != 0) warnings_.push_back(fmt::format("flatbuffers_size {} is not a multiple of 8 as vendor output is", f));
}

void Container::verify_flatbuffer() {
  fb_storage_.assign((uint64_t(fb_size_) + 7) / 8, 0);
  std::memcpy(fb_storage_.data(), file_.data() + kHeaderSize, fb_size_);
  // The vendor's limits: depth 64, 1,000,000 tables (revisits counted, so
  // every later walk of the buffer is bounded).
  flatbuffers::Verifier verifier(fb(), fb_size_, 64, 1000000);
  if (!fb::VerifyModelBuffer(verifier))
    throw Error(fmt::format("{}: the FlatBuffer [64, {}) fails the flatbuffers verifier for root table Model: the file "
                            "is damaged or encrypted (rule V1)",
                            name_, kHeaderSize + uint64_t(fb_size_)));
  model_ = fb::GetModel(fb());
  if (model_->net()->size() == 0) throw Error(fmt::format("{}: Model.net is empty: no network (rule V2)", name_));
}

void Container::locate_binaries() { BinaryWalker(*this).model(model_); }

void Container::check_binary_bounds() {
  for (const BinarySlot &s : slots_) {
    const BinaryRef b = binary_at(s.offset);
    if (b.size > 0 && (b.start > section_size_ || b.size > section_size_ - b.start))
      throw Error(fmt::format("{}: {} = {{start {}, size {}}} (FlatBuffer offset {}) lies outside the binary section "
                              "({} bytes) (rule B1)",
                              name_, s.path, b.start, b.size, s.offset, section_size_));
  }
  for (const std::string &u : unknown_fields_)
    warnings_.push_back(fmt::format("{} is not in our schema (a newer writer?); updates use append mode", u));
}

BinaryRef Container::binary_at(uint32_t offset) const {
  return {load_u64(fb() + offset), load_u64(fb() + offset + 8)};
}

std::span<const uint8_t> Container::payload(BinaryRef b) const {
  if (b.size == 0) return {};
  return section().subspan(b.start, b.size);
}

}  // namespace tpu_runtime::bmodel
