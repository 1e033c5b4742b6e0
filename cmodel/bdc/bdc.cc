#include "bdc.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>

#include "cmodel/hazard.h"
#include "cmodel/numeric/integer.h"

namespace cmodel::bdc {

namespace {

// fail() naming `rule` when there is one.
template <typename... Args>
[[noreturn]] void refuse(std::optional<Rule> rule, fmt::format_string<Args...> format, Args &&...args) {
  if (rule) fail(*rule, format, std::forward<Args>(args)...);
  fail(ErrorKind::illegal_command, format, std::forward<Args>(args)...);
}

// The checker bounds every user stride of a TIU operand to [0, 2^18)
// elements (TIU-5). The register maps give the n/c stride fields only 16
// bits (spec §5 item 1, unresolved); the checker is what we follow. Strides
// the command never applies (n with n = 1, c when every channel sits in the
// first row of NPUs) are not checked, as the conv checker does (CONV-18).
constexpr int tiu_stride_limit = 1 << 18;

void check_strides(const ChipSpec &chip, const char *role, local_addr_t addr, const dim4 &shape,
                   const dim4 &stride) {
  const bool n_used = shape.n > 1;
  const bool c_used = int64_t(addr / chip.local_mem_bytes) + shape.c > chip.npu_num;
  const int strides[] = {n_used ? stride.n : 0, c_used ? stride.c : 0, stride.h, stride.w};
  for (int i = 0; i < 4; ++i)
    if (strides[i] < 0 || strides[i] >= tiu_stride_limit)
      fail(Rule::TIU_5, "{} stride {}: {} = {} elements; a TIU stride must be in [0, {})", role, describe(stride),
           "nchw"[i], strides[i], tiu_stride_limit);
}

void same_npu(std::optional<Rule> rule, const TensorRef &a, const char *a_role, const TensorRef &b,
              const char *b_role) {
  if (a.start_npu != b.start_npu)
    refuse(rule,
           "{} starts on NPU {} but {} on NPU {}; the operands of this command must start on the same NPU (use "
           "tpu_bdc_cpy_cross_npu to move a tensor between NPUs)",
           a_role, a.start_npu, b_role, b.start_npu);
}

void dtype_in(std::optional<Rule> rule, const char *role, data_type_t dtype,
              std::initializer_list<data_type_t> allowed) {
  for (data_type_t d : allowed)
    if (d == dtype) return;
  std::string names;
  for (data_type_t d : allowed) names += std::string(names.empty() ? "" : ", ") + dtype_name(d);
  // A role naming the dtype argument itself ("dtype", "output_dtype") would
  // read "dtype dtype ...".
  const bool names_argument = std::string_view(role).ends_with("dtype");
  const std::string subject = names_argument ? std::string(role) : std::string(role) + " dtype";
  refuse(rule, "{} {} is not allowed here; expected one of {}", subject,
         dtype_is_known(dtype) ? dtype_name(dtype) : std::to_string(int(dtype)).c_str(), names);
}

}  // namespace

TensorRef operand(Context &ctx, const char *role, local_addr_t addr, const dim4 &shape, const dim4 *stride,
                  data_type_t dtype, std::optional<Rule> address_rule) {
  check_shape(role, shape, ctx.chip.gdma_shape_limit, Rule::TIU_1);
  if (stride) check_strides(ctx.chip, role, addr, shape, *stride);
  TensorRef t = local_tensor(ctx.memory, role, addr, shape, stride, dtype);
  const uint32_t offset = addr % ctx.chip.local_mem_bytes;
  if (offset % t.esize != 0)
    refuse(address_rule.value_or(Rule::TIU_3), "{} local address {:#x} is not a multiple of the {}-byte size of {}",
           role, addr, t.esize, dtype_name(dtype));
  if (!stride && offset % ctx.chip.eu_bytes != 0)
    refuse(address_rule.value_or(Rule::TIU_2),
           "{} local address {:#x} uses the aligned layout (NULL stride) but its offset {:#x} in NPU {} is not a "
           "multiple of {} bytes (EU_NUM x element size)",
           role, addr, offset, t.start_npu, ctx.chip.eu_bytes);
  return t;
}

TensorRef per_channel_operand(Context &ctx, const char *role, local_addr_t addr, int c, data_type_t dtype,
                              Rule address_rule) {
  const dim4 shape{1, c, 1, 1};
  const dim4 stride = aligned_stride(ctx.chip, int(addr / ctx.chip.local_mem_bytes), shape, dtype);
  return operand(ctx, role, addr, shape, &stride, dtype, address_rule);
}

TensorRef result(Context &ctx, const char *role, local_addr_t addr, const dim4 &shape, const dim4 *stride,
                 data_type_t dtype) {
  TensorRef t = operand(ctx, role, addr, shape, stride, dtype);
  if (!stride) return t;
  const int dims[] = {shape.n, shape.c, shape.h, shape.w};
  const int strides[] = {stride->n, stride->c, stride->h, stride->w};
  for (int i = 0; i < 4; ++i)
    if (strides[i] == 0 && dims[i] > 1)
      fail(Rule::TIU_6,
           "{} stride {}: the {} stride is 0 but {} = {}; this command may not write several elements to one place "
           "(a zero result stride needs a dim of size 1)",
           role, describe(*stride), "nchw"[i], "nchw"[i], dims[i]);
  return t;
}

void require_same_npu(Rule rule, const TensorRef &a, const char *a_role, const TensorRef &b, const char *b_role) {
  same_npu(rule, a, a_role, b, b_role);
}

void require_same_npu(const TensorRef &a, const char *a_role, const TensorRef &b, const char *b_role) {
  same_npu(std::nullopt, a, a_role, b, b_role);
}

void require_dtype(Rule rule, const char *role, data_type_t dtype, std::initializer_list<data_type_t> allowed) {
  dtype_in(rule, role, dtype, allowed);
}

void require_dtype(const char *role, data_type_t dtype, std::initializer_list<data_type_t> allowed) {
  dtype_in(std::nullopt, role, dtype, allowed);
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
  const int64_t per_npu = int64_t(s.n) * numeric::div_up(dst.start_npu + s.c, ctx.chip.npu_num) * s.h * s.w;
  const double passes = std::ceil(double(per_npu) / eu_num(ctx.chip, cost_dtype));
  book_cycles(ctx, api, passes * ctx.chip.bdc_factor(cost) * extra_factor + ctx.chip.bdc_issue_cycles, writes,
              reads);
}

namespace {

// The banks [first, last] of local memory an operand's bytes touch, on the
// NPUs of `npu_mask`.
struct BankSpan {
  uint64_t npu_mask;
  int64_t first, last;
  bool meets(const BankSpan &o) const { return (npu_mask & o.npu_mask) != 0 && first <= o.last && o.first <= last; }
};

BankSpan banks_of(const ChipSpec &chip, const LocalFootprint &f) {
  const int64_t bank = chip.bank_bytes();
  return {f.npu_mask, f.lo / bank, (std::max(f.hi, f.lo + 1) - 1) / bank};
}

// Two of the command's distinct local operands occupy a common bank of an
// NPU both use, so the TIU accesses one bank for two operands at once: what
// the vendor's local-memory allocator places operands apart to avoid.
// Operands on exactly the same bytes are one operand: an input given twice
// is read once, and an output written in place over its input streams each
// element back where it came from.
bool bank_conflict(const ChipSpec &chip, std::initializer_list<const TensorRef *> writes,
                   std::initializer_list<const TensorRef *> reads) {
  constexpr int most = 12;  // more operands than any command has
  BankSpan spans[most];
  LocalFootprint places[most];
  int n = 0;
  const auto add = [&](const TensorRef *t) {
    if (!t->is_local() || n == most) return;
    const LocalFootprint f = footprint(*t);
    for (int i = 0; i < n; ++i)
      if (places[i].npu_mask == f.npu_mask && places[i].lo == f.lo && places[i].hi == f.hi) return;
    places[n] = f;
    spans[n++] = banks_of(chip, f);
  };
  for (const TensorRef *t : writes) add(t);
  for (const TensorRef *t : reads) add(t);
  for (int i = 0; i < n; ++i)
    for (int j = i + 1; j < n; ++j)
      if (spans[i].meets(spans[j])) return true;
  return false;
}

}  // namespace

void book_cycles(Context &ctx, const char *api, double cycles, std::initializer_list<const TensorRef *> writes,
                 std::initializer_list<const TensorRef *> reads) {
  for (const TensorRef *t : writes) ctx.hazards.note(*t, true);
  for (const TensorRef *t : reads) ctx.hazards.note(*t, false);
  ctx.count(api);
  // Counted, not priced: the cost model has no figure for the stall.
  if (bank_conflict(ctx.chip, writes, reads)) ++ctx.stats.bdc_bank_conflicts;
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
