// profile_test: the profile trace (cmodel_trace_*, tpu_runtime/profile.h,
// tpu_model run --profile/--profile-svg, tpu_op_check --profile).
//
// The trace's per-engine busy time and command counts are checked against
// the run statistics (cmodel_last_run_stats: the timeline's own totals, kept
// apart from the trace), the bytes and elements against what the test's
// kernels move, a double-buffered kernel's GDMA and BDC events against each
// other (they overlap), and the SVG by parsing it as XML with Python's
// parser. Paths of the tools and sample ops come from compile definitions
// (tests/runtime/model/fixtures/CMakeLists.txt).
#include <sys/wait.h>

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cmodel_host.h"
#include "support/temp_dir.h"
#include "support/test_support.h"
#include "tpu_kernel.h"
#include "tpu_runtime/error.h"
#include "tpu_runtime/model.h"
#include "tpu_runtime/model_file.h"
#include "tpu_runtime/net.h"
#include "tpu_runtime/npz.h"
#include "tpu_runtime/profile.h"

#ifndef TPU_SAMPLE_OPS_LIB_DIR
#define TPU_SAMPLE_OPS_LIB_DIR ""
#endif
#ifndef TPU_MODEL_TOOL
#define TPU_MODEL_TOOL ""
#endif
#ifndef TPU_OP_CHECK
#define TPU_OP_CHECK ""
#endif

namespace {

namespace tr = tpu_runtime;
using Json = nlohmann::json;

// ---- reading a trace ---------------------------------------------------------

struct TraceEvent {
  std::string name, lane;
  double ts = 0, dur = 0;
  Json args;
  double end() const { return ts + dur; }
};

struct ParsedTrace {
  std::map<int, std::string> lanes;  // tid -> thread_name
  std::vector<TraceEvent> events;
  Json other;

  std::vector<TraceEvent> on(const std::string &lane) const {
    std::vector<TraceEvent> out;
    for (const TraceEvent &e : events)
      if (e.lane == lane) out.push_back(e);
    return out;
  }
  double busy_us(const std::string &lane) const {
    double sum = 0;
    for (const TraceEvent &e : on(lane)) sum += e.dur;
    return sum;
  }
  std::vector<std::string> lane_names() const {
    std::vector<std::string> out;
    for (const auto &[tid, name] : lanes) out.push_back(name);
    return out;
  }
};

ParsedTrace parse_trace(const std::string &text) {
  const Json doc = Json::parse(text);  // throws (fails the test) when not JSON
  ParsedTrace t;
  for (const Json &e : doc.at("traceEvents"))
    if (e.at("ph") == "M" && e.at("name") == "thread_name") t.lanes[e.at("tid").get<int>()] = e.at("args").at("name");
  for (const Json &e : doc.at("traceEvents")) {
    if (e.at("ph") != "X") continue;
    EXPECT_EQ(e.at("pid"), 1);
    EXPECT_TRUE(t.lanes.count(e.at("tid").get<int>())) << "an event on a lane without a name: " << e.dump();
    t.events.push_back({e.at("name"), t.lanes[e.at("tid").get<int>()], e.at("ts"), e.at("dur"),
                        e.value("args", Json::object())});
  }
  t.other = doc.value("otherData", Json::object());
  return t;
}

ParsedTrace current_trace() {
  const char *text = cmodel_trace_json();
  if (!text) {
    ADD_FAILURE() << cmodel_last_error();
    return {};
  }
  return parse_trace(text);
}

std::string engine_lane(const std::string &engine) {
  return engine == "gdma" ? "GDMA" : engine == "bdc" ? "BDC" : engine == "sdma" ? "SDMA" : "HAU";
}

// The per-engine busy time and command count of `trace` equal `stats`
// (one stats JSON, or several summed).
void expect_totals_match(const ParsedTrace &trace, const std::vector<Json> &stats) {
  for (const char *engine : {"gdma", "bdc", "sdma", "hau"}) {
    double busy = 0;
    uint64_t commands = 0;
    for (const Json &s : stats) {
      busy += s.at("engines").at(engine).at("busy_us").get<double>();
      commands += s.at("engines").at(engine).at("commands").get<uint64_t>();
    }
    const std::string lane = engine_lane(engine);
    EXPECT_EQ(trace.on(lane).size(), commands) << engine;
    EXPECT_NEAR(trace.busy_us(lane), busy, 1e-5 * (1 + busy)) << engine;
  }
}

// As tpu_model run prints the total of its table.
std::string fmt_total(double us) {
  char text[64];
  std::snprintf(text, sizeof text, "%.2f", us);
  return text;
}

bool overlap(const TraceEvent &a, const TraceEvent &b) { return a.ts < b.end() && b.ts < a.end(); }

// ---- kernels -------------------------------------------------------------------

struct Job {
  global_addr_t input = 0, output = 0;
  int tiles = 0;
  dim4 tile{};
};
Job g;

uint64_t tile_elements() { return uint64_t(g.tile.n) * g.tile.c * g.tile.h * g.tile.w; }

// Load, add, store: serial.
void serial_kernel(const void *) {
  tpu_gdma_cpy_S2L(0, g.input, &g.tile, nullptr, nullptr, DT_FP32);
  tpu_bdc_fp_add(4 * BANK_SIZE, 0, 0, &g.tile, nullptr, nullptr, nullptr, DT_FP32);
  tpu_gdma_cpy_L2S(g.output, 4 * BANK_SIZE, &g.tile, nullptr, nullptr, DT_FP32);
}

// Double buffered: tile i + 1 loads and tile i - 1 stores while tile i is
// computed (see hazard_test).
void double_buffered_kernel(const void *) {
  const unsigned long long tile_bytes = 4ull * tile_elements();
  const local_addr_t bank = local_addr_t(BANK_SIZE);
  const local_addr_t in[2] = {0, 4 * bank}, out[2] = {8 * bank, 12 * bank};
  tpu_gdma_cpy_S2L(in[0], g.input, &g.tile, nullptr, nullptr, DT_FP32);
  for (int i = 0; i < g.tiles; ++i) {
    tpu_parallel_start();
    if (i + 1 < g.tiles)
      tpu_gdma_cpy_S2L(in[(i + 1) % 2], g.input + (i + 1) * tile_bytes, &g.tile, nullptr, nullptr, DT_FP32);
    if (i > 0) tpu_gdma_cpy_L2S(g.output + (i - 1) * tile_bytes, out[(i - 1) % 2], &g.tile, nullptr, nullptr, DT_FP32);
    tpu_bdc_fp_add(out[i % 2], in[i % 2], in[i % 2], &g.tile, nullptr, nullptr, nullptr, DT_FP32);
    tpu_parallel_end();
  }
  tpu_gdma_cpy_L2S(g.output + (g.tiles - 1) * tile_bytes, out[(g.tiles - 1) % 2], &g.tile, nullptr, nullptr, DT_FP32);
}

// An SDMA copy and a HAU sort, for their lanes.
void sdma_and_hau_kernel(const void *) {
  tpu_sdma_system_cpy(g.output, g.input, 64, DT_FP32);
  tpu_hau_sort(g.output + 4096, g.input, 32, 8, false, DT_FP32);
}

class TraceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(cmodel_open("bm1684x"), 0) << cmodel_last_error();
    g = Job{};
    g.tiles = 4;
    g.tile = {1, 64, 8, 16};
    const uint64_t bytes = 4 * tile_elements() * uint64_t(g.tiles);
    g.input = cmodel_global_alloc(bytes);
    g.output = cmodel_global_alloc(bytes);
    ASSERT_NE(g.input, 0u);
    ASSERT_NE(g.output, 0u);
    std::vector<float> data(bytes / 4);
    for (std::size_t i = 0; i < data.size(); ++i) data[i] = float(i % 97) - 40;
    ASSERT_EQ(cmodel_global_write(g.input, data.data(), bytes), 0);
  }
  void TearDown() override { cmodel_close(); }

  Json run(void (*kernel)(const void *)) {
    EXPECT_EQ(cmodel_run(kernel, nullptr), 0) << cmodel_last_error();
    return Json::parse(cmodel_last_run_stats());
  }
};

TEST_F(TraceTest, NothingIsKeptUntilEnabled) {
  run(serial_kernel);
  EXPECT_EQ(cmodel_trace_json(), nullptr);
  EXPECT_CONTAINS(cmodel_last_error(), "cmodel_trace_enable(1)");
  // Spans without a trace are no-ops, so hosts can mark unconditionally.
  EXPECT_EQ(cmodel_trace_span_begin("layers", "conv"), 0) << cmodel_last_error();
  EXPECT_EQ(cmodel_trace_span_end(), 0) << cmodel_last_error();
}

TEST_F(TraceTest, EveryCommandWithItsEngineApiAndAmount) {
  ASSERT_EQ(cmodel_trace_enable(1), 0) << cmodel_last_error();
  const Json stats = run(serial_kernel);
  const ParsedTrace t = current_trace();
  // GDMA, BDC and SDMA always have a lane; the HAU only when it ran.
  const std::vector<std::string> lanes = t.lane_names();
  EXPECT_EQ(lanes, (std::vector<std::string>{"GDMA", "BDC", "SDMA"}));
  ASSERT_EQ(t.events.size(), 3u);
  const uint64_t elements = tile_elements();
  EXPECT_EQ(t.events[0].name, "tpu_gdma_cpy_S2L");
  EXPECT_EQ(t.events[0].lane, "GDMA");
  EXPECT_EQ(t.events[0].args, Json({{"bytes", 4 * elements}}));
  EXPECT_EQ(t.events[1].name, "tpu_bdc_fp_add");
  EXPECT_EQ(t.events[1].lane, "BDC");
  EXPECT_EQ(t.events[1].args, Json({{"elements", elements}}));
  EXPECT_EQ(t.events[2].name, "tpu_gdma_cpy_L2S");
  EXPECT_EQ(t.events[2].args, Json({{"bytes", 4 * elements}}));
  // Outside a parallel region each command waits for the one before.
  EXPECT_DOUBLE_EQ(t.events[0].ts, 0);
  for (std::size_t i = 1; i < t.events.size(); ++i) EXPECT_NEAR(t.events[i].ts, t.events[i - 1].end(), 1e-9);
  EXPECT_NEAR(t.events.back().end(), stats.at("total_us").get<double>(), 1e-6);
  expect_totals_match(t, {stats});
  EXPECT_NEAR(t.other.at("clock_us").get<double>(), stats.at("total_us").get<double>(), 1e-6);
}

TEST_F(TraceTest, ParallelRegionsOverlapGdmaAndBdc) {
  ASSERT_EQ(cmodel_trace_enable(1), 0);
  const Json stats = run(double_buffered_kernel);
  const ParsedTrace t = current_trace();
  expect_totals_match(t, {stats});
  const std::vector<TraceEvent> gdma = t.on("GDMA"), bdc = t.on("BDC");
  EXPECT_EQ(gdma.size(), 2u * g.tiles);
  EXPECT_EQ(bdc.size(), std::size_t(g.tiles));
  int overlapping = 0;
  for (const TraceEvent &b : bdc)
    for (const TraceEvent &d : gdma) overlapping += overlap(b, d);
  EXPECT_GE(overlapping, g.tiles - 1);
  // What overlaps is what the statistics count as overlap.
  EXPECT_GT(stats.at("overlap_us").get<double>(), 0);
  // Each engine still runs one command at a time.
  for (const auto *lane : {&gdma, &bdc})
    for (std::size_t i = 1; i < lane->size(); ++i) EXPECT_LE((*lane)[i - 1].end(), (*lane)[i].ts + 1e-9);
}

TEST_F(TraceTest, SdmaAndHauHaveTheirLanes) {
  ASSERT_EQ(cmodel_trace_enable(1), 0);
  const Json stats = run(sdma_and_hau_kernel);
  const ParsedTrace t = current_trace();
  EXPECT_EQ(t.lane_names(), (std::vector<std::string>{"GDMA", "BDC", "SDMA", "HAU"}));
  ASSERT_EQ(t.on("SDMA").size(), 1u);
  EXPECT_EQ(t.on("SDMA")[0].args, Json({{"bytes", 64 * 4}}));
  ASSERT_EQ(t.on("HAU").size(), 1u);
  EXPECT_EQ(t.on("HAU")[0].name, "tpu_hau_sort");
  EXPECT_EQ(t.on("HAU")[0].args, Json({{"elements", 8}}));  // the K outputs of one row
  expect_totals_match(t, {stats});
}

TEST_F(TraceTest, RunsFollowEachOtherAndSpansMarkThem) {
  ASSERT_EQ(cmodel_trace_enable(1), 0);
  ASSERT_EQ(cmodel_trace_span_begin("layers", "first"), 0);
  const Json a = run(serial_kernel);
  ASSERT_EQ(cmodel_trace_span_end(), 0);
  ASSERT_EQ(cmodel_trace_span_begin("layers", "second <&>"), 0);
  ASSERT_EQ(cmodel_trace_span_begin("steps", "inner"), 0);
  const Json b = run(double_buffered_kernel);
  ASSERT_EQ(cmodel_trace_span_end(), 0);
  ASSERT_EQ(cmodel_trace_span_end(), 0);
  EXPECT_EQ(cmodel_trace_span_end(), -1);
  EXPECT_CONTAINS(cmodel_last_error(), "no span is open");

  const ParsedTrace t = current_trace();
  const double first_us = a.at("total_us").get<double>(), second_us = b.at("total_us").get<double>();
  expect_totals_match(t, {a, b});
  const std::vector<TraceEvent> layers = t.on("layers");
  ASSERT_EQ(layers.size(), 2u);
  EXPECT_EQ(layers[0].name, "first");
  EXPECT_NEAR(layers[0].ts, 0, 1e-9);
  EXPECT_NEAR(layers[0].dur, first_us, 1e-6);
  EXPECT_EQ(layers[1].name, "second <&>");
  EXPECT_NEAR(layers[1].ts, first_us, 1e-6);
  EXPECT_NEAR(layers[1].dur, second_us, 1e-6);
  ASSERT_EQ(t.on("steps").size(), 1u);
  EXPECT_NEAR(t.on("steps")[0].dur, second_us, 1e-6);
  // The second run's commands start where the first run ended.
  double first_command_of_b = 1e300;
  for (const TraceEvent &e : t.events)
    if (e.lane != "layers" && e.lane != "steps" && e.ts >= first_us - 1e-9) first_command_of_b = std::min(first_command_of_b, e.ts);
  EXPECT_NEAR(first_command_of_b, first_us, 1e-6);
  // Span lanes come first, in the order they were first used.
  EXPECT_EQ(t.lane_names(), (std::vector<std::string>{"layers", "steps", "GDMA", "BDC", "SDMA"}));
}

TEST_F(TraceTest, PausedRunsAreLeftOutAndClearStartsAgain) {
  ASSERT_EQ(cmodel_trace_enable(1), 0);
  const Json a = run(serial_kernel);
  ASSERT_EQ(cmodel_trace_enable(0), 0);
  run(double_buffered_kernel);
  ASSERT_NE(cmodel_trace_json(), nullptr) << "a paused trace stays readable";
  ASSERT_EQ(cmodel_trace_enable(1), 0);
  const Json c = run(serial_kernel);
  ParsedTrace t = current_trace();
  expect_totals_match(t, {a, c});
  EXPECT_NEAR(t.other.at("clock_us").get<double>(), a.at("total_us").get<double>() + c.at("total_us").get<double>(),
              1e-6);
  ASSERT_EQ(cmodel_trace_clear(), 0);
  t = current_trace();
  EXPECT_TRUE(t.events.empty());
  EXPECT_EQ(t.other.at("clock_us").get<double>(), 0);
  // A new emulator starts without a trace.
  ASSERT_EQ(cmodel_open("bm1688"), 0);
  EXPECT_EQ(cmodel_trace_json(), nullptr);
}

TEST_F(TraceTest, ReplayedStreamsAreTraced) {
  ASSERT_EQ(cmodel_record_begin("profile test"), 0) << cmodel_last_error();
  run(double_buffered_kernel);
  void *stream = nullptr;
  uint64_t size = 0;
  ASSERT_EQ(cmodel_record_end(&stream, &size), 0) << cmodel_last_error();
  ASSERT_EQ(cmodel_trace_enable(1), 0);
  const int status = cmodel_replay(stream, size);
  cmodel_record_free(stream);
  ASSERT_EQ(status, 0) << cmodel_last_error();
  const Json stats = Json::parse(cmodel_last_run_stats());
  const ParsedTrace t = current_trace();
  EXPECT_EQ(t.on("GDMA").size(), 2u * g.tiles);
  expect_totals_match(t, {stats});
}

// cmodel_total_stats adds runs up: what the trace of the same runs shows,
// and each run's own statistics summed by the test.
TEST_F(TraceTest, TotalStatsAddRunsUp) {
  ASSERT_EQ(cmodel_total_stats_reset(), 0);
  ASSERT_EQ(cmodel_trace_enable(1), 0);
  const Json a = run(serial_kernel), b = run(double_buffered_kernel), c = run(sdma_and_hau_kernel);
  const Json totals = Json::parse(cmodel_total_stats());
  EXPECT_NEAR(totals.at("total_us").get<double>(),
              a.at("total_us").get<double>() + b.at("total_us").get<double>() + c.at("total_us").get<double>(), 1e-5);
  for (const char *engine : {"gdma", "bdc", "sdma", "hau"})
    EXPECT_EQ(totals.at("engines").at(engine).at("commands"),
              a.at("engines").at(engine).at("commands").get<uint64_t>() +
                  b.at("engines").at(engine).at("commands").get<uint64_t>() +
                  c.at("engines").at(engine).at("commands").get<uint64_t>())
        << engine;
  for (const char *direction : {"S2L", "L2S", "S2S"})
    EXPECT_EQ(totals.at("bytes").at(direction), a.at("bytes").at(direction).get<uint64_t>() +
                                                   b.at("bytes").at(direction).get<uint64_t>() +
                                                   c.at("bytes").at(direction).get<uint64_t>())
        << direction;
  EXPECT_EQ(totals.at("commands").at("tpu_bdc_fp_add"), 1 + g.tiles);
  expect_totals_match(current_trace(), {totals});
  ASSERT_EQ(cmodel_total_stats_reset(), 0);
  EXPECT_EQ(Json::parse(cmodel_total_stats()).at("total_us"), 0);
  const Json d = run(serial_kernel);
  EXPECT_EQ(Json::parse(cmodel_total_stats()), d) << "one run: the totals are its statistics";
}

// cmodel_trace_advance: host time between runs, with every engine idle;
// a paused trace's clock stays stopped; a negative or non-finite time is
// refused.
TEST_F(TraceTest, AdvanceMovesTheClockWithEnginesIdle) {
  EXPECT_EQ(cmodel_trace_advance(5), 0) << "no trace: a no-op";
  ASSERT_EQ(cmodel_trace_enable(1), 0);
  const Json a = run(serial_kernel);
  ASSERT_EQ(cmodel_trace_span_begin("host", "waiting"), 0);
  ASSERT_EQ(cmodel_trace_advance(12.5), 0) << cmodel_last_error();
  ASSERT_EQ(cmodel_trace_span_end(), 0);
  const Json b = run(serial_kernel);
  ASSERT_EQ(cmodel_trace_enable(0), 0);
  ASSERT_EQ(cmodel_trace_advance(1000), 0);
  const ParsedTrace t = current_trace();
  expect_totals_match(t, {a, b});
  const double first_us = a.at("total_us").get<double>();
  ASSERT_EQ(t.on("host").size(), 1u);
  EXPECT_NEAR(t.on("host")[0].ts, first_us, 1e-6);
  EXPECT_NEAR(t.on("host")[0].dur, 12.5, 1e-9);
  EXPECT_NEAR(t.other.at("clock_us").get<double>(), first_us + 12.5 + b.at("total_us").get<double>(), 1e-6);
  for (const double bad : {-1.0, std::nan(""), 1e300}) {
    EXPECT_EQ(cmodel_trace_advance(bad), -1) << bad;
    EXPECT_CONTAINS(cmodel_last_error(), "is not a finite time >= 0");
  }
}

TEST_F(TraceTest, BadSpanArgumentsAreRefused) {
  ASSERT_EQ(cmodel_trace_enable(1), 0);
  EXPECT_EQ(cmodel_trace_span_begin(nullptr, "x"), -1);
  EXPECT_CONTAINS(cmodel_last_error(), "lane name");
  EXPECT_EQ(cmodel_trace_span_begin("", "x"), -1);
  EXPECT_EQ(cmodel_trace_span_begin("layers", nullptr), -1);
  cmodel_close();
  EXPECT_EQ(cmodel_trace_enable(1), -1);
  EXPECT_CONTAINS(cmodel_last_error(), "no emulator is open");
}

// ---- the SVG -----------------------------------------------------------------

// Runs python3's XML parser on `path`; returns its output: the number of
// command rects, the sum of their data-n, the lane names, "ERROR ..." if the
// file is not well-formed XML.
std::string python_svg_summary(const std::string &path) {
  const std::string script =
      "import sys, xml.etree.ElementTree as E\n"
      "try:\n"
      "    root = E.parse(sys.argv[1]).getroot()\n"
      "except E.ParseError as e:\n"
      "    print('ERROR', e); sys.exit(0)\n"
      "ns = '{http://www.w3.org/2000/svg}'\n"
      "assert root.tag == ns + 'svg', root.tag\n"
      "rects = [r for r in root.iter(ns + 'rect') if r.get('class') == 'cmd']\n"
      "assert all(r.find(ns + 'title') is not None for r in rects)\n"
      "spans = [r for r in root.iter(ns + 'rect') if r.get('class') == 'span']\n"
      "lanes = [g.get('data-lane') for g in root.iter(ns + 'g') if g.get('class') == 'lane']\n"
      "print(len(rects), sum(int(r.get('data-n')) for r in rects), len(spans), ','.join(lanes))\n";
  const test::TempDir scratch("profile_test_py");
  const std::string script_path = scratch.file("check_svg.py");
  std::ofstream(script_path) << script;
  FILE *p = popen(("python3 '" + script_path + "' '" + path + "' 2>&1").c_str(), "r");
  if (!p) return "ERROR cannot start python3";
  std::string out;
  char buf[256];
  while (fgets(buf, sizeof buf, p)) out += buf;
  pclose(p);
  while (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

// A trace written by hand: `n` commands of 10 ns back to back on the GDMA,
// 3 of 1 us on the BDC, one span.
std::string handmade_trace(int n) {
  Json events = Json::array();
  events.push_back({{"ph", "M"}, {"name", "process_name"}, {"pid", 1}, {"tid", 0}, {"args", {{"name", "chip"}}}});
  const std::vector<std::pair<int, std::string>> lanes = {{1, "layers"}, {100, "GDMA"}, {101, "BDC"}, {102, "SDMA"}};
  for (const auto &[tid, name] : lanes)
    events.push_back({{"ph", "M"}, {"name", "thread_name"}, {"pid", 1}, {"tid", tid}, {"args", {{"name", name}}}});
  events.push_back({{"ph", "X"}, {"name", "conv <1> & \"relu\""}, {"pid", 1}, {"tid", 1}, {"ts", 0}, {"dur", 3.0}});
  for (int i = 0; i < n; ++i)
    events.push_back({{"ph", "X"}, {"name", i % 2 ? "tpu_gdma_cpy_S2L" : "tpu_gdma_cpy_L2S"}, {"pid", 1}, {"tid", 100},
                      {"ts", i * 0.01}, {"dur", 0.01}, {"args", {{"bytes", 64}}}});
  for (int i = 0; i < 3; ++i)
    events.push_back({{"ph", "X"}, {"name", "tpu_bdc_fp_add"}, {"pid", 1}, {"tid", 101}, {"ts", i * 1.0}, {"dur", 1.0},
                      {"args", {{"elements", 512}}}});
  return Json({{"traceEvents", events}}).dump();
}

TEST(TraceSvg, OneRectPerCommandWhenFew) {
  test::TempDir dir("profile_test");
  const std::string svg = tr::trace_svg(handmade_trace(20));
  std::ofstream(dir.file("t.svg")) << svg;
  // 23 command rects of one command each, one span, the four lanes in order.
  EXPECT_EQ(python_svg_summary(dir.file("t.svg")), "23 23 1 layers,GDMA,BDC,SDMA");
  EXPECT_CONTAINS(svg, "<title>tpu_bdc_fp_add on BDC: 1.000 us .. 2.000 us (1.000 us), 512 elements</title>");
  EXPECT_CONTAINS(svg, "conv &lt;1&gt; &amp; &quot;relu&quot;");
  EXPECT_CONTAINS(svg, ">1 us</text>");  // an axis tick
}

TEST(TraceSvg, ManyTinyCommandsAreMerged) {
  test::TempDir dir("profile_test");
  tr::SvgOptions options;
  options.max_rects = 100;
  const std::string svg = tr::trace_svg(handmade_trace(3000), options);
  std::ofstream(dir.file("t.svg")) << svg;
  std::istringstream summary(python_svg_summary(dir.file("t.svg")));
  std::size_t rects = 0, commands = 0;
  summary >> rects >> commands;
  EXPECT_EQ(commands, 3003u) << summary.str();  // every command is in one rect
  // 30 us of 10 ns commands on ~1250 px, merged up to 4 px: a few hundred rects.
  EXPECT_LT(rects, 600u) << summary.str();
  EXPECT_GT(rects, 3u) << summary.str();
  EXPECT_CONTAINS(svg, "commands on GDMA (merged)");
  EXPECT_CONTAINS(svg, "adjacent commands under 1 px are merged");
}

TEST(TraceSvg, NotATraceIsAnError) {
  EXPECT_THROW(tr::trace_svg("{\"no\": 1}"), tr::Error);
  EXPECT_THROW(tr::trace_svg("not json"), tr::Error);
}

TEST(TraceSvg, WriteProfileNamesABadPathAndLeavesNothing) {
  test::TempDir dir("profile_test");
  const std::string trace = handmade_trace(2);
  try {
    tr::write_profile(trace, dir.file("missing/run.json"), dir.file("run.svg"));
    ADD_FAILURE() << "no error";
  } catch (const tr::Error &e) {
    EXPECT_CONTAINS(e.what(), "cannot write the profile");
    EXPECT_CONTAINS(e.what(), dir.file("missing/run.json"));
  }
  EXPECT_EQ(dir.entries(), 0u);
  tr::write_profile(trace, dir.file("run.json"), dir.file("run.svg"));
  EXPECT_EQ(Json::parse(std::ifstream(dir.file("run.json"))), Json::parse(trace));
  EXPECT_EQ(python_svg_summary(dir.file("run.svg")).substr(0, 4), "5 5 ");
}

// ---- models and tools ------------------------------------------------------------

const std::string kSampleDir = TPU_SAMPLE_OPS_LIB_DIR;

tr::LibraryPaths sample_libs(const std::string &chip) {
  return {kSampleDir + "/libplugin_custom.so", kSampleDir + "/libbackend_custom.so",
          kSampleDir + "/" + tr::firmware_file_name(chip)};
}

enum class Mode { all_static, mixed, all_dynamic };

// The four sample ops in a chain (absadd and ceiladd can form a group);
// mixed: ceiladd and crop dynamic.
std::string chain_net(Mode mode) {
  const std::string d = mode != Mode::all_static ? R"(, "dynamic": true)" : "";
  const std::string a = mode == Mode::all_dynamic ? d : "";
  return R"({"name": "chain", "inputs": [{"name": "x", "shape": [2, 3, 20, 24], "dtype": "fp32"}],
    "layers": [
      {"name": "abs", "op": "absadd", "params": {"b": 0.75}, "inputs": ["x"], "outputs": ["t_abs"])" + a + R"(},
      {"name": "ceil", "op": "ceiladd", "params": {"b": -1.5}, "inputs": ["t_abs"], "outputs": ["t_ceil"])" +
         d + R"(},
      {"name": "swap", "op": "swapchannel", "params": {"order": [2, 0, 1]}, "inputs": ["t_ceil"], "outputs": ["t_swap"])" +
         a + R"(},
      {"name": "crop", "op": "crop", "params": {"hoffset": 3, "woffset": 5, "hnew": 12, "wnew": 16},
       "inputs": ["t_swap"], "outputs": ["y"])" +
         d + R"(}],
    "outputs": ["y"]})";
}

tr::BuildResult build_chain(const std::string &chip, Mode mode, bool groups) {
  tr::BuildOptions options;
  options.chip = chip;
  options.libraries = sample_libs(chip);
  options.reference = true;
  options.embed_reference = true;
  options.layer_groups = groups;
  return tr::build_model(tr::parse_net(nlohmann::ordered_json::parse(chain_net(mode)), "chain.json"), options,
                        "chain.json");
}

class ModelProfile : public ::testing::Test {
 protected:
  void SetUp() override {
    if (kSampleDir.empty() || !std::filesystem::exists(kSampleDir + "/libplugin_custom.so"))
      FAIL() << "the sample ops' libraries are not available (TPU_SAMPLE_OPS_LIB_DIR): a build problem";
  }
};

// Every layer's span lasts what the run reports for it, and the engines'
// busy time and commands add up to the layers' statistics.
void expect_trace_matches_layers(const tr::RunResult &run, const tr::ModelDescription &d) {
  const ParsedTrace t = parse_trace(run.trace_json);
  const std::vector<TraceEvent> spans = t.on("layers");
  std::vector<Json> stats;
  std::size_t span = 0;
  double clock = 0;
  for (std::size_t i = 0; i < run.layers.size(); ++i) {
    const int group = d.layers[i].group;
    if (group >= 0 && int(i) != d.groups[std::size_t(group)].first) continue;  // the group's first layer has it all
    stats.push_back(Json::parse(run.layers[i].stats_json));
    ASSERT_LT(span, spans.size());
    EXPECT_NEAR(spans[span].ts, clock, 1e-6) << run.layers[i].name;
    EXPECT_NEAR(spans[span].dur, run.layers[i].total_us, 1e-5) << run.layers[i].name;
    EXPECT_CONTAINS(spans[span].name, group >= 0 ? "group " + std::to_string(group) : run.layers[i].name);
    clock += run.layers[i].total_us;
    ++span;
  }
  EXPECT_EQ(span, spans.size());
  expect_totals_match(t, stats);
  EXPECT_NEAR(t.other.at("clock_us").get<double>(), clock, 1e-5);
}

TEST_F(ModelProfile, TraceTotalsEqualTheRunStatistics) {
  for (const std::string chip : {"bm1684x", "bm1688"})
    for (const Mode mode : {Mode::all_static, Mode::mixed, Mode::all_dynamic})
      for (const bool groups : {false, true}) {
        SCOPED_TRACE(chip + " mode " + std::to_string(int(mode)) + (groups ? " groups" : " no groups"));
        const tr::BuildResult built = build_chain(chip, mode, groups);
        if (groups && mode != Mode::mixed) {
          EXPECT_FALSE(built.description.groups.empty()) << "absadd and ceiladd should group";
        }
        const tr::RunResult plain = tr::run_model(built.model, built.reference_inputs, "chain");
        EXPECT_TRUE(plain.trace_json.empty());
        tr::RunOptions options;
        options.profile = true;
        const tr::RunResult run = tr::run_model(built.model, built.reference_inputs, "chain", options);
        // Profiling changes nothing else.
        EXPECT_EQ(run.outputs.at("y").data, plain.outputs.at("y").data);
        ASSERT_EQ(run.layers.size(), plain.layers.size());
        for (std::size_t i = 0; i < run.layers.size(); ++i)
          EXPECT_EQ(run.layers[i].stats_json, plain.layers[i].stats_json);
        expect_trace_matches_layers(run, built.description);
      }
}

class ProfileTools : public ModelProfile {
 protected:
  // Runs a command line; its output (stdout and stderr) and exit status.
  static std::pair<int, std::string> shell(const std::string &command) {
    test::CommandRun run = test::run_command(command);
    return {run.status, std::move(run.output)};
  }
};

TEST_F(ProfileTools, TpuModelRunWritesTheTraceAndTheSvg) {
  ASSERT_TRUE(std::filesystem::exists(TPU_MODEL_TOOL)) << "the tpu_model binary is not available: a build problem";
  test::TempDir dir("profile_test");
  const tr::BuildResult built = build_chain("bm1684x", Mode::mixed, true);
  tr::write_model_file(dir.file("m.tpumodel"), built.model);
  const std::string tool = std::string(TPU_MODEL_TOOL) + " run " + dir.file("m.tpumodel");
  const auto [status, out] = shell(tool + " --compare-stored --max-ulp 0 --profile " + dir.file("run.json") +
                                   " --profile-svg " + dir.file("run.svg"));
  ASSERT_EQ(status, 0) << out;
  EXPECT_CONTAINS(out, "wrote the profile " + dir.file("run.json"));
  EXPECT_CONTAINS(out, "PASS");
  std::ifstream in(dir.file("run.json"));
  const ParsedTrace t = parse_trace(std::string(std::istreambuf_iterator<char>(in), {}));
  EXPECT_EQ(t.lane_names(), (std::vector<std::string>{"layers", "GDMA", "BDC", "SDMA"}));
  EXPECT_FALSE(t.on("GDMA").empty());
  EXPECT_FALSE(t.on("BDC").empty());
  // The trace's total is the table's.
  const tr::RunResult run = tr::run_model(built.model, built.reference_inputs, "m");
  double total = 0;
  for (const tr::LayerStats &s : run.layers) total += s.total_us;
  EXPECT_NEAR(t.other.at("clock_us").get<double>(), total, 1e-5);
  EXPECT_CONTAINS(out, fmt_total(total));
  std::istringstream summary(python_svg_summary(dir.file("run.svg")));
  std::size_t rects = 0, commands = 0, spans = 0;
  summary >> rects >> commands >> spans;
  EXPECT_EQ(commands, t.on("GDMA").size() + t.on("BDC").size()) << summary.str();
  EXPECT_EQ(spans, t.on("layers").size()) << summary.str();
}

TEST_F(ProfileTools, TpuModelRunWithABadProfilePathLosesNothing) {
  ASSERT_TRUE(std::filesystem::exists(TPU_MODEL_TOOL));
  test::TempDir dir("profile_test");
  tr::write_model_file(dir.file("m.tpumodel"), build_chain("bm1688", Mode::all_static, true).model);
  const auto [status, out] = shell(std::string(TPU_MODEL_TOOL) + " run " + dir.file("m.tpumodel") +
                                   " --compare-stored --output " + dir.file("out.npz") + " --profile " +
                                   dir.file("no/such/dir/run.json"));
  EXPECT_EQ(status, 1) << out;
  EXPECT_CONTAINS(out, "cannot write the profile");
  EXPECT_CONTAINS(out, dir.file("no/such/dir/run.json"));
  EXPECT_CONTAINS(out, "PASS");  // the comparison still ran
  EXPECT_TRUE(tr::npz::read_npz(dir.file("out.npz")).count("y"));  // and the outputs were written
}

TEST_F(ProfileTools, TpuOpCheckWritesOneProfilePerRow) {
  ASSERT_TRUE(std::filesystem::exists(TPU_OP_CHECK)) << "the tpu_op_check binary is not available: a build problem";
  test::TempDir dir("profile_test");
  std::ofstream(dir.file("cases.json")) << R"({"cases": [
      {"op": "crop", "shapes": [[1, 4, 9, 10]], "params": {"hoffset": 1, "woffset": 2, "hnew": 3, "wnew": 4},
       "dtypes": ["fp32"]},
      {"op": "absadd", "shapes": [[2, 8, 10, 12]], "params": {"b": 0.5}, "dtypes": ["fp16", "fp32"]}]})";
  const std::string base = std::string(TPU_OP_CHECK) + " --chip bm1684x --lib-dir " + kSampleDir + " --cases " +
                           dir.file("cases.json") + " --allow-unchecked --profile ";
  const auto [status, out] = shell(base + dir.file("prof"));
  ASSERT_EQ(status, 0) << out;
  for (const std::string name : {"crop_bm1684x_fp32_case0", "absadd_bm1684x_fp16_case1", "absadd_bm1684x_fp32_case1"}) {
    SCOPED_TRACE(name);
    std::ifstream in(dir.file("prof/" + name + ".json"));
    ASSERT_TRUE(in.good());
    const ParsedTrace t = parse_trace(std::string(std::istreambuf_iterator<char>(in), {}));
    const std::vector<TraceEvent> cases = t.on("cases");
    ASSERT_GE(cases.size(), 2u);
    EXPECT_EQ(cases[0].name, "global backend");
    EXPECT_EQ(cases[1].name, "global firmware");
    EXPECT_FALSE(t.on("GDMA").empty());
    EXPECT_EQ(python_svg_summary(dir.file("prof/" + name + ".svg")).rfind("ERROR", 0), std::string::npos);
  }
  std::vector<std::string> written;
  for (const auto &e : std::filesystem::directory_iterator(dir.file("prof"))) written.push_back(e.path().filename());
  EXPECT_EQ(written.size(), 6u) << ::testing::PrintToString(written);
  // A directory that cannot be made: a clear error before anything runs.
  std::ofstream(dir.file("file")) << "x";
  const auto [bad_status, bad_out] = shell(base + dir.file("file/sub"));
  EXPECT_EQ(bad_status, 2) << bad_out;
  EXPECT_CONTAINS(bad_out, "--profile " + dir.file("file/sub") + ": cannot create the directory");
  const auto [help_status, help] = shell(std::string(TPU_OP_CHECK) + " --help");
  EXPECT_EQ(help_status, 0);
  EXPECT_CONTAINS(help, "--profile");
}

}  // namespace
