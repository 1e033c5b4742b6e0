// gdma_gather_test.cc: row gather and scatter along H on the GDMA, the
// SDMA and the virtual SDMA ports (tpu_*_h_gather_*, tpu_*_h_scatter_*,
// the _ext forms), on both chips, against references computed here from
// the definitions in gdma.h / docs/cmodel.md: `shape` is the destination's,
// param_h the source's row count, the index uint32 with one row number per
// destination row (gather, (N, C, H, 1)) or per source row (scatter,
// (N, C, param_h, 1)); a row outside the table gathers the constant and is
// skipped by a scatter, the later of two rows aimed at one destination row
// wins.
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

// The vendor's roles: `shape` is the destination's, param_h the source's
// row count, the index (N, C, param_h, 1) one row number per source row.
TEST_P(Gather, ScatterLaterRowWinsAndOutOfRangeIsSkipped) {
  const dim4 shape = {2, 3, 6, 5};  // the destination: 6 rows per (n, c)
  const int param_h = 8;
  const dim4 param_shape = {2, 3, param_h, 5};
  Table param = random_table(param_shape);
  const std::vector<uint32_t> idx = random_rows(param_shape, shape.h);
  Table dst = random_table(shape);
  Table want = dst;
  for (int n = 0; n < 2; ++n)
    for (int c = 0; c < 3; ++c)
      for (int h = 0; h < param_h; ++h) {
        const uint32_t row = idx[size_t((n * 3 + c) * param_h + h)];
        if (row < uint32_t(shape.h))
          for (int w = 0; w < 5; ++w) want.at(n, c, int(row), w) = param.at(n, c, h, w);
      }
  for (const std::string engine : {"gdma", "sdma", "vsdma", "local"}) {
    SCOPED_TRACE(engine);
    const uint64_t p = put(param.v), i = put(idx), o = put(dst.v);
    ASSERT_TRUE(test::run_kernel_body([&] {
      if (engine == "gdma") tpu_gdma_h_scatter_S2S(o, p, i, false, &shape, param_h, nullptr, nullptr, nullptr, DT_FP32);
      else if (engine == "sdma") tpu_sdma_h_scatter_S2S(o, p, i, &shape, param_h, nullptr, nullptr, nullptr, DT_FP32);
      else if (engine == "vsdma") tpu_vsdma_h_scatter_S2S(o, p, i, &shape, param_h, nullptr, nullptr, nullptr, DT_FP32, 0);
      else {  // S2L into a local copy of dst, then back
        tpu_gdma_cpy_S2L(0, o, &shape, nullptr, nullptr, DT_FP32);
        tpu_gdma_h_scatter_S2L(0, p, i, false, &shape, param_h, nullptr, nullptr, nullptr, DT_FP32);
        tpu_gdma_cpy_L2S(o, 0, &shape, nullptr, nullptr, DT_FP32);
      }
    })) << cmodel_last_error();
    EXPECT_EQ(get(o, want.v.size()), want.v);
  }
}

// A vendor-style slice-scatter (a KV-cache update): the param_h rows of a
// small source go to rows [pos, pos + param_h) of a larger destination,
// pos differing per (n, c). The reference is the slice assignment
// dst[n, c, pos:pos + param_h, :] = src[n, c, :, :], computed as one block
// copy per (n, c), for every scatter form with default strides.
TEST_P(Gather, SliceScatterOnEveryForm) {
  const dim4 shape = {2, 3, 10, 5};  // the destination
  const int param_h = 4;
  const dim4 param_shape = {2, 3, param_h, 5}, index_shape = {2, 3, param_h, 1};
  const uint32_t start = 100;  // the _ext forms count rows from here
  Table src = random_table(param_shape), dst = random_table(shape);
  std::vector<int> pos(6);
  std::vector<uint32_t> idx, ext_idx;
  for (int nc = 0; nc < 6; ++nc) {
    pos[size_t(nc)] = (nc * 5) % (shape.h - param_h + 1);
    for (int h = 0; h < param_h; ++h) {
      idx.push_back(uint32_t(pos[size_t(nc)] + h));
      ext_idx.push_back(start + uint32_t(pos[size_t(nc)] + h));
    }
  }
  const size_t row = size_t(shape.w), block = size_t(param_h) * row;
  Table put_slice = dst, add_slice = dst;
  for (int nc = 0; nc < 6; ++nc) {
    uint32_t *to = &put_slice.v[(size_t(nc) * size_t(shape.h) + size_t(pos[size_t(nc)])) * row];
    std::memcpy(to, &src.v[size_t(nc) * block], block * sizeof(uint32_t));
  }
  // The adding form on int32 bits: the sum wraps like uint32.
  for (int nc = 0; nc < 6; ++nc)
    for (size_t k = 0; k < block; ++k)
      add_slice.v[(size_t(nc) * size_t(shape.h) + size_t(pos[size_t(nc)])) * row + k] += src.v[size_t(nc) * block + k];

  const local_addr_t ld = 0, lp = 32 * 1024, li = 64 * 1024;
  const std::string forms[] = {"S2S", "S2S_ext", "S2S_ext add", "S2L", "L2S", "L2L", "L2L local index", "sdma", "vsdma"};
  for (const std::string &form : forms) {
    SCOPED_TRACE(form);
    const uint64_t p = put(src.v), i = put(form.starts_with("S2S_ext") ? ext_idx : idx), o = put(dst.v);
    ASSERT_TRUE(test::run_kernel_body([&] {
      if (form == "S2S") {
        tpu_gdma_h_scatter_S2S(o, p, i, false, &shape, param_h, nullptr, nullptr, nullptr, DT_INT32);
      } else if (form.starts_with("S2S_ext")) {
        const int add = form == "S2S_ext add";
        tpu_gdma_h_scatter_S2S_ext(o, p, i, false, &shape, param_h, start, add, nullptr, nullptr, nullptr, DT_INT32);
      } else if (form == "sdma") {
        tpu_sdma_h_scatter_S2S(o, p, i, &shape, param_h, nullptr, nullptr, nullptr, DT_INT32);
      } else if (form == "vsdma") {
        tpu_vsdma_h_scatter_S2S(o, p, i, &shape, param_h, nullptr, nullptr, nullptr, DT_INT32, 1);
      } else if (form == "S2L") {
        tpu_gdma_cpy_S2L(ld, o, &shape, nullptr, nullptr, DT_INT32);
        tpu_gdma_h_scatter_S2L(ld, p, i, false, &shape, param_h, nullptr, nullptr, nullptr, DT_INT32);
        tpu_gdma_cpy_L2S(o, ld, &shape, nullptr, nullptr, DT_INT32);
      } else if (form == "L2S") {
        tpu_gdma_cpy_S2L(lp, p, &param_shape, nullptr, nullptr, DT_INT32);
        tpu_gdma_h_scatter_L2S(o, lp, i, false, &shape, param_h, nullptr, nullptr, nullptr, DT_INT32);
      } else {  // L2L, the index in system or local memory
        const bool local_index = form == "L2L local index";
        tpu_gdma_cpy_S2L(ld, o, &shape, nullptr, nullptr, DT_INT32);
        tpu_gdma_cpy_S2L(lp, p, &param_shape, nullptr, nullptr, DT_INT32);
        if (local_index) tpu_gdma_cpy_S2L(li, i, &index_shape, nullptr, nullptr, DT_UINT32);
        tpu_gdma_h_scatter_L2L(ld, lp, local_index ? li : i, local_index, &shape, param_h, nullptr, nullptr, nullptr,
                               DT_INT32);
        tpu_gdma_cpy_L2S(o, ld, &shape, nullptr, nullptr, DT_INT32);
      }
    })) << cmodel_last_error();
    EXPECT_EQ(get(o, dst.v.size()), form == "S2S_ext add" ? add_slice.v : put_slice.v);
  }
}

// _ext: rows counted from start_pos, added into the destination: floats
// rounded once, integers wrapping.
TEST_P(Gather, ScatterExtAddsIntoTheRow) {
  const dim4 shape = {1, 2, 3, 3};  // the destination; the source has 4 rows
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
    tpu_gdma_h_scatter_S2S_ext(o, p, i, false, &shape, 4, 10, 1, nullptr, nullptr, nullptr, DT_FP32);
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

// The h count of the gather and scatter commands is a 32-bit field: a
// table of more than 65535 rows is read and written (C and W stay 16-bit).
TEST_P(Gather, MoreThan65535Rows) {
  const int rows = 70000;
  std::vector<uint8_t> table(rows);
  for (size_t k = 0; k < table.size(); ++k) table[k] = uint8_t(k * 7 + 3);
  const uint64_t big = cmodel_global_alloc(rows), small = cmodel_global_alloc(64);
  ASSERT_EQ(cmodel_global_write(big, table.data(), table.size()), 0);
  const uint64_t i = put({69999, 5, 65536});
  const dim4 out_shape = {1, 1, 3, 1};
  scalar_t C{};
  ASSERT_TRUE(test::run_kernel_body([&] {
    tpu_gdma_h_gather_S2S(small, big, i, false, C, &out_shape, rows, nullptr, nullptr, nullptr, DT_INT8);
  })) << cmodel_last_error();
  std::vector<uint8_t> got(3);
  ASSERT_EQ(cmodel_global_read(got.data(), small, 3), 0);
  EXPECT_EQ(got, (std::vector<uint8_t>{table[69999], table[5], table[65536]}));

  // Scatter those three rows back into a zeroed table of 70000 rows.
  const std::vector<uint8_t> zeros(rows, 0);
  ASSERT_EQ(cmodel_global_write(big, zeros.data(), zeros.size()), 0);
  const dim4 table_shape = {1, 1, rows, 1};
  ASSERT_TRUE(test::run_kernel_body([&] {
    tpu_gdma_h_scatter_S2S(big, small, i, false, &table_shape, 3, nullptr, nullptr, nullptr, DT_INT8);
  })) << cmodel_last_error();
  std::vector<uint8_t> back(rows);
  ASSERT_EQ(cmodel_global_read(back.data(), big, back.size()), 0);
  std::vector<uint8_t> want(rows, 0);
  for (int r : {69999, 5, 65536}) want[size_t(r)] = table[size_t(r)];
  EXPECT_EQ(back, want);
}

TEST_P(Gather, Errors) {
  const dim4 shape = {1, 1, 2, 2};
  const uint64_t buf = cmodel_global_alloc(64), small = cmodel_global_alloc(4);
  scalar_t C{};
  EXPECT_HAS(failure([&] { tpu_gdma_h_gather_S2S(buf, buf, buf, false, C, &shape, 0, nullptr, nullptr, nullptr, DT_FP32); }),
             "tpu_gdma_h_gather_S2S: param_h = 0; it must be at least 1 [illegal command] [DMA-15]");
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
