// triage.h: is an fp16/bf16 op's error rounding, or a bug in the algorithm?
//
// The op runs twice on the emulator on the same inputs: in the low
// precision dtype, and widened to fp32 (the same values, exactly). If every
// low-precision output lies within kTriageUlps units in the last place (of
// the low dtype) of the fp32 result, the error is what rounding the fp32
// result explains ("rounding"); otherwise the low-precision path computes
// something else ("algorithmic": an accumulation in fp16, a constant
// rounded early, a wrong branch for that dtype, ...).
#pragma once

#include <string>
#include <vector>

#include "tpu_runtime/dtype.h"
#include "tpu_runtime/op_tester.h"

namespace tpu_runtime {

inline constexpr double kTriageUlps = 2;

struct TriageOutput {
  double max_ulp = 0;           // low vs fp32 result rounded to the low dtype
  std::int64_t worst_index = -1;
  double low_value = 0, fp32_value = 0;  // at worst_index
  bool rounding = true;         // max_ulp <= kTriageUlps
};

struct TriageReport {
  Dtype dtype = Dtype::fp16;
  std::vector<TriageOutput> outputs;
  bool rounding = true;  // every output
  std::string text() const;  // "rounding (max 1 ulp of the fp32 result)" or "algorithmic: output 0 ..."
};

// Compares one run's outputs in `dtype` with the fp32 run's (same inputs).
TriageReport triage_outputs(Dtype dtype, const std::vector<std::vector<float>> &low,
                            const std::vector<std::vector<float>> &fp32);

// Runs `tester` (an fp16 or bf16 OpTester; its inputs are made with
// keep_outputs) and the same op on those inputs widened to fp32, global
// layer only, and classifies the difference. Throws Error for an fp32 tester.
TriageReport triage_op(OpTester tester, Dtype dtype);

}  // namespace tpu_runtime
