// gdma_gather_test.cc: row gather and scatter along H on the GDMA, the
// SDMA and the virtual SDMA ports (tpu_*_h_gather_*, tpu_*_h_scatter_*,
// the _ext forms), on both chips, against references computed here from
// the definitions in gdma.h / docs/cmodel.md: the index is (N, C, H, 1)
// uint32, a row outside the table gathers the constant and is skipped by a
// scatter, the later of two rows aimed at one destination row wins.
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

// A continuous system tensor of 32-bit elements (the tests use fp32 and
// int32 bits; the gather only moves bits).
struct Table {
  dim4 shape;
  std::vector<uint32_t> v;
  uint32_t &at(int n, int c, int h, int w) { return v[size_t(((n * shape.c + c) * shape.h + h) * shape.w + w)]; }
};

class Gather : public ::testing::TestWithParam<const char *> {
 protected:
  void SetUp() override { ASSERT_EQ(cmodel_open(GetParam()), 0) << cmodel_last_error(); }
  void TearDown() override { cmodel_close(); }

  Table random_table(const dim4 &shape) {
    Table t{shape, std::vector<uint32_t>(size_t(shape.n) * shape.c * shape.h * shape.w)};
    for (uint32_t &x : t.v) x = uint32_t(rng_());
    return t;
  }
  uint64_t put(const std::vector<uint32_t> &v) { return test::put_words(v); }
  std::vector<uint32_t> get(uint64_t addr, size_t count) { return test::get_words(addr, count); }
  // Row numbers for (N, C, H): mostly in [start, start + rows), some past it.
  std::vector<uint32_t> random_rows(const dim4 &shape, int rows, uint32_t start = 0) {
    std::vector<uint32_t> idx(size_t(shape.n) * shape.c * shape.h);
    for (uint32_t &i : idx) i = rng_() % 8 == 0 ? start + uint32_t(rows) + rng_() % 3 : start + rng_() % uint32_t(rows);
    return idx;
  }
  std::string failure(std::function<void()> body) {
    EXPECT_FALSE(test::run_kernel_body(std::move(body)));
    return cmodel_last_error();
  }
  std::mt19937 rng_{77};
};

// out(n,c,h,w) = param(n,c,idx(n,c,h) - start,w), or C.
Table expected_gather(Table &param, const std::vector<uint32_t> &idx, const dim4 &shape, uint32_t start, uint32_t C) {
  Table out{shape, std::vector<uint32_t>(size_t(shape.n) * shape.c * shape.h * shape.w)};
  for (int n = 0; n < shape.n; ++n)
    for (int c = 0; c < shape.c; ++c)
      for (int h = 0; h < shape.h; ++h) {
        const int64_t row = int64_t(idx[size_t((n * shape.c + c) * shape.h + h)]) - start;
        for (int w = 0; w < shape.w; ++w)
          out.at(n, c, h, w) = row >= 0 && row < param.shape.h ? param.at(n, c, int(row), w) : C;
      }
  return out;
}

TEST_P(Gather, SystemToSystemOnEveryEngine) {
  const dim4 shape = {2, 5, 7, 9};
  Table param = random_table({2, 5, 11, 9});
  const std::vector<uint32_t> idx = random_rows(shape, 11);
  const uint64_t p = put(param.v), i = put(idx), o = cmodel_global_alloc(2 * 5 * 7 * 9 * 4);
  scalar_t C{};
  C.u32 = 0xdeadbeef;
  const Table want = expected_gather(param, idx, shape, 0, C.u32);
  for (const std::string engine : {"gdma", "sdma", "vsdma"}) {
    SCOPED_TRACE(engine);
    ASSERT_TRUE(test::run_kernel_body([&] {
      if (engine == "gdma") tpu_gdma_h_gather_S2S(o, p, i, false, C, &shape, 11, nullptr, nullptr, nullptr, DT_FP32);
      else if (engine == "sdma") tpu_sdma_h_gather_S2S(o, p, i, C, &shape, 11, nullptr, nullptr, nullptr, DT_INT32);
      else tpu_vsdma_h_gather_S2S(o, p, i, C, &shape, 11, nullptr, nullptr, nullptr, DT_UINT32, 1);
    })) << cmodel_last_error();
    EXPECT_EQ(get(o, want.v.size()), want.v);
    const auto stats = test::last_run_stats();
    EXPECT_EQ(stats["engines"][engine == "gdma" ? "gdma" : "sdma"]["commands"], 1);
    EXPECT_EQ(stats["commands"].begin().key(), "tpu_" + engine + "_h_gather_S2S");
  }
}

// One index shared by every (n, c) through zero strides, a start_pos, and
// the 16-bit dtype whose fill takes C's low half.
TEST_P(Gather, SharedIndexStartPosAndNarrowDtype) {
  const dim4 shape = {1, 3, 6, 4};
  const std::vector<uint32_t> idx = {100, 103, 99, 101, 104, 102};  // start 100: rows 0, 3, -, 1, -, 2
  std::vector<uint16_t> param(3 * 4 * 4);
  for (auto &x : param) x = uint16_t(rng_());
  const uint64_t p = cmodel_global_alloc(param.size() * 2), i = put(idx), o = cmodel_global_alloc(3 * 6 * 4 * 2);
  ASSERT_EQ(cmodel_global_write(p, param.data(), param.size() * 2), 0);
  const dim4 index_stride = {0, 0, 1, 1};
  scalar_t C{};
  C.u32 = 0x12345678;
  ASSERT_TRUE(test::run_kernel_body([&] {
    tpu_gdma_h_gather_S2S_ext(o, p, i, false, C, &shape, 4, 100, nullptr, nullptr, &index_stride, DT_FP16);
  })) << cmodel_last_error();
  std::vector<uint16_t> got(3 * 6 * 4);
  ASSERT_EQ(cmodel_global_read(got.data(), o, got.size() * 2), 0);
  for (int c = 0; c < 3; ++c)
    for (int h = 0; h < 6; ++h)
      for (int w = 0; w < 4; ++w) {
        const int row = int(idx[size_t(h)]) - 100;
        const uint16_t want = row >= 0 && row < 4 ? param[size_t((c * 4 + row) * 4 + w)] : uint16_t(0x5678);
        EXPECT_EQ(got[size_t((c * 6 + h) * 4 + w)], want) << c << " " << h << " " << w;
      }
}

// The local forms: the param, the output and the index in local memory,
// moved there and back with plain copies.
TEST_P(Gather, LocalOperandsAndLocalIndex) {
  const dim4 shape = {1, 70, 5, 6};  // more channels than NPUs on both chips
  const dim4 param_shape = {1, 70, 9, 6}, index_shape = {1, 70, 5, 1};
  Table param = random_table(param_shape);
  const std::vector<uint32_t> idx = random_rows(shape, 9);
  const uint64_t p = put(param.v), i = put(idx), o = cmodel_global_alloc(70 * 5 * 6 * 4);
  scalar_t C{};
  C.u32 = 7;
  const Table want = expected_gather(param, idx, shape, 0, C.u32);
  const local_addr_t lp = 0, lo = 32 * 1024, li = 64 * 1024, lo2 = 96 * 1024;
  for (int form = 0; form < 3; ++form) {
    SCOPED_TRACE(form);
    ASSERT_TRUE(test::run_kernel_body([&] {
      tpu_gdma_cpy_S2L(li, i, &index_shape, nullptr, nullptr, DT_UINT32);
      if (form == 0) {  // S2L, index local
        tpu_gdma_h_gather_S2L(lo, p, li, true, C, &shape, 9, nullptr, nullptr, nullptr, DT_FP32);
        tpu_gdma_cpy_L2S(o, lo, &shape, nullptr, nullptr, DT_FP32);
      } else {
        tpu_gdma_cpy_S2L(lp, p, &param_shape, nullptr, nullptr, DT_FP32);
        if (form == 1) {  // L2S, index in system memory
          tpu_gdma_h_gather_L2S(o, lp, i, false, C, &shape, 9, nullptr, nullptr, nullptr, DT_FP32);
        } else {  // L2L, index local
          tpu_gdma_h_gather_L2L(lo2, lp, li, true, C, &shape, 9, nullptr, nullptr, nullptr, DT_FP32);
          tpu_gdma_cpy_L2S(o, lo2, &shape, nullptr, nullptr, DT_FP32);
        }
      }
    })) << cmodel_last_error();
    EXPECT_EQ(get(o, want.v.size()), want.v);
  }
}

TEST_P(Gather, ScatterLaterRowWinsAndOutOfRangeIsSkipped) {
  const dim4 shape = {2, 3, 8, 5};  // the source: 8 rows per (n, c)
  Table param = random_table(shape);
  const int out_h = 6;
  const std::vector<uint32_t> idx = random_rows(shape, out_h);
  Table dst = random_table({2, 3, out_h, 5});
  Table want = dst;
  for (int n = 0; n < 2; ++n)
    for (int c = 0; c < 3; ++c)
      for (int h = 0; h < 8; ++h) {
        const uint32_t row = idx[size_t((n * 3 + c) * 8 + h)];
        if (row < uint32_t(out_h))
          for (int w = 0; w < 5; ++w) want.at(n, c, int(row), w) = param.at(n, c, h, w);
      }
  for (const std::string engine : {"gdma", "sdma", "vsdma", "local"}) {
    SCOPED_TRACE(engine);
    const uint64_t p = put(param.v), i = put(idx), o = put(dst.v);
    const dim4 out_shape = {2, 3, out_h, 5};
    ASSERT_TRUE(test::run_kernel_body([&] {
      if (engine == "gdma") tpu_gdma_h_scatter_S2S(o, p, i, false, &shape, out_h, nullptr, nullptr, nullptr, DT_FP32);
      else if (engine == "sdma") tpu_sdma_h_scatter_S2S(o, p, i, &shape, out_h, nullptr, nullptr, nullptr, DT_FP32);
      else if (engine == "vsdma") tpu_vsdma_h_scatter_S2S(o, p, i, &shape, out_h, nullptr, nullptr, nullptr, DT_FP32, 0);
      else {  // S2L into a local copy of dst, then L2L, then back
        tpu_gdma_cpy_S2L(0, o, &out_shape, nullptr, nullptr, DT_FP32);
        tpu_gdma_h_scatter_S2L(0, p, i, false, &shape, out_h, nullptr, nullptr, nullptr, DT_FP32);
        tpu_gdma_cpy_L2S(o, 0, &out_shape, nullptr, nullptr, DT_FP32);
      }
    })) << cmodel_last_error();
    EXPECT_EQ(get(o, want.v.size()), want.v);
  }
}

// _ext: rows counted from start_pos, added into the destination: floats
// rounded once, integers wrapping.
TEST_P(Gather, ScatterExtAddsIntoTheRow) {
  const dim4 shape = {1, 2, 4, 3};
  const std::vector<uint32_t> idx = {10, 12, 10, 50, 11, 11, 9, 12};  // start 10
  std::vector<float> param(24), dst(2 * 3 * 3);
  for (size_t k = 0; k < param.size(); ++k) param[k] = float(k) * 0.25f + 1;
  for (size_t k = 0; k < dst.size(); ++k) dst[k] = 100.0f - float(k);
  std::vector<float> want = dst;
  for (int c = 0; c < 2; ++c)
    for (int h = 0; h < 4; ++h) {
      const int64_t row = int64_t(idx[size_t(c * 4 + h)]) - 10;
      if (row >= 0 && row < 3)
        for (int w = 0; w < 3; ++w) want[size_t((c * 3 + row) * 3 + w)] += param[size_t((c * 4 + h) * 3 + w)];
    }
  const uint64_t p = cmodel_global_alloc(param.size() * 4), i = put(idx), o = cmodel_global_alloc(dst.size() * 4);
  cmodel_global_write(p, param.data(), param.size() * 4);
  cmodel_global_write(o, dst.data(), dst.size() * 4);
  ASSERT_TRUE(test::run_kernel_body([&] {
    tpu_gdma_h_scatter_S2S_ext(o, p, i, false, &shape, 3, 10, 1, nullptr, nullptr, nullptr, DT_FP32);
  })) << cmodel_last_error();
  std::vector<float> got(dst.size());
  cmodel_global_read(got.data(), o, got.size() * 4);
  EXPECT_EQ(got, want);

  // int32 wraps.
  const std::vector<uint32_t> big = {0x7fffffffu, 5};
  const std::vector<uint32_t> one_row = {0};
  const dim4 s1 = {1, 1, 1, 2};
  const uint64_t bp = put(big), bo = put({1, 0xfffffffbu}), bi = put(one_row);
  ASSERT_TRUE(test::run_kernel_body([&] {
    tpu_gdma_h_scatter_S2S_ext(bo, bp, bi, false, &s1, 1, 0, 1, nullptr, nullptr, nullptr, DT_INT32);
  })) << cmodel_last_error();
  EXPECT_EQ(get(bo, 2), (std::vector<uint32_t>{0x80000000u, 0}));
}

TEST_P(Gather, Errors) {
  const dim4 shape = {1, 1, 2, 2};
  const uint64_t buf = cmodel_global_alloc(64), small = cmodel_global_alloc(4);
  scalar_t C{};
  EXPECT_HAS(failure([&] { tpu_gdma_h_gather_S2S(buf, buf, buf, false, C, &shape, 0, nullptr, nullptr, nullptr, DT_FP32); }),
             "tpu_gdma_h_gather_S2S: param_h = 0; it must be in [1, 65535] [illegal command]");
  EXPECT_HAS(failure([&] {
               tpu_gdma_h_scatter_S2S_ext(buf, buf, buf, false, &shape, 2, 0, 2, nullptr, nullptr, nullptr, DT_FP32);
             }),
             "tpu_gdma_h_scatter_S2S_ext: inplace_add = 2; expected 0 (overwrite) or 1 (add into the row)");
  // The index needs 2 uint32 but the buffer holds 1: nothing is written.
  const std::vector<uint32_t> before = get(buf, 16);
  const std::string e = failure(
      [&] { tpu_gdma_h_gather_S2S(buf, buf + 32, small, false, C, &shape, 2, nullptr, nullptr, nullptr, DT_FP32); });
  EXPECT_HAS(e, "tpu_gdma_h_gather_S2S: index");
  EXPECT_HAS(e, "[memory fault]");
  EXPECT_EQ(get(buf, 16), before);
  EXPECT_HAS(failure([&] { tpu_vsdma_h_gather_S2S(buf, buf, buf, C, &shape, 2, nullptr, nullptr, nullptr, DT_FP32, 99); }),
             "port 99 does not exist");
}

INSTANTIATE_TEST_SUITE_P(Chips, Gather, ::testing::Values("bm1684x", "bm1688"));

}  // namespace
