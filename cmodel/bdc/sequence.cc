#include "sequence.h"

#include <cstring>

#include "cmodel/hazard.h"
#include "cmodel/numeric/float_convert.h"
#include "elementwise.h"
#include "family_rules.h"
#include "int_arith.h"
#include "tables.h"

namespace cmodel::bdc {
namespace {

// start + i * step wrapped to 32 bits.
int32_t term(int start, int step, int64_t i) {
  return int32_t(uint32_t(uint64_t(int64_t(start) + i * int64_t(step))));
}

// The broadcast forms issue the vendor's static broadcast (BC-3; inferred
// for the sequences): its C is npu_num.
void require_npu_num(const ChipSpec &chip, int npu_num) {
  if (npu_num < 1 || npu_num > chip.npu_num)
    fail(Rule::BC_3, "npu_num {} must be in [1, NPU_NUM = {}]", npu_num, chip.npu_num);
}

// The broadcast forms write one channel into each of npu_num NPUs.
void require_lanes(const ChipSpec &chip, const TensorRef &dst, int npu_num) {
  if (dst.start_npu + npu_num > chip.npu_num)
    fail(Rule::BC_3,
         "dst starts on NPU {} and npu_num = {} would reach NPU {}; the command writes into npu_num consecutive "
         "NPUs from dst's, so start NPU + npu_num must be at most NPU_NUM = {}",
         dst.start_npu, npu_num, dst.start_npu + npu_num - 1, chip.npu_num);
}

// A term in dst's dtype: integers keep its low bits (the adder wraps),
// floats get the int32 term rounded to nearest-even.
void store_term(const TensorRef &dst, uint8_t *p, int32_t value) {
  switch (dst.dtype) {
    case DT_FP32: {
      const float f = numeric::int_to_fp32(value, RM_HALF_TO_EVEN);
      std::memcpy(p, &f, sizeof f);
      return;
    }
    case DT_FP16: case DT_BFP16: {
      const uint16_t h = dst.dtype == DT_FP16 ? numeric::int_to_fp16(value, RM_HALF_TO_EVEN)
                                              : numeric::int_to_bf16(value, RM_HALF_TO_EVEN);
      std::memcpy(p, &h, sizeof h);
      return;
    }
    default: {
      const int64_t v = value;
      store_ints(dst.dtype, p, 1, 1, &v);
    }
  }
}

// Whole sequences along w in every channel (bcast), or term i in channel i
// (distribute: w = 1).
void write_sequence(const TensorRef &dst, int start, int step, bool distribute) {
  const dim4 &s = dst.shape;
  for (int c = 0; c < s.c; ++c) {
    if (distribute)
      store_term(dst, dst.channel(0, c), term(start, step, c));
    else
      for (int w = 0; w < s.w; ++w) store_term(dst, dst.at(0, c, 0, w), term(start, step, w));
  }
}

constexpr std::initializer_list<data_type_t> kSequenceDtypes = {DT_INT8,  DT_UINT8, DT_INT16, DT_UINT16, DT_INT32,
                                                                DT_UINT32, DT_FP16,  DT_BFP16, DT_FP32};

bool overlap(const LocalFootprint &a, const LocalFootprint &b) {
  return (a.npu_mask & b.npu_mask) != 0 && a.lo < b.hi && b.lo < a.hi;
}

}  // namespace

void arithmetic_sequence(Context &ctx, const char *api, SequenceLayout layout, local_addr_t dst_addr, int npu_num,
                         int start, int step, int num, data_type_t dtype) {
  require_dtype("dtype", dtype, kSequenceDtypes);
  if (layout == SequenceLayout::bcast) {
    require_npu_num(ctx.chip, npu_num);
    const TensorRef dst = operand(ctx, "dst", dst_addr, {1, npu_num, 1, num}, nullptr, dtype);
    require_lanes(ctx.chip, dst, npu_num);
    write_sequence(dst, start, step, false);
    book(ctx, api, BdcCost::copy, dst, dtype, {&dst}, {});
    return;
  }
  const dim4 shape = {1, num, 1, 1};
  dim4 compact{};
  if (layout == SequenceLayout::distribute) {
    check_shape("dst", shape, ctx.chip.gdma_shape_limit, Rule::TIU_1);
    compact = compact_stride(ctx.chip, int(dst_addr / ctx.chip.local_mem_bytes), shape);
  }
  const TensorRef dst =
      operand(ctx, "dst", dst_addr, shape, layout == SequenceLayout::distribute ? &compact : nullptr, dtype);
  write_sequence(dst, start, step, true);
  book(ctx, api, BdcCost::copy, dst, dtype, {&dst}, {});
}

void arithmetic_sequence_general(Context &ctx, const char *api, local_addr_t dst_addr, local_addr_t buffer_addr,
                                 int npu_num, int start, int step, int num, data_type_t dtype) {
  require_dtype("dtype", dtype, kSequenceDtypes);
  require_npu_num(ctx.chip, npu_num);
  const TensorRef dst = operand(ctx, "dst", dst_addr, {1, npu_num, 1, num}, nullptr, dtype);
  require_lanes(ctx.chip, dst, npu_num);
  const TensorRef buffer = operand(ctx, "buffer", buffer_addr, {1, npu_num, 1, 1}, nullptr, dtype);
  require_same_npu(dst, "dst", buffer, "buffer");
  const LocalFootprint fd = footprint(dst), fb = footprint(buffer);
  if (overlap(fd, fb))
    fail(ErrorKind::illegal_command,
         "buffer at {:#x} (bytes [{:#x}, {:#x}) of its NPUs) overlaps dst at {:#x} (bytes [{:#x}, {:#x})); the "
         "command uses the buffer as scratch while it writes dst",
         buffer_addr, fb.lo, fb.hi, dst_addr, fd.lo, fd.hi);
  write_sequence(dst, start, step, false);
  const int32_t last = term(start, step, num - 1);
  for (int c = 0; c < npu_num; ++c) store_term(buffer, buffer.channel(0, c), last);
  book(ctx, api, BdcCost::copy, dst, dtype, {&dst, &buffer}, {});
}

void generate_sequence(Context &ctx, const char *api, local_addr_t dst_addr, int num, data_type_t dtype) {
  require_dtype("dtype", dtype,
                {DT_INT8, DT_UINT8, DT_INT16, DT_UINT16, DT_INT32, DT_UINT32, DT_FP16, DT_BFP16, DT_FP32});
  const TensorRef dst = operand(ctx, "dst", dst_addr, {1, 1, 1, num}, nullptr, dtype);
  int64_t exact = 0;  // the largest integer dtype holds exactly (and every one below)
  switch (dtype) {
    case DT_INT8: exact = 127; break;
    case DT_UINT8: exact = 255; break;
    case DT_INT16: exact = 32767; break;
    case DT_FP16: exact = 2048; break;
    case DT_BFP16: exact = 256; break;
    default: exact = int64_t(1) << 24; break;  // fp32; 16-bit unsigned and 32-bit integers hold 65534 anyway
  }
  if (num - 1 > exact)
    fail(ErrorKind::illegal_command,
         "num {} needs the values 0 .. {}, but {} holds the integers exactly only up to {}", num, num - 1,
         dtype_name(dtype), exact);
  with_dtype(dtype, [&]<typename D>(D) {
    auto *p = reinterpret_cast<typename D::Storage *>(dst.channel(0, 0));
    for (int i = 0; i < num; ++i) p[i] = D::store(typename D::Value(i));
  });
  book(ctx, api, BdcCost::copy, dst, dtype, {&dst}, {});
}

void copy_from_static(Context &ctx, const char *api, bool distribute, local_addr_t dst_addr, uint32_t src,
                      int npu_num, int len, data_type_t dtype) {
  const Rule rule = distribute ? Rule::BC_4 : Rule::BC_3;
  if (!distribute) require_npu_num(ctx.chip, npu_num);
  under_rule(rule, [&] { check_dim("len", len); });
  TensorRef dst{};
  if (distribute) {
    // The vendor checker wants dst on NPU 0 and only element-aligned (BC-4):
    // the instruction writes the compact layout (spec §5 item 8), as
    // tpu_bdc_arithmetic_sequence_distribute does.
    if (dst_addr / ctx.chip.local_mem_bytes != 0)
      fail(rule, "dst local address {:#x} is on NPU {}; the distribute from static memory writes from NPU 0", dst_addr,
           dst_addr / ctx.chip.local_mem_bytes);
    const dim4 shape = {1, len, 1, 1};
    const dim4 compact = compact_stride(ctx.chip, 0, shape);
    dst = operand(ctx, "dst", dst_addr, shape, &compact, dtype);
  } else {
    require_aligned_start(ctx, rule, "dst", dst_addr);
    dst = operand(ctx, "dst", dst_addr, {1, npu_num, 1, len}, nullptr, dtype);
    require_lanes(ctx.chip, dst, npu_num);
  }
  const uint64_t bytes = uint64_t(len) * dst.esize;
  // Kernels name static memory by offset or, as vendor code does, by
  // STATIC_MEM_START_ADDR + offset; the start lies above the size, so the
  // two forms cannot be confused.
  const bool absolute = src >= ctx.chip.static_mem_start;
  const uint64_t offset = absolute ? src - ctx.chip.static_mem_start : src;
  if (offset + bytes > ctx.chip.static_mem_bytes)
    fail(ErrorKind::memory_fault,
         "src static range [{:#x}, {:#x}) ({} elements of {}) is outside the static memory of {}{}", src,
         src + bytes, len, dtype_name(dtype), Bytes{ctx.chip.static_mem_bytes},
         absolute ? fmt::format(" at [{:#x}, {:#x})", ctx.chip.static_mem_start,
                                uint64_t(ctx.chip.static_mem_start) + ctx.chip.static_mem_bytes)
                  : std::string());
  if (offset % ctx.chip.eu_bytes != 0)
    fail(rule, "src static address {:#x} is at offset {:#x} of static memory, not a multiple of {} bytes (ALIGN_BYTES)",
         src, offset, ctx.chip.eu_bytes);
  install_static_tables(ctx.memory);
  const uint8_t *from = ctx.memory.static_mem(offset, bytes);
  if (distribute) {
    for (int c = 0; c < len; ++c) std::memcpy(dst.channel(0, c), from + int64_t(c) * dst.esize, size_t(dst.esize));
  } else {
    for (int c = 0; c < npu_num; ++c) std::memcpy(dst.channel(0, c), from, bytes);
  }
  book(ctx, api, BdcCost::copy, dst, dtype, {&dst}, {});
}

}  // namespace cmodel::bdc
