// bmodel_writer.h: a test-only .bmodel writer, written from the facts of
// shared/spec/bmodel-format.md (sections 2 and 6), with the generated code of
// our schema. It follows the vendor compiler's habits: the kernel module is
// written first (start 0), payloads are deduplicated by exact content,
// NetParameter.cmd_group and the static subnets' cmd_group share the same
// CmdGroup tables, default scalars are omitted (the builder's default),
// next_subnet_ids is present and empty for the last subnet.
// Used by tests/runtime/bmodel/bmodel_test.cc and by fuzz/bmodel_fuzz.cc (its seeds).
#pragma once

#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "bmodel_generated.h"

namespace bmodel_writer {

namespace fb = tpu_runtime::bmodel::fb;
using Bytes = std::vector<uint8_t>;

// Deterministic filler bytes.
inline Bytes pattern(std::size_t n, uint32_t seed) {
  Bytes out(n);
  uint32_t x = seed * 2654435761u + 12345;
  for (uint8_t &b : out) {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    b = uint8_t(x);
  }
  return out;
}

struct Tensor {
  std::string name;
  uint32_t dtype = 0;
  std::vector<uint64_t> shape;
  float scale = 1.0f;
  int32_t zero_point = 0;
  uint64_t addr = 0, size = 0;
  uint32_t mem_type = 1;
  int32_t hidden = 0, index = 0;
};

struct CmdBlobs {
  Bytes bdc, gdma;  // multiples of 128 bytes, as the runtime expects
};

struct Subnet {
  int32_t mode = 0;         // 0 TPU, 1 CPU
  bool dynamic = false;     // runs the stage IR
  uint32_t ir_offset = 0, ir_len = 0;
  Bytes cpu_param;          // CPU subnets
  std::vector<int32_t> next;
  std::vector<Bytes> core_sdma;  // multi-core: one SDMA blob and one own CmdGroup per core
};

struct Stage {
  std::vector<Tensor> inputs, outputs;
  uint64_t ctx_addr = 0x100000, ctx_size = 0;
  Bytes coeff;                 // empty: no coeff_mem
  std::vector<CmdBlobs> cmd_groups;  // static single-core groups, shared with the TPU subnets
  bool dynamic = false;
  Bytes ir;                    // dynamic IR (4N bytes)
  uint32_t core_num = 0;
  std::vector<Subnet> subnets;
  Bytes net_profile, net_stat, tensor_loc;
  int32_t encrypt_mode = 0;
};

struct Net {
  std::string name;
  std::vector<Stage> stages;
  int32_t addr_mode = 0;
  std::optional<std::pair<uint32_t, uint32_t>> cascade = {};  // device, step ("main")
  bool legacy = false;  // net_static only, no parameter
};

struct Model {
  std::string chip = "BM1684X";
  std::string version = "2.2+v1.0-test";
  std::string time = "Mon Jan  6 10:00:00 2025\n";
  bool kernel_table = true;
  std::string kernel_name;
  Bytes kernel;
  std::string cpuop_name;
  Bytes cpuop;
  std::vector<Net> nets;
  uint32_t device_num = 1, bmodel_type = 0;
  Bytes lib_backend;
  Bytes extra_payload;  // written right after the kernel: lets a test share the kernel's bytes
  bool unknown_field = false;  // Model gets a u32 at field id 11, beyond our schema (a newer writer's)
  bool cpuop_is_kernel_table = false;  // cpuop_module points at the KernelModule table (same layout)
};

// The binary section with the compiler's exact-content dedup.
class Section {
 public:
  fb::Binary add(const Bytes &bytes) {
    if (bytes.empty()) return fb::Binary(data_.size(), 0);
    for (const auto &[start, size] : ranges_)
      if (size == bytes.size() && std::memcmp(data_.data() + start, bytes.data(), size) == 0)
        return fb::Binary(start, size);
    const uint64_t start = data_.size();
    data_.insert(data_.end(), bytes.begin(), bytes.end());
    ranges_.push_back({start, bytes.size()});
    return fb::Binary(start, bytes.size());
  }
  const Bytes &data() const { return data_; }

 private:
  Bytes data_;
  std::vector<std::pair<uint64_t, uint64_t>> ranges_;
};

class Writer {
 public:
  Bytes write(const Model &m) {
    const fb::Binary kernel = section_.add(m.kernel);  // first: start 0
    section_.add(m.extra_payload);
    std::vector<flatbuffers::Offset<fb::Net>> nets;
    for (const Net &n : m.nets) nets.push_back(net(n));
    const fb::Binary cpuop = section_.add(m.cpuop);
    const fb::Binary backend = section_.add(m.lib_backend);
    uint64_t neuron = 0;
    for (const Net &n : m.nets)
      for (const Stage &s : n.stages) neuron = std::max(neuron, s.ctx_size);
    flatbuffers::Offset<fb::KernelModule> kernel_module;
    if (m.kernel_table) kernel_module = fb::CreateKernelModule(b_, b_.CreateString(m.kernel_name), &kernel);
    const auto cpuop_module = m.cpuop_is_kernel_table
                                  ? flatbuffers::Offset<fb::CpuopModule>(kernel_module.o)
                                  : fb::CreateCpuopModule(b_, b_.CreateString(m.cpuop_name), &cpuop);
    const auto type = b_.CreateString("B"), version = b_.CreateString(m.version), time = b_.CreateString(m.time),
               chip = b_.CreateString(m.chip);
    const auto net_vector = b_.CreateVector(nets);
    fb::ModelBuilder root_builder(b_);
    root_builder.add_type(type);
    root_builder.add_version(version);
    root_builder.add_time(time);
    root_builder.add_chip(chip);
    root_builder.add_net(net_vector);
    root_builder.add_neuron_size(neuron);
    if (m.kernel_table) root_builder.add_kernel_module(kernel_module);
    root_builder.add_device_num(m.device_num);
    root_builder.add_cpuop_module(cpuop_module);
    root_builder.add_bmodel_type(m.bmodel_type);
    root_builder.add_lib_backend(&backend);
    if (m.unknown_field) b_.AddElement<uint32_t>(flatbuffers::voffset_t(4 + 2 * 11), 7u, 0u);
    const auto root = root_builder.Finish();
    b_.Finish(root);
    const uint32_t f = b_.GetSize();
    const uint64_t size = section_.data().size();
    Bytes out(64 + f + size, 0);
    const uint32_t header[3] = {0xFF55AAEEu, 64, f};
    std::memcpy(out.data(), header, sizeof header);
    std::memcpy(out.data() + 12, &size, 8);
    std::memcpy(out.data() + 64, b_.GetBufferPointer(), f);
    if (size) std::memcpy(out.data() + 64 + f, section_.data().data(), size);
    return out;
  }

 private:
  flatbuffers::Offset<fb::Tensor> tensor(const Tensor &t) {
    const auto dims = fb::CreateShape(b_, b_.CreateVector(t.shape));
    return fb::CreateTensor(b_, b_.CreateString(t.name), t.dtype, 0, t.addr, t.size, b_.CreateVector(&dims, 1),
                            t.mem_type, t.scale, 0, 0, t.zero_point, t.hidden, t.index);
  }

  flatbuffers::Offset<flatbuffers::Vector<flatbuffers::Offset<fb::Tensor>>> tensors(const std::vector<Tensor> &list) {
    std::vector<flatbuffers::Offset<fb::Tensor>> out;
    for (const Tensor &t : list) out.push_back(tensor(t));
    return b_.CreateVector(out);
  }

  flatbuffers::Offset<fb::CmdGroup> cmd_group(const CmdBlobs &c) {
    const fb::Binary bdc = section_.add(c.bdc), gdma = section_.add(c.gdma);
    return fb::CreateCmdGroup(b_, uint32_t(c.bdc.size() / 128), uint32_t(c.gdma.size() / 128),
                              c.bdc.empty() ? nullptr : &bdc, c.gdma.empty() ? nullptr : &gdma,
                              uint32_t(c.bdc.size()), uint32_t(c.gdma.size()));
  }

  flatbuffers::Offset<fb::CoeffMem> coeff(const Stage &s) {
    if (s.coeff.empty()) return 0;
    const fb::Binary blob = section_.add(s.coeff);
    std::vector<flatbuffers::Offset<fb::Location>> locations;
    for (int i = 0; i < 3; ++i)
      locations.push_back(fb::CreateLocation(b_, b_.CreateString("op" + std::to_string(i)),
                                             uint64_t(i) * (s.coeff.size() / 3), s.coeff.size() / 3));
    const Bytes check(32, 0x5a);  // the real hash is not needed by our reader
    return fb::CreateCoeffMem(b_, 0x200000, b_.CreateVector(check), &blob, b_.CreateVector(locations),
                              s.encrypt_mode, s.encrypt_mode ? s.coeff.size() : 0);
  }

  flatbuffers::Offset<fb::SubNet> subnet(const Subnet &sn, int32_t id, const Stage &s,
                                         const std::vector<flatbuffers::Offset<fb::CmdGroup>> &groups) {
    flatbuffers::Offset<flatbuffers::Vector<flatbuffers::Offset<fb::CmdGroup>>> own_groups;
    if (sn.mode == 0 && !sn.dynamic && !groups.empty()) own_groups = b_.CreateVector(groups);  // shared tables
    flatbuffers::Offset<flatbuffers::Vector<flatbuffers::Offset<fb::CpuParam>>> cpu;
    if (sn.mode == 1) {
      const fb::Binary param = section_.add(sn.cpu_param);
      const auto p = fb::CreateCpuParam(b_, 90000, &param, b_.CreateVector<flatbuffers::Offset<fb::CpuConst>>({}), 1);
      cpu = b_.CreateVector(&p, 1);
    }
    flatbuffers::Offset<flatbuffers::Vector<flatbuffers::Offset<fb::CoreCommands>>> cores;
    if (!sn.core_sdma.empty()) {
      std::vector<flatbuffers::Offset<fb::CoreCommands>> list;
      for (std::size_t c = 0; c < sn.core_sdma.size(); ++c) {
        const auto g = cmd_group({pattern(128, 900 + uint32_t(c)), pattern(256, 950 + uint32_t(c))});
        const fb::Binary sdma = section_.add(sn.core_sdma[c]);
        list.push_back(fb::CreateCoreCommands(b_, b_.CreateVector(&g, 1), b_.CreateVectorOfStructs(&sdma, 1)));
      }
      cores = b_.CreateVector(list);
    }
    const int dyn = sn.dynamic ? 1 : 0;
    return fb::CreateSubNet(b_, sn.mode, own_groups, cpu, tensors(s.inputs), tensors(s.outputs), dyn, sn.ir_offset,
                            sn.ir_len, dyn, dyn, id, b_.CreateVector(sn.next), 0, 0, cores);
  }

  flatbuffers::Offset<fb::NetParameter> stage(const Stage &s) {
    const auto coeff_mem = coeff(s);
    std::vector<flatbuffers::Offset<fb::CmdGroup>> groups;
    for (const CmdBlobs &c : s.cmd_groups) groups.push_back(cmd_group(c));
    std::vector<flatbuffers::Offset<fb::SubNet>> subnets;
    for (std::size_t i = 0; i < s.subnets.size(); ++i) subnets.push_back(subnet(s.subnets[i], int32_t(i), s, groups));
    const fb::Binary ir = section_.add(s.ir);
    const fb::Binary profile = section_.add(s.net_profile), stat = section_.add(s.net_stat),
                     loc = section_.add(s.tensor_loc);
    const auto stage_ir = fb::CreateStageIR(b_, uint32_t(s.ir.size() / 4));
    const std::vector<uint64_t> ctx_sizes{s.ctx_size};
    const int dyn = s.dynamic ? 1 : 0;
    return fb::CreateNetParameter(
        b_, tensors(s.inputs), tensors(s.outputs), s.ctx_addr, s.ctx_size, coeff_mem, dyn, dyn, dyn,
        b_.CreateVector(groups), s.net_profile.empty() ? nullptr : &profile, b_.CreateVector(&stage_ir, 1), &ir,
        b_.CreateVector(subnets), 0, b_.CreateVector(ctx_sizes), s.net_stat.empty() ? nullptr : &stat, s.core_num, 0,
        0, s.tensor_loc.empty() ? nullptr : &loc, s.ctx_addr, 0, 0);
  }

  flatbuffers::Offset<fb::Net> net(const Net &n) {
    const auto name = b_.CreateString(n.name);
    if (n.legacy) {
      const Stage &s = n.stages.at(0);
      const auto st = fb::CreateNetStatic(b_, tensors(s.inputs), tensors(s.outputs), 0, s.ctx_addr, s.ctx_size);
      return fb::CreateNet(b_, name, b_.CreateVector(&st, 1));
    }
    std::vector<flatbuffers::Offset<fb::NetParameter>> stages;
    for (const Stage &s : n.stages) stages.push_back(stage(s));
    flatbuffers::Offset<fb::Cascade> cascade;
    if (n.cascade) cascade = fb::CreateCascade(b_, n.cascade->first, n.cascade->second, b_.CreateString("main"));
    return fb::CreateNet(b_, name, 0, 0, b_.CreateVector(stages), cascade, n.addr_mode);
  }

  flatbuffers::FlatBufferBuilder b_;
  Section section_;
};

inline Bytes write(const Model &m) { return Writer().write(m); }

// ---- the spec's model fixtures (section 6), with the given kernel bytes --------

inline Tensor t(std::string name, std::vector<uint64_t> shape, uint32_t dtype = 0, float scale = 1.0f,
                int32_t zero_point = 0) {
  Tensor x;
  x.name = std::move(name);
  x.shape = std::move(shape);
  x.dtype = dtype;
  x.scale = scale;
  x.zero_point = zero_point;
  x.addr = 0x100000;
  x.size = 4;
  for (uint64_t d : x.shape) x.size *= d;
  return x;
}

inline Stage static_stage(uint64_t batch) {
  Stage s;
  s.inputs = {t("images", {batch, 3, 16, 16}, 2, 0.5f, 3)};
  s.outputs = {t("scores", {batch, 10})};
  s.ctx_size = 65536 * batch;
  s.coeff = pattern(64 * 1024, 7);  // identical in every stage: dedup gives one blob
  s.cmd_groups = {{pattern(256, 10 + uint32_t(batch)), pattern(128, 20 + uint32_t(batch))},
                  {pattern(128, 30 + uint32_t(batch)), {}}};
  Subnet sn;
  s.subnets = {sn};
  return s;
}

// M1 + M2: BM1684X, one net, two stages (batch 1 and 4), shared coefficients.
inline Model m2_stages(Bytes kernel) {
  Model m;
  m.kernel_name = "libbm1684x_kernel_module.so";
  m.kernel = std::move(kernel);
  m.nets.push_back({"resnet", {static_stage(1), static_stage(4)}});
  return m;
}

// M3 dynamic + M4 subnets + M7 debug, in one BM1684X file with two nets.
inline Model m347_mixed(Bytes kernel) {
  Model m = m2_stages(std::move(kernel));
  Stage d;
  d.inputs = {t("x", {1, 8})};
  d.outputs = {t("y", {1, 8})};
  d.ctx_size = 4096;
  d.dynamic = true;
  d.ir = pattern(4 * 24, 40);
  Subnet ds;
  ds.dynamic = true;
  ds.ir_len = 24;
  d.subnets = {ds};
  m.nets.push_back({"dyn", {d}});
  Stage c = static_stage(2);
  c.subnets.clear();
  Subnet a, cpu, z;
  a.next = {1};
  cpu.mode = 1;
  cpu.cpu_param = pattern(128, 50);
  cpu.next = {2};
  c.subnets = {a, cpu, z};
  c.net_profile = pattern(300, 60);
  c.net_stat = pattern(200, 61);
  c.tensor_loc = {'[', '{', '}', ']'};
  m.nets.push_back({"chain", {c}});
  m.cpuop_name = "libcpuop.so";
  m.cpuop = pattern(500, 70);
  m.bmodel_type = 1;
  m.lib_backend = pattern(96, 80);
  return m;
}

// M5: BM1688, multi-core stage (core_num 2), NetParameter.cmd_group empty.
inline Model m5_multicore(Bytes kernel) {
  Model m;
  m.chip = "BM1688";
  m.kernel_name = "libbmtpulv60_kernel_module.so";
  m.kernel = std::move(kernel);
  Stage s;
  s.inputs = {t("in", {1, 4, 8, 8}, 1)};
  s.outputs = {t("out", {1, 4, 8, 8}, 1)};
  s.ctx_size = 8192;
  s.coeff = pattern(3000, 90);
  s.core_num = 2;
  Subnet sn;
  sn.core_sdma = {pattern(128, 91), pattern(128, 92)};
  s.subnets = {sn};
  m.nets.push_back({"mc", {s}});
  return m;
}

// M6: cascade, device_num 2, two nets.
inline Model m6_cascade(Bytes kernel) {
  Model m = m5_multicore(std::move(kernel));
  m.device_num = 2;
  m.nets[0].cascade = {{0, 0}};
  Net second = m.nets[0];
  second.name = "mc_part1";
  second.cascade = {{1, 0}};
  second.stages[0].coeff = pattern(3000, 95);
  m.nets.push_back(second);
  return m;
}

// M8: BM1684, empty kernel table.
inline Model m8_none() {
  Model m = m2_stages({});
  m.chip = "BM1684";
  m.kernel_name = "";
  return m;
}

// M9: a legacy net (net_static only).
inline Model m9_legacy(Bytes kernel) {
  Model m = m2_stages(std::move(kernel));
  Net legacy{"old", {static_stage(1)}};
  legacy.legacy = true;
  m.nets.push_back(legacy);
  return m;
}

}  // namespace bmodel_writer
