// core_state.h: the core the emulator's runs execute on (cmodel_set_core).
//
// What tpu_core_index() and tpu_core_num() report outside a multi-core
// run: core 0 of a group of 1 unless a device runtime (libbmlib) launches a
// kernel on another core of a bm1688 with cmodel_set_core. Such a run is one
// core alone, so a kernel that waits for another core of its group cannot
// pass; the barriers refuse it (cmodel_run_cores runs a group together).
#pragma once

namespace cmodel::host {

struct CoreState {
  int index = 0;
  int group = 1;
};

// Reset by cmodel_open.
CoreState &core_state();

// The calling kernel's core and launch group: of the multi-core run in
// progress (multicore.h), else core_state().
CoreState launch();

// A barrier of all cores of the launch (tpu_sync_all*, named by `api`): in a
// multi-core run it waits for the other cores; alone, a group of more than
// one core cannot pass it (the others run another time), and a group of
// one waits for its engines.
void all_core_barrier(const char *api);

}  // namespace cmodel::host
