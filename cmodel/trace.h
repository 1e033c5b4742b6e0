// trace.h: the profile recorder behind cmodel_trace_* (cmodel_host.h).
//
// While enabled, every command the timeline books is kept with its engine,
// its start and end and what it moved (bytes, DMA engines) or computed
// (elements of its output, BDC and HAU). Each run's timeline starts at 0;
// the trace lays the runs end to end on one clock, so a model's layers
// follow each other. Hosts add spans (a layer, a group) on that clock
// between runs. The report is Chrome trace-event JSON.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "timeline.h"

namespace cmodel {

struct TraceCommand {
  Engine engine;
  const char *api;  // the API function's __func__: static storage
  double start_ns, end_ns;  // on the trace clock
  uint64_t amount;  // bytes (GDMA, SDMA) or output elements (BDC, HAU)
  int core = 0;     // which core of a multi-core run
};

struct TraceSpan {
  std::string lane, name;
  double start_ns, end_ns;
};

class Trace {
 public:
  // `time` is on the current run's timeline.
  void command(Engine engine, const char *api, Interval time, uint64_t amount) {
    commands_.push_back({engine, api, clock_ns_ + time.start_ns, clock_ns_ + time.end_ns, amount});
  }
  // A multi-core run: the commands core `core` booked on a trace of its own
  // (from 0) join this one at its clock, on lanes of their own.
  void add_core(int core, const Trace &other) {
    for (TraceCommand c : other.commands_) {
      c.core = core;
      c.start_ns += clock_ns_;
      c.end_ns += clock_ns_;
      commands_.push_back(c);
    }
  }
  // A traced run that lasted `run_ns` ended: the next one starts after it.
  void run_finished(double run_ns) { clock_ns_ += run_ns; }
  double clock_ns() const { return clock_ns_; }

  void begin_span(std::string lane, std::string name);
  // Ends the innermost open span; false when none is open.
  bool end_span();

  const std::vector<TraceCommand> &commands() const { return commands_; }
  const std::vector<TraceSpan> &spans() const { return spans_; }

  // The Chrome trace-event JSON: one lane per engine that is in use (GDMA,
  // BDC and SDMA always), one per span lane; spans still open end now.
  // After multi-core runs, each core's engines have lanes "core K GDMA", ...
  std::string chrome_json(const char *chip) const;

 private:
  double clock_ns_ = 0;
  std::vector<TraceCommand> commands_;
  std::vector<TraceSpan> spans_;
  std::vector<std::size_t> open_;  // indices of the spans not ended yet
};

}  // namespace cmodel
