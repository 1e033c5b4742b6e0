// profile.cc: the profile trace as files, and its SVG drawing (profile.h).
#include "tpu_runtime/profile.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iterator>
#include <map>
#include <vector>

#include <nlohmann/json.hpp>

#include "io/atomic_file.h"
#include "tpu_runtime/error.h"

namespace tpu_runtime {
namespace {

struct Event {
  std::string name, category;
  double ts = 0, dur = 0;  // microseconds
  std::string amount_unit;  // "bytes", "elements" or "" (a span)
  uint64_t amount = 0;
};

struct Lane {
  int tid = 0;
  std::string title;
  int sort_index = 0;
  std::vector<Event> events;
  bool spans = false;  // a host's lane (layers, groups), not an engine's
};

struct Timeline {
  std::string process;  // "bm1684x (emulated)"
  std::vector<Lane> lanes;
  double end_us = 0;
  std::size_t commands = 0;
};

bool is_engine(const std::string &title) {
  return title == "GDMA" || title == "BDC" || title == "SDMA" || title == "HAU";
}

Timeline parse_trace(const std::string &text) {
  const nlohmann::json doc = nlohmann::json::parse(text, nullptr, false);
  if (doc.is_discarded() || !doc.is_object() || !doc.contains("traceEvents") || !doc["traceEvents"].is_array())
    throw Error("not a Chrome trace: expected a JSON object with a \"traceEvents\" array");
  Timeline t;
  std::map<int, Lane> lanes;
  for (const nlohmann::json &e : doc["traceEvents"]) {
    if (!e.is_object()) continue;
    const std::string ph = e.value("ph", ""), name = e.value("name", "");
    const int tid = e.value("tid", 0);
    if (ph == "M" && name == "process_name") t.process = e["args"].value("name", "");
    if (ph == "M" && name == "thread_name") lanes[tid].title = e["args"].value("name", "");
    if (ph == "M" && name == "thread_sort_index") lanes[tid].sort_index = e["args"].value("sort_index", 0);
    if (ph != "X") continue;
    Event ev{name, e.value("cat", ""), e.value("ts", 0.0), e.value("dur", 0.0), "", 0};
    if (e.contains("args") && e["args"].is_object())
      for (const char *unit : {"bytes", "elements"})
        if (e["args"].contains(unit)) {
          ev.amount_unit = unit;
          ev.amount = e["args"][unit].get<uint64_t>();
        }
    t.end_us = std::max(t.end_us, ev.ts + ev.dur);
    lanes[tid].events.push_back(std::move(ev));
  }
  for (auto &[tid, lane] : lanes) {
    lane.tid = tid;
    if (lane.title.empty()) lane.title = fmt::format("lane {}", tid);
    lane.spans = !is_engine(lane.title);
    if (!lane.spans) t.commands += lane.events.size();
    std::sort(lane.events.begin(), lane.events.end(), [](const Event &a, const Event &b) { return a.ts < b.ts; });
    t.lanes.push_back(std::move(lane));
  }
  std::stable_sort(t.lanes.begin(), t.lanes.end(), [](const Lane &a, const Lane &b) {
    return a.sort_index != b.sort_index ? a.sort_index < b.sort_index : a.tid < b.tid;
  });
  return t;
}


const char *engine_colour(const std::string &engine) {
  if (engine == "GDMA") return "#4e79a7";
  if (engine == "BDC") return "#f28e2b";
  if (engine == "SDMA") return "#59a14f";
  if (engine == "HAU") return "#b07aa1";
  return "#9d9d9d";
}

// A tick step of 1, 2 or 5 times a power of ten giving at most ~10 ticks.
double tick_step(double span_us) {
  const double raw = span_us / 10;
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0})
    if (m * magnitude >= raw) return m * magnitude;
  return 10 * magnitude;
}

// Commands drawn as one rect: one command, or adjacent tiny ones merged.
struct Group {
  double start = 0, end = 0, busy = 0;
  uint64_t amount = 0;
  std::string unit;
  std::map<std::string, uint64_t> apis;  // name -> commands
  std::size_t count = 0;
};

void add_to(Group &g, const Event &e) {
  if (g.count == 0) g.start = e.ts;
  g.end = std::max(g.end, e.ts + e.dur);
  g.busy += e.dur;
  g.amount += e.amount;
  g.unit = e.amount_unit;
  ++g.apis[e.name];
  ++g.count;
}

// With `merge`, a command narrower than a pixel joins the group before it
// when that group is also made of such commands, ends less than a pixel
// before it and stays under a few pixels wide: the picture is the same, the
// file much smaller.
std::vector<Group> groups_of(const Lane &lane, double px_per_us, bool merge) {
  constexpr double tiny_px = 1, max_merged_px = 4;
  std::vector<Group> groups;
  bool last_tiny = false;
  for (const Event &e : lane.events) {
    const bool tiny = e.dur * px_per_us < tiny_px;
    if (merge && tiny && last_tiny && !groups.empty()) {
      Group &g = groups.back();
      if ((e.ts - g.end) * px_per_us < tiny_px && (e.ts + e.dur - g.start) * px_per_us < max_merged_px) {
        add_to(g, e);
        continue;
      }
    }
    groups.emplace_back();
    add_to(groups.back(), e);
    last_tiny = tiny;
  }
  return groups;
}

template <typename... Args>
void put(std::string &out, fmt::format_string<Args...> format, Args &&...args) {
  fmt::format_to(std::back_inserter(out), format, std::forward<Args>(args)...);
}

std::string us_text(double us) { return fmt::format("{:.3f} us", us); }

std::string tooltip(const Group &g, const std::string &lane) {
  const std::string amount = g.unit.empty() ? "" : fmt::format(", {} {}", g.amount, g.unit);
  if (g.count == 1)
    return fmt::format("{} on {}: {} .. {} ({}){}", g.apis.begin()->first, lane, us_text(g.start), us_text(g.end),
                       us_text(g.end - g.start), amount);
  std::vector<std::pair<std::string, uint64_t>> apis(g.apis.begin(), g.apis.end());
  std::sort(apis.begin(), apis.end(), [](const auto &a, const auto &b) { return a.second > b.second; });
  std::string names;
  for (std::size_t i = 0; i < apis.size() && i < 4; ++i)
    names += fmt::format("{}{} x{}", i ? ", " : "", apis[i].first, apis[i].second);
  if (apis.size() > 4) names += ", ...";
  return fmt::format("{} commands on {} (merged): {} .. {}, busy {}{}; {}", g.count, lane, us_text(g.start),
                     us_text(g.end), us_text(g.busy), amount, names);
}

// The trace's events inside [from_us, to_us), on a clock starting at
// from_us; spans reaching out of the window are cut at its edges.
Timeline window_of(const Timeline &t, double from_us, double to_us) {
  Timeline w;
  w.process = t.process;
  w.end_us = to_us - from_us;
  for (const Lane &lane : t.lanes) {
    Lane kept = lane;
    kept.events.clear();
    for (const Event &e : lane.events) {
      const double start = std::max(e.ts, from_us), end = std::min(e.ts + e.dur, to_us);
      // The trace's times are decimal microseconds: a command ending where
      // the window starts may end a rounding error after it.
      constexpr double eps = 1e-7;
      const bool inside = e.dur > 0 ? end - start > eps : e.ts >= from_us - eps && e.ts < to_us - eps;
      if (!inside) continue;
      Event cut = e;
      cut.ts = start - from_us;
      cut.dur = std::max(0.0, end - start);
      kept.events.push_back(std::move(cut));
    }
    if (!kept.spans) w.commands += kept.events.size();
    w.lanes.push_back(std::move(kept));
  }
  return w;
}

const Lane *find_lane(const Timeline &t, const std::string &title) {
  for (const Lane &lane : t.lanes)
    if (lane.title == title) return &lane;
  return nullptr;
}

// The picture's title. The op tester records every case (the global run
// through the backend, through the firmware, each local slicing) in one
// trace, end to end: the trace's length is then several runs of the op, so
// the title gives one run's time and says how many are drawn.
std::string title_of(const Timeline &t, bool windowed) {
  const std::string process = t.process.empty() ? "trace" : t.process;
  const Lane *cases = windowed ? nullptr : find_lane(t, "cases");
  if (!cases || cases->events.size() < 2)
    return fmt::format("{}: {} commands in {}", process, t.commands, us_text(t.end_us));
  const Event &first = cases->events.front();
  return fmt::format("{}: {} {} per run; {} runs drawn back to back ({} commands in {})", process, first.name,
                     us_text(first.dur), cases->events.size(), t.commands, us_text(t.end_us));
}

// The geometry of one picture.
struct Frame {
  static constexpr int left = 120, right = 24, top = 56, lane_h = 26, lane_gap = 6;
  int width = 0, height = 0, lanes_h = 0, legend_y = 0;
  double plot_w = 0, px_per_us = 0, end_us = 1;
  int lane_y(std::size_t i) const { return top + int(i) * (lane_h + lane_gap); }
};

Frame frame_of(const Timeline &t, const SvgOptions &options) {
  Frame f;
  f.width = std::max(options.width, Frame::left + Frame::right + 200);
  f.plot_w = f.width - Frame::left - Frame::right;
  f.end_us = t.end_us > 0 ? t.end_us : 1;
  f.px_per_us = f.plot_w / f.end_us;
  f.lanes_h = int(t.lanes.size()) * (Frame::lane_h + Frame::lane_gap);
  f.legend_y = Frame::top + f.lanes_h + 24;
  f.height = f.legend_y + 40;
  return f;
}

// Ticks and grid lines at 1, 2 or 5 x 10^k us.
void draw_axis(std::string &out, const Frame &f) {
  const double step = tick_step(f.end_us);
  put(out, "<g class=\"axis\" stroke=\"#dddddd\">\n");
  for (int i = 0; i * step <= f.end_us * (1 + 1e-9); ++i) {
    const double x = Frame::left + i * step * f.px_per_us;
    put(out, "<line x1=\"{:.2f}\" y1=\"{}\" x2=\"{:.2f}\" y2=\"{}\"/>\n", x, Frame::top - 6, x, Frame::top + f.lanes_h);
    put(out, "<text x=\"{:.2f}\" y=\"{}\" stroke=\"none\" fill=\"#444444\" text-anchor=\"middle\">{:g} us</text>\n", x,
        Frame::top - 10, i * step);
  }
  put(out, "</g>\n");
}

// `name` where a box `w` px wide has room for it (about 6.5 px per
// character at the picture's font size), cut with "~" when it nearly fits;
// "" when not even `least` characters fit.
std::string label_for(const std::string &name, double w, std::size_t least = 3) {
  const std::size_t fits = std::size_t(std::max(0.0, (w - 6) / 6.5));
  if (fits < least || fits < 2) return "";
  return name.size() <= fits ? name : name.substr(0, fits - 1) + "~";
}

void draw_spans(std::string &out, const Frame &f, const Lane &lane, int y) {
  for (std::size_t i = 0; i < lane.events.size(); ++i) {
    const Event &e = lane.events[i];
    const double x = Frame::left + e.ts * f.px_per_us, w = std::max(e.dur * f.px_per_us, 0.5);
    put(out, "<rect class=\"span\" x=\"{:.3f}\" y=\"{}\" width=\"{:.3f}\" height=\"{}\" fill=\"{}\" stroke=\"white\" "
        "stroke-width=\"0.5\"><title>{}</title></rect>\n",
        x, y, w, Frame::lane_h, i % 2 ? "#c9c0bb" : "#a8a09b",
        markup_escaped(fmt::format("{}: {} .. {} ({})", e.name, us_text(e.ts), us_text(e.ts + e.dur), us_text(e.dur))));
    if (const std::string label = label_for(e.name, w); !label.empty())
      put(out, "<text x=\"{:.3f}\" y=\"{}\" pointer-events=\"none\">{}</text>\n", x + 3, y + Frame::lane_h / 2 + 4,
          markup_escaped(label));
  }
}

// One rect per group of commands; a single command's rect wide enough for
// it carries its API function's name (without the "tpu_" every name has).
std::size_t draw_commands(std::string &out, const Frame &f, const Lane &lane, int y, bool merge) {
  std::size_t rects = 0;
  for (const Group &g : groups_of(lane, f.px_per_us, merge)) {
    const double x = Frame::left + g.start * f.px_per_us, w = std::max((g.end - g.start) * f.px_per_us, 0.75);
    // At least 0.75 px, so a short command stays visible; a hairline between
    // back-to-back commands where there is room for it.
    put(out, "<rect class=\"cmd\" data-n=\"{}\" x=\"{:.3f}\" y=\"{}\" width=\"{:.3f}\" height=\"{}\" fill=\"{}\"{}>"
        "<title>{}</title></rect>\n",
        g.count, x, y + 2, w, Frame::lane_h - 4, engine_colour(lane.title),
        w >= 3 ? " stroke=\"white\" stroke-width=\"0.4\"" : "", markup_escaped(tooltip(g, lane.title)));
    ++rects;
    if (g.count != 1) continue;
    std::string name = g.apis.begin()->first;
    if (name.rfind("tpu_", 0) == 0) name = name.substr(4);
    // API names share their first letters ("bdc_fp_"): a stub of a few would
    // say nothing, so a command's label needs room for most of its name.
    if (const std::string label = label_for(name, w, std::min<std::size_t>(name.size(), 9)); !label.empty())
      put(out, "<text class=\"cmd-label\" x=\"{:.3f}\" y=\"{}\" fill=\"white\" pointer-events=\"none\">{}</text>\n",
          x + 3, y + Frame::lane_h / 2 + 4, markup_escaped(label));
  }
  return rects;
}

// Legend, and what merging did.
void draw_legend(std::string &out, const Frame &f, const Timeline &t, bool merge, std::size_t rects) {
  int x = Frame::left;
  for (const char *engine : {"GDMA", "BDC", "SDMA", "HAU"}) {
    put(out, "<rect x=\"{}\" y=\"{}\" width=\"12\" height=\"12\" fill=\"{}\"/><text x=\"{}\" y=\"{}\">{}</text>\n", x,
        f.legend_y - 10, engine_colour(engine), x + 16, f.legend_y, engine);
    x += 70;
  }
  put(out, "<text x=\"{}\" y=\"{}\" fill=\"#444444\">{}</text>\n", x + 10, f.legend_y,
      markup_escaped(merge ? fmt::format("{} commands drawn as {} rects: adjacent commands under 1 px are merged (see the "
                                  "tooltips); open the JSON trace for every command",
                                  t.commands, rects)
                    : fmt::format("one rect per command ({}); hover for its API function, time and amount",
                                  t.commands)));
}

std::string svg_of(const Timeline &t, const SvgOptions &options, bool windowed) {
  const Frame f = frame_of(t, options);
  const bool merge = t.commands > options.max_rects;
  std::string out;
  put(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
  put(out, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" viewBox=\"0 0 {} {}\" "
      "font-family=\"sans-serif\" font-size=\"11\">\n",
      f.width, f.height, f.width, f.height);
  put(out, "<rect x=\"0\" y=\"0\" width=\"{}\" height=\"{}\" fill=\"white\"/>\n", f.width, f.height);
  put(out, "<text x=\"{}\" y=\"18\" font-size=\"14\" font-weight=\"bold\">{}</text>\n", Frame::left,
      markup_escaped(title_of(t, windowed)));
  draw_axis(out, f);
  std::size_t rects = 0;
  for (std::size_t li = 0; li < t.lanes.size(); ++li) {
    const Lane &lane = t.lanes[li];
    const int y = f.lane_y(li);
    put(out, "<g class=\"lane\" data-lane=\"{}\">\n", markup_escaped(lane.title));
    put(out, "<rect x=\"{}\" y=\"{}\" width=\"{:.2f}\" height=\"{}\" fill=\"#f4f4f4\"/>\n", Frame::left, y, f.plot_w,
        Frame::lane_h);
    put(out, "<text x=\"{}\" y=\"{}\" text-anchor=\"end\" font-weight=\"bold\">{}</text>\n", Frame::left - 8,
        y + Frame::lane_h / 2 + 4, markup_escaped(lane.title));
    if (lane.spans) draw_spans(out, f, lane, y);
    else rects += draw_commands(out, f, lane, y, merge);
    put(out, "</g>\n");
  }
  draw_legend(out, f, t, merge, rects);
  put(out, "</svg>\n");
  return out;
}

}  // namespace

std::string markup_escaped(const std::string &text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default:
        // Control characters are not allowed in XML 1.0 (nor in HTML text).
        if (static_cast<unsigned char>(c) >= 0x20 || c == '\t' || c == '\n') out += c;
    }
  }
  return out;
}

std::string trace_svg(const std::string &trace_json, const SvgOptions &options) {
  const Timeline t = parse_trace(trace_json);
  const bool windowed = options.from_us > 0 || options.to_us >= 0;
  if (!windowed) return svg_of(t, options, false);
  const double to = options.to_us >= 0 ? options.to_us : t.end_us;
  if (!(to > options.from_us))
    throw Error(fmt::format("trace_svg: the window [{}, {}) us is empty", options.from_us, to));
  return svg_of(window_of(t, options.from_us, to), options, true);
}

std::vector<TraceLaneSpan> trace_lane_spans(const std::string &trace_json, const std::string &lane) {
  std::vector<TraceLaneSpan> out;
  for (const Lane &l : parse_trace(trace_json).lanes)
    if (l.title == lane)
      for (const Event &e : l.events) out.push_back({e.name, e.ts, e.ts + e.dur});
  return out;
}

std::string trace_with_metadata(const std::string &trace_json, const nlohmann::ordered_json &metadata) {
  const nlohmann::json doc = nlohmann::json::parse(trace_json, nullptr, false);
  if (doc.is_discarded() || !doc.is_object() || !doc.contains("traceEvents"))
    throw Error("not a Chrome trace: expected a JSON object with a \"traceEvents\" array");
  if (doc.contains("metadata")) throw Error("the trace already has a \"metadata\" member");
  // Inserted before the root object's closing brace, so the events stay
  // one per line as the emulator writes them (the object has members: it
  // holds traceEvents).
  const std::size_t close = trace_json.find_last_of('}');
  return trace_json.substr(0, close) + ",\n\"metadata\":" + metadata.dump() + trace_json.substr(close);
}

void write_profile(const std::string &trace_json, const std::string &json_path, const std::string &svg_path) {
  auto write = [](const std::string &path, const std::string &text) {
    try {
      detail::AtomicFile file(path);
      file.write({reinterpret_cast<const uint8_t *>(text.data()), text.size()});
      file.commit();
    } catch (const Error &e) {
      throw Error(fmt::format("cannot write the profile: {}", e.what()));
    }
  };
  if (!json_path.empty()) write(json_path, trace_json);
  if (!svg_path.empty()) write(svg_path, trace_svg(trace_json));
}

}  // namespace tpu_runtime
