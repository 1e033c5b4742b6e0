// ppl_memory.cc: the PPL runtime's kernel calls: the plan pass that records
// every local tensor's block and live range without issuing a command, the
// placement of those tensors in a lane's local memory (docs/ppl.md, "Local
// memory"), then the execution pass under cmodel_run.
#include <algorithm>
#include <cstring>
#include <stdexcept>

#include <fmt/format.h>

#include "api_guard.h"
#include "cmodel/call_site.h"
#include "cmodel/source_site.h"
#include "cmodel_host.h"
#include "ppl_state.h"
#include "multicore.h"
#include "session.h"
#include "tpu_kernel.h"

namespace ppl::rt {
namespace {

// Every placed allocation starts on a 64-byte boundary on both chips (the
// vendor's bm1684x example; on bm1688 it is a multiple of EU_BYTES too).
constexpr uint32_t kAllocationAlign = 64;

// Leaves the plan pass when the kernel misuses PPL (already reported).
struct plan_refused : std::runtime_error {
  using std::runtime_error::runtime_error;
};

uint64_t round_up(uint64_t x, uint64_t a) { return (x + a - 1) / a * a; }

// A slot's ranges are in program order and disjoint (its next instance is
// made only once the previous one has no handle left), so one walk along
// both lists finds any overlap: a loop's iterations cost linear time.
bool overlap_in_time(const slot &a, const slot &b) {
  size_t i = 0, j = 0;
  while (i < a.ranges.size() && j < b.ranges.size()) {
    const auto [a0, a1] = a.ranges[i];
    const auto [b0, b1] = b.ranges[j];
    if (a0 <= b1 && b0 <= a1) return true;
    if (a1 < b1)
      ++i;
    else
      ++j;
  }
  return false;
}

// The bytes a slot takes in a lane: two buffers when doubled.
uint64_t footprint(const slot &s) { return uint64_t(s.bytes) * (s.doubled() ? 2 : 1); }

// The lowest aligned offset from `from` where `s` fits beside the placed
// slots it is alive with; lane_bytes when there is none.
uint64_t lowest_fit(const slot &s, const std::vector<const slot *> &placed, uint64_t lane_bytes, uint64_t from) {
  std::vector<std::pair<uint64_t, uint64_t>> taken;
  for (const slot *p : placed)
    if (overlap_in_time(s, *p)) taken.emplace_back(p->address, p->address + footprint(*p));
  std::sort(taken.begin(), taken.end());
  uint64_t candidate = round_up(from, kAllocationAlign);
  for (const auto &[begin, end] : taken) {
    if (candidate + footprint(s) <= begin) continue;
    if (end > candidate) candidate = round_up(end, kAllocationAlign);
  }
  return candidate + footprint(s) <= lane_bytes ? candidate : lane_bytes;
}

// Local memory has 16 banks per lane (spec §2.7); a TIU operation whose
// operands share a bank stalls (the cmodel counts bdc_bank_conflicts).
constexpr uint64_t kBanks = 16;

// The placed partners of `s` (used by one TIU operation with it) whose
// banks meet those of `s` placed at `at`.
int bank_conflicts(const state &st, const slot &s, uint64_t at, const std::vector<const slot *> &placed) {
  const uint64_t bank = st.lane_bytes / kBanks;
  const int self = static_cast<int>(&s - st.slots.data());
  int conflicts = 0;
  for (const slot *p : placed) {
    const int other = static_cast<int>(p - st.slots.data());
    if (!st.partners.count({std::min(self, other), std::max(self, other)})) continue;
    const uint64_t a0 = at / bank, a1 = (at + footprint(s) - 1) / bank;
    const uint64_t b0 = p->address / bank, b1 = (p->address + footprint(*p) - 1) / bank;
    if (a0 <= b1 && b0 <= a1) ++conflicts;
  }
  return conflicts;
}

// Where `s` goes: the lowest fit, or, placing banks first (spec §1.4 item
// 4), the lowest fit from a bank start that meets the fewest partners'
// banks. Banks never decide whether a tensor fits.
uint64_t choose_offset(const state &st, const slot &s, const std::vector<const slot *> &placed) {
  uint64_t best = lowest_fit(s, placed, st.lane_bytes, 0);
  if (!st.bank_aware || best >= st.lane_bytes) return best;
  int fewest = bank_conflicts(st, s, best, placed);
  const uint64_t bank = st.lane_bytes / kBanks;
  for (uint64_t b = 1; b < kBanks && fewest > 0; ++b) {
    const uint64_t at = lowest_fit(s, placed, st.lane_bytes, b * bank);
    if (at >= st.lane_bytes) continue;
    const int conflicts = bank_conflicts(st, s, at, placed);
    if (conflicts < fewest) {
      fewest = conflicts;
      best = at;
    }
  }
  return best;
}

// Records an error of the launch itself (no command ran): `what` is the
// return code's name, `file`:`line` the .pl place it names, if any.
void record_error(const char *what, const std::string &details, const std::string &file = "", int line = 0) {
  cmodel::session::ErrorParts parts;
  parts.what = what;
  parts.details = details;
  if (!file.empty()) {
    parts.site.text = fmt::format("{}:{}", cmodel::base_name(file.c_str()), line);
    parts.site.file = file;
    parts.site.line = line;
  }
  cmodel::session::set_error(fmt::format("{}: {}", parts.what, parts.details), parts);
}

std::string describe_slot(const slot &s) {
  return fmt::format("the tensor of {}:{} ({} bytes per lane{})", cmodel::base_name(s.file.c_str()), s.line,
                     footprint(s), s.doubled() ? ", doubled by enable_pipeline" : "");
}

// Places every slot, largest first (spec §1.4 item 4); false with the
// error recorded when one does not fit.
bool place_slots(state &st) {
  std::vector<slot *> order;
  for (slot &s : st.slots) order.push_back(&s);
  std::stable_sort(order.begin(), order.end(),
                   [](const slot *a, const slot *b) { return footprint(*a) > footprint(*b); });
  std::vector<const slot *> placed;
  for (slot *s : order) {
    const uint64_t at = choose_offset(st, *s, placed);
    if (at >= st.lane_bytes) {
      record_error("PplLocalAddrAssignErr",
                   fmt::format("local memory{}: {} does not fit in a lane's {} bytes beside the tensors alive with "
                               "it; the kernel returns PplLocalAddrAssignErr (0x11) before issuing any command",
                               st.cores > 1 ? fmt::format(" of core {}", st.core) : "", describe_slot(*s),
                               st.lane_bytes),
                   s->file, s->line);
      return false;
    }
    s->address = static_cast<uint32_t>(at);
    placed.push_back(s);
  }
  return true;
}

void reset(state &st, pass mode) {
  st.mode = mode;
  st.refusal = -1;
  st.shapes.clear();
  st.operations = 0;
  st.pipeline = false;
  st.instances.clear();
  st.loop = loop_tracker{};
  st.queue.clear();
  st.l2_used = 0;
  for (slot &s : st.slots) s.live = s.creations = 0;
}

bool read_chip(state &st) {
  const char *chip = cmodel_chip();
  if (!chip || !*chip) return false;
  st.lanes = tpu_npu_num();
  st.eu_bytes = tpu_eu_num(::DT_INT8);
  st.lane_bytes = static_cast<uint32_t>(tpu_local_mem_size_per_npu());
  st.l2_base = tpu_l2_sram_get_start_addr();
  st.l2_bytes = static_cast<uint64_t>(std::max(0, tpu_l2_sram_size()));
  st.l2_short = false;
  return st.lanes > 0;
}

struct run_arguments {
  void (*body)(void *);
  void *arguments;
  bool several_cores;
};


bool plan(state &st, void (*body)(void *), void *arguments) {
  st.slots.clear();
  st.slot_of.clear();
  st.partners.clear();
  st.places.clear();
  st.loops = 0;
  st.bank_aware = true;
  reset(st, pass::plan);
  try {
    body(arguments);
  } catch (const plan_refused &) {
    st.mode = pass::idle;
    return false;
  }
  end_loop(st);
  return true;
}

// The core whose turn it is, on its own thread (a multi-core run gives
// each core a thread); 0 outside a kernel call and for the plan passes'
// thread between them.
thread_local int active_core = 0;
constexpr int kMaxCores = 64;  // the cmodel's limit (option "cores")

}  // namespace

state &states_at(int core) {
  static std::vector<state> states(kMaxCores);
  return states[static_cast<size_t>(core)];
}

state &current() { return states_at(active_core); }

uint64_t block_bytes(const dim4 &b, align_mode_t align, int element_size) {
  state &st = current();
  const uint64_t eu = static_cast<uint64_t>(std::max(1, st.eu_bytes / element_size));
  const uint64_t hw = static_cast<uint64_t>(b.h) * static_cast<uint64_t>(b.w);
  const uint64_t rows = static_cast<uint64_t>((b.c + st.lanes - 1) / std::max(1, st.lanes));
  uint64_t per_channel = hw;
  if (align == TPU_ALIGN) per_channel = round_up(hw, eu);
  if (align == TPU_ROW_ALIGN) per_channel = static_cast<uint64_t>(b.h) * round_up(static_cast<uint64_t>(b.w), eu);
  if (align == CONTINUOUS) return static_cast<uint64_t>(b.n) * static_cast<uint64_t>(b.c) * hw * element_size;
  return static_cast<uint64_t>(b.n) * rows * per_channel * static_cast<uint64_t>(element_size);
}

namespace {

// The slot of the declaration at `where`: the first of its ranks with no
// instance alive, made in the plan pass.
int slot_for(state &st, const site &where) {
  int rank = 0;
  for (;; ++rank) {
    const auto found = st.slot_of.find({where.file_name(), static_cast<int>(where.line()),
                                        static_cast<int>(where.column()), rank});
    if (found == st.slot_of.end()) break;
    if (st.slots[found->second].live == 0) return found->second;
  }
  if (st.mode == pass::execute)
    refuse("ppl::tensor", where, "this tensor was not seen by the plan pass: control flow depends on device data");
  st.slot_of[{where.file_name(), static_cast<int>(where.line()), static_cast<int>(where.column()), rank}] =
      static_cast<int>(st.slots.size());
  slot s;
  s.file = where.file_name();
  s.line = static_cast<int>(where.line());
  s.column = static_cast<int>(where.column());
  s.rank = rank;
  st.slots.push_back(s);
  return static_cast<int>(st.slots.size()) - 1;
}

// A new instance of slot `index`, pipelined (and alive for the whole loop)
// when declared after enable_pipeline().
int new_instance(state &st, int index) {
  slot &s = st.slots[index];
  if (st.mode == pass::plan) {
    s.pipelined = s.pipelined || st.pipeline;
    if (st.loop.active) st.loop.slots.insert(index);
  }
  ++s.live;
  // A doubled slot's instances take its two buffers in turn.
  st.instances.push_back({index, 1, s.doubled() ? s.creations % 2 : 0});
  ++s.creations;
  return static_cast<int>(st.instances.size()) - 1;
}

}  // namespace

void size_allocation(int instance, const dim4 &block, align_mode_t align, int element_size) {
  state &st = current();
  if (st.mode != pass::plan || instance < 0) return;
  slot &s = st.slots[st.instances[instance].slot];
  const uint64_t bytes = round_up(block_bytes(block, align, element_size), kAllocationAlign);
  s.bytes = static_cast<uint32_t>(std::min<uint64_t>(std::max<uint64_t>(s.bytes, bytes), UINT32_MAX));
  s.ranges.emplace_back(st.operations, st.operations);
}

// A kernel called from an op's local entry (cmodel_set_local_entry) works
// in the layer group's local memory: an automatic tensor would be planned
// from its start, over the group's tensors.
void refuse_in_local_entry(const site &where) {
  if (cmodel::session::local_entry())
    refuse("ppl::make_tensor", where,
           "an automatic local tensor (make_tensor, or a tensor without an address) in a kernel called from an op's "
           "local entry: it would be planned from the start of local memory, over the layer group's tensors; make "
           "it at an address in the slice's buffer (api_<op>_local_bfsz), as the group's tensors are");
}

int create_local(const dim4 &block, data_type_t, int element_size, align_mode_t align, const site &where) {
  state &st = current();
  if (st.mode == pass::idle) refuse("ppl::tensor", where, "a local tensor was created outside a kernel call");
  refuse_in_local_entry(where);
  if (block.n < 1 || block.c < 1 || block.h < 1 || block.w < 1)
    refuse("ppl::tensor", where,
           fmt::format("block shape [{}, {}, {}, {}] has an extent below 1", block.n, block.c, block.h, block.w));
  const int made = new_instance(st, slot_for(st, where));
  size_allocation(made, block, align, element_size);
  return made;
}

// Sized, and alive, from its first write (written(), ppl_shapes.cc).
int create_unshaped_local(const site &where) {
  state &st = current();
  if (st.mode == pass::idle) refuse("ppl::tensor", where, "a local tensor was created outside a kernel call");
  refuse_in_local_entry(where);
  return new_instance(st, slot_for(st, where));
}

void retain(int i) {
  state &st = current();
  if (i >= 0 && i < static_cast<int>(st.instances.size())) ++st.instances[i].handles;
}

void release(int i) {
  state &st = current();
  if (i < 0 || i >= static_cast<int>(st.instances.size())) return;
  instance &in = st.instances[i];
  if (in.handles > 0 && --in.handles == 0 && in.slot >= 0) --st.slots[in.slot].live;
}

void use(const desc &d, engine kind) {
  state &st = current();
  if (st.mode != pass::plan || d.mode != LOCAL || d.instance < 0) return;
  slot &s = st.slots[st.instances[d.instance].slot];
  s.engines |= kind;
  if (!s.ranges.empty()) s.ranges.back().second = st.operations;
}

uint32_t local_address(const desc &d) {
  state &st = current();
  uint64_t base = 0;
  if (d.instance >= 0) {
    const instance &in = st.instances[d.instance];
    base = st.slots[in.slot].address + uint64_t(in.buffer) * st.slots[in.slot].bytes;
  }
  return static_cast<uint32_t>(static_cast<uint64_t>(d.lane) * st.lane_bytes + base + d.address);
}

void disable_pingpong(const desc &d) {
  state &st = current();
  if (st.mode == pass::plan && d.mode == LOCAL && d.instance >= 0) st.slots[st.instances[d.instance].slot].no_pingpong = true;
}

void set_bank_aware(bool on) {
  state &st = current();
  if (st.mode == pass::plan) st.bank_aware = on;
}

void refuse_shape(const char *name, const site &where, const std::string &message) {
  current().refusal = PplShapeInferErr;
  refuse(name, where, message + "; the kernel returns PplShapeInferErr (0x1B)");
}

void refuse(const char *name, const site &where, const std::string &message) {
  {
    call_site_scope scope(where);
    cmodel::api::report_error(name, nullptr, cmodel::ErrorKind::illegal_command, message.c_str());
  }
  if (current().mode == pass::execute) cmodel::api::stop_kernel();
  throw plan_refused(message);
}

namespace {

// "scale_shift" of "void ns::scale_shift(float*, int)": the name a call
// site shows.
std::string plain_function_name(const char *signature) {
  std::string name = signature ? signature : "";
  name = name.substr(0, name.find('('));
  if (const auto space = name.rfind(' '); space != std::string::npos) name = name.substr(space + 1);
  if (const auto scope = name.rfind("::"); scope != std::string::npos) name = name.substr(scope + 2);
  return name;
}

void forget_call_site() { cmodel::source_site() = cmodel::SourceSite{}; }

}  // namespace

call_site_scope::call_site_scope(const site &where) {
  cmodel::source_site() =
      cmodel::SourceSite{where.file_name(), static_cast<int>(where.line()), plain_function_name(where.function_name())};
}

call_site_scope::~call_site_scope() { forget_call_site(); }

namespace {

// Plans every core of the launch: core 0 first (its set_core_num call fixes
// the count), then the others, each with its own local memory. The error
// code, or 0.
int plan_cores(void (*body)(void *), void *arguments) {
  for (int core = 0; core < current().cores || core == 0; ++core) {
    const int cores = core == 0 ? 1 : current().cores;
    active_core = core;
    state &st = current();
    read_chip(st);
    st.core = core;
    st.cores = cores;
    const bool planned = plan(st, body, arguments);
    const int count = st.cores;
    active_core = 0;
    current().cores = count;
    if (!planned) return st.refusal;
    if (st.l2_short) {
      st.mode = pass::idle;
      return PplL2AddrAssignErr;
    }
    if (!place_slots(st)) {
      st.mode = pass::idle;
      return PplLocalAddrAssignErr;
    }
  }
  return 0;
}

void run_core(const void *p) {
  const auto *run = static_cast<const run_arguments *>(p);
  active_core = run->several_cores ? cmodel::multicore::core_index() : 0;
  run->body(run->arguments);
  flush_pipeline();
}

}  // namespace

int launch(void (*body)(void *), void *arguments) {
  active_core = 0;
  state &st = current();
  if (!read_chip(st)) {
    record_error("PplJitSetChipErr",
                 "no emulator is open: call cmodel_open(\"bm1684x\") or cmodel_open(\"bm1688\") first");
    return PplJitSetChipErr;
  }
  // Called from kernel code (a custom op's api_<op>_global calling a PPL
  // kernel through its generated entry), the commands join the run in
  // progress on its core, one core, and a refused kernel stops that run.
  const bool nested = cmodel::session::kernel_running_here();
  st.cores = 1;
  st.max_cores = nested ? 1 : std::max(1, cmodel_core_count());
  const int planned = plan_cores(body, arguments);
  const int cores = st.cores;
  if (planned != 0) {
    for (int core = 0; core < cores; ++core) states_at(core).mode = pass::idle;
    if (nested && (planned == -1 || planned == PplShapeInferErr)) cmodel::api::stop_kernel();
    return planned;
  }
  for (int core = 0; core < cores; ++core) reset(states_at(core), pass::execute);
  run_arguments run{body, arguments, cores > 1};
  if (nested) {
    // An error inside stops the run (stop_kernel) without coming back here.
    run_core(&run);
    forget_call_site();
    st.mode = pass::idle;
    return 0;
  }
  const int status = cores > 1 ? cmodel_run_cores(run_core, &run, cores) : cmodel_run(run_core, &run);
  active_core = 0;
  // A kernel stopped inside an operation left its .pl call site set.
  forget_call_site();
  for (int core = 0; core < cores; ++core) states_at(core).mode = pass::idle;
  return status == 0 ? 0 : -1;
}

uint64_t global_tensor_address(tensor_mode_t mode, const dim4 &shape, int element_size, uint64_t given,
                               const site &where) {
  state &st = current();
  if (st.mode == pass::idle) return given;
  if (mode == LOCAL) refuse("ppl::gtensor", where, "a gtensor is GLOBAL or L2; local tensors are ppl::tensor");
  if (given != 0) return given;
  if (mode == GLOBAL) refuse("ppl::gtensor", where, "a GLOBAL tensor needs its address (a kernel pointer argument)");
  const uint64_t bytes = uint64_t(std::max(shape.n, 0)) * uint64_t(std::max(shape.c, 0)) *
                         uint64_t(std::max(shape.h, 0)) * uint64_t(std::max(shape.w, 0)) * uint64_t(element_size);
  const uint64_t at = round_up(st.l2_used, kAllocationAlign);
  if (at + bytes > st.l2_bytes) {
    if (st.mode == pass::plan && !st.l2_short)
      record_error("PplL2AddrAssignErr",
                   fmt::format("L2: the tensor of {}:{} ({} bytes) does not fit in the {} bytes of L2 SRAM left of "
                               "{}; the kernel returns PplL2AddrAssignErr (0x1A) before issuing any command",
                               cmodel::base_name(where.file_name()), where.line(), bytes,
                               st.l2_bytes - std::min(at, st.l2_bytes), st.l2_bytes),
                   where.file_name(), static_cast<int>(where.line()));
    st.l2_short = true;
    return st.l2_base;
  }
  st.l2_used = at + bytes;
  return st.l2_base + at;
}

int core_num() { return current().cores; }
int core_index() { return current().core; }

void set_core_num(int n, const site &where) {
  state &st = current();
  if (n < 1) refuse("ppl::set_core_num", where, fmt::format("{} cores: the count must be at least 1", n));
  // Fixed by core 0's plan pass; more than the chip has run on all of them.
  if (st.mode == pass::plan && st.core == 0) st.cores = std::min(n, st.max_cores);
}

void set_group_num(int n, const site &where) {
  if (n != 1)
    refuse("ppl::set_group_num", where,
           fmt::format("{} groups: a launch on bm1684x/bm1688 is one group of cores (set_core_num sets their count)", n));
}

}  // namespace ppl::rt

int ppl::lane_num() {
  const ppl::rt::state &st = ppl::rt::current();
  return st.mode != ppl::rt::pass::idle ? st.lanes : tpu_npu_num();
}

int ppl::eu_bytes() {
  const ppl::rt::state &st = ppl::rt::current();
  return st.mode != ppl::rt::pass::idle ? st.eu_bytes : tpu_eu_num(::DT_INT8);
}
