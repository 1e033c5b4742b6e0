#include "taylor.h"

#include <cstring>
#include <vector>

#include "cmodel/hazard.h"
#include "elementwise.h"
#include "movement.h"

namespace cmodel::bdc {
namespace {

// A [1, NPU_NUM, 1, len] per-lane table on NPU 0.
TensorRef lane_table(Context &ctx, const char *param, local_addr_t addr, int len, data_type_t dtype,
                     const char *what) {
  const TensorRef t = operand(ctx, param, addr, {1, ctx.chip.npu_num, 1, len}, nullptr, dtype);
  if (t.start_npu != 0)
    fail(ErrorKind::illegal_command,
         "{} {:#x} is on NPU {}; the {} must start on NPU 0 (a [1, {}, 1, {}] {} tensor: {} values at the same "
         "offset of every NPU)",
         param, addr, t.start_npu, what, ctx.chip.npu_num, len, dtype_name(dtype), len);
  return t;
}

// The coefficients of fp_taylor: `num` values at one offset of every NPU,
// read as a [1, NPU_NUM, 1, num] tensor from NPU 0 at that offset. The
// vendor checker wants the address itself on dst's NPU (SFU-3); the
// tpu-kernel doc says NPU 0, which agrees only when dst starts there (spec
// §5 item 7): the checker says what the chip refuses. Aligned (SFU-4).
TensorRef coefficient_table(Context &ctx, local_addr_t addr, int num, data_type_t dtype, const TensorRef &dst) {
  const int npu = int(addr / ctx.chip.local_mem_bytes);
  if (npu != dst.start_npu)
    fail(Rule::SFU_3,
         "coeff_addr {:#x} is on NPU {}; the coefficients must start on dst's NPU {} (a [1, {}, 1, {}] {} tensor: "
         "{} values at the same offset of every NPU)",
         addr, npu, dst.start_npu, ctx.chip.npu_num, num, dtype_name(dtype), num);
  return operand(ctx, "coeff_addr", addr % ctx.chip.local_mem_bytes, {1, ctx.chip.npu_num, 1, num}, nullptr, dtype,
                 Rule::SFU_4);
}

void require_not_on_table(const TensorRef &dst, const TensorRef &table, const char *param) {
  const LocalFootprint a = footprint(dst), b = footprint(table);
  if ((a.npu_mask & b.npu_mask) != 0 && a.lo < b.hi && b.lo < a.hi)
    fail(ErrorKind::illegal_command,
         "dst at {:#x} (bytes [{:#x}, {:#x}) of its NPUs) overlaps {} at {:#x} (bytes [{:#x}, {:#x})); writing dst "
         "would overwrite the table",
         dst.addr, a.lo, a.hi, param, table.addr, b.lo, b.hi);
}

// Horner's rule, one fp32 rounding per operation (separate statements: no
// contraction into fused multiply-adds, see fp_arith.cc).
inline float horner(const float *k, int num, float x) {
  float acc = k[num - 1];
  for (int i = num - 2; i >= 0; --i) {
    const float p = acc * x;
    acc = p + k[i];
  }
  return acc;
}

}  // namespace

void fp_taylor(Context &ctx, const char *api, local_addr_t dst_addr, local_addr_t src_addr, local_addr_t coeff_addr,
               const dim4 &shape, int num, data_type_t dtype) {
  require_float("dtype", dtype);
  if (num < 2) fail(Rule::SFU_5, "num {} is below 2; the polynomial takes at least 2 coefficients", num);
  const TensorRef dst = operand(ctx, "dst", dst_addr, shape, nullptr, dtype);
  const TensorRef src = operand(ctx, "src", src_addr, shape, nullptr, dtype);
  require_same_npu(Rule::SFU_1, dst, "dst", src, "src");
  const TensorRef coeff = coefficient_table(ctx, coeff_addr, num, dtype, dst);
  require_not_on_table(dst, coeff, "coeff_addr");
  std::vector<uint8_t> storage;
  const TensorRef from = stable_source(src, dst, storage, true);
  with_float_dtype(dtype, [&]<typename D>(D) {
    using S = typename D::Storage;
    std::vector<float> k(size_t(num), 0.0f);
    const int64_t plane = int64_t(shape.h) * shape.w;
    for (int c = 0; c < shape.c; ++c) {
      const auto *coefficients = reinterpret_cast<const S *>(coeff.channel(0, (dst.start_npu + c) % ctx.chip.npu_num));
      for (int i = 0; i < num; ++i) k[size_t(i)] = D::load(coefficients[i]);
      for (int n = 0; n < shape.n; ++n) {
        auto *d = reinterpret_cast<S *>(dst.channel(n, c));
        const auto *s = reinterpret_cast<const S *>(from.channel(n, c));
        for (int64_t i = 0; i < plane; ++i) d[i] = D::store(horner(k.data(), num, D::load(s[i])));
      }
    }
  });
  book(ctx, api, BdcCost::taylor, dst, dtype, {&dst}, {&src, &coeff}, num / 8.0);
}

void table_lookup(Context &ctx, const char *api, local_addr_t dst_addr, local_addr_t src_addr, local_addr_t table_addr,
                  const dim4 &shape, int len, data_type_t dst_dtype, data_type_t src_dtype) {
  require_dtype("src", src_dtype, {DT_UINT8, DT_UINT16});
  if (len < 1 || len > 65535) fail(ErrorKind::illegal_command, "len {} must be in [1, 65535]", len);
  const TensorRef dst = operand(ctx, "dst", dst_addr, shape, nullptr, dst_dtype);
  const TensorRef src = operand(ctx, "src", src_addr, shape, nullptr, src_dtype);
  const int64_t plane = int64_t(shape.h) * shape.w;
  if (plane > 65535)
    fail(ErrorKind::illegal_command, "shape {}: h x w = {}; a table lookup takes at most 65535 elements per channel",
         describe(shape), plane);
  require_same_npu(dst, "dst", src, "src");
  const TensorRef table = lane_table(ctx, "table_addr", table_addr, len, dst_dtype, "table");
  require_not_on_table(dst, table, "table_addr");
  // Every index, read (and checked) before anything is written.
  std::vector<uint32_t> index(size_t(dst.elements()));
  size_t k = 0;
  for (int n = 0; n < shape.n; ++n)
    for (int c = 0; c < shape.c; ++c) {
      const uint8_t *p = src.channel(n, c);
      for (int64_t i = 0; i < plane; ++i, ++k) {
        uint32_t v = 0;
        if (src.esize == 1) {
          v = p[i];
        } else {
          uint16_t u;
          std::memcpy(&u, p + 2 * i, 2);
          v = u;
        }
        if (v >= uint32_t(len))
          fail(ErrorKind::illegal_command,
               "src element ({}, {}, {}, {}) is {}, outside the table's [0, len = {}); every index must be below "
               "len",
               n, c, int(i / shape.w), int(i % shape.w), v, len);
        index[k] = v;
      }
    }
  const int esize = dst.esize;
  k = 0;
  for (int n = 0; n < shape.n; ++n)
    for (int c = 0; c < shape.c; ++c) {
      const uint8_t *values = table.channel(0, (dst.start_npu + c) % ctx.chip.npu_num);
      uint8_t *d = dst.channel(n, c);
      for (int64_t i = 0; i < plane; ++i, ++k) std::memcpy(d + i * esize, values + int64_t(index[k]) * esize, size_t(esize));
    }
  book(ctx, api, BdcCost::lookup, dst, dst_dtype, {&dst}, {&src, &table});
}

}  // namespace cmodel::bdc
