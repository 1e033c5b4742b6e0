// hau_sort_test.cc: the HAU sort family (tpu_hau_sort*, family T) on both
// chips against a selection sort written here: repeatedly take the first
// remaining value that no other remaining value beats, which keeps equal
// values in input order (the documented stability), with a NaN above every
// number and -0 equal to +0.
#include <cmath>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cmodel_host.h"
#include "support/global_words.h"
#include "support/run_body.h"
#include "tpu_kernel.h"

namespace {

#define EXPECT_HAS(text, part) EXPECT_NE(std::string(text).find(part), std::string::npos) << (text)

// a beats b when it comes first in the sorted order.
bool beats(uint32_t a, uint32_t b, data_type_t dtype, bool descending) {
  if (dtype == DT_FP32) {
    float x, y;
    std::memcpy(&x, &a, 4);
    std::memcpy(&y, &b, 4);
    if (std::isnan(x) || std::isnan(y)) return descending ? std::isnan(x) && !std::isnan(y) : !std::isnan(x) && std::isnan(y);
    return descending ? x > y : x < y;
  }
  if (dtype == DT_INT32) return descending ? int32_t(a) > int32_t(b) : int32_t(a) < int32_t(b);
  return descending ? a > b : a < b;
}

struct Sorted {
  std::vector<uint32_t> values, positions;
};

Sorted select_top(const std::vector<uint32_t> &row, int k, data_type_t dtype, bool descending) {
  std::vector<bool> taken(row.size(), false);
  Sorted out;
  for (int i = 0; i < k; ++i) {
    size_t best = row.size();
    for (size_t j = 0; j < row.size(); ++j)
      if (!taken[j] && (best == row.size() || beats(row[j], row[best], dtype, descending))) best = j;
    taken[best] = true;
    out.values.push_back(row[best]);
    out.positions.push_back(uint32_t(best));
  }
  return out;
}

uint32_t bits_of(float f) {
  uint32_t b;
  std::memcpy(&b, &f, 4);
  return b;
}

class HauSort : public ::testing::TestWithParam<const char *> {
 protected:
  void SetUp() override { ASSERT_EQ(cmodel_open(GetParam()), 0) << cmodel_last_error(); }
  void TearDown() override { cmodel_close(); }
  uint64_t put(const std::vector<uint32_t> &v) { return test::put_words(v); }
  std::vector<uint32_t> get(uint64_t addr, size_t count) { return test::get_words(addr, count); }
  // Values with ties, signed zeros, infinities and a NaN (fp32), or
  // integers of both signs with ties.
  std::vector<uint32_t> random_values(size_t count, data_type_t dtype) {
    std::vector<uint32_t> v(count);
    const float specials[] = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, 1.5f, -1.5f};
    for (uint32_t &x : v) {
      if (dtype == DT_FP32)
        x = rng_() % 5 == 0 ? bits_of(specials[rng_() % 7]) : bits_of(float(int(rng_() % 41) - 20) / 4);
      else
        x = uint32_t(int32_t(rng_() % 21) - 10) * (rng_() % 3 == 0 ? 0x10000001u : 1u);
    }
    return v;
  }
  std::string failure(std::function<void()> body) {
    EXPECT_FALSE(test::run_kernel_body(std::move(body)));
    return cmodel_last_error();
  }
  std::mt19937 rng_{2024};
};

TEST_P(HauSort, RowsKeepTheTopKStablyWithTheirPositions) {
  const int rows = 3, len = 37, k = 10;
  for (data_type_t dtype : {DT_FP32, DT_INT32, DT_UINT32})
    for (bool descending : {false, true}) {
      SCOPED_TRACE(std::to_string(int(dtype)) + (descending ? " descending" : " ascending"));
      const std::vector<uint32_t> in = random_values(size_t(rows * len), dtype);
      const uint64_t src = put(in), out = cmodel_global_alloc(rows * k * 4), idx = cmodel_global_alloc(rows * k * 4);
      ASSERT_TRUE(test::run_kernel_body(
          [&] { tpu_hau_sort_natural_index_2d(out, idx, src, rows, len, k, descending, dtype); }))
          << cmodel_last_error();
      const std::vector<uint32_t> got = get(out, rows * k), got_idx = get(idx, rows * k);
      for (int r = 0; r < rows; ++r) {
        const std::vector<uint32_t> row(in.begin() + r * len, in.begin() + (r + 1) * len);
        const Sorted want = select_top(row, k, dtype, descending);
        for (int i = 0; i < k; ++i) {
          EXPECT_EQ(got[size_t(r * k + i)], want.values[size_t(i)]) << "row " << r << " rank " << i;
          EXPECT_EQ(got_idx[size_t(r * k + i)], want.positions[size_t(i)]) << "row " << r << " rank " << i;
        }
      }
      const auto stats = test::last_run_stats();
      EXPECT_EQ(stats["engines"]["hau"]["commands"], 1);
      EXPECT_GT(stats["engines"]["hau"]["busy_us"].get<double>(), 0);
    }
}

TEST_P(HauSort, OneRowFormsAndCarriedIndices) {
  const int len = 50, k = 50;  // a full sort, in place
  const std::vector<uint32_t> in = random_values(len, DT_FP32);
  std::vector<uint32_t> given(len);
  for (int i = 0; i < len; ++i) given[size_t(i)] = 1000u + uint32_t(i) * 7;
  const Sorted want = select_top(in, k, DT_FP32, true);
  const uint64_t data = put(in), ids = put(given), out_ids = cmodel_global_alloc(len * 4);
  ASSERT_TRUE(test::run_kernel_body([&] { tpu_hau_sort_specific_index(data, out_ids, data, ids, len, k, true, DT_FP32); }))
      << cmodel_last_error();
  EXPECT_EQ(get(data, len), want.values);
  std::vector<uint32_t> carried;
  for (uint32_t p : want.positions) carried.push_back(given[p]);
  EXPECT_EQ(get(out_ids, len), carried);

  const std::vector<uint32_t> ints = random_values(len, DT_INT32);
  const uint64_t src = put(ints), out = cmodel_global_alloc(4 * 4);
  ASSERT_TRUE(test::run_kernel_body([&] { tpu_hau_sort(out, src, len, 4, false, DT_INT32); })) << cmodel_last_error();
  EXPECT_EQ(get(out, 4), select_top(ints, 4, DT_INT32, false).values);
}

TEST_P(HauSort, GeneralFormFlags) {
  const int len = 20, k = 6;
  const std::vector<uint32_t> in = random_values(len, DT_UINT32);
  std::vector<uint32_t> given(len);
  for (int i = 0; i < len; ++i) given[size_t(i)] = uint32_t(100 - i);
  const Sorted want = select_top(in, k, DT_UINT32, true);
  const uint64_t src = put(in), ids = put(given);
  for (int idx_auto : {0, 1}) {
    const uint64_t out = cmodel_global_alloc(k * 4), out_ids = put(std::vector<uint32_t>(k, 0xabcdu));
    ASSERT_TRUE(test::run_kernel_body([&] { tpu_hau_sort_general(src, ids, out, out_ids, 2, len, 1, 1, idx_auto, k); }))
        << cmodel_last_error();
    EXPECT_EQ(get(out, k), want.values);
    for (int i = 0; i < k; ++i) {
      const uint32_t p = want.positions[size_t(i)];
      EXPECT_EQ(get(out_ids, k)[size_t(i)], idx_auto ? p : given[p]);
    }
  }
  // idx_enable 0: the index output is not written.
  const uint64_t out = cmodel_global_alloc(k * 4), untouched = put(std::vector<uint32_t>(k, 0xabcdu));
  ASSERT_TRUE(test::run_kernel_body([&] { tpu_hau_sort_general(src, ids, out, untouched, 2, len, 1, 0, 0, k); }))
      << cmodel_last_error();
  EXPECT_EQ(get(untouched, k), std::vector<uint32_t>(k, 0xabcdu));
}

TEST_P(HauSort, Errors) {
  const uint64_t buf = put(std::vector<uint32_t>(16, 5u)), small = cmodel_global_alloc(8);
  EXPECT_HAS(failure([&] { tpu_hau_sort(buf, buf, 8, 9, true, DT_FP32); }),
             "tpu_hau_sort: K = 9; it must be in [1, len = 8] [illegal command]");
  EXPECT_HAS(failure([&] { tpu_hau_sort(buf, buf, 8, 2, true, DT_FP16); }),
             "the HAU sorts DT_FP32, DT_INT32 or DT_UINT32 values");
  EXPECT_HAS(failure([&] { tpu_hau_sort_2d(buf, buf, 0, 8, 2, true, DT_FP32); }), "row_num = 0");
  EXPECT_HAS(failure([&] { tpu_hau_sort_general(buf, buf, buf, buf, 3, 8, 1, 0, 0, 2); }),
             "dtype_flags = 3; expected 0 (fp32), 1 (int32) or 2 (uint32)");
  EXPECT_HAS(failure([&] { tpu_hau_sort_general(buf, buf, buf, buf, 0, 8, 2, 0, 0, 2); }), "is_descend = 2");
  // The index output does not fit: the value output is not written either.
  const std::vector<uint32_t> before = get(buf, 16);
  const std::string e = failure([&] { tpu_hau_sort_natural_index(buf, small, buf + 32, 8, 8, false, DT_INT32); });
  EXPECT_HAS(e, "tpu_hau_sort_natural_index: output index: ");
  EXPECT_HAS(e, "[memory fault]");
  EXPECT_EQ(get(buf, 16), before);
}

INSTANTIATE_TEST_SUITE_P(Chips, HauSort, ::testing::Values("bm1684x", "bm1688"));

}  // namespace
