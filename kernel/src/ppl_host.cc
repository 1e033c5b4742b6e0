// ppl_host.cc: the host-side chip helpers that a generated PPL interface
// header (<stem>.h, cmake/ppl_interface.py) declares for tiling code, as
// the vendor's host utilities provide them (spec ppl-language.md §4.2 item
// 3): LANE_NUM, EU_NUM, get_chip() and get_core_num() of host code that
// picks block sizes before calling a kernel.
//
// The chip is the open emulator's (cmodel_open), the one the kernels will
// run on; with none open, the CHIP environment variable the vendor's JIT
// reads. Host EU_NUM is bytes (64 on bm1684x, 16 on bm1688), as the
// vendor's host macro, not tpu-kernel's element count.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "cmodel_host.h"

namespace {

struct chip_figures {
  const char *name;
  int lanes;
  int eu_bytes;
};

constexpr chip_figures kChips[] = {{"bm1684x", 64, 64}, {"bm1688", 32, 16}};

// The figures of the open emulator's chip, else of $CHIP; nullptr (after
// saying why, naming `helper`) when neither names a known chip.
const chip_figures *current_chip(const char *helper) {
  std::string chip = cmodel_chip();
  const char *source = "the open emulator";
  if (chip.empty()) {
    const char *env = std::getenv("CHIP");
    chip = env ? env : "";
    source = "CHIP";
  }
  for (const chip_figures &c : kChips)
    if (chip == c.name) return &c;
  if (chip.empty())
    std::fprintf(stderr, "%s: no emulator is open and CHIP is not set: open one (cmodel_open) or set CHIP to bm1684x "
                 "or bm1688\n", helper);
  else
    std::fprintf(stderr, "%s: %s names chip '%s', not bm1684x or bm1688\n", helper, source, chip.c_str());
  return nullptr;
}

}  // namespace

extern "C" {

int ppl_host_lane_num(void) {
  const chip_figures *c = current_chip("LANE_NUM");
  return c ? c->lanes : 0;
}

int ppl_host_eu_bytes(void) {
  const chip_figures *c = current_chip("EU_NUM");
  return c ? c->eu_bytes : 0;
}

const char *ppl_host_chip(void) {
  const chip_figures *c = current_chip("get_chip()");
  return c ? c->name : "";
}

// The vendor's helper reads CORE_NUM with atoi (and crashes when it is
// unset). PPL kernels here run on one core (docs/ppl.md), so unset is 1; a
// value that is no positive number is refused with a message, and 1 used.
int ppl_host_core_num(void) {
  const char *env = std::getenv("CORE_NUM");
  if (env == nullptr || *env == '\0') return 1;
  char *end = nullptr;
  const long n = std::strtol(env, &end, 10);
  if (*end != '\0' || n < 1 || n > 64) {
    std::fprintf(stderr, "get_core_num(): CORE_NUM='%s' is not a core count (1 to 64); using 1\n", env);
    return 1;
  }
  return static_cast<int>(n);
}

}  // extern "C"
