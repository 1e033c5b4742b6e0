// numeric_bulk_convert_test.cc: the run-at-a-time conversions
// (cmodel/numeric/bulk_convert.h) give exactly the bits of the per-element
// functions of float_convert.h, which stay the reference (their own
// correctness is numeric_cast_test's job).
//
// Exhaustive where the input is 16 bits wide: every fp16 and bf16 encoding
// widened. Narrowing takes an fp32: every one of the 65,536 upper halves
// combined with lower halves chosen around the rounding boundaries of fp16
// (bit 12, the half of its last kept bit) and bf16 (bit 15), plus random
// ones, in every rounding mode, covering zeros, subnormals of both formats,
// overflow, infinities and NaN payloads. Each implementation the host can
// run (portable, F16C + AVX2) is checked, contiguous and strided, with run
// lengths that leave partial vector blocks.
#include <algorithm>
#include <bit>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "cmodel/numeric/bulk_convert.h"
#include "cmodel/numeric/float_convert.h"
#include "support/isa_scope.h"
#include "support/test_support.h"

namespace {

using namespace cmodel::numeric;
using test::hex;

constexpr rounding_mode_t kModes[] = {RM_HALF_TO_EVEN, RM_HALF_AWAY_FROM_ZERO, RM_TOWARDS_ZERO, RM_DOWN,
                                      RM_UP,           RM_HALF_UP,             RM_HALF_DOWN};
constexpr int kMaxReported = 20;

class BulkConvert : public testing::TestWithParam<BulkIsa> {
 protected:
  void SetUp() override {
    scope_ = std::make_unique<test::IsaScope>(GetParam());
    // set_bulk_convert_isa keeps the portable one on hosts without F16C.
    if (bulk_convert_isa() != GetParam()) GTEST_SKIP() << "this host has no F16C + AVX2";
  }
  void TearDown() override { scope_.reset(); }

 private:
  std::unique_ptr<test::IsaScope> scope_;
};

std::vector<uint16_t> all_16_bit() {
  std::vector<uint16_t> v(65536);
  for (uint32_t i = 0; i < 65536; ++i) v[i] = uint16_t(i);
  return v;
}

// Every upper half with lower halves around the rounding boundaries, then
// random encodings: about 1.4 M fp32 inputs.
std::vector<float> narrowing_inputs() {
  constexpr uint16_t lows[] = {0x0000, 0x0001, 0x0fff, 0x1000, 0x1001, 0x1fff, 0x2000, 0x3000, 0x5000,
                               0x6000, 0x7000, 0x7fff, 0x8000, 0x8001, 0x9000, 0xa000, 0xe001, 0xf000,
                               0xffff};
  std::vector<float> v;
  std::mt19937 rng(16);
  for (uint32_t hi = 0; hi < 65536; ++hi) {
    for (uint16_t lo : lows) v.push_back(std::bit_cast<float>(hi << 16 | lo));
    v.push_back(std::bit_cast<float>(hi << 16 | uint32_t(rng() & 0xffff)));
  }
  for (int i = 0; i < 65536; ++i) v.push_back(std::bit_cast<float>(uint32_t(rng())));
  return v;
}

struct Layout {
  int64_t step, run;
};
// Contiguous long runs, contiguous odd runs (partial blocks), strided runs.
constexpr Layout kLayouts[] = {{1, 4096}, {1, 13}, {3, 29}};

void expect_widening(const char *what, float (*reference)(uint16_t),
                     void (*bulk)(const uint16_t *, int64_t, float *, int64_t)) {
  const std::vector<uint16_t> inputs = all_16_bit();
  for (const Layout layout : kLayouts) {
    // The strided source: each input followed by step - 1 fillers.
    std::vector<uint16_t> src(inputs.size() * size_t(layout.step), 0x7e55);
    for (size_t i = 0; i < inputs.size(); ++i) src[i * size_t(layout.step)] = inputs[i];
    std::vector<float> out(inputs.size());
    for (size_t start = 0; start < inputs.size(); start += size_t(layout.run)) {
      const int64_t n = std::min<int64_t>(layout.run, int64_t(inputs.size() - start));
      bulk(src.data() + start * size_t(layout.step), layout.step, out.data() + start, n);
    }
    int reported = 0;
    for (size_t i = 0; i < inputs.size() && reported < kMaxReported; ++i) {
      const uint32_t want = std::bit_cast<uint32_t>(reference(inputs[i]));
      const uint32_t got = std::bit_cast<uint32_t>(out[i]);
      if (got != want) {
        ADD_FAILURE() << what << " step " << layout.step << " run " << layout.run << ": input " << hex(inputs[i])
                      << " gave " << hex(got) << ", per element " << hex(want);
        ++reported;
      }
    }
  }
}

void expect_narrowing(const char *what, uint16_t (*reference)(float, rounding_mode_t),
                      void (*bulk)(const float *, uint16_t *, int64_t, int64_t, rounding_mode_t)) {
  const std::vector<float> inputs = narrowing_inputs();
  for (const rounding_mode_t mode : kModes) {
    for (const Layout layout : kLayouts) {
      std::vector<uint16_t> dst(inputs.size() * size_t(layout.step), 0x5a5a);
      for (size_t start = 0; start < inputs.size(); start += size_t(layout.run)) {
        const int64_t n = std::min<int64_t>(layout.run, int64_t(inputs.size() - start));
        bulk(inputs.data() + start, dst.data() + start * size_t(layout.step), layout.step, n, mode);
      }
      int reported = 0;
      for (size_t i = 0; i < dst.size() && reported < kMaxReported; ++i) {
        const bool element = i % size_t(layout.step) == 0;
        const uint16_t want = element ? reference(inputs[i / size_t(layout.step)], mode) : 0x5a5a;
        if (dst[i] != want) {
          ADD_FAILURE() << what << " " << rounding_mode_name(mode) << " step " << layout.step << " run " << layout.run
                        << ": "
                        << (element ? "input " + hex(std::bit_cast<uint32_t>(inputs[i / size_t(layout.step)]))
                                    : std::string("a gap between elements"))
                        << " gave " << hex(dst[i]) << ", expected " << hex(want);
          ++reported;
        }
      }
    }
  }
}

TEST_P(BulkConvert, WideningFp16MatchesPerElementForEveryEncoding) {
  expect_widening("fp16 -> fp32", fp16_to_fp32, fp16_to_fp32_n);
}

TEST_P(BulkConvert, WideningBf16MatchesPerElementForEveryEncoding) {
  expect_widening("bf16 -> fp32", bf16_to_fp32, bf16_to_fp32_n);
}

TEST_P(BulkConvert, NarrowingToFp16MatchesPerElementInEveryMode) {
  expect_narrowing("fp32 -> fp16", fp32_to_fp16, fp32_to_fp16_n);
}

TEST_P(BulkConvert, NarrowingToBf16MatchesPerElementInEveryMode) {
  expect_narrowing("fp32 -> bf16", fp32_to_bf16, fp32_to_bf16_n);
}

// Every fp16 / bf16 value round-trips through fp32 in every mode (the
// widened values are exact, so no mode may change them).
TEST_P(BulkConvert, EveryEncodingRoundTripsInEveryMode) {
  const std::vector<uint16_t> inputs = all_16_bit();
  std::vector<float> wide(inputs.size());
  std::vector<uint16_t> back(inputs.size());
  for (const rounding_mode_t mode : kModes) {
    fp16_to_fp32_n(inputs.data(), 1, wide.data(), int64_t(inputs.size()));
    fp32_to_fp16_n(wide.data(), back.data(), 1, int64_t(back.size()), mode);
    for (size_t i = 0; i < inputs.size(); ++i)
      ASSERT_EQ(back[i], fp32_to_fp16(fp16_to_fp32(inputs[i]), mode)) << "fp16 " << hex(inputs[i]);
    bf16_to_fp32_n(inputs.data(), 1, wide.data(), int64_t(inputs.size()));
    fp32_to_bf16_n(wide.data(), back.data(), 1, int64_t(back.size()), mode);
    for (size_t i = 0; i < inputs.size(); ++i)
      ASSERT_EQ(back[i], fp32_to_bf16(bf16_to_fp32(inputs[i]), mode)) << "bf16 " << hex(inputs[i]);
  }
}

INSTANTIATE_TEST_SUITE_P(Isa, BulkConvert, testing::Values(BulkIsa::portable, BulkIsa::f16c_avx2),
                         [](const testing::TestParamInfo<BulkIsa> &info) {
                           return info.param == BulkIsa::portable ? std::string("portable")
                                                                  : std::string("f16c_avx2");
                         });

// On an x86 host with F16C the fast implementation is the one chosen.
TEST(BulkConvertIsa, ChoosesTheBestTheHostHas) {
#if defined(__x86_64__)
  __builtin_cpu_init();
  const bool has = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("f16c");
  EXPECT_EQ(bulk_convert_isa(), has ? BulkIsa::f16c_avx2 : BulkIsa::portable);
#else
  EXPECT_EQ(bulk_convert_isa(), BulkIsa::portable);
#endif
}

}  // namespace
