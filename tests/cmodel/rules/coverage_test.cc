// coverage_test.cc: the rule table as a whole. Every rule the cmodel
// enforces has a RULE_TEST; no applicable rule is left partly enforced or
// missing; docs/vendor-rules.md says what cmodel/vendor_rules.def says.
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "rule_test.h"

namespace {

enum Status { enforced, by_api, not_emulated, unmapped, declined, partly, missing };

const char *status_text(Status s) {
  switch (s) {
    case enforced: return "enforced";
    case by_api: return "by the API (a call cannot express a breach)";
    case not_emulated: return "refused as a whole (dtype or function not emulated)";
    case unmapped: return "unmapped (no tpu-kernel function issues it)";
    case declined: return "declined (the cmodel keeps the command on purpose; see the condition)";
    case partly: return "PARTLY enforced";
    case missing: return "NOT enforced";
  }
  return "?";
}

struct Row {
  const char *section;  // non-null for a section heading
  cmodel::Rule rule;
  const char *id;
  Status status;
  const char *api;
  const char *condition;
};

std::vector<Row> rows() {
  std::vector<Row> all;
#define RULE_SECTION(title) all.push_back({title, cmodel::Rule{}, "", enforced, "", ""});
#define RULE(token, id, status, api, condition) \
  all.push_back({nullptr, cmodel::Rule::token, id, status, api, condition});
#include "cmodel/vendor_rules.def"
#undef RULE
#undef RULE_SECTION
  return all;
}

// A table cell: a '|' would end the cell early.
std::string cell(const char *text) {
  std::string out;
  for (const char *p = text; *p; ++p) out += *p == '|' ? std::string("\\|") : std::string(1, *p);
  return out;
}

std::string render_table() {
  std::ostringstream out;
  out << "# The vendor's legality rules and what the cmodel does with them\n\n"
      << "Generated from `cmodel/vendor_rules.def` by `tests/cmodel/rules/coverage_test.cc`\n"
      << "(`TPU_SDK_WRITE_RULE_TABLE=1 ./build/tests/rules_test --gtest_filter='RuleTable.*'` rewrites it;\n"
      << "the test fails while this file and the .def disagree). The rules are the per-instruction\n"
      << "checks Sophgo ships with its PPL toolchain, restated in `../shared/spec/vendor-check-rules.md`,\n"
      << "plus the tpu-kernel documentation rules the cmodel enforces beyond them (`DOC-*`). A command\n"
      << "that breaks an enforced rule stops the kernel with an illegal-command error whose message ends\n"
      << "in the rule's id, e.g. `... [illegal command] [DMA-14]; called from kernel.c:42`; each such\n"
      << "rule has a test in `tests/cmodel/rules/` that shows a breach refused and the nearest legal command\n"
      << "running, on both chips.\n";
  int counts[7] = {};
  for (const Row &r : rows())
    if (!r.section) ++counts[r.status];
  out << "\n| status | rules |\n|---|---|\n";
  for (Status s : {enforced, by_api, not_emulated, unmapped, declined, partly, missing})
    out << "| " << status_text(s) << " | " << counts[s] << " |\n";
  for (const Row &r : rows()) {
    if (r.section) {
      out << "\n## " << r.section << "\n\n| id | status | API | condition |\n|---|---|---|---|\n";
      continue;
    }
    out << "| " << r.id << " | " << status_text(r.status) << " | " << cell(r.api) << " | " << cell(r.condition)
        << " |\n";
  }
  return out.str();
}

TEST(RuleTable, EveryEnforcedRuleHasATest) {
  for (const Row &r : rows()) {
    if (r.section || r.status != enforced) continue;
    EXPECT_TRUE(rule_test::covered(r.rule)) << r.id << " is marked enforced but no RULE_TEST(" << r.id
                                            << ") shows it (tests/cmodel/rules/)";
  }
}

TEST(RuleTable, NoApplicableRuleIsPartlyEnforcedOrMissing) {
  for (const Row &r : rows()) {
    if (r.section) continue;
    EXPECT_TRUE(r.status != partly && r.status != missing) << r.id << " is " << status_text(r.status);
  }
}

TEST(RuleTable, DocsTableIsCurrent) {
  const std::string path = TPU_SDK_SOURCE_DIR "/docs/vendor-rules.md";
  const std::string expected = render_table();
  if (std::getenv("TPU_SDK_WRITE_RULE_TABLE")) std::ofstream(path) << expected;
  std::ifstream in(path);
  std::stringstream actual;
  actual << in.rdbuf();
  EXPECT_EQ(actual.str(), expected) << path
                                    << " is out of date: run with TPU_SDK_WRITE_RULE_TABLE=1 to regenerate it";
}

}  // namespace
