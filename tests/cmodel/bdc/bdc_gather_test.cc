// bdc_gather_test: BDC gather / scatter inside local memory (family S:
// tpu_bdc_w_gather, *_exception, w_scatter, batch_bcast_{w,h}_{gather,
// scatter}, 4bank_w_gather*) against the independent layout model, bit for
// bit over the whole local memory: random shapes, dtypes, index dtypes (8
// and 16 bits), start NPUs, repeated params (a different copy in every NPU,
// so reading another NPU's copy shows), out-of-range indices filled or
// clamped, and scatters with repeated and out-of-range indices. Then the
// checks: an out-of-range index of a plain gather stops it naming the
// element, a scatter's skipped indices are reported as one warning, bad
// lengths and index dtypes (32-bit ones too) are refused, and a failing
// command leaves memory alone.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "support/local_model.h"
#include "support/run_body.h"
#include "support/test_support.h"

namespace {

using namespace local_model;

enum class Form { plain, exception, batch_bcast, batch_bcast_exception, four_bank, four_bank_exception };

struct Case {
  bool h_axis = false;  // gather / scatter rows (H) instead of elements (W)
  bool scatter = false;
  Form form = Form::plain;
  bool repeated = false;
  bool fill_const = false;
  int length = 1;  // param_w / param_h, or output_w / output_h of a scatter
  data_type_t dtype = DT_FP32, index_dtype = DT_UINT16;
  dim4 shape{};
  Tensor output{}, param{}, index{};
  scalar_t C{};
};

bool is_exception(Form f) {
  return f == Form::exception || f == Form::batch_bcast_exception || f == Form::four_bank_exception;
}

// Calls the API function the case names.
void call(const Case &k) {
  const local_addr_t o = k.output.addr, p = k.param.addr, i = k.index.addr;
  const dim4 *s = &k.shape;
  const data_type_t t = k.dtype, it = k.index_dtype;
  if (k.scatter) {
    if (k.h_axis) return tpu_bdc_batch_bcast_h_scatter(o, p, i, s, k.length, t, it, k.repeated);
    if (k.form == Form::plain) return tpu_bdc_w_scatter(o, p, i, s, k.length, t, it);
    return tpu_bdc_batch_bcast_w_scatter(o, p, i, s, k.length, t, it, k.repeated);
  }
  if (k.h_axis) {
    if (is_exception(k.form))
      return tpu_bdc_batch_bcast_h_gather_exception(o, p, i, k.C, s, k.length, t, it, k.repeated, k.fill_const);
    return tpu_bdc_batch_bcast_h_gather(o, p, i, s, k.length, t, it, k.repeated);
  }
  switch (k.form) {
    case Form::plain: return tpu_bdc_w_gather(o, p, i, s, k.length, t, it);
    case Form::exception: return tpu_bdc_w_gather_exception(o, p, i, k.C, s, k.length, t, it, k.fill_const);
    case Form::batch_bcast: return tpu_bdc_batch_bcast_w_gather(o, p, i, s, k.length, t, it, k.repeated);
    case Form::batch_bcast_exception:
      return tpu_bdc_batch_bcast_w_gather_exception(o, p, i, k.C, s, k.length, t, it, k.repeated, k.fill_const);
    case Form::four_bank: return tpu_bdc_4bank_w_gather(o, p, i, s, k.length, t, it, k.repeated);
    case Form::four_bank_exception:
      return tpu_bdc_4bank_w_gather_exception(o, p, i, k.C, s, k.length, t, it, k.repeated, k.fill_const);
  }
}

const std::vector<data_type_t> kDtypes = {DT_INT8, DT_UINT8, DT_INT16, DT_UINT16, DT_INT32,
                                          DT_UINT32, DT_FP16, DT_BFP16, DT_FP32};
const std::vector<data_type_t> kIndexDtypes = {DT_UINT8, DT_INT8, DT_UINT16, DT_INT16};  // no 32-bit: SG-2

dim4 with_length(bool h_axis, const dim4 &s, int length) {
  return h_axis ? dim4{s.n, s.c, length, s.w} : dim4{s.n, s.c, s.h, length};
}

class BdcGather : public ChipTest {
 protected:
  void SetUp() override {
    ChipTest::SetUp();
    chip = local_model::chip(GetParam());
  }

  // The param element (n, c, h, w) as the command reads it: with a
  // repeated param, from the one-channel copy in channel c's own NPU.
  uint32_t param_bits(const Case &k, int n, int c, int h, int w) const {
    if (!k.repeated) return get_bits(chip, k.param, n, c, h, w);
    const int start = int(k.param.addr / chip.lmem);
    const int npu = (start + c) % chip.npu;
    const Tensor copy = aligned(chip, npu, k.param.addr % chip.lmem, {k.param.shape.n, 1, k.param.shape.h,
                                                                      k.param.shape.w}, k.dtype);
    return get_bits(chip, copy, n, 0, h, w);
  }

  // A random case; operands at three offsets of the start NPU, filled with
  // random bits (a repeated param: a different copy on every NPU).
  Case random_case(test::Seeded &seeded, bool scatter) {
    auto &rng = seeded.rng();
    Case k;
    k.scatter = scatter;
    k.h_axis = seeded.uniform(0, 2) == 0;
    k.form = Form(seeded.uniform(0, 5));
    if (k.h_axis || scatter) k.form = seeded.uniform(0, 1) ? Form::batch_bcast_exception : Form::batch_bcast;
    if (scatter && !k.h_axis && seeded.uniform(0, 1)) k.form = Form::plain;
    k.repeated = k.form != Form::plain && k.form != Form::exception && seeded.uniform(0, 1);
    k.fill_const = seeded.uniform(0, 1);
    k.dtype = kDtypes[size_t(seeded.uniform(0, int(kDtypes.size()) - 1))];
    k.index_dtype = kIndexDtypes[size_t(seeded.uniform(0, int(kIndexDtypes.size()) - 1))];
    k.length = seeded.uniform(1, 40);
    k.shape = {seeded.uniform(1, 2), seeded.uniform(1, chip.npu + 5), seeded.uniform(1, 4), seeded.uniform(1, 20)};
    k.C.u32 = uint32_t(rng());
    const int start = seeded.uniform(0, chip.npu - 1);
    const uint32_t third = chip.lmem / 3 / 64 * 64;
    const dim4 index_shape = k.h_axis ? dim4{k.shape.n, k.shape.c, k.shape.h, 1} : k.shape;
    const dim4 long_shape = with_length(k.h_axis, k.shape, k.length);
    k.output = aligned(chip, start, 0, scatter ? long_shape : k.shape, k.dtype);
    k.param = aligned(chip, start, third, scatter ? k.shape : long_shape, k.dtype);
    k.index = aligned(chip, start, 2 * third, index_shape, k.index_dtype);
    for_each_index(k.output.shape, [&](int n, int c, int h, int w) { set_bits(chip, k.output, n, c, h, w, uint32_t(rng())); });
    if (k.repeated) {
      for (int npu = 0; npu < chip.npu; ++npu) {
        const Tensor copy = aligned(chip, npu, third, {k.param.shape.n, 1, k.param.shape.h, k.param.shape.w}, k.dtype);
        for_each_index(copy.shape, [&](int n, int c, int h, int w) { set_bits(chip, copy, n, c, h, w, uint32_t(rng())); });
      }
    } else {
      for_each_index(k.param.shape, [&](int n, int c, int h, int w) { set_bits(chip, k.param, n, c, h, w, uint32_t(rng())); });
    }
    // Indices: inside the range for a plain gather, else a few outside
    // (negative ones only where the dtype is signed).
    const int64_t lo = int_min(k.index_dtype) < 0 ? -3 : 0;
    const bool may_leave = scatter || is_exception(k.form);
    const int64_t hi = std::min<int64_t>(int_max(k.index_dtype), k.length - 1 + (may_leave ? 3 : 0));
    const int64_t low = may_leave ? lo : 0;
    for_each_index(index_shape, [&](int n, int c, int h, int w) {
      const int64_t v = low + int64_t(rng() % uint64_t(hi - low + 1));
      set_bits(chip, k.index, n, c, h, w, uint32_t(v));
    });
    return k;
  }

  int64_t index_at(const Case &k, int n, int c, int h, int w) const {
    return int_value(k.index_dtype, get_bits(chip, k.index, n, c, h, k.h_axis ? 0 : w));
  }

  // The expected local memory after the case's command.
  std::vector<uint8_t> expected_image(const Case &k) const {
    std::vector<uint8_t> expected = snapshot(chip);
    for_each_index(k.shape, [&](int n, int c, int h, int w) {
      const int64_t i = index_at(k, n, c, h, w);
      const bool inside = i >= 0 && i < k.length;
      const int at = int(i);
      if (k.scatter) {
        if (!inside) return;
        const uint32_t v = param_bits(k, n, c, h, w);
        if (k.h_axis) put(expected, chip, k.output, n, c, at, w, v);
        else put(expected, chip, k.output, n, c, h, at, v);
        return;
      }
      uint32_t v;
      if (inside || !k.fill_const) {
        const int p = inside ? at : int(std::clamp<int64_t>(i, 0, k.length - 1));
        v = k.h_axis ? param_bits(k, n, c, p, w) : param_bits(k, n, c, h, p);
      } else {
        v = k.C.u32;
      }
      put(expected, chip, k.output, n, c, h, w, v);
    });
    return expected;
  }

  Chip chip;
};

std::string describe(const Case &k, int iteration) {
  return std::string(k.scatter ? "scatter" : "gather") + (k.h_axis ? " H" : " W") + " form " +
         std::to_string(int(k.form)) + (k.repeated ? " repeated" : "") + (k.fill_const ? " fill" : " clamp") +
         " dtype " + std::to_string(k.dtype) + " index " + std::to_string(k.index_dtype) + " length " +
         std::to_string(k.length) + " shape [" + std::to_string(k.shape.n) + "," + std::to_string(k.shape.c) + "," +
         std::to_string(k.shape.h) + "," + std::to_string(k.shape.w) + "] iteration " + std::to_string(iteration);
}

TEST_P(BdcGather, RandomGathersMatchTheModel) {
  test::Seeded seeded;
  for (int iteration = 0; iteration < 60; ++iteration) {
    const Case k = random_case(seeded, false);
    const std::vector<uint8_t> expected = expected_image(k);
    ASSERT_TRUE(test::run_kernel_body([&] { call(k); })) << describe(k, iteration) << ": " << cmodel_last_error();
    expect_local_memory(chip, expected, [&] { return describe(k, iteration); });
    if (::testing::Test::HasFailure()) break;
  }
}

TEST_P(BdcGather, RandomScattersMatchTheModel) {
  test::Seeded seeded;
  for (int iteration = 0; iteration < 60; ++iteration) {
    const Case k = random_case(seeded, true);
    const std::vector<uint8_t> expected = expected_image(k);
    ASSERT_TRUE(test::run_kernel_body([&] { call(k); })) << describe(k, iteration) << ": " << cmodel_last_error();
    expect_local_memory(chip, expected, [&] { return describe(k, iteration); });
    if (::testing::Test::HasFailure()) break;
  }
}

// A small known case, checked by value: an embedding-style row gather.
TEST_P(BdcGather, GathersRowsAndElementsOfAKnownTable) {
  const Tensor table = aligned(chip, 0, 0, {1, 2, 4, 3}, DT_FP32);    // 4 rows of 3 per channel
  const Tensor rows = aligned(chip, 0, 4096, {1, 2, 3, 1}, DT_UINT16);  // rows 3, 0, 3
  const Tensor out = aligned(chip, 0, 8192, {1, 2, 3, 3}, DT_FP32);
  const Tensor cols = aligned(chip, 0, 12288, {1, 2, 1, 2}, DT_UINT8);  // elements 2, 0 of row 0
  const Tensor picked = aligned(chip, 0, 16384, {1, 2, 1, 2}, DT_FP32);
  for_each_index(table.shape, [&](int n, int c, int h, int w) { set(chip, table, n, c, h, w, float(100 * c + 10 * h + w)); });
  for (int c = 0; c < 2; ++c) {
    set<uint16_t>(chip, rows, 0, c, 0, 0, 3), set<uint16_t>(chip, rows, 0, c, 1, 0, 0), set<uint16_t>(chip, rows, 0, c, 2, 0, 3);
    set<uint8_t>(chip, cols, 0, c, 0, 0, 2), set<uint8_t>(chip, cols, 0, c, 0, 1, 0);
  }
  const dim4 gather_shape = out.shape, pick_shape = picked.shape;
  ASSERT_TRUE(test::run_kernel_body([&] {
    tpu_bdc_batch_bcast_h_gather(out.addr, table.addr, rows.addr, &gather_shape, 4, DT_FP32, DT_UINT16, false);
    tpu_bdc_4bank_w_gather(picked.addr, table.addr, cols.addr, &pick_shape, 3, DT_FP32, DT_UINT8, false);
  })) << cmodel_last_error();
  for (int c = 0; c < 2; ++c) {
    const int want_rows[3] = {3, 0, 3};
    for (int h = 0; h < 3; ++h)
      for (int w = 0; w < 3; ++w)
        EXPECT_EQ(get<float>(chip, out, 0, c, h, w), float(100 * c + 10 * want_rows[h] + w)) << c << " " << h << " " << w;
    EXPECT_EQ(get<float>(chip, picked, 0, c, 0, 0), float(100 * c + 2));
    EXPECT_EQ(get<float>(chip, picked, 0, c, 0, 1), float(100 * c));
  }
}

TEST_P(BdcGather, AnOutOfRangeIndexStopsAPlainGatherAndLeavesMemoryAlone) {
  const Tensor param = aligned(chip, 0, 0, {1, 2, 1, 8}, DT_INT32);
  const Tensor index = aligned(chip, 0, 4096, {1, 2, 1, 4}, DT_UINT16);
  const Tensor out = aligned(chip, 0, 8192, {1, 2, 1, 4}, DT_INT32);
  for (int c = 0; c < 2; ++c)
    for (int w = 0; w < 4; ++w) set<uint16_t>(chip, index, 0, c, 0, w, uint16_t(w));
  set<uint16_t>(chip, index, 0, 1, 0, 2, 8);  // one past param_w
  const std::vector<uint8_t> before = snapshot(chip);
  const dim4 shape = out.shape;
  EXPECT_FALSE(test::run_kernel_body([&] { tpu_bdc_w_gather(out.addr, param.addr, index.addr, &shape, 8, DT_INT32, DT_UINT16); }));
  const std::string m = cmodel_last_error();
  EXPECT_NE(m.find("tpu_bdc_w_gather: index element (0, 1, 0, 2) is 8, outside [0, param_w = 8)"), std::string::npos) << m;
  EXPECT_NE(m.find("_exception forms fill or clamp"), std::string::npos) << m;
  expect_local_memory(chip, before, [] { return std::string("after the failed gather"); });
}

TEST_P(BdcGather, AScattersSkippedIndicesAreOneWarning) {
  const Tensor param = aligned(chip, 0, 0, {1, 1, 1, 4}, DT_FP16);
  const Tensor index = aligned(chip, 0, 4096, {1, 1, 1, 4}, DT_INT16);
  const Tensor out = aligned(chip, 0, 8192, {1, 1, 1, 6}, DT_FP16);
  const int16_t where[4] = {5, -1, 9, 0};
  for (int w = 0; w < 4; ++w) set<int16_t>(chip, index, 0, 0, 0, w, where[w]);
  const dim4 shape = param.shape;
  ASSERT_TRUE(test::run_kernel_body([&] { tpu_bdc_w_scatter(out.addr, param.addr, index.addr, &shape, 6, DT_FP16, DT_INT16); }))
      << cmodel_last_error();
  const auto warnings = test::last_run_stats().at("warnings");
  ASSERT_EQ(warnings.size(), 1u) << warnings.dump();
  const std::string w = warnings[0].get<std::string>();
  EXPECT_NE(w.find("tpu_bdc_w_scatter: 2 index value(s) outside [0, output_w = 6) were skipped"), std::string::npos) << w;
  EXPECT_NE(w.find("the first: index element (0, 0, 0, 1) = -1"), std::string::npos) << w;
}

TEST_P(BdcGather, BadLengthsAndIndexDtypesAreRefused) {
  const dim4 shape = {1, 1, 1, 4};
  EXPECT_FALSE(test::run_kernel_body([&] { tpu_bdc_w_gather(0, 4096, 8192, &shape, 0, DT_FP32, DT_UINT16); }));
  EXPECT_NE(std::string(cmodel_last_error()).find("tpu_bdc_w_gather: param_w = 0; it must be in [1, 65535]"),
            std::string::npos)
      << cmodel_last_error();
  EXPECT_FALSE(test::run_kernel_body([&] { tpu_bdc_batch_bcast_h_scatter(0, 4096, 8192, &shape, 70000, DT_FP32, DT_UINT16, false); }));
  EXPECT_NE(std::string(cmodel_last_error()).find("output_h = 70000"), std::string::npos) << cmodel_last_error();
  EXPECT_FALSE(test::run_kernel_body([&] { tpu_bdc_w_gather(0, 4096, 8192, &shape, 4, DT_FP32, DT_FP32); }));
  EXPECT_NE(std::string(cmodel_last_error()).find("index_dtype"), std::string::npos) << cmodel_last_error();
  // 8- or 16-bit indices only.
  EXPECT_FALSE(test::run_kernel_body([&] { tpu_bdc_batch_bcast_h_scatter(0, 4096, 8192, &shape, 4, DT_FP32, DT_INT32, false); }));
  EXPECT_NE(std::string(cmodel_last_error())
                .find("tpu_bdc_batch_bcast_h_scatter: index_dtype DT_INT32 is not allowed here; expected one of DT_UINT8, "
                      "DT_INT8, DT_UINT16, DT_INT16 [illegal command] [SGL-2]"),
            std::string::npos)
      << cmodel_last_error();
  EXPECT_FALSE(test::run_kernel_body([&] { tpu_bdc_w_gather(0, LOCAL_MEM_SIZE + 4096, 8192, &shape, 4, DT_FP32, DT_UINT16); }));
  EXPECT_NE(std::string(cmodel_last_error()).find("NPU"), std::string::npos) << cmodel_last_error();
}

INSTANTIATE_TEST_SUITE_P(Chips, BdcGather, ::testing::Values("bm1684x", "bm1688"));

}  // namespace
