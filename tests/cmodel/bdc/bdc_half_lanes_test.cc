// bdc_half_lanes_test.cc: the 8-lane fp16 / bf16 path of element-wise
// commands, and its 16-lane step for commands all in bf16
// (cmodel/bdc/half_lanes.h), gives exactly the bits of the
// per-element loop it replaces, DstCodec::store(op(SrcCodec::load(x)...)),
// which stays the reference (the reference's own correctness is checked
// against an independent host model by bdc_fp_arith_test and friends).
//
// Exhaustive over the 16-bit input space: the first source takes every
// fp16 / bf16 encoding (zeros, subnormals, infinities, quiet and signalling
// NaNs with every payload), the second the same encodings reversed, shuffled
// or one fixed value, for each op of the fp arithmetic family, same-dtype
// and with an fp32 source or destination. Runs are 65,536 + 13 long, so
// after the groups of 16 one group of 8 and a tail of 5 are left. The one freedom:
// which payload comes out of an op on two NaNs (either_nan_operand).
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "cmodel/bdc/half_lanes.h"
#include "support/test_support.h"

namespace {

using namespace cmodel::bdc;
using cmodel::numeric::Bf16;
using cmodel::numeric::Fp16;
using cmodel::numeric::Fp32;
using test::hex;

#if TPU_HALF_LANES_X86

constexpr int kMaxReported = 20;
constexpr size_t kTail = 13;

std::vector<uint16_t> every_encoding() {
  std::vector<uint16_t> v(65536 + kTail);
  for (size_t i = 0; i < v.size(); ++i) v[i] = uint16_t(i);  // the tail wraps to 0..12
  return v;
}

// The second operands: reversed, shuffled, and a few single values
// broadcast (1.0, a signalling NaN, -0 and +inf in both formats' terms).
std::vector<std::vector<uint16_t>> partners() {
  std::vector<std::vector<uint16_t>> out;
  std::vector<uint16_t> all = every_encoding();
  out.emplace_back(all.rbegin(), all.rend());
  std::mt19937 rng(16);
  std::shuffle(all.begin(), all.end(), rng);
  out.push_back(all);
  for (uint16_t c : {uint16_t(0x3c00), uint16_t(0x3f80), uint16_t(0x7c01), uint16_t(0x7f81), uint16_t(0x8000),
                     uint16_t(0x7c00), uint16_t(0x7f80), uint16_t(0x0001)})
    out.emplace_back(all.size(), c);
  return out;
}

template <typename Codec>
using S = typename Codec::Storage;

// fp32 sources: every fp16 / bf16 encoding widened, with low bits set so
// narrowing has something to round.
std::vector<float> widened(const std::vector<uint16_t> &h, uint32_t low) {
  std::vector<float> out(h.size());
  for (size_t i = 0; i < h.size(); ++i) out[i] = std::bit_cast<float>((uint32_t(h[i]) << 16) | ((low * uint32_t(i)) & 0xffffu));
  return out;
}

template <typename Codec>
std::vector<S<Codec>> source(const std::vector<uint16_t> &h, uint32_t low) {
  if constexpr (std::is_same_v<S<Codec>, float>)
    return widened(h, low);
  else
    return h;
}

template <typename T>
uint32_t bits_of(T v) {
  if constexpr (std::is_same_v<T, float>)
    return std::bit_cast<uint32_t>(v);
  else
    return v;
}

// With two NaN operands x86 returns the first operand of the instruction,
// and for a + b the compiler may emit either order: even the per-element
// loop returns a's payload in one build (or one instantiation) and b's in
// another. So there the result must be one of the two NaNs as the op passes
// it on, op(a, a) or op(b, b); everything else must match bit for bit.
template <typename DstCodec, typename... SrcCodec, typename Op>
bool either_nan_operand(Op &op, S<DstCodec> got, S<SrcCodec>... x) {
  if constexpr (sizeof...(SrcCodec) != 2) {
    return false;
  } else {
    const float v[] = {SrcCodec::load(x)...};
    if (!std::isnan(v[0]) || !std::isnan(v[1])) return false;
    return bits_of(got) == bits_of(DstCodec::store(op(v[0], v[0]))) ||
           bits_of(got) == bits_of(DstCodec::store(op(v[1], v[1])));
  }
}

template <typename DstCodec, typename... SrcCodec, typename Op>
void expect_same_as_reference(const char *what, Op op, const std::vector<S<SrcCodec>> &...src) {
  const size_t n = std::get<0>(std::forward_as_tuple(src...)).size();
  std::vector<S<DstCodec>> fast(n), reference(n);
  map_half_lanes<DstCodec, SrcCodec...>(int64_t(n), fast.data(), op, src.data()...);
  for (size_t i = 0; i < n; ++i) reference[i] = DstCodec::store(op(SrcCodec::load(src[i])...));
  int reported = 0;
  for (size_t i = 0; i < n && reported < kMaxReported; ++i)
    if (bits_of(fast[i]) != bits_of(reference[i]) && !either_nan_operand<DstCodec, SrcCodec...>(op, fast[i], src[i]...)) {
      ADD_FAILURE() << what << " element " << i << ": inputs " << ((hex(bits_of(src[i])) + " ") + ...) << " gave "
                    << hex(bits_of(fast[i])) << ", the per-element loop " << hex(bits_of(reference[i]));
      ++reported;
    }
}

// The ops of the fp arithmetic family (fp_arith.cc), a constant form and
// a division.
const auto add = [](float a, float b) { return a + b; };
const auto sub = [](float a, float b) { return a - b; };
const auto mul = [](float a, float b) { return a * b; };
const auto diff_abs = [](float a, float b) { return std::fabs(a - b); };
const auto divide = [](float a, float b) { return a / b; };
const auto square = [](float a) { return a * a; };
const auto add_third = [](float a) { return a + 0.333333343f; };

class HalfLanes : public testing::Test {
 protected:
  void SetUp() override {
    if (!half_lanes_available()) GTEST_SKIP() << "this host has no F16C + AVX2";
  }
};

template <typename Codec>
void check_same_dtype() {
  const std::vector<uint16_t> a = every_encoding();
  for (const auto &b : partners()) {
    expect_same_as_reference<Codec, Codec, Codec>("add", add, a, b);
    expect_same_as_reference<Codec, Codec, Codec>("sub", sub, a, b);
    expect_same_as_reference<Codec, Codec, Codec>("mul", mul, a, b);
    expect_same_as_reference<Codec, Codec, Codec>("diff_abs", diff_abs, a, b);
    expect_same_as_reference<Codec, Codec, Codec>("div", divide, a, b);
  }
  expect_same_as_reference<Codec, Codec>("square", square, a);
  expect_same_as_reference<Codec, Codec>("add constant", add_third, a);
}

TEST_F(HalfLanes, Fp16MatchesThePerElementLoopForEveryEncoding) { check_same_dtype<Fp16>(); }
TEST_F(HalfLanes, Bf16MatchesThePerElementLoopForEveryEncoding) { check_same_dtype<Bf16>(); }

// An fp32 operand among 16-bit ones: fp32 sources narrowed into fp16 /
// bf16, and 16-bit sources widened into an fp32 destination.
TEST_F(HalfLanes, MixedWidthsMatchThePerElementLoop) {
  const std::vector<uint16_t> a = every_encoding();
  for (uint32_t low : {0x0u, 0x1u, 0x8001u, 0x1235u}) {
    const std::vector<float> wide = widened(a, low);
    expect_same_as_reference<Fp16, Fp32>("fp32 -> fp16", square, wide);
    expect_same_as_reference<Bf16, Fp32>("fp32 -> bf16", square, wide);
    expect_same_as_reference<Fp16, Fp32>("fp32 -> fp16 identity", [](float x) { return x; }, wide);
    expect_same_as_reference<Bf16, Fp32>("fp32 -> bf16 identity", [](float x) { return x; }, wide);
    expect_same_as_reference<Fp16, Fp16, Fp32>("fp16 + fp32", add, a, wide);
  }
  for (const auto &b : partners()) {
    expect_same_as_reference<Fp32, Fp16, Fp16>("fp16 * fp16 -> fp32", mul, a, b);
    expect_same_as_reference<Fp32, Bf16, Bf16>("bf16 * bf16 -> fp32", mul, a, b);
  }
}

#else

TEST(HalfLanes, NotBuiltForThisHost) { GTEST_SKIP() << "the 8-lane path is x86-only"; }

#endif

}  // namespace
