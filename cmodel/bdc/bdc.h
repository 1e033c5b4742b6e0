// bdc.h: what every BDC (TIU) command shares: local operands, the checks
// the hardware enforces on them, and booking the command's cost.
//
// A family file (cmodel/bdc/<family>.cc) builds its operands with
// operand(), applies the checks that concern it, computes with the loops of
// elementwise.h and ends with book(). See fp_arith.cc for the pattern.
#pragma once

#include <initializer_list>
#include <optional>
#include <string>
#include <utility>

#include "cmodel/context.h"
#include "cmodel/dtype.h"
#include "cmodel/error.h"
#include "cmodel/tensor.h"

namespace cmodel::bdc {

// A local operand. Every dim is in [1, 65535] (TIU-1). A null stride means
// the aligned layout, whose start address must then be a multiple of the
// chip's EU bytes (TIU-2); every operand's address must be a multiple of its
// element size (TIU-3), and the given strides it uses lie in [0, 2^18)
// elements (TIU-5).
// `address_rule` names the rule the two address checks enforce when the
// command's family has its own (CMP-3 for a select's operands).
TensorRef operand(Context &ctx, const char *role, local_addr_t addr, const dim4 &shape, const dim4 *stride,
                  data_type_t dtype, std::optional<Rule> address_rule = std::nullopt);

// A [1, c, 1, 1] per-channel operand (a scale, a bias, a shift amount) in
// the aligned layout's strides, whose address need only be a multiple of
// its element size: the vendor checker asks no more of it (LIN-3, LIN-4,
// AR-8). `address_rule` is the rule of that check.
TensorRef per_channel_operand(Context &ctx, const char *role, local_addr_t addr, int c, data_type_t dtype,
                              Rule address_rule);

// The result of a divide, three-operand integer, compare, shift or cast
// command: an operand() that writes no two elements to one place, i.e. a
// zero stride only along a dim of size 1 (TIU-6).
TensorRef result(Context &ctx, const char *role, local_addr_t addr, const dim4 &shape, const dim4 *stride,
                 data_type_t dtype);

// f(n, c, h, w) for every position of `shape`, in (n, c, h, w) order.
template <typename F>
void for_each_position(const dim4 &shape, F &&f) {
  for (int n = 0; n < shape.n; ++n)
    for (int c = 0; c < shape.c; ++c)
      for (int h = 0; h < shape.h; ++h)
        for (int w = 0; w < shape.w; ++w) f(n, c, h, w);
}

// Element-wise operands must start on the same NPU (tpu_bdc_cpy_cross_npu
// exists for the other case). The first form names the rule it enforces
// for this command (TIU-4 for element-wise arithmetic, SFU-1, ...).
void require_same_npu(Rule rule, const TensorRef &a, const char *a_role, const TensorRef &b, const char *b_role);
void require_same_npu(const TensorRef &a, const char *a_role, const TensorRef &b, const char *b_role);

// dtype must be one of `allowed`; the message lists them. The first form
// names the rule it enforces.
void require_dtype(Rule rule, const char *role, data_type_t dtype, std::initializer_list<data_type_t> allowed);
void require_dtype(const char *role, data_type_t dtype, std::initializer_list<data_type_t> allowed);
inline void require_float(const char *role, data_type_t dtype) {
  require_dtype(role, dtype, {DT_FP32, DT_FP16, DT_BFP16});
}
inline void require_float(Rule rule, const char *role, data_type_t dtype) {
  require_dtype(rule, role, dtype, {DT_FP32, DT_FP16, DT_BFP16});
}

// a and b share a byte (of an NPU both use).
bool overlapping(const TensorRef &a, const TensorRef &b);

// a and b share no byte (of an NPU both use); otherwise fails with both
// operands' ranges and `why`.
void require_disjoint(const TensorRef &a, const char *a_role, const TensorRef &b, const char *b_role,
                      const char *why);
// The reason given when a work buffer overlaps another operand.
inline constexpr const char *work_buffer_reason =
    "the command uses its work buffers as scratch, so a work buffer must not overlap any other operand";

// Books one BDC command: ceil(elements per NPU of `shape` / eu_num(dtype))
// x the chip's factor for `cost` + the issue latency, at the TIU clock.
// `writes` and `reads` are its local operands, checked for races with the
// GDMA inside parallel regions; the first write is the output whose
// elements a trace reports.
void book(Context &ctx, const char *api, BdcCost cost, const TensorRef &dst, data_type_t cost_dtype,
          std::initializer_list<const TensorRef *> writes, std::initializer_list<const TensorRef *> reads,
          double extra_factor = 1);
// Books one BDC command whose cost is not per EU pass (matrix multiply):
// `cycles` TIU cycles, issue latency included.
void book_cycles(Context &ctx, const char *api, double cycles, std::initializer_list<const TensorRef *> writes,
                 std::initializer_list<const TensorRef *> reads);

// Warns when `out` overlaps one of `inputs` (role, tensor; null skipped):
// legal here, since the cmodel reads every input before writing, but the
// hardware streams the output while it still reads (matmul, convolution).
void warn_overlaps(Context &ctx, const char *api, const TensorRef &out,
                   std::initializer_list<std::pair<const char *, const TensorRef *>> inputs);

// Records a warning of the current run: something the cmodel accepts but
// whose result on the hardware may differ. It is printed to stderr and
// listed under "warnings" in the run's statistics, with the call site.
void warn(Context &ctx, const char *api, const std::string &message);

}  // namespace cmodel::bdc
