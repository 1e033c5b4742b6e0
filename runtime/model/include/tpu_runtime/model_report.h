// model_report.h: a model run's profile summary as tpu_model shows it (the
// table of `run`, the section of `info`) and its HTML report (`run
// --report`, html_report.h). profile_summary.h defines the figures.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "tpu_runtime/html_report.h"
#include "tpu_runtime/model.h"

namespace tpu_runtime {

// The profile table of tpu_model run: a row per layer that ran (a group's
// other layers have their figures on its first one), the whole run's row,
// then the run's DMA directions. Each line ends with a newline.
std::string run_profile_text(const ModelDescription &d, const RunResult &run);

// The profile of each layer's global run when the model was built (the
// layers' "profile" metadata, written by build_model), for tpu_model info;
// "" when the model has none (built before the profile was recorded).
std::string build_profile_text(const ModelFile &model);

// The report of one run: a case per model output (compared with the
// reference when `comparisons` is given, else "not compared"), the layers
// with their profiles, the run's profile summary and its timeline (when the
// run kept a trace: RunOptions::profile). `where` names the model.
Report model_report(const ModelDescription &d, const RunResult &run, const std::vector<OutputComparison> *comparisons,
                    std::string_view where);

}  // namespace tpu_runtime
