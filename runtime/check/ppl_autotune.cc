// ppl_autotune.cc: __AUTOTUNE__ functions of PPL test programs
// (docs/ppl.md, "__AUTOTUNE__"). Each kernel call of such a function runs
// on the emulator as a candidate configuration; its scalar arguments, its
// status and the cost model's estimate of its run (total_us of the run's
// statistics) are a row of the function's table, printed when it ends
// with the fastest call that succeeded. A null pointer argument gets a
// zero-filled scratch buffer of its own (the vendor's tuning calls pass
// nullptr for data they do not care about).
#include <cstdio>
#include <cstdlib>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cmodel_host.h"
#include "ppl/ppl_test_host.h"
#include "ppl_test_state.h"

namespace ppl_test_host {
namespace {

// Bytes of each scratch buffer: PPL_AUTOTUNE_SCRATCH_BYTES, else 16 MiB.
uint64_t scratch_bytes() {
  const char *text = std::getenv("PPL_AUTOTUNE_SCRATCH_BYTES");
  const unsigned long long value = text ? std::strtoull(text, nullptr, 0) : 0;
  return value > 0 ? value : 16ull << 20;
}

std::string status_text(int status) {
  switch (status) {
    case 0: return "ok";
    case 0x11: return "0x11 local memory short";
    case 0x1A: return "0x1a L2 short";
    default: return fmt::format("{} failed", status);
  }
}

}  // namespace

bool report_tuning(const char *function) {
  runner &r = state();
  std::printf("__AUTOTUNE__ %s: %zu call(s), by the cost model's estimate\n", function, r.table.size());
  std::printf("  %3s  %-24s %-40s %-26s %s\n", "#", "kernel", "arguments", "status", "estimate (us)");
  int best = -1;
  for (size_t i = 0; i < r.table.size(); ++i) {
    const tuning_row &row = r.table[i];
    const std::string estimate = row.status == 0 ? fmt::format("{:.3f}", row.total_us) : "-";
    std::printf("  %3zu  %-24s %-40s %-26s %s\n", i, row.kernel.c_str(), row.arguments.c_str(),
                status_text(row.status).c_str(), estimate.c_str());
    if (row.status == 0 && (best < 0 || row.total_us < r.table[size_t(best)].total_us)) best = int(i);
  }
  if (best < 0) {
    std::printf("  no call succeeded\n");
    return false;
  }
  const tuning_row &fastest = r.table[size_t(best)];
  std::printf("  fastest: #%d %s(%s): %.3f us\n", best, fastest.kernel.c_str(), fastest.arguments.c_str(),
              fastest.total_us);
  return true;
}

}  // namespace ppl_test_host

using namespace ppl_test_host;

extern "C" {

uint64_t ppl_test_pointer(uint64_t address, int index) {
  runner &r = state();
  if (address != 0 || !r.autotune) return address;
  auto found = r.scratch.find(index);
  if (found != r.scratch.end()) return found->second;
  const uint64_t bytes = scratch_bytes();
  const uint64_t scratch = cmodel_global_alloc(bytes);
  const uint8_t zero = 0;
  if (scratch == 0 || cmodel_global_fill(scratch, &zero, 1, bytes) != 0) {
    std::fprintf(stderr, "__AUTOTUNE__: a scratch buffer of %llu bytes for pointer argument %d: %s\n",
                 static_cast<unsigned long long>(bytes), index, cmodel_last_error());
    return 0;
  }
  r.scratch[index] = scratch;
  return scratch;
}

void ppl_test_arguments(const char *const *names, const double *values, int count) {
  if (!state().autotune) return;
  std::string text;
  for (int i = 0; i < count; ++i) text += fmt::format("{}{}={}", i ? ", " : "", names[i], values[i]);
  state().table.push_back({"", text, 0, 0});
}

}  // extern "C"

namespace ppl_test_host {

// The row ppl_test_arguments opened gets the call's outcome.
void record_tuning(const char *kernel, int status) {
  runner &r = state();
  if (r.table.empty() || !r.table.back().kernel.empty()) r.table.push_back({});
  tuning_row &row = r.table.back();
  row.kernel = kernel;
  row.status = status;
  if (status != 0) return;
  const nlohmann::json stats = nlohmann::json::parse(cmodel_last_run_stats(), nullptr, false);
  if (stats.is_object() && stats.contains("total_us") && stats["total_us"].is_number()) {
    row.total_us = stats["total_us"].get<double>();
    return;
  }
  std::fprintf(stderr, "__AUTOTUNE__: the run of %s has no cost estimate (total_us) in its statistics\n", kernel);
  row.status = -1;
}

}  // namespace ppl_test_host
