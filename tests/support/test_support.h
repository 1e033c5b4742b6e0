// test_support.h: helpers shared by the test programs.
#pragma once

#include <cstdint>
#include <random>
#include <string>

#include <gtest/gtest.h>

namespace test {

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

}  // namespace test
