// family_rules.h: checks a BDC family makes itself, each naming the vendor
// rule it enforces (cmodel/vendor_rules.def: MM-*, CONV-*, POOL-*, SG-*,
// TR-*, VC-*, ...).
//
// These commands state their own rule for each operand (the conv weight on
// the output's NPU is CONV-4, the pooling output on the input's NPU POOL-1,
// a vector-cross operand's alignment VC-1), so they check before operand()
// or check_dim() does the common TIU checks, and a breach names the specific
// rule rather than the TIU one for the same value.
#pragma once

#include <cstdint>

#include "bdc.h"

namespace cmodel::bdc {

// The offset of local address `addr` in its NPU.
inline uint32_t npu_offset(const Context &ctx, local_addr_t addr) { return addr % ctx.chip.local_mem_bytes; }

// An aligned-layout operand (NULL stride) starts at a multiple of
// ALIGN_BYTES (the chip's EU bytes); the message is operand()'s.
void require_aligned_start(const Context &ctx, Rule rule, const char *role, local_addr_t addr);

// `addr` is a multiple of the element size of `dtype` (a strided or compact
// operand); the message is operand()'s.
void require_element_aligned(const Context &ctx, Rule rule, const char *role, local_addr_t addr, data_type_t dtype);

// `addr` is at an offset in its NPU that is a multiple of `bytes`.
void require_offset_multiple(const Context &ctx, Rule rule, const char *role, local_addr_t addr, int bytes);

// a and b start on the same NPU; the message is require_same_npu()'s.
void require_same_start_npu(Rule rule, const TensorRef &a, const char *a_role, const TensorRef &b, const char *b_role);

// t starts on NPU `npu`, which is `whose` ("the output's NPU").
void require_start_npu(Rule rule, const TensorRef &t, const char *role, int npu, const char *whose);

// Runs `check`; an illegal command it throws names `rule` (for the common
// dtype and range checks, which name no rule of their own).
template <typename F>
void under_rule(Rule rule, F &&check) {
  try {
    check();
  } catch (const Error &e) {
    if (e.kind() != ErrorKind::illegal_command) throw;
    throw Error(e.kind(), e.what(), rule_id(rule));
  }
}

}  // namespace cmodel::bdc
