// test_support.h: helpers shared by the test programs.
#pragma once

#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

// `text` (anything std::string can be made from) contains `part`; the
// failure names the part and shows the whole text.
#define EXPECT_CONTAINS(text, part) \
  EXPECT_NE(std::string(text).find(part), std::string::npos) << "missing \"" << (part) << "\" in: " << (text)

namespace test {

// Rounds of a long random or exhaustive property test asked for `n`. The
// sanitizer build runs a quarter (at least one): it hunts memory and
// undefined-behaviour errors, which the first rounds already reach at ten
// times the cost, while the normal build (in CI too) runs all `n`.
constexpr int rounds(int n) {
#ifdef TPU_SDK_TESTS_SANITIZED
  return n / 4 > 0 ? n / 4 : 1;
#else
  return n;
#endif
}

// `v` in hexadecimal with the 0x prefix, for expected messages and failure
// output: printf's "%#llx", so 4096 is "0x1000" but 0 is "0" (the
// emulator's messages print 0 as "0x0": compare only nonzero values).
inline std::string hex(uint64_t v) {
  char b[32];
  std::snprintf(b, sizeof b, "%#llx", static_cast<unsigned long long>(v));
  return b;
}

// Seed for one random test: $TPU_TEST_SEED when set (to replay a failure),
// otherwise fresh. The seed is printed, and every failure inside the
// scope of the Seeded object repeats it with the command to replay it.
class Seeded {
 public:
  Seeded();
  uint64_t seed() const { return seed_; }
  std::mt19937_64 &rng() { return rng_; }
  // Uniform integer in [lo, hi].
  int uniform(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }

 private:
  uint64_t seed_;
  std::mt19937_64 rng_;
  ::testing::ScopedTrace trace_;
};

// A command line run through the shell with stderr joined to stdout: its
// exit status (128 + the signal when a signal ended it, -1 when it could
// not be started) and everything it printed.
struct CommandRun {
  int status = -1;
  std::string output;
};
CommandRun run_command(const std::string &command);

// `program` followed by each argument in single quotes, for run_command.
std::string quoted_command(const std::string &program, const std::vector<std::string> &args);

}  // namespace test
