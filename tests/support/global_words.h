// global_words.h: 32-bit words in and out of the open emulator's global
// memory, for tests of commands on system memory.
#pragma once

#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

#include "cmodel_host.h"

namespace test {

// A new global buffer holding `words`.
inline uint64_t put_words(const std::vector<uint32_t> &words) {
  const uint64_t addr = cmodel_global_alloc(words.size() * 4);
  EXPECT_EQ(cmodel_global_write(addr, words.data(), words.size() * 4), 0);
  return addr;
}

// `count` words at `addr`.
inline std::vector<uint32_t> get_words(uint64_t addr, size_t count) {
  std::vector<uint32_t> words(count);
  EXPECT_EQ(cmodel_global_read(words.data(), addr, count * 4), 0);
  return words;
}

}  // namespace test
