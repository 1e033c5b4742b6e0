#include "bdc.h"

#include <cmath>
#include <cstdio>
#include <string>
#include <string_view>

#include "cmodel/hazard.h"

namespace cmodel::bdc {

TensorRef operand(Context &ctx, const char *role, local_addr_t addr, const dim4 &shape, const dim4 *stride,
                  data_type_t dtype) {
  TensorRef t = local_tensor(ctx.memory, role, addr, shape, stride, dtype);
  const uint32_t offset = addr % ctx.chip.local_mem_bytes;
  if (offset % t.esize != 0)
    fail(ErrorKind::illegal_command, "{} local address {:#x} is not a multiple of the {}-byte size of {}", role, addr,
         t.esize, dtype_name(dtype));
  if (!stride && offset % ctx.chip.eu_bytes != 0)
    fail(ErrorKind::illegal_command,
         "{} local address {:#x} uses the aligned layout (NULL stride) but its offset {:#x} in NPU {} is not a "
         "multiple of {} bytes (EU_NUM x element size)",
         role, addr, offset, t.start_npu, ctx.chip.eu_bytes);
  return t;
}

void require_same_npu(const TensorRef &a, const char *a_role, const TensorRef &b, const char *b_role) {
  if (a.start_npu != b.start_npu)
    fail(ErrorKind::illegal_command,
         "{} starts on NPU {} but {} on NPU {}; the operands of this command must start on the same NPU (use "
         "tpu_bdc_cpy_cross_npu to move a tensor between NPUs)",
         a_role, a.start_npu, b_role, b.start_npu);
}

void require_dtype(const char *role, data_type_t dtype, std::initializer_list<data_type_t> allowed) {
  for (data_type_t d : allowed)
    if (d == dtype) return;
  std::string names;
  for (data_type_t d : allowed) names += std::string(names.empty() ? "" : ", ") + dtype_name(d);
  // A role naming the dtype argument itself ("dtype", "output_dtype") would
  // read "dtype dtype ...".
  const bool names_argument = std::string_view(role).ends_with("dtype");
  const std::string subject = names_argument ? std::string(role) : std::string(role) + " dtype";
  fail(ErrorKind::illegal_command, "{} {} is not allowed here; expected one of {}", subject,
       dtype_is_known(dtype) ? dtype_name(dtype) : std::to_string(int(dtype)).c_str(), names);
}

bool overlapping(const TensorRef &a, const TensorRef &b) {
  const LocalFootprint fa = footprint(a), fb = footprint(b);
  return (fa.npu_mask & fb.npu_mask) != 0 && fa.lo < fb.hi && fb.lo < fa.hi;
}

void require_disjoint(const TensorRef &a, const char *a_role, const TensorRef &b, const char *b_role,
                      const char *why) {
  if (!overlapping(a, b)) return;
  const LocalFootprint fa = footprint(a), fb = footprint(b);
  fail(ErrorKind::illegal_command,
       "{} at {:#x} (bytes [{:#x}, {:#x}) of its NPUs) overlaps {} at {:#x} (bytes [{:#x}, {:#x})); {}", a_role,
       a.addr, fa.lo, fa.hi, b_role, b.addr, fb.lo, fb.hi, why);
}

void book(Context &ctx, const char *api, BdcCost cost, const TensorRef &dst, data_type_t cost_dtype,
          std::initializer_list<const TensorRef *> writes, std::initializer_list<const TensorRef *> reads,
          double extra_factor) {
  const dim4 &s = dst.shape;
  const int64_t per_npu = int64_t(s.n) * DIV_UP(dst.start_npu + s.c, ctx.chip.npu_num) * s.h * s.w;
  const double passes = std::ceil(double(per_npu) / eu_num(ctx.chip, cost_dtype));
  book_cycles(ctx, api, passes * ctx.chip.bdc_factor(cost) * extra_factor + ctx.chip.bdc_issue_cycles, writes,
              reads);
}

void book_cycles(Context &ctx, const char *api, double cycles, std::initializer_list<const TensorRef *> writes,
                 std::initializer_list<const TensorRef *> reads) {
  for (const TensorRef *t : writes) ctx.hazards.note(*t, true);
  for (const TensorRef *t : reads) ctx.hazards.note(*t, false);
  ctx.count(api);
  // What it computed, for the trace: the elements of its (first) output.
  const uint64_t elements = writes.size() ? uint64_t((*writes.begin())->elements()) : 0;
  ctx.issue(Engine::bdc, cycles, api, elements);
}

void warn(Context &ctx, const char *api, const std::string &message) {
  // The run's warnings live with the race warnings: the statistics report
  // lists them together.
  const std::string text = fmt::format("{}: {}; called from {}", api, message, describe_call(current_call()));
  std::fprintf(stderr, "warning: %s\n", text.c_str());
  ctx.hazards.warnings.push_back(text);
}

void warn_overlaps(Context &ctx, const char *api, const TensorRef &out,
                   std::initializer_list<std::pair<const char *, const TensorRef *>> inputs) {
  for (const auto &[role, t] : inputs)
    if (t && overlapping(out, *t))
      warn(ctx, api,
           fmt::format("output at {:#x} overlaps {} at {:#x}; the cmodel reads every input before writing the "
                       "output, the hardware writes the output while it still reads its inputs",
                       out.addr, role, t->addr));
}

}  // namespace cmodel::bdc
