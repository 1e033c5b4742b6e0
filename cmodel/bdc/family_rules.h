// family_rules.h: checks a BDC family makes itself so that a breach names
// the family's own vendor rule (SG-6, TR-1, VC-1, ...; cmodel/vendor_rules.def)
// rather than the common TIU rule operand() or check_dim() would report for
// the same value. Call them before building the operands.
#pragma once

#include "bdc.h"

namespace cmodel::bdc {

// An aligned-layout operand (NULL stride) at `addr` starts at a multiple of
// ALIGN_BYTES (EU_NUM x element size) within its NPU.
void require_aligned_start(const Context &ctx, Rule rule, const char *role, local_addr_t addr);

// a and b start on the same NPU.
void require_same_start_npu(Rule rule, const TensorRef &a, const char *a_role, const TensorRef &b,
                            const char *b_role);

// Runs `check`, a common range check (check_dim, check_shape), so that the
// illegal command it reports names `rule`; other errors pass unchanged.
template <typename F>
void checked_as(Rule rule, F &&check) {
  try {
    check();
  } catch (const Error &e) {
    if (e.kind() != ErrorKind::illegal_command) throw;
    throw Error(e.kind(), e.what(), rule_id(rule));
  }
}

}  // namespace cmodel::bdc
