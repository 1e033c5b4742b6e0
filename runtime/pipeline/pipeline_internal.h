// pipeline_internal.h: what the pipeline room's sources share.
#pragma once

#include <cstdint>
#include <string>

namespace tpu_runtime::detail {

// "9.1 KiB", "4.00 GiB", "300 B": sizes in the planner's messages and info.
std::string pipeline_bytes_text(uint64_t bytes);

}  // namespace tpu_runtime::detail
