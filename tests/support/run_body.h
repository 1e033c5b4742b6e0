// run_body.h: run a lambda as a kernel under cmodel_run, for tests whose
// kernels are a few API calls, and read the run's statistics.
#pragma once

#include <functional>
#include <utility>

#include <nlohmann/json.hpp>

#include "cmodel_host.h"

namespace test {

inline std::function<void()> &kernel_body() {
  static std::function<void()> body;
  return body;
}

// Runs `body` as a kernel on the open emulator; true when it finished.
inline bool run_kernel_body(std::function<void()> body) {
  kernel_body() = std::move(body);
  return cmodel_run([](const void *) { kernel_body()(); }, nullptr) == 0;
}

inline nlohmann::json last_run_stats() { return nlohmann::json::parse(cmodel_last_run_stats()); }

}  // namespace test
