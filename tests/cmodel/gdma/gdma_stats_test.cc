// gdma_stats_test.cc: the run statistics of GDMA-only kernels
// (cmodel_last_run_stats): command counts per API name, bytes per direction
// (S = DDR or L2 SRAM), GDMA-only runs taking exactly the GDMA busy time, and
// serial commands adding up. Several commands per run also check that a
// batch of dependent moves runs in order (data compared with the model).
#include <cmath>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "support/gdma_model.h"

using namespace gdma_model;
using nlohmann::json;

namespace {

class GdmaStats : public GdmaFixture {
 protected:
  // A command plus what the model needs to replay it and what it should cost.
  struct Planned {
    Cmd cmd;
    Tensor dst, src;
    int sz;
    const char *dir;  // "S2L", "L2S", "S2S", "L2L"; nullptr = no bytes expected (fills)
    uint64_t bytes;   // destination bytes moved
  };

  // Places a dst <- src move of `op` with random dtype/shape/endpoints.
  Planned plan(Op op, bool dst_local, bool src_local, const char *dir) {
    Planned p{};
    const data_type_t dt = h.random_dtype();
    p.sz = dtype_size(dt);
    p.dir = dir;
    dim4 shape{};
    for (;;) {
      Area da, sa;
      h.pick_areas(dst_local, src_local, da, sa);
      shape = h.random_shape();
      dim4 sshape = shape;
      if (op == Op::nc_trans_S2L) sshape = {shape.c, shape.n, shape.h, shape.w};
      if (op == Op::cw_trans_L2S) sshape = {shape.n, shape.w, shape.h, shape.c};
      if (op == Op::channel_bcast_L2L) sshape = {shape.n, 1, shape.h, shape.w};
      if (op == Op::general_cpy_S2L) sshape = {1, 1, 1, int(count(shape))};
      const Layout dl = op == Op::compact_L2S ? Layout::standard : h.random_dst_layout();
      const Layout sl = op == Op::compact_L2S ? Layout::compact : h.random_src_layout();
      if (!h.place(p.dst, shape, p.sz, da, dl) || !h.place(p.src, sshape, p.sz, sa, sl)) continue;
      // A channel broadcast stops at the last NPU (DMA-14).
      if (op == Op::channel_bcast_L2L && int(p.dst.addr / h.chip.lmem) + shape.c > h.chip.npu) continue;
      break;
    }
    p.cmd = make_cmd(op, p.dst, p.src, shape, dt);
    p.cmd.shape2 = p.src.shape;
    p.cmd.axis = h.uniform(0, 3);
    p.bytes = uint64_t(count(shape)) * p.sz;
    return p;
  }

  Planned plan_system_cpy() {
    Planned p{};
    const data_type_t dt = h.random_dtype();
    p.sz = dtype_size(dt);
    p.dir = "S2S";
    const int n = h.uniform(1, 20000 / p.sz);
    Area da, sa;
    h.pick_areas(false, false, da, sa);
    EXPECT_TRUE(h.place(p.dst, {1, 1, 1, n}, p.sz, da, Layout::standard));
    EXPECT_TRUE(h.place(p.src, {1, 1, 1, n}, p.sz, sa, Layout::standard));
    p.cmd = make_cmd(Op::system_cpy, p.dst, p.src, p.dst.shape, dt);
    p.cmd.count = unsigned(n);
    p.bytes = uint64_t(n) * p.sz;
    return p;
  }

  // matrix_S2L / vector_L2S: the bytes of the matrix, not of the channel padding.
  Planned plan_matrix(bool vector) {
    Planned p{};
    const data_type_t dt = h.random_dtype();
    p.sz = dtype_size(dt);
    p.dir = vector ? "L2S" : "S2L";
    const int rows = vector ? 1 : h.uniform(1, 10), cols = h.uniform(1, 200), cpc = h.uniform(1, 40);
    const int rs = vector ? cols : cols + h.uniform(0, 5);
    const dim4 sstride{0, 0, rs, 1};
    EXPECT_TRUE(h.place(p.dst, {rows, int(div_up(cols, cpc)), 1, cpc}, p.sz, h.local_area(), Layout::standard));
    EXPECT_TRUE(h.place(p.src, {1, 1, rows, cols}, p.sz, h.system_area(h.random_region()), Layout::given, &sstride));
    p.cmd.op = vector ? Op::vector_L2S : Op::matrix_S2L;
    p.cmd.dst = vector ? p.src.addr : p.dst.addr;  // p.dst is the local end, p.src the system end
    p.cmd.src = vector ? p.dst.addr : p.src.addr;
    p.cmd.rows = rows;
    p.cmd.cols = cols;
    p.cmd.cpc = cpc;
    p.cmd.row_stride = rs;
    p.cmd.dtype = dt;
    p.bytes = uint64_t(rows) * cols * p.sz;
    return p;
  }

  // Applies a planned command to the model.
  void replay(const Planned &p) {
    const int sz = p.sz;
    switch (p.cmd.op) {
      case Op::nc_trans_S2L: ref_nc_trans(h, p.dst, p.src, sz); break;
      case Op::cw_trans_L2S: ref_cw_trans(h, p.dst, p.src, sz); break;
      case Op::channel_bcast_L2L: ref_channel_bcast(h, p.dst, p.src, sz); break;
      case Op::general_cpy_S2L: ref_general(h, p.dst, p.src, sz); break;
      case Op::reverse_S2S: ref_reverse(h, p.dst, p.src, p.cmd.axis, sz); break;
      case Op::set_C_local: ref_fill(h, p.dst, p.cmd.C.u32, sz); break;
      case Op::matrix_S2L:
      case Op::vector_L2S:
        for (int r = 0; r < p.cmd.rows; ++r)
          for (int j = 0; j < p.cmd.cols; ++j) {
            uint8_t *l = h.at(p.dst, r, j / p.cmd.cpc, 0, j % p.cmd.cpc, sz), *s = h.at(p.src, 0, 0, r, j, sz);
            if (p.cmd.op == Op::matrix_S2L) std::memcpy(l, s, sz);
            else std::memcpy(s, l, sz);
          }
        break;
      default: ref_copy(h, p.dst, p.src, sz); break;
    }
  }

  // Runs the planned commands as one kernel; returns the parsed statistics.
  json run_all(const std::vector<Planned> &ps, bool check_data = true) {
    Batch b;
    for (const Planned &p : ps) {
      if (check_data && p.cmd.op != Op::set_C_local) {
        if (p.cmd.op == Op::vector_L2S) h.randomize(p.dst, p.sz);
        else h.randomize(p.src, p.sz);
      }
      b.add(p.cmd);
    }
    if (!h.run(b)) return json();
    if (check_data) {
      for (const Planned &p : ps) replay(p);
      h.verify();
    }
    return json::parse(cmodel_last_run_stats());
  }

  static double total_us(const json &j) { return j.at("total_us").get<double>(); }
  static double gdma_busy_us(const json &j) { return j.at("engines").at("gdma").at("busy_us").get<double>(); }
};

// The report rounds times to 1e-6 us; `terms` = how many rounded values were summed.
void expect_close(double a, double b, const char *what, int terms = 1) {
  EXPECT_NEAR(a, b, 0.5e-6 * (terms + 1) + 1e-9 * std::max(std::fabs(a), std::fabs(b))) << what;
}

TEST_P(GdmaStats, CountsCommandsAndBytesPerDirection) {
  test::Seeded seeded;
  h.begin(seeded);
  std::vector<Planned> ps;
  ps.push_back(plan(Op::cpy_S2L, true, false, "S2L"));
  ps.push_back(plan(Op::cpy_S2L, true, false, "S2L"));
  ps.push_back(plan(Op::cpy_L2S, false, true, "L2S"));
  ps.push_back(plan(Op::cpy_L2L, true, true, "L2L"));
  ps.push_back(plan(Op::cpy_S2S, false, false, "S2S"));
  ps.push_back(plan(Op::nc_trans_S2L, true, false, "S2L"));
  ps.push_back(plan(Op::cw_trans_L2S, false, true, "L2S"));
  ps.push_back(plan(Op::general_cpy_S2L, true, false, "S2L"));
  ps.push_back(plan(Op::compact_L2S, false, true, "L2S"));
  ps.push_back(plan(Op::channel_bcast_L2L, true, true, "L2L"));
  ps.push_back(plan(Op::reverse_S2S, false, false, "S2S"));
  ps.push_back(plan_system_cpy());
  ps.push_back(plan_matrix(false));
  ps.push_back(plan_matrix(true));

  std::map<std::string, uint64_t> commands, bytes{{"S2L", 0}, {"L2S", 0}, {"S2S", 0}, {"L2L", 0}};
  std::string listing;
  for (const Planned &p : ps) {
    ++commands[op_name(p.cmd.op)];
    bytes[p.dir] += p.bytes;
    listing += std::string("\n  ") + op_name(p.cmd.op) + " " + p.dir + " " + std::to_string(p.bytes) + " bytes";
  }
  SCOPED_TRACE("commands:" + listing);
  const json j = run_all(ps);
  ASSERT_FALSE(j.is_null());
  SCOPED_TRACE("stats: " + j.dump());
  EXPECT_EQ(j.at("chip").get<std::string>(), GetParam());
  EXPECT_EQ(j.at("commands").get<decltype(commands)>(), commands);
  for (const auto &[dir, n] : bytes) EXPECT_EQ(j.at("bytes").at(dir).get<uint64_t>(), n) << dir;
  EXPECT_EQ(j.at("engines").at("gdma").at("commands").get<uint64_t>(), ps.size());
  EXPECT_EQ(j.at("engines").at("bdc").at("commands").get<uint64_t>(), 0u);
  EXPECT_GT(total_us(j), 0);
  expect_close(total_us(j), gdma_busy_us(j), "total_us vs GDMA busy_us");
  EXPECT_EQ(j.at("overlap_us").get<double>(), 0);
}

// Fills count as commands of their own API name.
TEST_P(GdmaStats, FillsAreCounted) {
  test::Seeded seeded;
  h.begin(seeded);
  Batch b;
  for (int i = 0; i < 3; ++i) {
    Tensor t;
    ASSERT_TRUE(h.place(t, {1, 5, 2, 3}, 4, h.local_area(), Layout::standard));
    Cmd c = make_cmd(Op::set_C_local, t, t, t.shape, DT_INT32);
    c.C.u32 = 7;
    b.add(c);
    ref_fill(h, t, 7, 4);
  }
  Tensor s;
  ASSERT_TRUE(h.place(s, {2, 3, 4, 5}, 2, h.system_area(h.l2), Layout::standard));
  Cmd c = make_cmd(Op::set_C_system, s, s, s.shape, DT_FP16);
  c.C.u16 = 0x3c00;
  b.add(c);
  ref_fill(h, s, 0x3c00, 2);
  ASSERT_TRUE(h.run(b));
  h.verify();
  const json j = json::parse(cmodel_last_run_stats());
  SCOPED_TRACE("stats: " + j.dump());
  EXPECT_EQ(j.at("commands").at("tpu_gdma_set_C_local").get<int>(), 3);
  EXPECT_EQ(j.at("commands").at("tpu_gdma_set_C_system").get<int>(), 1);
  EXPECT_EQ(j.at("commands").size(), 2u);
  EXPECT_EQ(j.at("engines").at("gdma").at("commands").get<int>(), 4);
  EXPECT_GT(total_us(j), 0);
  expect_close(total_us(j), gdma_busy_us(j), "total_us vs GDMA busy_us");
}

// Outside a parallel region GDMA commands run one after the other: the time
// of a batch is the sum of the times of its commands run alone, and the
// statistics of a run do not carry over to the next.
TEST_P(GdmaStats, SerialCommandsAddUp) {
  test::Seeded seeded;
  h.begin(seeded);
  std::vector<Planned> ps = {plan(Op::cpy_S2L, true, false, "S2L"), plan(Op::cpy_L2S, false, true, "L2S"),
                             plan(Op::cpy_S2S, false, false, "S2S"), plan(Op::cpy_L2L, true, true, "L2L"),
                             plan(Op::nc_trans_S2L, true, false, "S2L")};
  double sum_us = 0, sum_cycles = 0;
  for (const Planned &p : ps) {
    const json j = run_all({p}, false);
    ASSERT_FALSE(j.is_null());
    EXPECT_EQ(j.at("commands").size(), 1u) << "statistics must be reset between runs";
    EXPECT_EQ(j.at("engines").at("gdma").at("commands").get<int>(), 1);
    EXPECT_GT(total_us(j), 0);
    expect_close(total_us(j), gdma_busy_us(j), "one command");
    sum_us += total_us(j);
    sum_cycles += j.at("engines").at("gdma").at("cycles").get<double>();
  }
  const json all = run_all(ps, false);
  ASSERT_FALSE(all.is_null());
  SCOPED_TRACE("stats: " + all.dump());
  const int n = int(ps.size());
  expect_close(total_us(all), sum_us, "batch total_us vs the sum of single runs", n);
  expect_close(gdma_busy_us(all), sum_us, "batch GDMA busy_us vs the sum of single runs", n);
  EXPECT_EQ(all.at("engines").at("gdma").at("cycles").get<double>(), sum_cycles) << "GDMA cycles";

  // The same command four times takes four times as long.
  const json one = run_all({ps[0]}, false);
  const json four = run_all({ps[0], ps[0], ps[0], ps[0]}, false);
  ASSERT_FALSE(one.is_null());
  ASSERT_FALSE(four.is_null());
  expect_close(total_us(four), 4 * total_us(one), "four identical commands", 4);
  EXPECT_EQ(four.at("engines").at("gdma").at("cycles").get<double>(),
            4 * one.at("engines").at("gdma").at("cycles").get<double>());
  EXPECT_EQ(four.at("bytes").at("S2L").get<uint64_t>(), 4 * one.at("bytes").at("S2L").get<uint64_t>());
}

// Time grows with the bytes moved and is bounded below by the chip's GDMA
// bandwidth (spec §1: bm1684x S2L 58, L2S 44, S2S 28 GiB/s; bm1688 S2L 24,
// L2S 24, S2S 12 GB/s).
TEST_P(GdmaStats, TimeFollowsBandwidth) {
  test::Seeded seeded;
  h.begin(seeded);
  const bool x = std::string(GetParam()) == "bm1684x";
  const double GiB = 1024.0 * 1024 * 1024;
  struct Dir {
    Op op;
    const char *name;
    double bytes_per_s;
  } dirs[] = {{Op::cpy_S2L, "S2L", x ? 58 * GiB : 24e9},
              {Op::cpy_L2S, "L2S", x ? 44 * GiB : 24e9},
              {Op::cpy_S2S, "S2S", x ? 28 * GiB : 12e9}};
  for (const Dir &d : dirs) {
    double previous = 0;
    for (int c : {1, 16, 256}) {  // fp32 tensors of (1, c, 16, 64): 4 KiB per channel
      const dim4 shape{1, c, 16, 64};
      Tensor dst, src;
      const bool dl = d.op == Op::cpy_S2L, sl = d.op == Op::cpy_L2S;
      const Area da = dl ? h.local_area() : h.system_area(h.global, 0, 2);
      const Area sa = sl ? h.local_area() : h.system_area(h.global, 1, 2);
      Tensor *tensors[2] = {&dst, &src};
      const Area *areas[2] = {&da, &sa};
      for (int i = 0; i < 2; ++i) {
        // Start at NPU 0 so that the local tensor of 256 channels fits.
        Tensor &t = *tensors[i];
        t = Tensor{};
        t.local = areas[i]->local;
        t.shape = shape;
        t.addr = areas[i]->lo;
        t.stride = t.local ? aligned_stride(h.chip, 0, shape, 4) : continuous_stride(shape);
        t.pass_null = true;
      }
      SCOPED_TRACE(std::string(d.name) + " channels " + std::to_string(c));
      if (int64_t(c) * 16 * 64 * 4 / h.chip.npu > int64_t(h.chip.lmem) / 2) continue;
      const json j = run_all({{make_cmd(d.op, dst, src, shape, DT_FP32), dst, src, 4, d.name, 0}}, false);
      ASSERT_FALSE(j.is_null());
      const double bytes = double(c) * 16 * 64 * 4;
      EXPECT_EQ(j.at("bytes").at(d.name).get<double>(), bytes);
      EXPECT_GT(total_us(j), previous);
      EXPECT_GE(total_us(j) * 1.0001, bytes / d.bytes_per_s * 1e6) << "faster than the GDMA bandwidth";
      EXPECT_LE(total_us(j), 1.5 * bytes / d.bytes_per_s * 1e6 + 1.0) << "far slower than the GDMA bandwidth";
      previous = total_us(j);
    }
  }
}

GDMA_INSTANTIATE_CHIPS(GdmaStats);

}  // namespace
