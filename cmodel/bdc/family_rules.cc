#include "family_rules.h"

namespace cmodel::bdc {

void require_aligned_start(const Context &ctx, Rule rule, const char *role, local_addr_t addr) {
  const uint32_t offset = npu_offset(ctx, addr);
  if (offset % ctx.chip.eu_bytes != 0)
    fail(rule,
         "{} local address {:#x} uses the aligned layout (NULL stride) but its offset {:#x} in NPU {} is not a "
         "multiple of {} bytes (EU_NUM x element size)",
         role, addr, offset, addr / ctx.chip.local_mem_bytes, ctx.chip.eu_bytes);
}

void require_element_aligned(const Context &ctx, Rule rule, const char *role, local_addr_t addr, data_type_t dtype) {
  const int size = dtype_bytes(dtype);
  if (npu_offset(ctx, addr) % size != 0)
    fail(rule, "{} local address {:#x} is not a multiple of the {}-byte size of {}", role, addr, size,
         dtype_name(dtype));
}

void require_offset_multiple(const Context &ctx, Rule rule, const char *role, local_addr_t addr, int bytes) {
  const uint32_t offset = npu_offset(ctx, addr);
  if (offset % bytes != 0)
    fail(rule, "{} local address {:#x}: its offset {:#x} in NPU {} must be a multiple of {} bytes", role, addr, offset,
         addr / ctx.chip.local_mem_bytes, bytes);
}

void require_same_start_npu(Rule rule, const TensorRef &a, const char *a_role, const TensorRef &b, const char *b_role) {
  if (a.start_npu != b.start_npu)
    fail(rule,
         "{} starts on NPU {} but {} on NPU {}; the operands of this command must start on the same NPU (use "
         "tpu_bdc_cpy_cross_npu to move a tensor between NPUs)",
         a_role, a.start_npu, b_role, b.start_npu);
}

void require_start_npu(Rule rule, const TensorRef &t, const char *role, int npu, const char *whose) {
  if (t.start_npu != npu)
    fail(rule, "{} local address {:#x} starts on NPU {}; it must start on {} (NPU {})", role, t.addr, t.start_npu,
         whose, npu);
}

}  // namespace cmodel::bdc
