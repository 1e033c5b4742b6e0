// isa_scope.h: selects one bulk-conversion implementation (portable or
// F16C + AVX2, cmodel/numeric/bulk_convert.h) for a scope, so a test can
// run the same checks through each path; the previous choice comes back
// at the end of the scope.
#pragma once

#include "cmodel/numeric/bulk_convert.h"

namespace test {

class IsaScope {
 public:
  explicit IsaScope(cmodel::numeric::BulkIsa isa) : previous_(cmodel::numeric::set_bulk_convert_isa(isa)) {}
  ~IsaScope() { cmodel::numeric::set_bulk_convert_isa(previous_); }
  IsaScope(const IsaScope &) = delete;
  IsaScope &operator=(const IsaScope &) = delete;

 private:
  cmodel::numeric::BulkIsa previous_;
};

}  // namespace test
