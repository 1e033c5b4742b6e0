#include "support/test_support.h"

#include <cstdio>
#include <cstdlib>

namespace test {
namespace {

uint64_t choose_seed() {
  if (const char *fixed = std::getenv("TPU_TEST_SEED")) return std::strtoull(fixed, nullptr, 0);
  std::random_device device;
  return (uint64_t(device()) << 32) | device();
}

std::string replay_hint(uint64_t seed) {
  return "random seed " + std::to_string(seed) + " (replay with TPU_TEST_SEED=" + std::to_string(seed) + ")";
}

}  // namespace

Seeded::Seeded()
    : seed_(choose_seed()), rng_(seed_), trace_(__FILE__, __LINE__, replay_hint(seed_)) {
  const auto *info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::printf("[ seed     ] %s.%s: %s\n", info ? info->test_suite_name() : "?", info ? info->name() : "?",
              replay_hint(seed_).c_str());
}

}  // namespace test
