// multicore.h: multi-core runs (cmodel_run_cores): every core of a launch
// runs the kernel on a thread of its own, one at a time, taking turns at
// every point of synchronisation (docs/cmodel.md, "Several cores").
//
// The functions below are called from API bodies (inside api::run) on the
// thread of the core whose turn it is; a wait that cannot pass hands the
// turn on, a deadlock throws the run's error naming every core's wait.
#pragma once

#include <string>

namespace cmodel::multicore {

// True while a multi-core run of more than one core is in progress and
// the current core is not replaying a lone core's stream (set_solo).
bool active();
// While on, the current core's barriers and messages are a lone core's
// (they wait for its own engines only): cmodel_stream_replay_here replays a
// stream recorded on one core inside a multi-core run. Every run starts
// with it off.
void set_solo(bool on);
int core_index();  // of the calling core
int core_num();    // cores of the run

// Barrier of all cores of the run (tpu_sync_all*: `api` names it); the
// core's engines are waited for, then the others'.
void sync_all(const char *api);
// Barrier of `participants` cores (tpu_core_barrier) keyed by `msg_id`.
void barrier(const char *api, int msg_id, int participants);
// Engine messages: a send for `wait_count` waits; a wait for `send_count` sends.
void send(const char *api, int msg_id, int wait_count);
void wait(const char *api, int msg_id, int send_count);

// The chip's core count for launches: the chip's own, or what the option
// "cores" (TPU_SDK_CORES) says to emulate.
int chip_cores(int chip_core_num);
// Option setters (cmodel_set_option); throw a config error on a bad value.
void set_cores_option(const std::string &value);
void set_schedule_option(const std::string &value);
// The option "cores" as set: 0 the chip's own, -1 a malformed environment.
int cores_option();
// "cores" and "core_schedule" describe the part one emulator emulates:
// cmodel_close (and a cmodel_open that replaces an open emulator) puts them
// back to the environment's values, so no later emulator inherits them.
void reset_options();

}  // namespace cmodel::multicore
