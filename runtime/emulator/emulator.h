// emulator.h (private): how the host side uses the emulator (libcmodel):
// a session on one chip with checked global-memory access, the run
// boundary that turns a kernel error into an Error, trace spans, the
// figures of a run, and the kernel API's tensor spec of a tensor.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "api_common.h"
#include "cmodel_host.h"
#include "tpu_runtime/dtype.h"
#include "tpu_runtime/error.h"
#include "tpu_utils.h"

namespace tpu_runtime::detail {

tensor_spec_t make_spec(uint64_t addr, Dtype dtype, const Shape &shape);

// The kernel API's data_type_t of a dtype.
inline data_type_t kernel_dtype(Dtype dtype) {
  return tpu_type_convert(sg_data_type_t(dtype_info(dtype).sg_dtype));
}

// Runs `body` inside the emulator's run boundary (cmodel_run); a kernel
// error becomes an Error "<what>: <the emulator's message>". A failing
// tpu_* call leaves `body` by longjmp: nothing it holds across API calls
// may need a destructor.
template <typename Body>
void run_on_emulator(const char *what, Body &&body) {
  struct Call {
    Body *body;
  } call{&body};
  const auto trampoline = [](const void *arg) { (*static_cast<const Call *>(arg)->body)(); };
  if (cmodel_run(trampoline, &call) != 0) throw Error(fmt::format("{}: {}", what, cmodel_last_error()));
}

// A span of the profile trace (cmodel_trace_span_begin/end) on `lane`, from
// construction to destruction; nothing when no trace is kept.
class TraceSpan {
 public:
  TraceSpan(const char *lane, const std::string &name) {
    if (cmodel_trace_span_begin(lane, name.c_str()) != 0) throw Error(cmodel_last_error());
  }
  ~TraceSpan() { cmodel_trace_span_end(); }
  TraceSpan(const TraceSpan &) = delete;
  TraceSpan &operator=(const TraceSpan &) = delete;
};

// The figures of cmodel_last_run_stats().
struct RunFigures {
  double total_us = 0;
  uint64_t gdma_bytes = 0;
  double gdma_us = 0, bdc_us = 0;  // busy time of the engines
  std::string json;
};
RunFigures last_run_figures();
// The same for every run since cmodel_total_stats_reset(), added up.
RunFigures total_run_figures();

// Tensors a kernel must leave as they were: the inputs an op does not
// declare in place (metadata_<op>, tpu_op_metadata.h). Their bytes are
// copied when added and compared by changed(). Reads global memory
// directly, so it works beside an EmulatorSession or the op tester's own.
class UnchangedWatch {
 public:
  // `what` names the tensor in the message: "input 1 ('x')".
  void add(std::string what, uint64_t addr, uint64_t bytes);
  // "" when every watched tensor is unchanged; else the first changed one:
  // "<what> changed although the op does not declare it in place: first
  // changed byte at offset 12 of 4096 (0x00 -> 0x3f)".
  std::string changed() const;

 private:
  struct Entry {
    std::string what;
    uint64_t addr = 0;
    std::vector<uint8_t> before;
  };
  std::vector<Entry> entries_;
};

// The first index where `a` and `b` differ (their common length when one
// is a prefix of the other), or -1 when they are equal.
int64_t first_changed_byte(std::span<const uint8_t> a, std::span<const uint8_t> b);

// The open emulator offers at least `cores` cores to a multi-core run for
// the rest of its life: the option "cores" is raised when the count in
// force (cmodel_core_count) is lower; closing the emulator puts it back
// (cmodel_set_option). Returns the count in force; throws when the
// environment's count is malformed or `cores` cannot be emulated.
int raise_cores(int cores);

// The same for the lifetime of the object only, within an emulator that
// stays open after it: the option is put back as it was. The op tester
// uses it to run a multi-core op on 2 cores of a one-core chip in the
// middle of its cases.
class AtLeastCores {
 public:
  explicit AtLeastCores(int cores);
  ~AtLeastCores();
  AtLeastCores(const AtLeastCores &) = delete;
  AtLeastCores &operator=(const AtLeastCores &) = delete;
  int cores() const { return cores_; }  // in force while the object lives

 private:
  int cores_ = 0;
  int restore_ = -1;  // the option to put back; -1: a malformed environment, left alone
};

// The emulator of `chip`, open for the lifetime of the object.
class EmulatorSession {
 public:
  explicit EmulatorSession(const std::string &chip);
  ~EmulatorSession();
  EmulatorSession(const EmulatorSession &) = delete;
  EmulatorSession &operator=(const EmulatorSession &) = delete;
  // A global buffer of `bytes` bytes (at least 1); throws with the reason.
  uint64_t alloc(uint64_t bytes, std::string_view what);
  // The same at exactly `addr` (a model's plan, where its commands expect it).
  void alloc_at(uint64_t addr, uint64_t bytes, std::string_view what);
  void write(uint64_t addr, std::span<const uint8_t> bytes, std::string_view what);
  std::vector<uint8_t> read(uint64_t addr, uint64_t bytes, std::string_view what);
};

}  // namespace tpu_runtime::detail
