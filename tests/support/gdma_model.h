// gdma_model.h: a host-side reference model of the GDMA for the gdma_*_test
// programs, written from shared/spec/tpu-kernel-api.md (§1 chip figures, §3
// local-memory layout, family D semantics), independently of cmodel/gdma.
//
// The model keeps a byte-for-byte mirror of the whole local memory
// (NPU_NUM x LOCAL_MEM_SIZE, starting as 0xFF poison), of one global buffer
// and of the whole L2 SRAM. A test writes random source data into a mirror and
// the emulator alike, runs one kernel issuing GDMA commands, applies the same
// commands to the mirrors, and compares every byte of every mirror with the
// emulator's memory, so bytes outside the destination must be untouched too.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "cmodel_host.h"
#include "support/local_image.h"
#include "support/test_support.h"
#include "tpu_kernel.h"

namespace gdma_model {

// ---- chip figures (spec §1) --------------------------------------------------
struct Chip {
  const char *name;
  int npu;         // NPU_NUM
  uint32_t lmem;   // LOCAL_MEM_SIZE, bytes per NPU
  int eu_bytes;    // EU_BYTES: eu_num(dtype) = eu_bytes / sizeof(dtype)
};

inline Chip chip_facts(std::string_view name) {
  if (name == "bm1684x") return {"bm1684x", 64, 1u << 18, 64};
  return {"bm1688", 32, 1u << 17, 16};
}

inline int64_t div_up(int64_t a, int64_t b) { return (a + b - 1) / b; }
inline int64_t align_up(int64_t a, int64_t b) { return div_up(a, b) * b; }

inline int dtype_size(data_type_t dt) {
  switch (dt) {
    case DT_INT8:
    case DT_UINT8: return 1;
    case DT_FP16:
    case DT_BFP16:
    case DT_INT16:
    case DT_UINT16: return 2;
    default: return 4;
  }
}

inline const char *dtype_label(data_type_t dt) {
  switch (dt) {
    case DT_INT8: return "INT8";
    case DT_UINT8: return "UINT8";
    case DT_FP16: return "FP16";
    case DT_BFP16: return "BFP16";
    case DT_INT16: return "INT16";
    case DT_UINT16: return "UINT16";
    case DT_FP32: return "FP32";
    case DT_INT32: return "INT32";
    case DT_UINT32: return "UINT32";
    default: return "?";
  }
}

inline constexpr data_type_t kDtypes[] = {DT_INT8,  DT_UINT8, DT_FP16,  DT_BFP16, DT_INT16,
                                          DT_UINT16, DT_FP32,  DT_INT32, DT_UINT32};

// ---- standard strides (spec §3.3), in elements ---------------------------------
inline dim4 aligned_stride(const Chip &chip, int start_npu, const dim4 &s, int sz) {
  const int eu = chip.eu_bytes / sz;
  dim4 r;
  r.w = 1;
  r.h = s.w;
  r.c = int(align_up(int64_t(s.h) * s.w, eu));
  r.n = int(r.c * div_up(start_npu + s.c, chip.npu));
  return r;
}
inline dim4 compact_stride(const Chip &chip, int start_npu, const dim4 &s) {
  dim4 r;
  r.w = 1;
  r.h = s.w;
  r.c = s.h * s.w;
  r.n = int(r.c * div_up(start_npu + s.c, chip.npu));
  return r;
}
inline dim4 continuous_stride(const dim4 &s) { return {s.c * s.h * s.w, s.h * s.w, s.w, 1}; }

inline int64_t count(const dim4 &s) { return int64_t(s.n) * s.c * s.h * s.w; }

inline std::string str(const dim4 &d) {
  return "(" + std::to_string(d.n) + "," + std::to_string(d.c) + "," + std::to_string(d.h) + "," +
         std::to_string(d.w) + ")";
}

template <typename F>
void for_each_index(const dim4 &s, F &&f) {
  for (int n = 0; n < s.n; ++n)
    for (int c = 0; c < s.c; ++c)
      for (int h = 0; h < s.h; ++h)
        for (int w = 0; w < s.w; ++w) f(n, c, h, w);
}

// ---- tensors -------------------------------------------------------------------
struct Tensor {
  bool local = false;
  uint64_t addr = 0;       // unified local address (npu * LOCAL_MEM_SIZE + offset) or system address
  dim4 shape{1, 1, 1, 1};  // the shape this end is indexed with
  dim4 stride{};           // where its elements really live (defaults resolved)
  bool pass_null = false;  // the kernel passes NULL for this stride
};

// Where a tensor may be put: a range of per-NPU offsets (local) or of
// system addresses.
struct Area {
  bool local;
  uint64_t lo, hi;
};

enum class Layout {
  standard,   // NULL stride: aligned local / continuous system
  padded,     // free layout, non-overlapping, random gaps and dim order
  broadcast,  // free layout with random zero strides (sources only)
  compact,    // compact local layout (APIs without stride arguments)
  given,      // the stride passed to place()
};

// ---- the commands a test kernel issues -------------------------------------------
enum class Op {
  cpy_S2L, cpy_L2S, cpy_L2L, cpy_S2S,
  general_cpy_S2L, general_cpy_L2S,
  nc_trans_S2L, nc_trans_L2S, nc_trans_L2L, nc_trans_S2S,
  cw_trans_S2L, cw_trans_L2S, cw_trans_L2L, cw_trans_S2S,
  compact_S2L, compact_L2S, compact_nc_trans_S2L, compact_nc_trans_L2S,
  matrix_S2L, matrix_L2S, matrix_trans_S2L, matrix_trans_L2S,
  vector_S2L, vector_L2S,
  set_C_system, set_C_local,
  system_cpy,
  channel_bcast_S2L, channel_bcast_L2L,
  reverse_S2S, reverse_S2L, reverse_L2S, reverse_L2L,
};

struct Cmd {
  Op op;
  uint64_t dst = 0, src = 0;
  dim4 shape{};   // shape / dst_shape
  dim4 shape2{};  // src_shape (general copies)
  dim4 dst_stride{}, src_stride{};
  bool dst_null = true, src_null = true;
  data_type_t dtype = DT_INT8;
  int axis = 0;
  int rows = 0, cols = 0, cpc = 0, row_stride = 0;  // matrix / vector (cols = len, cpc = len_per_channel)
  unsigned count = 0;                               // system_cpy
  scalar_t C{};                                     // set_C
};

inline constexpr int kMaxCmds = 16;
struct Batch {
  int count = 0;
  Cmd cmd[kMaxCmds];
  void add(const Cmd &c) {
    if (count == kMaxCmds) throw std::logic_error("Batch is full");
    cmd[count++] = c;
  }
};

// The kernel of every GDMA test: issues the commands of a Batch in order.
inline void batch_kernel(const void *arg) {
  const Batch &b = *static_cast<const Batch *>(arg);
  for (int i = 0; i < b.count; ++i) {
    const Cmd &k = b.cmd[i];
    const dim4 *ds = k.dst_null ? nullptr : &k.dst_stride;
    const dim4 *ss = k.src_null ? nullptr : &k.src_stride;
    const local_addr_t ld = local_addr_t(k.dst), ls = local_addr_t(k.src);
    const dim4 *sh = &k.shape;
    switch (k.op) {
      case Op::cpy_S2L: tpu_gdma_cpy_S2L(ld, k.src, sh, ds, ss, k.dtype); break;
      case Op::cpy_L2S: tpu_gdma_cpy_L2S(k.dst, ls, sh, ds, ss, k.dtype); break;
      case Op::cpy_L2L: tpu_gdma_cpy_L2L(ld, ls, sh, ds, ss, k.dtype); break;
      case Op::cpy_S2S: tpu_gdma_cpy_S2S(k.dst, k.src, sh, ds, ss, k.dtype); break;
      case Op::general_cpy_S2L: tpu_gdma_general_cpy_S2L(ld, k.src, sh, &k.shape2, ds, ss, k.dtype); break;
      case Op::general_cpy_L2S: tpu_gdma_general_cpy_L2S(k.dst, ls, sh, &k.shape2, ds, ss, k.dtype); break;
      case Op::nc_trans_S2L: tpu_gdma_cpy_nc_trans_S2L(ld, k.src, sh, ds, ss, k.dtype); break;
      case Op::nc_trans_L2S: tpu_gdma_cpy_nc_trans_L2S(k.dst, ls, sh, ds, ss, k.dtype); break;
      case Op::nc_trans_L2L: tpu_gdma_cpy_nc_trans_L2L(ld, ls, sh, ds, ss, k.dtype); break;
      case Op::nc_trans_S2S: tpu_gdma_cpy_nc_trans_S2S(k.dst, k.src, sh, ds, ss, k.dtype); break;
      case Op::cw_trans_S2L: tpu_gdma_cpy_cw_trans_S2L(ld, k.src, sh, ds, ss, k.dtype); break;
      case Op::cw_trans_L2S: tpu_gdma_cpy_cw_trans_L2S(k.dst, ls, sh, ds, ss, k.dtype); break;
      case Op::cw_trans_L2L: tpu_gdma_cpy_cw_trans_L2L(ld, ls, sh, ds, ss, k.dtype); break;
      case Op::cw_trans_S2S: tpu_gdma_cpy_cw_trans_S2S(k.dst, k.src, sh, ds, ss, k.dtype); break;
      case Op::compact_S2L: tpu_gdma_compact_S2L(ld, k.src, sh, k.dtype); break;
      case Op::compact_L2S: tpu_gdma_compact_L2S(k.dst, ls, sh, k.dtype); break;
      case Op::compact_nc_trans_S2L: tpu_gdma_compact_nc_trans_S2L(ld, k.src, sh, k.dtype); break;
      case Op::compact_nc_trans_L2S: tpu_gdma_compact_nc_trans_L2S(k.dst, ls, sh, k.dtype); break;
      case Op::matrix_S2L: tpu_gdma_matrix_S2L(ld, k.src, k.rows, k.cols, k.cpc, k.row_stride, k.dtype); break;
      case Op::matrix_L2S: tpu_gdma_matrix_L2S(k.dst, ls, k.rows, k.cols, k.cpc, k.row_stride, k.dtype); break;
      case Op::matrix_trans_S2L:
        tpu_gdma_matrix_trans_S2L(ld, k.src, k.rows, k.cols, k.cpc, k.row_stride, k.dtype);
        break;
      case Op::matrix_trans_L2S:
        tpu_gdma_matrix_trans_L2S(k.dst, ls, k.rows, k.cols, k.cpc, k.row_stride, k.dtype);
        break;
      case Op::vector_S2L: tpu_gdma_vector_S2L(ld, k.src, k.cols, k.cpc, k.dtype); break;
      case Op::vector_L2S: tpu_gdma_vector_L2S(k.dst, ls, k.cols, k.cpc, k.dtype); break;
      case Op::set_C_system: tpu_gdma_set_C_system(k.dst, k.C, sh, ds, k.dtype); break;
      case Op::set_C_local: tpu_gdma_set_C_local(ld, k.C, sh, ds, k.dtype); break;
      case Op::system_cpy: tpu_gdma_system_cpy(k.dst, k.src, k.count, k.dtype); break;
      case Op::channel_bcast_S2L: tpu_gdma_channel_bcast_S2L(ld, k.src, sh, ds, ss, k.dtype); break;
      case Op::channel_bcast_L2L: tpu_gdma_channel_bcast_L2L(ld, ls, sh, ds, ss, k.dtype); break;
      case Op::reverse_S2S: tpu_gdma_reverse_S2S(k.dst, k.src, sh, ds, ss, k.axis, k.dtype); break;
      case Op::reverse_S2L: tpu_gdma_reverse_S2L(ld, k.src, sh, ds, ss, k.axis, k.dtype); break;
      case Op::reverse_L2S: tpu_gdma_reverse_L2S(k.dst, ls, sh, ds, ss, k.axis, k.dtype); break;
      case Op::reverse_L2L: tpu_gdma_reverse_L2L(ld, ls, sh, ds, ss, k.axis, k.dtype); break;
    }
  }
}

// Copies the given stride fields of two placed tensors into a command.
inline Cmd make_cmd(Op op, const Tensor &dst, const Tensor &src, const dim4 &shape, data_type_t dtype) {
  Cmd c;
  c.op = op;
  c.dst = dst.addr;
  c.src = src.addr;
  c.shape = shape;
  c.dst_stride = dst.stride;
  c.src_stride = src.stride;
  c.dst_null = dst.pass_null;
  c.src_null = src.pass_null;
  c.dtype = dtype;
  return c;
}

// ---- the harness: mirrors, placement, random data, comparison ----------------------
class Harness {
 public:
  struct Region {
    const char *name = "";
    uint64_t addr = 0, bytes = 0;
    std::vector<uint8_t> mirror;
    uint64_t dirty_lo = UINT64_MAX, dirty_hi = 0;
  };

  static constexpr uint64_t kGlobalBytes = 2u << 20;

  Chip chip{};
  std::vector<uint8_t> local;     // model of the whole local memory
  Region global, l2;
  std::mt19937_64 *rng = nullptr;

  // Opens the chip and sets the mirrors up; local memory must be all poison.
  void open(const char *name) {
    chip = chip_facts(name);
    ASSERT_EQ(cmodel_open(name), 0) << cmodel_last_error();
    ASSERT_EQ(tpu_npu_num(), chip.npu);
    ASSERT_EQ(tpu_local_mem_size_per_npu(), int(chip.lmem));
    ASSERT_EQ(tpu_eu_num(DT_INT8), chip.eu_bytes);
    local.assign(size_t(chip.npu) * chip.lmem, 0xFF);
    ASSERT_TRUE(local_image::read() == local) << "local memory does not start as 0xFF poison";

    global.name = "global";
    global.bytes = kGlobalBytes;
    global.addr = cmodel_global_alloc(kGlobalBytes);
    ASSERT_NE(global.addr, 0u) << cmodel_last_error();
    l2.name = "L2 SRAM";
    l2.addr = tpu_l2_sram_get_start_addr();
    l2.bytes = uint64_t(tpu_l2_sram_size());
    ASSERT_GT(l2.bytes, 0u);
    global.mirror.assign(global.bytes, 0);
    l2.mirror.assign(l2.bytes, 0);
    ASSERT_EQ(cmodel_global_read(l2.mirror.data(), l2.addr, l2.bytes), 0) << cmodel_last_error();
  }

  // Starts a random test: random contents for the global buffer and L2 SRAM.
  void begin(test::Seeded &seeded) {
    rng = &seeded.rng();
    for (Region *r : {&global, &l2}) {
      for (auto &b : r->mirror) b = uint8_t((*rng)());
      ASSERT_EQ(cmodel_global_write(r->addr, r->mirror.data(), r->bytes), 0) << cmodel_last_error();
    }
  }

  // ---- random helpers ----
  int uniform(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(*rng); }
  bool chance(double p) { return std::uniform_real_distribution<double>(0, 1)(*rng) < p; }
  data_type_t random_dtype() { return kDtypes[uniform(0, int(std::size(kDtypes)) - 1)]; }

  // A random 4-D shape: channels below, at and above NPU_NUM, h*w mostly not
  // a multiple of EU_NUM.
  dim4 random_shape(bool big_n = false) {
    dim4 s;
    s.n = uniform(1, 3);
    const double r = std::uniform_real_distribution<double>(0, 1)(*rng);
    s.c = r < 0.3 ? uniform(1, 8) : r < 0.7 ? uniform(1, chip.npu + 8) : uniform(chip.npu, 2 * chip.npu + 5);
    s.h = uniform(1, 6);
    s.w = uniform(1, 12);
    if (chance(0.15)) {
      s.h = uniform(1, 3);
      s.w = uniform(13, 70);
    }
    if (big_n && chance(0.6)) {
      s.n = uniform(2, chip.npu + 8);
      s.c = uniform(1, 12);
      s.h = uniform(1, 4);
    }
    return s;
  }

  // Strides for `layout` (padded or broadcast) of a tensor whose channel
  // dimension spans `c_extent` positions (C for system tensors, rows per NPU
  // for local ones). w stays innermost and at most 128 bytes.
  dim4 random_stride(const dim4 &shape, int c_extent, int sz, bool allow_zero) {
    const int max_ws = 128 / sz;
    int ws = 1;
    const double r = std::uniform_real_distribution<double>(0, 1)(*rng);
    if (r < 0.2) ws = uniform(2, std::min(4, max_ws));
    else if (r < 0.3) ws = uniform(1, max_ws);
    if (allow_zero && chance(0.2)) ws = 0;
    int64_t cur = int64_t(shape.w - 1) * ws + 1;
    int extent[3] = {shape.n, c_extent, shape.h};
    int stride[3] = {0, 0, 0};
    int order[3] = {0, 1, 2};
    std::shuffle(order, order + 3, *rng);
    if (chance(0.5)) std::sort(order, order + 3, [](int a, int b) { return a > b; });  // plain n,c,h nesting
    for (int d : order) {
      int64_t s = cur + (chance(0.5) ? 0 : uniform(1, 6));
      if (allow_zero && chance(0.2)) s = 0;
      stride[d] = int(s);
      cur += int64_t(extent[d] - 1) * s;
    }
    return {stride[0], stride[1], stride[2], ws};
  }

  // Bytes spanned per NPU (local) or in total (system) by a placed tensor.
  int64_t footprint(const Tensor &t, int start_npu, int sz) const {
    const int c_extent = t.local ? int((start_npu + t.shape.c - 1) / chip.npu) + 1 : t.shape.c;
    const int64_t last = int64_t(t.shape.n - 1) * t.stride.n + int64_t(c_extent - 1) * t.stride.c +
                         int64_t(t.shape.h - 1) * t.stride.h + int64_t(t.shape.w - 1) * t.stride.w;
    return last * sz + sz;
  }

  Area local_area(int part = 0, int parts = 1) const {
    const uint64_t size = chip.lmem / parts;
    return {true, size * part, size * (part + 1)};
  }
  Area system_area(const Region &r, int part = 0, int parts = 1) const {
    const uint64_t size = r.bytes / parts / 512 * 512;
    return {false, r.addr + size * part, r.addr + size * (part + 1)};
  }
  const Region &random_region() { return chance(0.5) ? global : l2; }

  // Puts a tensor of `shape` somewhere in `area`; false if it cannot fit.
  bool place(Tensor &t, const dim4 &shape, int sz, const Area &area, Layout layout, const dim4 *given = nullptr) {
    t = Tensor{};
    t.local = area.local;
    t.shape = shape;
    const int start = area.local ? uniform(0, chip.npu - 1) : 0;
    const int c_extent = area.local ? int((start + shape.c - 1) / chip.npu) + 1 : shape.c;
    switch (layout) {
      case Layout::standard:
        t.pass_null = true;
        t.stride = area.local ? aligned_stride(chip, start, shape, sz) : continuous_stride(shape);
        break;
      case Layout::padded: t.stride = random_stride(shape, c_extent, sz, false); break;
      case Layout::broadcast: t.stride = random_stride(shape, c_extent, sz, true); break;
      case Layout::compact:
        t.pass_null = true;
        t.stride = area.local ? compact_stride(chip, start, shape) : continuous_stride(shape);
        break;
      case Layout::given: t.stride = *given; break;
    }
    const int64_t bytes = footprint(t, start, sz);
    const int64_t room = int64_t(area.hi - area.lo);
    if (bytes > room) return false;
    // Offsets: multiples of the element size, often of 64 bytes (EU aligned).
    const int unit = chance(0.5) ? 64 : sz;
    const int64_t slots = (room - bytes) / unit;
    const uint64_t pos = area.lo + uint64_t(std::uniform_int_distribution<int64_t>(0, slots)(*rng)) * unit;
    t.addr = area.local ? uint64_t(start) * chip.lmem + pos : pos;
    return true;
  }

  // Areas for a destination and a source in the given spaces that never overlap.
  void pick_areas(bool dst_local, bool src_local, Area &dst, Area &src) {
    const int first = uniform(0, 1);
    if (dst_local && src_local) {
      dst = local_area(first, 2);
      src = local_area(1 - first, 2);
    } else if (!dst_local && !src_local) {
      const Region &rd = random_region();
      const Region &rs = random_region();
      if (&rd == &rs) {
        dst = system_area(rd, first, 2);
        src = system_area(rs, 1 - first, 2);
      } else {
        dst = system_area(rd);
        src = system_area(rs);
      }
    } else {
      dst = dst_local ? local_area() : system_area(random_region());
      src = src_local ? local_area() : system_area(random_region());
    }
  }

  Layout random_dst_layout() { return chance(0.4) ? Layout::standard : Layout::padded; }
  Layout random_src_layout() {
    const double r = std::uniform_real_distribution<double>(0, 1)(*rng);
    return r < 0.3 ? Layout::standard : r < 0.65 ? Layout::padded : Layout::broadcast;
  }

  // ---- model memory access ----
  uint8_t *sys(uint64_t addr, uint64_t bytes) {
    for (Region *r : {&global, &l2}) {
      if (addr >= r->addr && addr + bytes <= r->addr + r->bytes) {
        const uint64_t off = addr - r->addr;
        r->dirty_lo = std::min(r->dirty_lo, off);
        r->dirty_hi = std::max(r->dirty_hi, off + bytes);
        return r->mirror.data() + off;
      }
    }
    throw std::logic_error("test bug: system address outside the modelled buffers");
  }

  // Index into `local` of an element (spec §3.2), or into system memory.
  int64_t local_index(const Tensor &t, int n, int c, int h, int w, int sz) const {
    const int start = int(t.addr / chip.lmem);
    const int64_t off = int64_t(t.addr % chip.lmem);
    const int npu = (start + c) % chip.npu;
    const int row = (start + c) / chip.npu;
    const int64_t e = int64_t(n) * t.stride.n + int64_t(row) * t.stride.c + int64_t(h) * t.stride.h +
                      int64_t(w) * t.stride.w;
    const int64_t byte = off + e * sz;
    if (byte < 0 || byte + sz > int64_t(chip.lmem)) throw std::logic_error("test bug: local element outside its NPU");
    return int64_t(npu) * chip.lmem + byte;
  }
  uint8_t *at(const Tensor &t, int n, int c, int h, int w, int sz) {
    if (t.local) return local.data() + local_index(t, n, c, h, w, sz);
    const int64_t e = int64_t(n) * t.stride.n + int64_t(c) * t.stride.c + int64_t(h) * t.stride.h +
                      int64_t(w) * t.stride.w;
    return sys(t.addr + uint64_t(e * sz), sz);
  }

  // Random bytes for every element of t, in the model and in the emulator.
  void randomize(const Tensor &t, int sz) {
    for_each_index(t.shape, [&](int n, int c, int h, int w) {
      uint8_t *p = at(t, n, c, h, w, sz);
      for (int i = 0; i < sz; ++i) p[i] = uint8_t((*rng)());
      if (t.local) std::memcpy(local_image::at(uint64_t(p - local.data())), p, sz);
    });
    flush_system();
  }
  void flush_system() {
    for (Region *r : {&global, &l2}) {
      if (r->dirty_lo < r->dirty_hi) {
        ASSERT_EQ(cmodel_global_write(r->addr + r->dirty_lo, r->mirror.data() + r->dirty_lo,
                                      r->dirty_hi - r->dirty_lo),
                  0)
            << cmodel_last_error();
      }
      r->dirty_lo = UINT64_MAX;
      r->dirty_hi = 0;
    }
  }
  void forget_dirty() {
    for (Region *r : {&global, &l2}) {
      r->dirty_lo = UINT64_MAX;
      r->dirty_hi = 0;
    }
  }

  // Runs the batch; the kernel must finish without error.
  bool run(const Batch &b) {
    const int status = cmodel_run(batch_kernel, &b);
    EXPECT_EQ(status, 0) << cmodel_last_error();
    return status == 0;
  }
  bool run(const Cmd &c) {
    Batch b;
    b.add(c);
    return run(b);
  }

  // Compares every byte of local memory, the global buffer and L2 SRAM with
  // the model; reports the first differences and resynchronises the model.
  void verify() {
    forget_dirty();
    compare("local memory", local_image::read().data(), local, true);
    for (Region *r : {&global, &l2}) {
      std::vector<uint8_t> real(r->bytes);
      ASSERT_EQ(cmodel_global_read(real.data(), r->addr, r->bytes), 0) << cmodel_last_error();
      compare(r->name, real.data(), r->mirror, false, r->addr);
    }
  }

  std::string where(const Tensor &t) const {
    char buf[160];
    if (t.local)
      std::snprintf(buf, sizeof buf, "local NPU %u + %#x", unsigned(t.addr / chip.lmem), unsigned(t.addr % chip.lmem));
    else
      std::snprintf(buf, sizeof buf, "%s %#llx", t.addr >= global.addr && t.addr < global.addr + global.bytes ? "global" : "L2",
                    static_cast<unsigned long long>(t.addr));
    return std::string(buf) + " shape " + str(t.shape) + " stride " + str(t.stride) + (t.pass_null ? " (NULL)" : "");
  }

 private:
  void compare(const char *what, const uint8_t *real, std::vector<uint8_t> &model, bool is_local, uint64_t base = 0) {
    if (std::memcmp(real, model.data(), model.size()) == 0) return;
    size_t diffs = 0;
    std::string first;
    for (size_t i = 0; i < model.size(); ++i) {
      if (real[i] == model[i]) continue;
      if (++diffs <= 8) {
        char buf[128];
        if (is_local)
          std::snprintf(buf, sizeof buf, "\n  NPU %zu offset %#zx: expected %02x, emulator %02x", i / chip.lmem,
                        i % chip.lmem, model[i], real[i]);
        else
          std::snprintf(buf, sizeof buf, "\n  address %#llx: expected %02x, emulator %02x",
                        static_cast<unsigned long long>(base + i), model[i], real[i]);
        first += buf;
      }
    }
    ADD_FAILURE() << what << ": " << diffs << " bytes differ from the reference model" << first;
    std::memcpy(model.data(), real, model.size());
  }
};

// ---- reference semantics of the tensor moves ------------------------------------------
// Every destination element is written once; sources never overlap destinations.
inline void ref_copy(Harness &m, const Tensor &dst, const Tensor &src, int sz) {
  for_each_index(dst.shape, [&](int n, int c, int h, int w) {
    std::memcpy(m.at(dst, n, c, h, w, sz), m.at(src, n, c, h, w, sz), sz);
  });
}
// Element i (row-major over n, c, h, w) of dst = element i of src.
inline void ref_general(Harness &m, const Tensor &dst, const Tensor &src, int sz) {
  const dim4 &s = src.shape;
  int64_t i = 0;
  for_each_index(dst.shape, [&](int n, int c, int h, int w) {
    const int64_t k = i++;
    const int sw = int(k % s.w), sh = int(k / s.w % s.h), sc = int(k / s.w / s.h % s.c), sn = int(k / s.w / s.h / s.c);
    std::memcpy(m.at(dst, n, c, h, w, sz), m.at(src, sn, sc, sh, sw, sz), sz);
  });
}
// dst(n,c,h,w) = src(c,n,h,w).
inline void ref_nc_trans(Harness &m, const Tensor &dst, const Tensor &src, int sz) {
  for_each_index(dst.shape, [&](int n, int c, int h, int w) {
    std::memcpy(m.at(dst, n, c, h, w, sz), m.at(src, c, n, h, w, sz), sz);
  });
}
// dst(n,c,h,w) = src(n,w,h,c).
inline void ref_cw_trans(Harness &m, const Tensor &dst, const Tensor &src, int sz) {
  for_each_index(dst.shape, [&](int n, int c, int h, int w) {
    std::memcpy(m.at(dst, n, c, h, w, sz), m.at(src, n, w, h, c, sz), sz);
  });
}
// dst(n,c,h,w) = src(n,0,h,w).
inline void ref_channel_bcast(Harness &m, const Tensor &dst, const Tensor &src, int sz) {
  for_each_index(dst.shape, [&](int n, int c, int h, int w) {
    std::memcpy(m.at(dst, n, c, h, w, sz), m.at(src, n, 0, h, w, sz), sz);
  });
}
// dst = src with the order along axis (0 n, 1 c, 2 h, 3 w) reversed.
inline void ref_reverse(Harness &m, const Tensor &dst, const Tensor &src, int axis, int sz) {
  const dim4 &s = dst.shape;
  for_each_index(s, [&](int n, int c, int h, int w) {
    int i[4] = {n, c, h, w};
    const int e[4] = {s.n, s.c, s.h, s.w};
    i[axis] = e[axis] - 1 - i[axis];
    std::memcpy(m.at(dst, n, c, h, w, sz), m.at(src, i[0], i[1], i[2], i[3], sz), sz);
  });
}
// Every element of dst = the low sz bytes of C (little endian).
inline void ref_fill(Harness &m, const Tensor &dst, uint32_t value, int sz) {
  uint8_t bytes[4];
  for (int i = 0; i < 4; ++i) bytes[i] = uint8_t(value >> (8 * i));
  for_each_index(dst.shape, [&](int n, int c, int h, int w) { std::memcpy(m.at(dst, n, c, h, w, sz), bytes, sz); });
}

inline const char *op_name(Op op) {
  static const char *const names[] = {
      "tpu_gdma_cpy_S2L", "tpu_gdma_cpy_L2S", "tpu_gdma_cpy_L2L", "tpu_gdma_cpy_S2S",
      "tpu_gdma_general_cpy_S2L", "tpu_gdma_general_cpy_L2S",
      "tpu_gdma_cpy_nc_trans_S2L", "tpu_gdma_cpy_nc_trans_L2S", "tpu_gdma_cpy_nc_trans_L2L", "tpu_gdma_cpy_nc_trans_S2S",
      "tpu_gdma_cpy_cw_trans_S2L", "tpu_gdma_cpy_cw_trans_L2S", "tpu_gdma_cpy_cw_trans_L2L", "tpu_gdma_cpy_cw_trans_S2S",
      "tpu_gdma_compact_S2L", "tpu_gdma_compact_L2S", "tpu_gdma_compact_nc_trans_S2L", "tpu_gdma_compact_nc_trans_L2S",
      "tpu_gdma_matrix_S2L", "tpu_gdma_matrix_L2S", "tpu_gdma_matrix_trans_S2L", "tpu_gdma_matrix_trans_L2S",
      "tpu_gdma_vector_S2L", "tpu_gdma_vector_L2S",
      "tpu_gdma_set_C_system", "tpu_gdma_set_C_local",
      "tpu_gdma_system_cpy",
      "tpu_gdma_channel_bcast_S2L", "tpu_gdma_channel_bcast_L2L",
      "tpu_gdma_reverse_S2S", "tpu_gdma_reverse_S2L", "tpu_gdma_reverse_L2S", "tpu_gdma_reverse_L2L",
  };
  return names[int(op)];
}

// One randomised family of a dst <- src tensor move.
struct MoveCase {
  Op op;
  bool dst_local, src_local;
  // Shape the source is indexed with, from the destination shape (default: the same).
  std::function<dim4(const dim4 &)> src_shape;
  std::function<void(Harness &, const Tensor &, const Tensor &, int)> ref;
  bool big_n = false;                         // shapes with many batches (N <-> C transposes)
  std::optional<Layout> dst_layout, src_layout;  // forced layouts (compact APIs)
  int axis = 0;                                  // reverse
  // Further conditions a placed destination must meet (the channel
  // broadcast's start NPU + C <= NPU_NUM, DMA-14).
  std::function<bool(const Harness &, const Tensor &)> dst_ok;
};

inline MoveCase move_case(Op op, bool dst_local, bool src_local, std::function<dim4(const dim4 &)> src_shape,
                          std::function<void(Harness &, const Tensor &, const Tensor &, int)> ref) {
  MoveCase mc;
  mc.op = op;
  mc.dst_local = dst_local;
  mc.src_local = src_local;
  mc.src_shape = std::move(src_shape);
  mc.ref = std::move(ref);
  return mc;
}

// Runs `iters` random instances of a move: random dtype, shape, endpoints
// (L2 SRAM or global for system ends, any start NPU for local ones), layouts
// and strides; compares all memories with the model after each. Stops at
// the first failing instance.
inline void run_move_cases(Harness &h, const MoveCase &mc, int iters) {
  for (int it = 0; it < iters; ++it) {
    const data_type_t dt = h.random_dtype();
    const int sz = dtype_size(dt);
    Tensor dst, src;
    dim4 shape{};
    for (int tries = 0;; ++tries) {
      ASSERT_LT(tries, 10000) << "test bug: cannot place the tensors";
      Area da, sa;
      h.pick_areas(mc.dst_local, mc.src_local, da, sa);
      shape = h.random_shape(mc.big_n);
      const dim4 sshape = mc.src_shape ? mc.src_shape(shape) : shape;
      const Layout dl = mc.dst_layout ? *mc.dst_layout : h.random_dst_layout();
      const Layout sl = mc.src_layout ? *mc.src_layout : h.random_src_layout();
      if (h.place(dst, shape, sz, da, dl) && h.place(src, sshape, sz, sa, sl) && (!mc.dst_ok || mc.dst_ok(h, dst)))
        break;
    }
    h.randomize(src, sz);
    Cmd cmd = make_cmd(mc.op, dst, src, shape, dt);
    cmd.axis = mc.axis;
    cmd.shape2 = src.shape;
    SCOPED_TRACE(std::string(op_name(mc.op)) + " case " + std::to_string(it) + " dtype " + dtype_label(dt) +
                 (mc.op >= Op::reverse_S2S ? " axis " + std::to_string(mc.axis) : std::string()) +
                 "\n  dst " + h.where(dst) + "\n  src " + h.where(src));
    if (!h.run(cmd)) return;
    mc.ref(h, dst, src, sz);
    h.verify();
    if (::testing::Test::HasFailure()) return;
  }
}

// The chips every GDMA test runs on.
class GdmaFixture : public ::testing::TestWithParam<const char *> {
 protected:
  void SetUp() override { h.open(GetParam()); }
  void TearDown() override { cmodel_close(); }
  Harness h;
};

inline std::string chip_param_name(const ::testing::TestParamInfo<const char *> &info) { return info.param; }

}  // namespace gdma_model

#define GDMA_INSTANTIATE_CHIPS(suite)                                                                  \
  INSTANTIATE_TEST_SUITE_P(Chips, suite, ::testing::Values("bm1684x", "bm1688"), \
                           ::gdma_model::chip_param_name)
