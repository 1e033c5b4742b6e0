// trace_api.cc: cmodel_trace_* (cmodel_host.h), the profile recorder's host
// side. The recorder itself is cmodel/trace.h; Context::issue feeds it.
#include <string>

#include "cmodel/context.h"
#include "cmodel/error.h"
#include "cmodel_host.h"
#include "host_call.h"

using namespace cmodel;
using cmodel::host::host_only_call;
using cmodel::host::refused_in_kernel;
using cmodel::host::host_call;
using cmodel::host::open_context;

namespace {

// The trace kept by `c`, active or paused, or null.
Trace *kept_trace(Context &c) { return c.trace ? c.trace.get() : c.paused_trace.get(); }

}  // namespace

extern "C" {

int cmodel_trace_enable(int on) {
  return host_only_call(__func__, [&] {
    Context &c = open_context(__func__);
    if (on && !c.trace) c.trace = c.paused_trace ? std::move(c.paused_trace) : std::make_unique<Trace>();
    if (!on && c.trace) c.paused_trace = std::move(c.trace);
  });
}

int cmodel_trace_clear(void) {
  return host_only_call(__func__, [&] {
    Context &c = open_context(__func__);
    if (c.trace) c.trace = std::make_unique<Trace>();
    c.paused_trace.reset();
  });
}

int cmodel_trace_span_begin(const char *lane, const char *name) {
  return host_only_call(__func__, [&] {
    Context &c = open_context(__func__);
    if (!lane || !*lane || !name)
      fail(ErrorKind::config, "a span needs a lane name and a name (got lane {}, name {})", lane ? lane : "NULL",
           name ? name : "NULL");
    if (Trace *t = kept_trace(c)) t->begin_span(lane, name);
  });
}

int cmodel_trace_span_end(void) {
  return host_only_call(__func__, [&] {
    Context &c = open_context(__func__);
    Trace *t = kept_trace(c);
    if (t && !t->end_span()) fail(ErrorKind::config, "no span is open (cmodel_trace_span_begin)");
  });
}

int cmodel_trace_advance(double us) {
  return host_only_call(__func__, [&] {
    Context &c = open_context(__func__);
    if (!(us >= 0) || us > 1e15) fail(ErrorKind::config, "cmodel_trace_advance: {} us is not a finite time >= 0", us);
    if (c.trace) c.trace->run_finished(us * 1e3);  // a paused trace's clock stays stopped
  });
}

const char *cmodel_trace_json(void) {
  static std::string report;
  const int status = host_only_call(__func__, [&] {
    Context &c = open_context(__func__);
    const Trace *t = kept_trace(c);
    if (!t) fail(ErrorKind::config, "no trace was recorded; call cmodel_trace_enable(1) before the runs");
    report = t->chrome_json(c.chip.name);
  });
  return status == 0 ? report.c_str() : nullptr;
}

}  // extern "C"
