// local_watch.h: the slice check of layer groups (cmodel_watch_local in
// cmodel_host.h). While armed, every local operand a command reads (writes)
// must lie, row by row (each n and each channel row of each NPU), inside one
// of the allowed byte ranges, which hold for every NPU. The first access
// outside them fails the command and is kept in `violation`.
//
// One watch per process, like the one open emulator: cmodel_open and
// cmodel_close disarm it. Kept out of hazard.h so the engines' sources do
// not depend on it.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "tensor.h"

namespace cmodel {

struct LocalWatch {
  bool armed = false;
  std::vector<std::pair<int64_t, int64_t>> reads, writes;  // [begin, end) in each NPU
  struct Violation {
    bool found = false, write = false;
    int64_t lo = 0, hi = 0;  // the offending bytes of one row, in each NPU
  } violation;
};

LocalWatch &local_watch();

// Called for every local operand a command notes (HazardTracker::note);
// throws a memory fault when the armed watch is broken.
void check_local_watch(const TensorRef &t, bool write);

}  // namespace cmodel
