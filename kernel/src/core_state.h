// core_state.h: the core the emulator's runs execute on (cmodel_set_core).
//
// What tpu_core_index() and tpu_core_num() report: core 0 of a group of 1
// unless a device runtime (libbmlib) launches a kernel on another core of a
// bm1688 or several cores together. The emulator runs the kernels of a
// group one after another on the same memories, so a kernel that waits
// for another core of its group cannot pass; the barriers refuse it.
#pragma once

namespace cmodel::host {

struct CoreState {
  int index = 0;
  int group = 1;
};

// Reset by cmodel_open.
CoreState &core_state();

}  // namespace cmodel::host
