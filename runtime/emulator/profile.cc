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

std::string escaped(const std::string &text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default:
        // Control characters are not allowed in XML 1.0.
        if (static_cast<unsigned char>(c) >= 0x20 || c == '\t' || c == '\n') out += c;
    }
  }
  return out;
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

}  // namespace

std::string trace_svg(const std::string &trace_json, const SvgOptions &options) {
  const Timeline t = parse_trace(trace_json);
  constexpr int left = 120, right = 24, top = 56, lane_h = 26, lane_gap = 6;
  const int width = std::max(options.width, left + right + 200);
  const double plot_w = width - left - right;
  const double end_us = t.end_us > 0 ? t.end_us : 1;
  const double px_per_us = plot_w / end_us;
  const int lanes_h = int(t.lanes.size()) * (lane_h + lane_gap);
  const int legend_y = top + lanes_h + 24;
  const int height = legend_y + 40;
  const bool merge = t.commands > options.max_rects;

  std::string out;
  put(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
  put(out, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" viewBox=\"0 0 {} {}\" "
      "font-family=\"sans-serif\" font-size=\"11\">\n",
      width, height, width, height);
  put(out, "<rect x=\"0\" y=\"0\" width=\"{}\" height=\"{}\" fill=\"white\"/>\n", width, height);
  put(out, "<text x=\"{}\" y=\"18\" font-size=\"14\" font-weight=\"bold\">{}</text>\n", left,
      escaped(fmt::format("{}: {} commands in {}", t.process.empty() ? "trace" : t.process, t.commands,
                          us_text(t.end_us))));

  // Time axis: ticks and grid lines at 1, 2 or 5 x 10^k us.
  const double step = tick_step(end_us);
  put(out, "<g class=\"axis\" stroke=\"#dddddd\">\n");
  for (int i = 0; i * step <= end_us * (1 + 1e-9); ++i) {
    const double x = left + i * step * px_per_us;
    put(out, "<line x1=\"{:.2f}\" y1=\"{}\" x2=\"{:.2f}\" y2=\"{}\"/>\n", x, top - 6, x, top + lanes_h);
    put(out, "<text x=\"{:.2f}\" y=\"{}\" stroke=\"none\" fill=\"#444444\" text-anchor=\"middle\">{:g} us</text>\n", x,
        top - 10, i * step);
  }
  put(out, "</g>\n");

  std::size_t rects = 0;
  for (std::size_t li = 0; li < t.lanes.size(); ++li) {
    const Lane &lane = t.lanes[li];
    const int y = top + int(li) * (lane_h + lane_gap);
    put(out, "<g class=\"lane\" data-lane=\"{}\">\n", escaped(lane.title));
    put(out, "<rect x=\"{}\" y=\"{}\" width=\"{:.2f}\" height=\"{}\" fill=\"#f4f4f4\"/>\n", left, y, plot_w, lane_h);
    put(out, "<text x=\"{}\" y=\"{}\" text-anchor=\"end\" font-weight=\"bold\">{}</text>\n", left - 8, y + lane_h / 2 + 4,
        escaped(lane.title));
    if (lane.spans) {
      for (std::size_t i = 0; i < lane.events.size(); ++i) {
        const Event &e = lane.events[i];
        const double x = left + e.ts * px_per_us, w = std::max(e.dur * px_per_us, 0.5);
        put(out, "<rect class=\"span\" x=\"{:.3f}\" y=\"{}\" width=\"{:.3f}\" height=\"{}\" fill=\"{}\" stroke=\"white\" "
            "stroke-width=\"0.5\"><title>{}</title></rect>\n",
            x, y, w, lane_h, i % 2 ? "#c9c0bb" : "#a8a09b",
            escaped(fmt::format("{}: {} .. {} ({})", e.name, us_text(e.ts), us_text(e.ts + e.dur), us_text(e.dur))));
        // A label where it fits (about 6.5 px per character).
        const std::size_t fits = std::size_t(std::max(0.0, (w - 6) / 6.5));
        if (fits >= 3) {
          std::string label = e.name.size() <= fits ? e.name : e.name.substr(0, fits - 1) + "~";
          put(out, "<text x=\"{:.3f}\" y=\"{}\" pointer-events=\"none\">{}</text>\n", x + 3, y + lane_h / 2 + 4,
              escaped(label));
        }
      }
    } else {
      for (const Group &g : groups_of(lane, px_per_us, merge)) {
        const double x = left + g.start * px_per_us, w = std::max((g.end - g.start) * px_per_us, 0.75);
        // At least 0.75 px, so a short command stays visible; a hairline between
        // back-to-back commands where there is room for it.
        put(out, "<rect class=\"cmd\" data-n=\"{}\" x=\"{:.3f}\" y=\"{}\" width=\"{:.3f}\" height=\"{}\" fill=\"{}\"{}>"
            "<title>{}</title></rect>\n",
            g.count, x, y + 2, w, lane_h - 4, engine_colour(lane.title),
            w >= 3 ? " stroke=\"white\" stroke-width=\"0.4\"" : "", escaped(tooltip(g, lane.title)));
        ++rects;
      }
    }
    put(out, "</g>\n");
  }

  // Legend, and what merging did.
  int x = left;
  for (const char *engine : {"GDMA", "BDC", "SDMA", "HAU"}) {
    put(out, "<rect x=\"{}\" y=\"{}\" width=\"12\" height=\"12\" fill=\"{}\"/><text x=\"{}\" y=\"{}\">{}</text>\n", x,
        legend_y - 10, engine_colour(engine), x + 16, legend_y, engine);
    x += 70;
  }
  put(out, "<text x=\"{}\" y=\"{}\" fill=\"#444444\">{}</text>\n", x + 10, legend_y,
      escaped(merge ? fmt::format("{} commands drawn as {} rects: adjacent commands under 1 px are merged (see the "
                                  "tooltips); open the JSON trace for every command",
                                  t.commands, rects)
                    : fmt::format("one rect per command ({}); hover for its API function, time and amount",
                                  t.commands)));
  put(out, "</svg>\n");
  return out;
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
