// profile.h: writing the emulator's profile trace (cmodel_trace_json) as
// Chrome trace-event JSON and drawing it as a standalone SVG timeline.
//
// tpu_model run --profile / --profile-svg and tpu_op_check --profile use it;
// docs/layer-groups.md "Reading the timeline" describes what they show.
#pragma once

#include <cstddef>
#include <string>

namespace tpu_runtime {

struct SvgOptions {
  int width = 1400;  // pixels, lane labels included
  // Above this many commands, runs of adjacent commands narrower than a
  // pixel on the same lane are drawn as one rect (its tooltip counts them)
  // so the file stays small.
  std::size_t max_rects = 2000;
};

// The timeline of a Chrome trace-event JSON text (as cmodel_trace_json
// gives it): one row per lane ("M" thread_name events) in their sort order,
// a time axis in microseconds, one rect per complete ("X") event coloured
// by engine (spans in grey, labelled), each with a <title> tooltip; a legend
// below. Throws Error when the text is not such a trace.
std::string trace_svg(const std::string &trace_json, const SvgOptions &options = {});

// Writes the trace to `json_path` and its SVG to `svg_path` (each skipped
// when empty), each through a temporary file renamed into place: a failure
// leaves no half-written file. Throws Error naming the path and the reason.
void write_profile(const std::string &trace_json, const std::string &json_path, const std::string &svg_path);

}  // namespace tpu_runtime
