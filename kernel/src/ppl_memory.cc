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

// The lowest aligned offset where `s` fits beside the placed slots it is
// alive with; lane_bytes when there is none.
uint64_t lowest_fit(const slot &s, const std::vector<const slot *> &placed, uint64_t lane_bytes) {
  std::vector<std::pair<uint64_t, uint64_t>> taken;
  for (const slot *p : placed)
    if (overlap_in_time(s, *p)) taken.emplace_back(p->address, p->address + p->bytes);
  std::sort(taken.begin(), taken.end());
  uint64_t candidate = 0;
  for (const auto &[begin, end] : taken) {
    if (candidate + s.bytes <= begin) break;
    candidate = std::max(candidate, round_up(end, kAllocationAlign));
  }
  return candidate + s.bytes <= lane_bytes ? candidate : lane_bytes;
}

std::string describe_slot(const slot &s) {
  return fmt::format("the tensor of {}:{} ({} bytes per lane{})", cmodel::base_name(s.file.c_str()), s.line, s.bytes,
                     s.pipelined && s.engines == (dma_engine | tiu_engine) ? ", doubled by enable_pipeline" : "");
}

// Places every slot, largest first (spec §1.4 item 4, without the bank
// preference); false with the error recorded when one does not fit.
bool place_slots(state &st) {
  std::vector<slot *> order;
  for (slot &s : st.slots) {
    const bool ping_pong = s.pipelined && s.engines == (dma_engine | tiu_engine);
    s.bytes = static_cast<uint32_t>(s.bytes * (ping_pong ? 2 : 1));
    order.push_back(&s);
  }
  std::stable_sort(order.begin(), order.end(), [](const slot *a, const slot *b) { return a->bytes > b->bytes; });
  std::vector<const slot *> placed;
  for (slot *s : order) {
    const uint64_t at = lowest_fit(*s, placed, st.lane_bytes);
    if (at >= st.lane_bytes) {
      cmodel::session::ErrorParts parts;
      parts.what = "PplLocalAddrAssignErr";
      parts.details = fmt::format("local memory: {} does not fit in a lane's {} bytes beside the tensors alive with it; "
                                  "the kernel returns PplLocalAddrAssignErr (0x11) before issuing any command",
                                  describe_slot(*s), st.lane_bytes);
      parts.site.text = fmt::format("{}:{}", cmodel::base_name(s->file.c_str()), s->line);
      parts.site.file = s->file;
      parts.site.line = s->line;
      cmodel::session::set_error(fmt::format("{}: {}", parts.what, parts.details), parts);
      return false;
    }
    s->address = static_cast<uint32_t>(at);
    placed.push_back(s);
  }
  return true;
}

void reset(state &st, pass mode) {
  st.mode = mode;
  st.operations = 0;
  st.pipeline = false;
  st.instances.clear();
  for (slot &s : st.slots) s.live = 0;
}

bool read_chip(state &st) {
  const char *chip = cmodel_chip();
  if (!chip || !*chip) return false;
  st.lanes = tpu_npu_num();
  st.eu_bytes = tpu_eu_num(::DT_INT8);
  st.lane_bytes = static_cast<uint32_t>(tpu_local_mem_size_per_npu());
  return st.lanes > 0;
}

struct run_arguments {
  void (*body)(void *);
  void *arguments;
};

void run_body(const void *p) {
  const auto *run = static_cast<const run_arguments *>(p);
  run->body(run->arguments);
}

bool plan(state &st, void (*body)(void *), void *arguments) {
  st.slots.clear();
  st.slot_of.clear();
  reset(st, pass::plan);
  try {
    body(arguments);
  } catch (const plan_refused &) {
    st.mode = pass::idle;
    return false;
  }
  return true;
}

}  // namespace

state &current() {
  static state st;
  return st;
}

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

int create_local(const dim4 &block, data_type_t, int element_size, align_mode_t align, const site &where) {
  state &st = current();
  if (st.mode == pass::idle) refuse("ppl::tensor", where, "a local tensor was created outside a kernel call");
  if (block.n < 1 || block.c < 1 || block.h < 1 || block.w < 1)
    refuse("ppl::tensor", where,
           fmt::format("block shape [{}, {}, {}, {}] has an extent below 1", block.n, block.c, block.h, block.w));
  int rank = 0, index = -1;
  for (;; ++rank) {
    const auto found = st.slot_of.find({where.file_name(), static_cast<int>(where.line()),
                                        static_cast<int>(where.column()), rank});
    if (found == st.slot_of.end() || st.slots[found->second].live == 0) {
      index = found == st.slot_of.end() ? -1 : found->second;
      break;
    }
  }
  const uint64_t bytes = round_up(block_bytes(block, align, element_size), kAllocationAlign);
  if (index < 0) {
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
    index = static_cast<int>(st.slots.size()) - 1;
  }
  slot &s = st.slots[index];
  if (st.mode == pass::plan) {
    s.bytes = static_cast<uint32_t>(std::min<uint64_t>(std::max<uint64_t>(s.bytes, bytes), UINT32_MAX));
    s.pipelined = s.pipelined || st.pipeline;
    s.ranges.emplace_back(st.operations, st.operations);
  }
  ++s.live;
  st.instances.push_back({index, 1});
  return static_cast<int>(st.instances.size()) - 1;
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
  const uint64_t base = d.instance >= 0 ? st.slots[st.instances[d.instance].slot].address : 0;
  return static_cast<uint32_t>(static_cast<uint64_t>(d.lane) * st.lane_bytes + base + d.address);
}

void enable_pipeline(const site &) { current().pipeline = true; }

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

int launch(void (*body)(void *), void *arguments) {
  state &st = current();
  if (!read_chip(st)) {
    cmodel::session::ErrorParts parts;
    parts.what = "PplJitSetChipErr";
    parts.details = "no emulator is open: call cmodel_open(\"bm1684x\") or cmodel_open(\"bm1688\") first";
    cmodel::session::set_error(fmt::format("{}: {}", parts.what, parts.details), parts);
    return PplJitSetChipErr;
  }
  // Called from kernel code (a custom op's api_<op>_global calling a PPL
  // kernel through its generated entry), the commands join the run in
  // progress, and a refused kernel stops that run with its error.
  const bool nested = cmodel::session::kernel_running_here();
  if (!plan(st, body, arguments)) {
    if (nested) cmodel::api::stop_kernel();
    return -1;
  }
  if (!place_slots(st)) {
    st.mode = pass::idle;
    return PplLocalAddrAssignErr;
  }
  reset(st, pass::execute);
  run_arguments run{body, arguments};
  if (nested) {
    // An error inside stops the run (stop_kernel) without coming back here.
    run_body(&run);
    forget_call_site();
    st.mode = pass::idle;
    return 0;
  }
  const int status = cmodel_run(run_body, &run);
  // A kernel stopped inside an operation left its .pl call site set.
  forget_call_site();
  st.mode = pass::idle;
  return status == 0 ? 0 : -1;
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
