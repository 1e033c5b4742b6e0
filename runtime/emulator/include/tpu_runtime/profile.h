// profile.h: writing the emulator's profile trace (cmodel_trace_json) as
// Chrome trace-event JSON and drawing it as a standalone SVG timeline.
//
// tpu_model run --profile / --profile-svg and tpu_op_check --profile use it;
// docs/layer-groups.md "Reading the timeline" describes what they show.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace tpu_runtime {

struct SvgOptions {
  int width = 1400;  // pixels, lane labels included
  // Above this many commands, runs of adjacent commands narrower than a
  // pixel on the same lane are drawn as one rect (its tooltip counts them)
  // so the file stays small.
  std::size_t max_rects = 2000;
  // Only the events of [from_us, to_us) on the trace's clock, drawn from 0
  // (a negative to_us: to the end). An op tester's trace holds every case
  // back to back: a window of one case (trace_lane_spans(.., "cases"))
  // draws that run alone.
  double from_us = 0, to_us = -1;
};

// The timeline of a Chrome trace-event JSON text (as cmodel_trace_json
// gives it): one row per lane ("M" thread_name events) in their sort order,
// a time axis in microseconds, one rect per complete ("X") event coloured
// by engine (spans in grey, labelled), each with a <title> tooltip; a legend
// below. Throws Error when the text is not such a trace.
//
// The title gives the time of one run: a whole trace's length, unless its
// "cases" lane holds several spans (the op tester's cases, one run of the op
// each, back to back), when it gives the first case's time and how many
// runs are drawn. A command's box that is wide enough is labelled with its
// API function's name.
// `text` safe inside XML or HTML text and attribute values: & < > " '
// escaped, control characters other than tab and newline dropped.
std::string markup_escaped(const std::string &text);

std::string trace_svg(const std::string &trace_json, const SvgOptions &options = {});

// The spans of one lane of a trace ("cases", "layers", "steps"), in time order.
struct TraceLaneSpan {
  std::string name;
  double start_us = 0, end_us = 0;
};
std::vector<TraceLaneSpan> trace_lane_spans(const std::string &trace_json, const std::string &lane);

// The trace with a root "metadata" member (Chrome's trace format keeps
// metadata there; viewers show it, Perfetto under "Info and stats"): what
// the runtime adds to the emulator's trace (the profile summary). Throws
// Error when the text is not a trace or already has metadata.
std::string trace_with_metadata(const std::string &trace_json, const nlohmann::ordered_json &metadata);

// Writes the trace to `json_path` and its SVG to `svg_path` (each skipped
// when empty), each through a temporary file renamed into place: a failure
// leaves no half-written file. Throws Error naming the path and the reason.
void write_profile(const std::string &trace_json, const std::string &json_path, const std::string &svg_path);

}  // namespace tpu_runtime
