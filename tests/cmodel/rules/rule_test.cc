// rule_test.cc: the fixture of the per-rule tests (rule_test.h).
#include "rule_test.h"

#include <set>

namespace rule_test {

Buffers g;

namespace {
std::set<cmodel::Rule> &registry() {
  static std::set<cmodel::Rule> rules;
  return rules;
}
}  // namespace

bool cover(cmodel::Rule rule) { return registry().insert(rule).second; }
bool covered(cmodel::Rule rule) { return registry().count(rule) != 0; }

std::string chip_label(const ::testing::TestParamInfo<const char *> &info) { return info.param; }

void RuleTest::SetUp() {
  ASSERT_EQ(cmodel_open(GetParam()), 0) << cmodel_last_error();
  // These tests are about the legality of one command; the operands of the
  // legal neighbours hold whatever local memory holds (the uninitialised-
  // read check has tests of its own).
  ASSERT_EQ(cmodel_set_option("uninitialized_reads", "off"), 0) << cmodel_last_error();
  g = Buffers{};
  g.a = cmodel_global_alloc(1 << 20);
  g.b = cmodel_global_alloc(1 << 20);
  g.c = cmodel_global_alloc(1 << 20);
  ASSERT_NE(g.a, 0u);
  ASSERT_NE(g.b, 0u);
  ASSERT_NE(g.c, 0u);
  const bool bm1684x = std::string(GetParam()) == "bm1684x";
  g.npu_num = bm1684x ? 64 : 32;
  g.local_mem = bm1684x ? 256 * 1024 : 128 * 1024;
  g.align = bm1684x ? 64 : 16;
}

void RuleTest::TearDown() {
  cmodel_set_option("uninitialized_reads", "error");
  cmodel_close();
}

void RuleTest::expect_refused(Kernel kernel) {
  const std::string id = cmodel::rule_id(rule());
  ASSERT_NE(cmodel_run(kernel, nullptr), 0) << "a command breaking " << id << " ran";
  const std::string message = cmodel_last_error();
  EXPECT_NE(message.find("[" + id + "]"), std::string::npos) << "the error does not name " << id << ": " << message;
  EXPECT_NE(message.find("called from"), std::string::npos) << message;
}

void RuleTest::expect_legal(Kernel kernel) {
  EXPECT_EQ(cmodel_run(kernel, nullptr), 0) << "the legal neighbour of a " << cmodel::rule_id(rule())
                                            << " breach was refused: " << cmodel_last_error();
}

}  // namespace rule_test
