// ppl_support.h: what the PPL test files share: the chips and their
// figures (spec §2.7), global buffers in and out, test data, and fp16 bits.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <ostream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "cmodel_host.h"
#include "support/test_support.h"

namespace ppl_test {

// The lane counts and local memory per lane of the chips (spec §2.7).
struct Chip {
  const char *name;
  int lanes;
  uint64_t lane_bytes;
};
inline const Chip kChips[] = {{"bm1684x", 64, 256 * 1024}, {"bm1688", 32, 128 * 1024}};
// Test names and failures show the chip's name.
inline void PrintTo(const Chip &chip, std::ostream *os) { *os << chip.name; }

template <typename T>
inline uint64_t upload(const std::vector<T> &values) {
  const uint64_t address = cmodel_global_alloc(values.size() * sizeof(T));
  EXPECT_EQ(cmodel_global_write(address, values.data(), values.size() * sizeof(T)), 0);
  return address;
}

template <typename T>
std::vector<T> download(uint64_t address, size_t count) {
  std::vector<T> values(count);
  EXPECT_EQ(cmodel_global_read(values.data(), address, count * sizeof(T)), 0);
  return values;
}

inline std::vector<float> ramp(size_t count, float step, float offset) {
  std::vector<float> values(count);
  for (size_t i = 0; i < count; ++i) values[i] = offset + step * static_cast<float>((i * 7919) % 97);
  return values;
}

// IEEE half bits of a value exactly representable as a normal half (the
// tests use quarters of small integers), and back.
inline uint16_t half_bits(float v) {
  if (v == 0) return 0;
  uint32_t bits;
  std::memcpy(&bits, &v, 4);
  const uint32_t sign = (bits >> 16) & 0x8000u, exponent = ((bits >> 23) & 0xff) - 127 + 15;
  return static_cast<uint16_t>(sign | (exponent << 10) | ((bits >> 13) & 0x3ff));
}
inline float half_value(uint16_t h) {
  if ((h & 0x7fff) == 0) return 0;
  const int exponent = ((h >> 10) & 0x1f) - 15;
  const float magnitude = std::ldexp(1.0f + static_cast<float>(h & 0x3ff) / 1024.0f, exponent);
  return (h & 0x8000) ? -magnitude : magnitude;
}

}  // namespace ppl_test

namespace ppl_test {

// The 1-based line of `file` (a path from the source tree's root) that
// holds `needle`, counted from the file itself; 0 when none does.
inline int source_line(const std::string &file, const std::string &needle) {
  std::string path = TPU_SDK_SOURCE_DIR;
  path.append("/").append(file);
  std::ifstream in(path);
  std::string line;
  for (int number = 1; std::getline(in, line); ++number)
    if (line.find(needle) != std::string::npos) return number;
  return 0;
}

// A misuse in a kernel: the comment that marks its line, the operation its
// refusal names and what the refusal says.
struct Misuse {
  const char *marker, *name, *says;
};

// call(which) for each misuse returns -1, with an error naming the
// operation, what was wrong and the marked line of `file`; the `count`
// floats at `gout` keep `sentinel` (the kernel issued nothing).
template <typename Call>
void expect_refused_at_lines(const std::string &file, const std::vector<Misuse> &misuses, Call call, uint64_t gout,
                             size_t count, float sentinel) {
  const std::string base = file.substr(file.rfind('/') + 1);
  for (int which = 0; which < int(misuses.size()); ++which) {
    const int line = source_line(file, misuses[which].marker);
    ASSERT_GT(line, 0) << misuses[which].marker;
    EXPECT_EQ(call(which), -1) << misuses[which].marker;
    EXPECT_CONTAINS(cmodel_last_error(), misuses[which].name);
    EXPECT_CONTAINS(cmodel_last_error(), misuses[which].says);
    EXPECT_CONTAINS(cmodel_last_error(), base + ":" + std::to_string(line));
    EXPECT_EQ(download<float>(gout, count), std::vector<float>(count, sentinel)) << "a refused kernel ran: " << which;
  }
}

// A test run on each chip: the emulator opened before, closed after.
class ChipTest : public ::testing::TestWithParam<Chip> {
 protected:
  void SetUp() override { ASSERT_EQ(cmodel_open(GetParam().name), 0) << cmodel_last_error(); }
  void TearDown() override { cmodel_close(); }
};

}  // namespace ppl_test
