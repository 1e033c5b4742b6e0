// rule_test.h: one test per vendor legality rule (cmodel/vendor_rules.def).
//
// Each rule's test shows two things on both chips: a command that breaks the
// rule is refused, and the message names the rule's id ("[DMA-14]"); the
// nearest legal command (the same call with the one offending value put
// right) runs. Write it as
//
//   RULE_TEST(DMA_14) {
//     expect_refused([](const void *) { ...one bad call... });
//     expect_legal([](const void *) { ...the same call, legal... });
//   }
//
// RULE_TEST registers the rule as covered before main() runs, so the
// coverage test (coverage_test.cc) can check, in its own process, that every
// rule the .def calls enforced has a test.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "cmodel/error.h"
#include "cmodel_host.h"
#include "tpu_kernel.h"

namespace rule_test {

using Kernel = void (*)(const void *);

// Global buffers every kernel may use (1 MiB each), set before each test.
struct Buffers {
  global_addr_t a = 0, b = 0, c = 0;
  int npu_num = 0;
  int local_mem = 0;  // bytes per NPU
  int align = 0;      // ALIGN_BYTES: EU_NUM(fp32) x 4
};
extern Buffers g;

// Marks `rule` as having a test (static initialisation).
bool cover(cmodel::Rule rule);
// Every rule some RULE_TEST covers.
bool covered(cmodel::Rule rule);

class RuleTest : public ::testing::TestWithParam<const char *> {
 protected:
  void SetUp() override;
  void TearDown() override;
  // The rule the test is about (set by RULE_TEST).
  virtual cmodel::Rule rule() const = 0;

  // `kernel` must be stopped with an error naming rule().
  void expect_refused(Kernel kernel);
  // `kernel` must run without error.
  void expect_legal(Kernel kernel);
};

std::string chip_label(const ::testing::TestParamInfo<const char *> &info);

}  // namespace rule_test

#define RULE_TEST(token)                                                                    \
  class Rule_##token : public ::rule_test::RuleTest {                                       \
   protected:                                                                               \
    cmodel::Rule rule() const override { return cmodel::Rule::token; }                      \
  };                                                                                        \
  [[maybe_unused]] static const bool rule_##token##_covered =                               \
      ::rule_test::cover(cmodel::Rule::token);                                              \
  INSTANTIATE_TEST_SUITE_P(Chips, Rule_##token, ::testing::Values("bm1684x", "bm1688"),     \
                           ::rule_test::chip_label);                                        \
  TEST_P(Rule_##token, RefusedWithItsIdAndTheNearestLegalCommandRuns)
