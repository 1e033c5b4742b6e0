// html_report_test: the HTML report (tpu_runtime/html_report.h), the ulp
// histogram and first differing element of compare(), the op tester's
// per-case profile and its trace's metadata, and tpu_op_check --report, on
// the fixture ops of tests/runtime/loader/fixtures/good (TPU_TEST_FIXTURES_DIR):
// fx_cast loads, converts on the BDC and stores; fx_short writes half its
// output. report_in_browser (report_browser_check.py) opens such a report
// in Chromium.
#include <sys/wait.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <limits>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/temp_dir.h"
#include "support/test_support.h"
#include "tpu_runtime/compare.h"
#include "tpu_runtime/error.h"
#include "tpu_runtime/html_report.h"
#include "tpu_runtime/op_tester.h"
#include "tpu_runtime/profile.h"

#ifndef TPU_TEST_FIXTURES_DIR
#define TPU_TEST_FIXTURES_DIR ""
#endif
#ifndef TPU_OP_CHECK
#define TPU_OP_CHECK ""
#endif

namespace {

using namespace tpu_runtime;
using Json = nlohmann::json;

const std::string kGood = std::string(TPU_TEST_FIXTURES_DIR) + "/good";

LibraryPaths good_libraries() {
  return {kGood + "/libplugin_custom.so", kGood + "/libbackend_custom.so", kGood + "/libcmodel_custom_bm1684x.so"};
}

// ---- compare(): the histogram and the first differing element --------------------

TEST(UlpHistogram, BucketsDoubleFromOne) {
  EXPECT_EQ(ulp_bucket_of(0), 0u);
  EXPECT_EQ(ulp_bucket_of(1), 1u);
  EXPECT_EQ(ulp_bucket_of(2), 2u);
  EXPECT_EQ(ulp_bucket_of(3), 2u);
  EXPECT_EQ(ulp_bucket_of(4), 3u);
  EXPECT_EQ(ulp_bucket_of(std::ldexp(1.0, 22)), kUlpBuckets - 2);
  EXPECT_EQ(ulp_bucket_of(std::ldexp(1.0, 40)), kUlpBuckets - 2);
  EXPECT_EQ(ulp_bucket_of(std::numeric_limits<double>::infinity()), kUlpBuckets - 1);
  EXPECT_EQ(ulp_bucket_label(0), "0");
  EXPECT_EQ(ulp_bucket_label(1), "1");
  EXPECT_EQ(ulp_bucket_label(2), "2-3");
  EXPECT_EQ(ulp_bucket_label(4), "8-15");
  EXPECT_EQ(ulp_bucket_label(kUlpBuckets - 2), ">=4194304");
  EXPECT_EQ(ulp_bucket_label(kUlpBuckets - 1), "inf");
}

TEST(UlpHistogram, CountsEveryElementAndKeepsTheFirstDifference) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float one_up = std::nextafter(1.0f, 2.0f), three_up = std::nextafter(std::nextafter(one_up, 2.0f), 2.0f);
  const std::vector<float> expected = {1, 2, 1, 1, 1}, actual = {1, 2, one_up, three_up, nan};
  const Similarity s = compare(actual, expected, Dtype::fp32);
  EXPECT_EQ(s.ulp_histogram[0], 2u);
  EXPECT_EQ(s.ulp_histogram[1], 1u);  // 1 ulp
  EXPECT_EQ(s.ulp_histogram[2], 1u);  // 3 ulp
  EXPECT_EQ(s.ulp_histogram[kUlpBuckets - 1], 1u);
  std::uint64_t all = 0;
  for (std::uint64_t n : s.ulp_histogram) all += n;
  EXPECT_EQ(all, expected.size());
  EXPECT_EQ(s.first_mismatch, 2);
  EXPECT_EQ(s.first_expected, 1.0);
  EXPECT_EQ(s.first_actual, double(one_up));
  EXPECT_TRUE(std::isnan(compare(expected, expected, Dtype::fp32).first_actual));
}

// ---- the page ----------------------------------------------------------------------

ReportCase handmade_case(const std::string &name, bool failed) {
  ReportCase c;
  c.op = "op<&>";
  c.chip = "bm1684x";
  c.dtype = "fp32";
  c.name = name;
  c.failed = failed;
  c.result = failed ? "FAIL" : "pass";
  c.message = failed ? "output 0: got <NaN> & \"worse\"" : "";
  const std::vector<float> expected = {1, 2, 3, 4};
  const std::vector<float> actual = failed ? std::vector<float>{1, 2, 3.5f, 4} : expected;
  c.outputs.push_back({"output 0", "fp32", true, compare(actual, expected, Dtype::fp32)});
  c.total_us = 1.25;
  c.gdma_bytes = 2048;
  ProfileFigures f;
  f.total_us = 1.25;
  f.tiu_busy_us = 0.5;
  f.gdma_busy_us = 1;
  f.concurrent_us = 0.25;
  f.tiu_commands = 2;
  f.gdma_commands = 2;
  f.gdma["S2L"] = {2048, 1, 2};
  c.profile = summarize_profile(f);
  return c;
}

TEST(HtmlReport, EscapesWhatTheUserWrote) {
  Report r;
  r.title = "check <script>alert(1)</script>";
  r.notes.push_back("a & b");
  r.cases.push_back(handmade_case("case \"one\"", true));
  const std::string html = report_html(r);
  EXPECT_EQ(html.find("<script>"), std::string::npos) << html;
  EXPECT_EQ(html.find("op<&>"), std::string::npos) << html;
  EXPECT_CONTAINS(html, "check &lt;script&gt;alert(1)&lt;/script&gt;");
  EXPECT_CONTAINS(html, "op&lt;&amp;&gt;");
  EXPECT_CONTAINS(html, "a &amp; b");
  EXPECT_CONTAINS(html, "case &quot;one&quot;");
  EXPECT_CONTAINS(html, "output 0: got &lt;NaN&gt; &amp; &quot;worse&quot;");
  // Self-contained: nothing to fetch, no script.
  EXPECT_EQ(html.find("src="), std::string::npos);
  EXPECT_EQ(html.find("href=\"http"), std::string::npos);
  EXPECT_EQ(html.find("<link"), std::string::npos);
}

TEST(HtmlReport, FailuresFirstWithTheirFirstDifference) {
  Report r;
  r.title = "t";
  r.cases.push_back(handmade_case("passing", false));
  r.cases.push_back(handmade_case("failing", true));
  r.cases.push_back(report_error_case("fx_fault", "bm1684x", "fp32", "SIGFPE <in kernel>"));
  const std::string html = report_html(r);
  EXPECT_CONTAINS(html, "3 cases, <span class=\"fail\">2 failed</span>");
  // The table lists the failures first (in their order), each linking to its details.
  const std::size_t failing = html.find(">failing</a>"), stopped = html.find(">(stopped)</a>"),
                    passing = html.find(">passing</a>");
  ASSERT_NE(failing, std::string::npos);
  EXPECT_LT(failing, stopped);
  EXPECT_LT(stopped, passing);
  EXPECT_CONTAINS(html, "<a href=\"#case-0\">failing</a>");
  EXPECT_CONTAINS(html, "<section class=\"case failed\" id=\"case-0\">");
  // The first differing element: index 2, expected 3, got 3.5.
  EXPECT_CONTAINS(html, "<td class=\"num\">2</td><td class=\"num\">3</td><td class=\"num\">3.5</td>");
  EXPECT_CONTAINS(html, "SIGFPE &lt;in kernel&gt;");
  // The histogram: 3 exact elements, one far off; the profile in the vendor's words.
  EXPECT_CONTAINS(html, "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"histogram\"");
  EXPECT_CONTAINS(html, "<title>0 ulp: 3 elements</title>");
  EXPECT_CONTAINS(html, "TIU (BDC) working ratio</th><td class=\"num\">40.0% (0.500 us busy, 2 commands)");
  EXPECT_CONTAINS(html, "concurrency</th><td class=\"num\">20.0% (0.250 us both busy)");
  EXPECT_CONTAINS(html, "<td>GDMA</td><td>S2L</td><td class=\"num\">2.0 KiB</td>");
}

TEST(HtmlReport, WrittenAtomicallyOrNotAtAll) {
  test::TempDir dir("html_report_test");
  Report r;
  r.title = "t";
  try {
    write_report_html(r, dir.file("missing/report.html"));
    ADD_FAILURE() << "no error";
  } catch (const Error &e) {
    EXPECT_CONTAINS(e.what(), "cannot write the report");
    EXPECT_CONTAINS(e.what(), dir.file("missing/report.html"));
  }
  EXPECT_EQ(dir.entries(), 0u);
  write_report_html(r, dir.file("report.html"));
  std::ifstream in(dir.file("report.html"));
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), report_html(r));
}

// ---- the op tester -------------------------------------------------------------

TEST(OpTesterProfile, EveryCaseHasItsFiguresAndTheTraceItsSummary) {
  OpTester t;
  t.op("fx_cast").input_shape({2, 3, 5}).dtype(Dtype::fp32).params(R"({"to": 1})").libraries(good_libraries());
  t.out_dtypes({Dtype::fp16}).profile();
  const OpReport report = t.run();
  ASSERT_EQ(report.cases.size(), 2u);
  for (const OpCaseResult &c : report.cases) {
    SCOPED_TRACE(c.name);
    // A load, a cast, a store.
    EXPECT_EQ(c.profile.gdma_commands, 2u);
    EXPECT_EQ(c.profile.tiu_commands, 1u);
    EXPECT_NEAR(c.profile.total_us, c.total_us, 1e-9);
    EXPECT_EQ(c.profile.gdma.at("S2L").bytes + c.profile.gdma.at("L2S").bytes, c.gdma_bytes);
    EXPECT_NEAR(c.profile.concurrent_us, 0, 1e-12);  // no parallel region
  }
  const Json meta = Json::parse(report.trace_json).at("metadata").at("profile_summary");
  ASSERT_EQ(meta.at("cases").size(), 2u);
  EXPECT_EQ(meta.at("cases")[0].at("name"), "global backend");
  EXPECT_EQ(meta.at("cases")[1].at("summary").at("tiu").at("commands"), 1);
  EXPECT_NEAR(meta.at("total").at("total_us").get<double>(), report.cases[0].total_us + report.cases[1].total_us,
              1e-9);
  EXPECT_CONTAINS(report.summary(), "    profile: TIU ");

  // The whole trace's picture holds both runs of the op: its title gives one.
  char one_run[160];
  std::snprintf(one_run, sizeof one_run, "global backend %.3f us per run; 2 runs drawn back to back",
                report.cases[0].total_us);
  EXPECT_CONTAINS(trace_svg(report.trace_json), one_run);

  // The report's rows: each case's own timeline, titled with its own time.
  const std::vector<ReportCase> rows = report_cases(report);
  ASSERT_EQ(rows.size(), 2u);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(rows[i].dtype, "fp32>fp16");
    EXPECT_FALSE(rows[i].failed);
    ASSERT_TRUE(rows[i].profile);
    EXPECT_EQ(rows[i].profile->tiu_commands, 1u);
    char title[128];
    std::snprintf(title, sizeof title, "bm1684x (emulated): 3 commands in %.3f us", report.cases[i].total_us);
    EXPECT_CONTAINS(rows[i].timeline_svg, title);
  }
}

// ---- tpu_op_check --report --------------------------------------------------------

using ToolRun = test::CommandRun;

ToolRun shell(const std::string &command) { return test::run_command(command); }

TEST(OpCheckReport, OnePageOfEveryCaseFailuresFirst) {
  test::TempDir dir("html_report_test");
  const std::string cases = dir.file("cases.json");
  std::ofstream(cases) << R"({"cases": [
    {"op": "fx_cast", "shapes": [[2, 3, 5]], "dtypes": ["fp32"], "params": {"to": 1}, "out_dtypes": ["fp16"],
     "criterion": "vendor"},
    {"op": "fx_short", "shapes": [[4, 8]], "dtypes": ["fp32"], "global_only": true}]})";
  const std::string tool = std::string(TPU_OP_CHECK) + " --chip bm1684x --allow-unchecked --lib-dir " + kGood +
                           " --cases " + cases + " --report ";
  const ToolRun run = shell(tool + dir.file("report.html"));
  EXPECT_EQ(run.status, 1) << run.output;  // fx_short fails
  EXPECT_CONTAINS(run.output, "wrote the report " + dir.file("report.html"));
  std::ifstream in(dir.file("report.html"));
  const std::string html(std::istreambuf_iterator<char>(in), {});
  EXPECT_CONTAINS(html, "4 cases, <span class=\"fail\">2 failed</span>");
  const std::size_t first_short = html.find("<tr class=\"failed\"><td>fx_short</td>");
  const std::size_t first_cast = html.find("<tr class=\"passed\"><td>fx_cast</td>");
  ASSERT_NE(first_short, std::string::npos) << html;
  ASSERT_NE(first_cast, std::string::npos) << html;
  EXPECT_LT(first_short, first_cast);
  EXPECT_CONTAINS(html, "were never written");
  EXPECT_CONTAINS(html, "class=\"picture timeline\"><svg");

  const ToolRun bad = shell(tool + dir.file("missing/report.html"));
  EXPECT_EQ(bad.status, 1) << bad.output;
  EXPECT_CONTAINS(bad.output, "cannot write the report");
}

}  // namespace
