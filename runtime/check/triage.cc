// triage.cc: rounding or algorithmic error of an fp16/bf16 op (triage.h).
#include "tpu_runtime/triage.h"

#include <fmt/format.h>

#include "tpu_runtime/compare.h"
#include "tpu_runtime/error.h"

namespace tpu_runtime {

TriageReport triage_outputs(Dtype dtype, const std::vector<std::vector<float>> &low,
                            const std::vector<std::vector<float>> &fp32) {
  if (low.size() != fp32.size())
    throw Error(fmt::format("triage: {} low-precision outputs but {} fp32 ones", low.size(), fp32.size()));
  TriageReport report;
  report.dtype = dtype;
  for (std::size_t i = 0; i < low.size(); ++i) {
    if (low[i].size() != fp32[i].size())
      throw Error(fmt::format("triage: output {} has {} values in {} but {} in fp32", i, low[i].size(),
                              dtype_name(dtype), fp32[i].size()));
    // compare() rounds the fp32 result to the low dtype and counts ulps of it.
    const Similarity s = compare(low[i], fp32[i], dtype);
    TriageOutput out;
    out.max_ulp = s.max_ulp;
    out.worst_index = s.worst_index;
    if (s.worst_index >= 0) {
      out.low_value = low[i][std::size_t(s.worst_index)];
      out.fp32_value = fp32[i][std::size_t(s.worst_index)];
    }
    out.rounding = s.max_ulp <= kTriageUlps;
    report.rounding = report.rounding && out.rounding;
    report.outputs.push_back(out);
  }
  return report;
}

std::string TriageReport::text() const {
  double worst = 0;
  for (const TriageOutput &o : outputs) worst = std::max(worst, o.max_ulp);
  if (rounding)
    return fmt::format("rounding: every {} output is within {} ulp of the fp32 result (max {})", dtype_name(dtype),
                       kTriageUlps, worst);
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    const TriageOutput &o = outputs[i];
    if (o.rounding) continue;
    return fmt::format("algorithmic: output {} is {} ulp from the fp32 result at index {} ({} in {}, {} in fp32); "
                       "rounding the fp32 result explains at most {} ulp",
                       i, o.max_ulp, o.worst_index, o.low_value, dtype_name(dtype), o.fp32_value, kTriageUlps);
  }
  return "algorithmic";
}

TriageReport triage_op(OpTester tester, Dtype dtype) {
  if (dtype != Dtype::fp16 && dtype != Dtype::bf16)
    throw Error(fmt::format("triage: the op runs in {}; triage compares an fp16 or bf16 run with fp32",
                            dtype_name(dtype)));
  tester.dtype(dtype).global_only().keep_outputs();
  const OpReport low = tester.run();
  // The same values: the low dtype's inputs are exact in fp32.
  tester.dtype(Dtype::fp32).input_values(low.inputs);
  const OpReport wide = tester.run();
  return triage_outputs(dtype, low.cases.at(0).values, wide.cases.at(0).values);
}

}  // namespace tpu_runtime
